"""A staff message (usecases/staff.py), the audit's write (usecases/audit.py) and the cohort check (usecases/cohort.py).

A staff message: on WhatsApp outside the 24-hour window it goes as the staff
template when one is configured, or is refused before anything is written, saying why; and the
template for the staff kind is chosen by the messenger (adapters/whatsapp_templates.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from promptpipe.adapters.memory_audit import MemoryAuditLog
from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.adapters.whatsapp_templates import SKIPPED_NO_TEMPLATE, TemplateChoice, WhatsAppTemplates
from promptpipe.config import CoreConfig
from promptpipe.errors import MessagingError, StoreError, ValidationFailed
from promptpipe.models.api import EnrollmentRequest, StaffMessageRequest
from promptpipe.models.audit import Actor, AuditRecord
from promptpipe.models.messaging import OutboundKind, OutboundMessage, SendResult
from promptpipe.models.state import StateData
from promptpipe.settings import Settings
from promptpipe.usecases.cohort import check_rows
from promptpipe.usecases.participants import enrollment
from promptpipe.usecases.staff import send_staff_message
from tests.support import MemoryHarness, memory_harness, turn

ANA = Actor(principal="arn:aws:iam::123456789012:user/ana", named="Ana")


def _on_whatsapp(staff_template: bool) -> MemoryHarness:
    h = memory_harness(OfflineCoach())
    h.app.deps.config = replace(h.app.deps.config, whatsapp_channel=True, staff_template=staff_template)
    return h


def test_outside_the_window_without_a_staff_template_nothing_is_written_and_it_says_why() -> None:
    h = _on_whatsapp(staff_template=False)
    participant = h.enroll()
    turn(h, participant, "hi")
    h.clock.advance(timedelta(hours=25))
    version = h.store.flows[participant.id].version
    sent = len(h.outbox.messages())
    with pytest.raises(ValidationFailed, match="more than 24 hours ago, and no staff template"):
        send_staff_message(h.app, participant.id, StaffMessageRequest(body="Hi", by="Ana"), actor=ANA)
    assert h.store.flows[participant.id].version == version
    assert len(h.outbox.messages()) == sent and h.app.audit.records(participant.id) == []


def test_inside_the_window_or_with_a_template_it_goes_and_holds_the_coach() -> None:
    for staff_template, hours in ((False, 2), (True, 30)):
        h = _on_whatsapp(staff_template=staff_template)
        participant = h.enroll()
        turn(h, participant, "hi")
        h.clock.advance(timedelta(hours=hours))
        request = StaffMessageRequest(body="Hi, Ana here", by="Ana")
        sent = send_staff_message(h.app, participant.id, request, actor=ANA)
        assert sent.outcome == "sent"
        last = h.outbox.messages()[-1]
        assert (last.kind, last.body) == (OutboundKind.STAFF, "Hi, Ana here")
        data = StateData(dict(h.app.store.load(participant.id).flow.state_data))
        hold = data.hold()
        assert hold is not None and (hold.reason.value, hold.set_by) == ("staff", "staff: Ana")
        assert [r.action.value for r in h.app.audit.records(participant.id)] == ["staff_message"]


def test_the_staff_kind_has_its_own_template_outside_the_window() -> None:
    message = OutboundMessage(participant_id="p", to="+1", body="Hi from Ana", kind=OutboundKind.STAFF)
    assert WhatsAppTemplates(staff="study_team_message").for_message(message) == TemplateChoice(
        "study_team_message", "Hi from Ana"
    )
    assert WhatsAppTemplates(prompt="daily").for_message(message) == SKIPPED_NO_TEMPLATE
    assert WhatsAppTemplates(staff="x").configured


def test_the_config_says_whether_staff_messages_have_a_template() -> None:
    cloud = CoreConfig.from_settings(
        Settings(messaging_provider="whatsapp_cloud", whatsapp_staff_template_name="study_team_message")
    )
    assert (cloud.whatsapp_channel, cloud.staff_template) == (True, True)
    sms = CoreConfig.from_settings(Settings(messaging_provider="twilio", twilio_channel="sms"))
    assert (sms.whatsapp_channel, sms.staff_template) == (False, False)


class RefusingMessenger:
    def send(self, message: OutboundMessage, before_part: Any = None) -> SendResult:
        raise MessagingError("provider down", code="30008", retryable=False)


def test_a_staff_message_the_provider_refuses_is_recorded_as_failed_and_the_coach_stays_held() -> None:
    h = memory_harness(OfflineCoach())
    participant = h.enroll()
    h.app = replace(h.app, messenger=RefusingMessenger())
    sent = send_staff_message(h.app, participant.id, StaffMessageRequest(body="Hi", by="Ana"), actor=ANA)
    assert sent.outcome == "not sent"
    entries, _ = h.app.store.list_transcript(participant.id, limit=100, next_token=None)
    staff = [e for e in entries if e.kind == "staff"]
    assert len(staff) == 1 and staff[0].delivery is not None and staff[0].delivery.status == "failed"
    assert StateData(dict(h.app.store.load(participant.id).flow.state_data)).hold() is not None
    assert [r.action.value for r in h.app.audit.records(participant.id)] == ["staff_message"]


class BrokenAuditLog(MemoryAuditLog):
    def append(self, record: AuditRecord) -> None:
        raise StoreError("throttled", operation="DynamoAuditLog.append", code="ThrottlingException")


@pytest.mark.logs_errors
def test_an_audit_record_that_cannot_be_written_is_an_error_not_a_silence(caplog: pytest.LogCaptureFixture) -> None:
    h = memory_harness(OfflineCoach())
    h.app = replace(h.app, audit=BrokenAuditLog())
    with pytest.raises(StoreError):
        h.enroll()  # no actor: nothing recorded, nothing to fail
        enrollment(h.app, EnrollmentRequest(phone_number="+14155550102"), actor=ANA)
    assert "audit record not written" in caplog.text


def test_the_cohort_check_asks_for_consent_where_the_deployment_requires_it() -> None:
    h = memory_harness(OfflineCoach())
    h.app.deps.config = replace(h.app.deps.config, consent_required=True)
    consent = {"at": "2026-03-01T10:00:00Z", "version": "v2", "method": "paper"}
    rows = [{"phone_number": "+14155550101"}, {"phone_number": "+14155550102", "consent": consent}]
    checked = check_rows(h.app, rows)
    assert [(r.row, r.problems) for r in checked] == [(1, ["consent: required by this deployment"]), (2, [])]
