"""A provider's later report on a message that carried a study decision moves that decision's
``delivery`` (docs/studies.md, the decision record): forward only (``delivered``, then ``read``),
and a failure (``failed`` / ``undelivered``) is final, as the message's own receipts are; so is a
refusal for good at the send, while a send failure a retry may cure follows the resumed send."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from promptpipe.errors import MessagingError, StoreError
from promptpipe.models.decision import DecisionDelivery, delivery_after_report
from promptpipe.models.events import ScheduledPromptPayload
from promptpipe.models.messaging import DeliveryStatus
from promptpipe.usecases.daily_prompts import run_scheduled_prompt
from promptpipe.usecases.delivery_reports import record_delivery
from promptpipe.usecases.sending import apply_effects
from promptpipe.usecases.studies import with_study
from tests.support import MemoryHarness
from tests.unit.test_delivery_and_timers import MONDAY, at_local, deliver
from tests.unit.test_study_engine import in_study, rows, study

D = DecisionDelivery


@pytest.mark.parametrize(
    ("current", "reported", "after"),
    [
        (D.SENT, D.DELIVERED, D.DELIVERED),
        (D.SENT, D.READ, D.READ),
        (D.DELIVERED, D.READ, D.READ),
        (D.READ, D.DELIVERED, None),  # a late "delivered" does not undo "read"
        (D.DELIVERED, D.DELIVERED, None),
        (D.PENDING, D.DELIVERED, D.DELIVERED),  # the report came before the send result was recorded
        (D.SENT, D.FAILED, D.FAILED),
        (D.READ, D.FAILED, D.FAILED),
        (D.FAILED, D.DELIVERED, None),  # nothing brings back a failed message
        (D.FAILED, D.READ, None),
        (D.FAILED, D.FAILED, None),
    ],
)
def test_a_report_moves_a_decisions_delivery_forward_only_and_a_failure_is_final(
    current: DecisionDelivery, reported: DecisionDelivery, after: DecisionDelivery | None
) -> None:
    assert delivery_after_report(current, reported) == after


def prompted() -> tuple[MemoryHarness, str, str]:
    """A study participant whose daily prompt carried a decision; their id and the prompt's provider id."""
    h, p, daily, _ = in_study(study())
    deliver(h, daily, at_local(MONDAY, "09:30"), event_id="fire-1")
    [prompt] = [e for e in h.store.transcripts[p.id] if e.kind == "daily_prompt"]
    assert prompt.delivery is not None and prompt.delivery.provider_id
    assert rows(h, p)[0].delivery is DecisionDelivery.SENT
    return h, p.id, prompt.delivery.provider_id


def report(h: MemoryHarness, provider_id: str, status: str, minutes: int) -> str:
    status_report = DeliveryStatus(
        provider="twilio",
        provider_message_id=provider_id,
        status=status,
        recipient=h.app.repo.get(next(iter(h.store.flows))).phone_number,
        error_code="30003" if status in ("failed", "undelivered") else None,
        at=h.clock.now() + timedelta(minutes=minutes),
    )
    return record_delivery(h.app, status_report).action


def delivery(h: MemoryHarness, pid: str) -> DecisionDelivery:
    [row] = h.app.decisions.for_participant(pid)
    return row.delivery


def test_a_later_undelivered_report_marks_the_decision_failed_for_good() -> None:
    h, pid, provider_id = prompted()
    assert report(h, provider_id, "undelivered", 1) == "delivery_failed"
    assert delivery(h, pid) is DecisionDelivery.FAILED
    report(h, provider_id, "delivered", 2)  # a receipt after the failure changes nothing
    assert delivery(h, pid) is DecisionDelivery.FAILED


def test_delivered_then_read_and_a_late_delivered_leaves_the_decision_read() -> None:
    h, pid, provider_id = prompted()
    assert report(h, provider_id, "delivered", 1) == "delivery_delivered"
    assert delivery(h, pid) is DecisionDelivery.DELIVERED
    report(h, provider_id, "read", 2)
    report(h, provider_id, "delivered", 3)
    assert delivery(h, pid) is DecisionDelivery.READ


def test_without_an_active_study_a_report_reads_no_decision() -> None:
    h, pid, provider_id = prompted()
    with_study(h.app, None)
    report(h, provider_id, "delivered", 1)
    assert delivery(h, pid) is DecisionDelivery.SENT


def test_a_prompt_sent_before_the_study_has_no_decision_to_move() -> None:
    h, p, daily, _ = in_study(study())
    with_study(h.app, None)
    deliver(h, daily, at_local(MONDAY, "09:30"), event_id="fire-1")
    [prompt] = [e for e in h.store.transcripts[p.id] if e.kind == "daily_prompt"]
    assert prompt.delivery is not None
    with_study(h.app, study())
    assert report(h, prompt.delivery.provider_id, "undelivered", 1) == "delivery_failed"
    assert h.app.decisions.for_participant(p.id) == []


class _DownOnce:
    """The messenger: its first send fails as a retry may cure (the provider down); then it works."""

    def __init__(self, inner: object) -> None:
        self.inner, self.failed = inner, False

    def send(self, message: object, before_part: object = None) -> object:
        if not self.failed:
            self.failed = True
            raise MessagingError("provider down", retryable=True, code="20500")
        return self.inner.send(message, before_part=before_part)  # type: ignore[attr-defined]


def test_a_prompt_whose_first_send_failed_then_resumed_and_delivered_moves_its_decision_on() -> None:
    # A failure at the send that a retry may cure is not final: the event is redelivered and resumes
    # the message; its decision follows what the resumed send got, then the provider's reports.
    h, p, daily, _ = in_study(study())
    h.app = replace(h.app, messenger=_DownOnce(h.outbox))
    h.clock.set(at_local(MONDAY, "09:30"))
    payload = daily.payload
    assert isinstance(payload, ScheduledPromptPayload)
    first = run_scheduled_prompt(h.app, payload, event_id="fire-1")
    with pytest.raises(MessagingError):
        apply_effects(h.app, first)
    assert delivery(h, p.id) is DecisionDelivery.FAILED  # as the transcript says: failed, retried

    again = run_scheduled_prompt(h.app, payload, event_id="fire-1")  # the scheduler's retry
    assert again.replayed
    apply_effects(h.app, again)

    [prompt] = [e for e in h.store.transcripts[p.id] if e.kind == "daily_prompt"]
    assert prompt.delivery is not None and prompt.delivery.status == "sent"
    [row] = h.app.decisions.for_participant(p.id)
    assert (row.delivery, row.sent_at) == (DecisionDelivery.SENT, prompt.delivery.at)
    assert report(h, prompt.delivery.provider_id, "delivered", 1) == "delivery_delivered"
    assert delivery(h, p.id) is DecisionDelivery.DELIVERED


def test_a_prompt_refused_for_good_keeps_its_decision_failed() -> None:
    h, p, daily, _ = in_study(study())
    outbox = h.outbox

    class Refusing:
        def send(self, message: object, before_part: object = None) -> object:
            raise MessagingError("not on WhatsApp", retryable=False, undeliverable=True, code="131026")

    h.app = replace(h.app, messenger=Refusing())
    deliver(h, daily, at_local(MONDAY, "09:30"), event_id="fire-1")  # not retried: the effects go on
    assert delivery(h, p.id) is DecisionDelivery.FAILED
    assert not outbox.messages(p.id)


@pytest.mark.logs_errors
def test_a_resumed_prompt_whose_decisions_cannot_be_read_is_still_sent() -> None:
    # Best effort, as the first delivery's record: the message matters more than its decision's field.
    h, p, daily, _ = in_study(study())
    h.app = replace(h.app, messenger=_DownOnce(h.outbox))
    h.clock.set(at_local(MONDAY, "09:30"))
    payload = daily.payload
    assert isinstance(payload, ScheduledPromptPayload)
    with pytest.raises(MessagingError):
        apply_effects(h.app, run_scheduled_prompt(h.app, payload, event_id="fire-1"))
    log = h.app.decisions

    class Unreadable:
        def __getattr__(self, name: str) -> object:
            return getattr(log, name)

        def for_participant(self, participant_id: str) -> object:
            raise StoreError("throttled", operation="Query", code="ProvisionedThroughputExceededException")

    h.app = replace(h.app, decisions=Unreadable())
    apply_effects(h.app, run_scheduled_prompt(h.app, payload, event_id="fire-1"))
    h.app = replace(h.app, decisions=log)
    [prompt] = [e for e in h.store.transcripts[p.id] if e.kind == "daily_prompt"]
    assert prompt.delivery is not None and prompt.delivery.status == "sent"
    assert delivery(h, p.id) is DecisionDelivery.FAILED  # left as it was; the message went out
