"""A provider's report that a message was delivered or read updates that message's own outcome
(docs/reliability.md, "The record under faults"): found by key through the pointer its outcome's
write left (no Query, no scan), only forward (``read`` is not undone by a late ``delivered``), and
never over a failure. Through the adapter against moto, and through the real webhooks with the
providers' own payload shapes (tests/data/inbound_payloads.json)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from promptpipe.adapters.after_commit import DynamoDeliveryLog
from promptpipe.adapters.aws import aws_client, create_local_resources
from promptpipe.adapters.dynamodb import DynamoParticipantRepo, DynamoStateStore
from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import FlowState
from promptpipe.models.store import DeliveryOutcome, Direction, StateCommit, TranscriptEntry
from promptpipe.settings import Settings
from tests.integration.test_receive_inbound import CORPUS, OLD, greeted, post_meta, post_twilio, transcript
from tests.support import enroll_over_api

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
PID = "p_" + "1" * 32


class Table:
    """The delivery log on moto, every DynamoDB call it makes recorded by name."""

    def __init__(self) -> None:
        settings = Settings(table_name="pp-receipts", aws_endpoint_url=None)
        self.client = aws_client("dynamodb", settings)
        create_local_resources(settings, dynamodb=self.client)
        self.log = DynamoDeliveryLog(settings.table_name, self.client)
        self.store = DynamoStateStore(settings.table_name, self.client)
        participant = ConversationParticipant(id=PID, phone_number=OLD, enrolled_at=T0, created_at=T0, updated_at=T0)
        DynamoParticipantRepo(settings.table_name, self.client, settings.participants_index_name).create(
            participant, FlowState(participant_id=PID)
        )
        self.calls: list[str] = []
        self.client.meta.events.register("before-call.dynamodb.*", self._count)

    def _count(self, event_name: str, **_: Any) -> None:
        self.calls.append(event_name.rsplit(".", 1)[-1])

    def sent(self, seq: str, provider_id: str) -> None:
        """An outbound entry committed at T0, then its outcome recorded as the sending does."""
        entry = TranscriptEntry(
            participant_id=PID, at=T0, seq=seq, direction=Direction.OUTBOUND, kind="daily_prompt", content="Walk?"
        )
        self.store.commit(
            StateCommit(
                participant_id=PID,
                expected_version=self.store.load(PID).flow.version,
                flow=FlowState(participant_id=PID, version=self.store.load(PID).flow.version + 1),
                transcript=[entry],
            )
        )
        self.log.record_outcomes(PID, T0, {seq: DeliveryOutcome(status="sent", provider_id=provider_id, at=T0)})

    def outcome(self, seq: str) -> DeliveryOutcome:
        [entry] = [e for e in self.store.list_transcript(PID, limit=50, next_token=None)[0] if e.seq == seq]
        assert entry.delivery is not None
        return entry.delivery


@pytest.fixture
def table(aws: None) -> Iterator[Table]:
    yield Table()


def test_a_receipt_is_one_get_and_one_conditional_update_by_key(table: Table) -> None:
    # Given a sent message whose outcome was recorded (one write: the outcome and its pointer)
    table.sent("ev#0", "SM-1")
    assert table.calls[-1:] == ["TransactWriteItems"]
    table.calls.clear()

    # When the provider reports it delivered
    assert table.log.record_receipt(PID, "SM-1", "delivered", T0 + timedelta(seconds=5))

    # Then the pointer was read and the entry updated by key: no Query, no Scan
    assert table.calls == ["GetItem", "UpdateItem"]
    outcome = table.outcome("ev#0")
    assert (outcome.status, outcome.receipt, outcome.final) == ("sent", "delivered", "delivered")
    assert outcome.receipt_at == T0 + timedelta(seconds=5)


def test_read_before_delivered_stays_read_and_a_repeat_changes_nothing(table: Table) -> None:
    table.sent("ev#0", "SM-1")
    # When the reports arrive out of order, and twice
    for receipt, second in (("read", 9), ("delivered", 5), ("read", 12)):
        assert table.log.record_receipt(PID, "SM-1", receipt, T0 + timedelta(seconds=second))  # type: ignore[arg-type]
    # Then the message reads as read, at the first read report
    outcome = table.outcome("ev#0")
    assert (outcome.final, outcome.receipt_at) == ("read", T0 + timedelta(seconds=9))


def test_a_receipt_after_a_failure_does_not_bring_the_message_back(table: Table) -> None:
    table.sent("ev#0", "SM-1")
    failed = DeliveryOutcome(status="failed", provider_id="SM-1", code="30003", reason="undelivered: unreachable")
    table.log.record_outcomes(PID, T0, {"ev#0": failed})
    # When a "delivered" comes after the failure report
    assert table.log.record_receipt(PID, "SM-1", "delivered", T0 + timedelta(minutes=1))
    # Then the message stays failed
    outcome = table.outcome("ev#0")
    assert (outcome.status, outcome.receipt, outcome.final) == ("failed", None, "failed")


def test_a_failure_after_a_receipt_is_the_final_outcome_and_a_rewrite_keeps_the_receipt(table: Table) -> None:
    table.sent("ev#0", "SM-1")
    table.log.record_receipt(PID, "SM-1", "delivered", T0 + timedelta(seconds=5))
    # A later write of the outcome (a failure report) keeps the receipt apart; the failure wins
    failed = DeliveryOutcome(status="failed", provider_id="SM-1", code="30005")
    table.log.record_outcomes(PID, T0, {"ev#0": failed})
    outcome = table.outcome("ev#0")
    assert (outcome.receipt, outcome.final) == ("delivered", "failed")


def test_a_receipt_for_an_unknown_id_costs_one_get_and_changes_nothing(table: Table) -> None:
    table.sent("ev#0", "SM-1")
    table.calls.clear()
    assert not table.log.record_receipt(PID, "SM-other", "delivered", T0)
    assert table.calls == ["GetItem"]
    assert table.outcome("ev#0").final == "sent"


# -- through the webhooks, the providers' own payload shapes ----------------------------------------
def meta_status(provider_id: str, status: str) -> dict[str, Any]:
    """Meta's ``statuses`` webhook (the corpus's delivered status) for ``provider_id``."""
    payload = copy.deepcopy(CORPUS["meta"]["status_read"]["payload"])
    payload["entry"][0]["changes"][0]["value"]["statuses"][0].update(id=provider_id, status=status)
    return payload


def greeting_of(env: Any, pid: str) -> dict[str, Any]:
    [greeting] = [e for e in transcript(env, pid) if e["kind"] == "greeting"]
    return greeting


def test_meta_read_then_delivered_reports_leave_the_greeting_read(local_env_factory: Any) -> None:
    env = local_env_factory(llm=greeted(ScriptedLLM()))
    pid = enroll_over_api(env, OLD)
    provider_id = greeting_of(env, pid)["delivery"]["provider_id"]

    # When Meta reports the greeting read, then (late) delivered
    for status in ("read", "delivered"):
        assert post_meta(env, meta_status(provider_id, status)).status == 200

    # Then the transcript (what the console and the export read) says read
    delivery = greeting_of(env, pid)["delivery"]
    assert (delivery["status"], delivery["receipt"]) == ("sent", "read")
    assert delivery["receipt_at"]


def test_twilio_delivered_after_undelivered_leaves_the_message_not_delivered(local_env_factory: Any) -> None:
    env = local_env_factory(llm=greeted(ScriptedLLM()))
    pid = enroll_over_api(env, OLD)
    provider_id = greeting_of(env, pid)["delivery"]["provider_id"]
    twilio = CORPUS["twilio"]

    # When Twilio reports it undelivered, then delivered (out of order)
    ids = {"MessageSid": provider_id, "SmsSid": provider_id}
    assert post_twilio(env, twilio["status_failed_63016"]["form"], **ids).status == 200
    assert post_twilio(env, twilio["status_delivered"]["form"], **ids).status == 200

    # Then it stays failed, with the failure's code: the delivered report did not bring it back
    delivery = greeting_of(env, pid)["delivery"]
    assert (delivery["status"], delivery["code"], delivery.get("receipt")) == ("failed", "63016", None)


def test_twilio_whatsapp_delivered_and_read_reports_update_the_message(local_env_factory: Any) -> None:
    env = local_env_factory(llm=greeted(ScriptedLLM()))
    pid = enroll_over_api(env, OLD)
    provider_id = greeting_of(env, pid)["delivery"]["provider_id"]
    form = CORPUS["twilio"]["status_whatsapp_delivered"]["form"]
    ids = {"MessageSid": provider_id, "SmsSid": provider_id, "To": f"whatsapp:{OLD}", "ChannelToAddress": OLD}

    assert post_twilio(env, form, **ids).status == 200
    assert greeting_of(env, pid)["delivery"]["receipt"] == "delivered"
    assert post_twilio(env, form, **ids, MessageStatus="read", SmsStatus="read", EventType="READ").status == 200
    assert greeting_of(env, pid)["delivery"]["receipt"] == "read"


def test_a_failure_report_finds_its_message_by_key_and_an_earlier_part_by_the_query(table: Table) -> None:
    # Given a message sent in two parts (its provider id is the last part's)
    entry = TranscriptEntry(
        participant_id=PID, at=T0, seq="ev#0", direction=Direction.OUTBOUND, kind="reply", content="long"
    )
    version = table.store.load(PID).flow.version
    flow = FlowState(participant_id=PID, version=version + 1)
    table.store.commit(StateCommit(participant_id=PID, expected_version=version, flow=flow, transcript=[entry]))
    sent = DeliveryOutcome(status="sent", provider_id="SM-2", parts=["SM-1", "SM-2"], at=T0)
    table.log.record_outcomes(PID, T0, {"ev#0": sent})
    since = T0 - timedelta(days=8)

    # When a failure report names the message: its pointer, then the entry, by key
    table.calls.clear()
    found = table.log.find_sent(PID, "SM-2", since)
    assert found is not None and found.seq == "ev#0" and table.calls == ["GetItem", "GetItem"]
    # and when it names the first part (no pointer): the Query of the last days finds it
    table.calls.clear()
    found = table.log.find_sent(PID, "SM-1", since)
    assert found is not None and found.seq == "ev#0" and table.calls == ["GetItem", "Query"]
    # a message older than the window is not looked for by its pointer either
    assert table.log.find_sent(PID, "SM-2", T0 + timedelta(seconds=1)) is None
