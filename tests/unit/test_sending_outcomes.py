"""What ``apply_effects`` (``usecases/sending.py``) records and counts when a send does not simply go:
a refusal for good, a carrier opt-out, a STOP or a deletion between an event's messages, a record that
cannot be written (docs/reliability.md, "The record under faults")."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.errors import MessagingError, StoreError
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.models.messaging import OutboundKind, OutboundMessage, SendResult
from promptpipe.models.metrics import Metric
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.store import DeliveryOutcome
from promptpipe.usecases import sending
from promptpipe.usecases.events import process_turn
from promptpipe.usecases.outcomes import EventOutcome
from promptpipe.usecases.sending import apply_effects
from tests.support import MemoryHarness, memory_harness
from tests.support.logs import Captured

HELLO = "Hi! What habit would you like to build?"
Step = Callable[[OutboundMessage], SendResult]


class ScriptedMessenger:
    """Each send runs the next step (raise, or hand to the harness' outbox); then the outbox."""

    def __init__(self, h: MemoryHarness, *steps: Step | Exception) -> None:
        self.h, self.steps = h, list(steps)
        self.sent: list[str] = []

    def send(self, message: OutboundMessage, before_part: Any = None) -> SendResult:
        step = self.steps.pop(0) if self.steps else None
        if isinstance(step, Exception):
            raise step
        if step is not None:
            step(message)
        self.sent.append(message.message_id)
        return self.h.outbox.send(message)


@pytest.fixture
def metrics(monkeypatch: pytest.MonkeyPatch) -> list[Metric]:
    published: list[Metric] = []
    monkeypatch.setattr(sending, "publish", published.extend)
    return published


def turn_outcome(h: MemoryHarness, participant: ConversationParticipant, msg_id: str = "SM-hi") -> EventOutcome:
    message = h.message(participant, "hi there", msg_id=msg_id)
    event = TurnEvent(
        kind=TurnKind.MESSAGE,
        participant_id=participant.id,
        event_id=msg_id,
        message=message,
        enqueued_at=h.clock.now(),
    )
    return process_turn(h.app, event)


def reply_delivery(h: MemoryHarness, participant: ConversationParticipant) -> DeliveryOutcome | None:
    [entry] = [e for e in h.store.transcripts[participant.id] if e.content == HELLO]
    return entry.delivery


def two_messages(participant: ConversationParticipant) -> EventOutcome:
    """A prompt and its poll, decided for an active participant."""
    kinds = [("prompt", OutboundKind.DAILY_PROMPT), ("poll", OutboundKind.INTENSITY_POLL)]
    return EventOutcome(
        participant_id=participant.id,
        event_id="daily:1",
        outbound=[
            OutboundMessage(
                participant_id=participant.id,
                to=participant.phone_number,
                body=body,
                kind=kind,
                message_id=f"daily:1#{i}",
            )
            for i, (body, kind) in enumerate(kinds)
        ],
        decided_status=ParticipantStatus.ACTIVE,
        recipient=participant,
    )


def test_a_reply_refused_for_good_is_recorded_failed_and_counted_not_the_event_retried(
    metrics: list[Metric], logged: Captured
) -> None:
    # Given a reply the provider refuses for good (an invalid number)
    h = memory_harness(ScriptedLLM([ScriptedLLM.text(HELLO)]))
    participant = h.enroll()
    outcome = turn_outcome(h, participant)
    refused = MessagingError("not a valid number", code="21211", retryable=False, undeliverable=True)
    h.app = replace(h.app, messenger=ScriptedMessenger(h, refused))

    # When its effects are applied, nothing is raised (a retry would be refused too) and nothing was sent
    assert apply_effects(h.app, outcome) == 0

    # Then its transcript entry says failed for good, with the code, and it is counted
    delivery = reply_delivery(h, participant)
    assert delivery is not None
    assert (delivery.status, delivery.reason, delivery.code) == ("failed", "undeliverable", "21211")
    assert delivery.at == h.clock.now()
    assert [(m.name, m.value) for m in metrics if m.name == "MessagesNotDelivered"] == [("MessagesNotDelivered", 1)]
    [record] = [r for r in logged.records if r.getMessage() == "message refused by the provider for good"]
    assert record.levelname == "WARNING"
    assert (record.participant_id, record.message_id, record.code) == (  # type: ignore[attr-defined]
        participant.id,
        outcome.outbound[0].message_id,
        "21211",
    )


def test_a_reply_sent_is_recorded_sent_with_the_provider_id(metrics: list[Metric]) -> None:
    h = memory_harness(ScriptedLLM([ScriptedLLM.text(HELLO)]))
    participant = h.enroll()
    outcome = turn_outcome(h, participant)

    assert apply_effects(h.app, outcome) == 1

    delivery = reply_delivery(h, participant)
    assert delivery is not None and delivery.status == "sent" and delivery.provider_id
    assert delivery.at == h.clock.now()
    assert delivery.parts == []  # one part: its id is the provider id
    assert not [m for m in metrics if m.name == "MessagesNotDelivered"]


def test_a_carrier_opt_out_skips_the_rest_of_the_event_and_opts_the_participant_out() -> None:
    # Given a prompt and its poll, the prompt refused because the number opted out at the carrier
    h = memory_harness()
    participant = h.enroll()
    refused = MessagingError("unsubscribed recipient", code="21610", retryable=False, undeliverable=True)
    messenger = ScriptedMessenger(h, refused)
    h.app = replace(h.app, messenger=messenger)

    # When the event's effects are applied
    assert apply_effects(h.app, two_messages(participant)) == 0

    # Then the poll is not even tried, and the opt-out is committed
    assert messenger.sent == []
    stored = h.store.participants[participant.id]
    assert stored.opted_out and stored.status is ParticipantStatus.PAUSED
    # as its own event, whose record says what the carrier answered
    assert [r.event_id for r in h.store.load(participant.id).recent_events] == ["opt-out-daily:1"]
    assert [e.content for e in h.store.transcripts[participant.id] if e.kind == "status_change"] == [
        "status active -> paused: carrier reports the number opted out (21610)"
    ]


def test_a_stop_committed_while_the_first_message_went_out_stops_the_second() -> None:
    # Given a prompt and its poll, and a STOP that lands while the prompt is being sent
    h = memory_harness()
    participant = h.enroll()

    def stop_lands(message: OutboundMessage) -> SendResult:
        stored = h.store.participants[participant.id]
        h.store.participants[participant.id] = stored.model_copy(
            update={"status": ParticipantStatus.PAUSED, "opted_out": True}
        )
        return SendResult(provider="local")

    messenger = ScriptedMessenger(h, stop_lands)
    h.app = replace(h.app, messenger=messenger)

    # When the event's effects are applied, only the prompt goes
    assert apply_effects(h.app, two_messages(participant)) == 1
    assert messenger.sent == ["daily:1#0"]


def test_a_participant_deleted_while_the_first_message_went_out_gets_nothing_more() -> None:
    h = memory_harness()
    participant = h.enroll()

    def deleted(message: OutboundMessage) -> SendResult:
        del h.store.participants[participant.id]
        return SendResult(provider="local")

    messenger = ScriptedMessenger(h, deleted)
    h.app = replace(h.app, messenger=messenger)

    assert apply_effects(h.app, two_messages(participant)) == 1
    assert messenger.sent == ["daily:1#0"]


def test_outcomes_that_cannot_be_written_leave_the_reply_sent_and_the_event_done(logged: Captured) -> None:
    # Given a store that fails to write delivery outcomes
    h = memory_harness(ScriptedLLM([ScriptedLLM.text(HELLO)]))
    participant = h.enroll()
    outcome = turn_outcome(h, participant)

    def failing(*args: Any, **kwargs: Any) -> None:
        raise StoreError("throttled", operation="record_outcomes", code="ThrottlingException")

    h.store.record_outcomes = failing  # type: ignore[method-assign]

    # When the reply goes out, the event is not failed for it (no redelivery, no second send)
    assert apply_effects(h.app, outcome) == 1
    assert [m.body for m in h.outbox.messages()][-1:] == [HELLO]
    [record] = [r for r in logged.records if r.getMessage() == "delivery outcomes not recorded"]
    assert record.participant_id == participant.id  # type: ignore[attr-defined]


@pytest.mark.logs_errors  # the lost record is logged at ERROR: the case itself
def test_a_send_failure_whose_record_cannot_be_kept_still_fails_the_event(logged: Captured) -> None:
    # Given a reply whose send fails for now, and a ledger that cannot record it
    h = memory_harness(ScriptedLLM([ScriptedLLM.text(HELLO)]))
    participant = h.enroll()
    outcome = turn_outcome(h, participant)

    def failing(*args: Any, **kwargs: Any) -> None:
        raise StoreError("throttled", operation="record_partial", code="ThrottlingException")

    h.app.ledger.record_partial = failing  # type: ignore[method-assign]
    h.app = replace(h.app, messenger=ScriptedMessenger(h, MessagingError("provider down", retryable=True)))

    # When its effects are applied, the send failure is what is raised (the event is redelivered)
    with pytest.raises(MessagingError):
        apply_effects(h.app, outcome)
    assert any(r.getMessage() == "could not record the messages already sent" for r in logged.records)
    # and the reply's entry says it failed for now
    delivery = reply_delivery(h, participant)
    assert delivery is not None and (delivery.status, delivery.reason, delivery.code) == ("failed", "retried", "")


def test_a_study_that_requires_consent_sends_nothing_to_a_participant_without_it(logged: Captured) -> None:
    # Given a participant enrolled without consent on record, in a study that has since required it
    h = memory_harness(ScriptedLLM([ScriptedLLM.text(HELLO)]))
    participant = h.enroll()
    assert h.store.participants[participant.id].consent is None
    h.app = replace(h.app, deps=replace(h.app.deps, config=replace(h.app.deps.config, consent_required=True)))
    outcome = turn_outcome(h, participant)
    before = len(h.outbox.messages())

    # When the turn's reply is to go out, it does not, and the record and the log say why
    assert apply_effects(h.app, outcome) == 0
    assert len(h.outbox.messages()) == before
    delivery = reply_delivery(h, participant)
    assert delivery is not None
    assert (delivery.status, delivery.reason, delivery.at) == ("skipped", "no consent on record", h.clock.now())
    [record] = [r for r in logged.records if r.getMessage() == "message not sent"]
    assert (record.participant_id, record.message_id, record.reason) == (  # type: ignore[attr-defined]
        participant.id,
        outcome.outbound[0].message_id,
        "no consent on record",
    )


def test_a_message_the_provider_skips_is_recorded_skipped_with_its_reason() -> None:
    h = memory_harness(ScriptedLLM([ScriptedLLM.text(HELLO)]))
    participant = h.enroll()
    outcome = turn_outcome(h, participant)

    class Skipping:
        def send(self, message: OutboundMessage, before_part: Any = None) -> SendResult:
            return SendResult(provider="local", skipped="outside the messaging window")

    h.app = replace(h.app, messenger=Skipping())

    assert apply_effects(h.app, outcome) == 0
    delivery = reply_delivery(h, participant)
    assert delivery is not None
    assert (delivery.status, delivery.reason, delivery.at) == ("skipped", "outside the messaging window", h.clock.now())


@pytest.mark.logs_errors  # a send failure is the case itself
def test_a_split_message_refused_part_way_records_the_parts_accepted(logged: Captured) -> None:
    h = memory_harness(ScriptedLLM([ScriptedLLM.text(HELLO)]))
    participant = h.enroll()
    outcome = turn_outcome(h, participant)
    refused = MessagingError("part 2 refused", code="30003", accepted_parts=["SM-part1"])
    h.app = replace(h.app, messenger=ScriptedMessenger(h, refused))

    with pytest.raises(MessagingError):
        apply_effects(h.app, outcome)

    delivery = reply_delivery(h, participant)
    assert delivery is not None
    assert (delivery.status, delivery.reason, delivery.code, delivery.parts) == (
        "failed",
        "retried",
        "30003",
        ["SM-part1"],
    )


def test_a_failed_send_keeps_the_events_record_for_its_redelivery() -> None:
    # Given a reply whose send fails for now
    h = memory_harness(ScriptedLLM([ScriptedLLM.text(HELLO)]))
    participant = h.enroll()
    outcome = turn_outcome(h, participant)
    h.app = replace(h.app, messenger=ScriptedMessenger(h, MessagingError("provider down")))
    with pytest.raises(MessagingError):
        apply_effects(h.app, outcome)

    # Then the ledger keeps what the redelivery resumes from: the message, the schedules, the status
    kept = h.app.ledger.unfinished(participant.id, "SM-hi")
    assert kept is not None
    assert kept.event_id == "SM-hi" and kept.committed_at == outcome.committed_at
    assert [(ref.id, ref.seq) for ref in kept.messages] == [
        (m.message_id, outcome.seqs[m.message_id]) for m in outcome.outbound
    ]
    assert kept.schedules == sorted(outcome.schedules)
    assert kept.status is ParticipantStatus.ACTIVE


@pytest.mark.logs_errors  # a send failure is the case itself
def test_a_redelivery_does_not_retry_a_message_refused_for_good(logged: Captured) -> None:
    # Given a prompt refused for good and its poll failing for now (the event is redelivered)
    h = memory_harness()
    participant = h.enroll()
    for_good = MessagingError("not a valid number", code="21211", retryable=False, undeliverable=True)
    messenger = ScriptedMessenger(h, for_good, MessagingError("provider down"))
    h.app = replace(h.app, messenger=messenger)
    with pytest.raises(MessagingError):
        apply_effects(h.app, two_messages(participant))

    # When it is redelivered, only the poll is tried again
    redelivered = two_messages(participant)
    redelivered.replayed = True
    assert apply_effects(h.app, redelivered) == 1
    assert messenger.sent == ["daily:1#1"]


@pytest.mark.parametrize(("part_ids", "parts"), [(["SM-1", "SM-2"], ["SM-1", "SM-2"]), (["SM-1"], [])])
def test_a_sent_message_records_its_parts_when_it_went_in_several(part_ids: list[str], parts: list[str]) -> None:
    h = memory_harness(ScriptedLLM([ScriptedLLM.text(HELLO)]))
    participant = h.enroll()
    outcome = turn_outcome(h, participant)

    class Parts:
        def send(self, message: OutboundMessage, before_part: Any = None) -> SendResult:
            return SendResult(provider="twilio", provider_message_id=part_ids[-1], part_ids=part_ids)

    h.app = replace(h.app, messenger=Parts())

    assert apply_effects(h.app, outcome) == 1
    delivery = reply_delivery(h, participant)
    assert delivery is not None
    assert (delivery.status, delivery.provider_id, delivery.parts, delivery.at) == (
        "sent",
        part_ids[-1],
        parts,
        h.clock.now(),
    )


def test_each_message_refused_for_good_is_counted_and_one_failing_for_now_is_not(metrics: list[Metric]) -> None:
    h = memory_harness()
    participant = h.enroll()
    for_good = MessagingError("not a valid number", code="21211", retryable=False, undeliverable=True)
    h.app = replace(h.app, messenger=ScriptedMessenger(h, for_good, for_good))
    assert apply_effects(h.app, two_messages(participant)) == 0
    assert [(m.name, m.value) for m in metrics] == [("MessagesNotDelivered", 2)]

    metrics.clear()
    h.app = replace(h.app, messenger=ScriptedMessenger(h, MessagingError("provider down")))
    with pytest.raises(MessagingError):
        apply_effects(h.app, two_messages(participant))
    assert not [m for m in metrics if m.name == "MessagesNotDelivered"]
