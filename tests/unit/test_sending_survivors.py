"""What ``apply_effects`` (``usecases/sending.py``) records of what went out, part by part: a message
stopped between its parts, what channel, template and segments a send used, a carrier opt-out's
skipped messages, a redelivery's record, and the delivery each study decision gets from its prompt
(docs/reliability.md, "The record under faults"; docs/studies.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

import pytest

from promptpipe.errors import EffectsPending, MessagingError, StoreError, TimerError
from promptpipe.models.decision import DecisionDelivery, DecisionRecord
from promptpipe.models.messaging import OutboundKind, OutboundMessage, SendResult
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus, engine_consent
from promptpipe.models.store import DeliveryOutcome
from promptpipe.usecases.outcomes import EventOutcome
from promptpipe.usecases.sending import apply_effects
from tests.support import MemoryHarness, memory_harness
from tests.support.logs import Captured
from tests.unit.test_sending_outcomes import ScriptedMessenger

PartCheck = Callable[[], "str | None"]


class RecordedOutcomes:
    """The delivery outcomes' one write per event, kept (by transcript seq)."""

    def __init__(self) -> None:
        self.written: dict[str, DeliveryOutcome] = {}

    def record_outcomes(
        self, participant_id: str, committed_at: datetime, outcomes: dict[str, DeliveryOutcome]
    ) -> None:
        self.written.update(outcomes)


class InParts:
    """Sends a message as an SMS in ``parts`` parts, asking the send rule before each after the first."""

    def __init__(self, parts: int, between: Callable[[], None] = lambda: None) -> None:
        self.parts, self.between = parts, between
        self.asked = 0

    def send(self, message: OutboundMessage, before_part: PartCheck | None = None) -> SendResult:
        ids: list[str] = []
        for n in range(1, self.parts + 1):
            if n > 1:
                self.between()
                assert before_part is not None
                self.asked += 1
                if (stop := before_part()) is not None:
                    return SendResult(
                        provider="twilio",
                        provider_message_id=ids[-1],
                        part_ids=ids,
                        parts=self.parts,
                        segments=self.parts,
                        stopped=stop,
                    )
            ids.append(f"SM-{message.message_id}-{n}")
        return SendResult(
            provider="twilio", provider_message_id=ids[-1], part_ids=ids, parts=self.parts, segments=self.parts
        )


def messages_outcome(
    h: MemoryHarness, participant: ConversationParticipant, count: int = 2, status: ParticipantStatus | None = None
) -> EventOutcome:
    """``count`` messages decided for ``participant``, each with a transcript entry (seq ``s<i>``)."""
    ids = [f"daily:1#{i}" for i in range(count)]
    return EventOutcome(
        participant_id=participant.id,
        event_id="daily:1",
        outbound=[
            OutboundMessage(
                participant_id=participant.id,
                to=participant.phone_number,
                body=f"message {i}",
                kind=OutboundKind.DAILY_PROMPT,
                message_id=mid,
            )
            for i, mid in enumerate(ids)
        ],
        decided_status=status or participant.status,
        recipient=participant,
        committed_at=h.clock.now(),
        seqs={mid: f"s{i}" for i, mid in enumerate(ids)},
    )


def recording(h: MemoryHarness, messenger: Any) -> RecordedOutcomes:
    outcomes = RecordedOutcomes()
    h.app = replace(h.app, messenger=messenger)
    h.store.record_outcomes = outcomes.record_outcomes  # type: ignore[method-assign]
    return outcomes


def decision(
    h: MemoryHarness, participant: ConversationParticipant, day: int, message_id: str | None
) -> DecisionRecord:
    """A committed decision, its delivery still pending (or not sent: no prompt was decided)."""
    record = DecisionRecord(
        decision_id=f"{participant.id}#morning#{day}",
        study_id="study-1",
        participant_id=participant.id,
        decision_point="morning",
        study_day=day,
        decided_at=h.clock.now(),
        decided_at_local=h.clock.now(),
        available=True,
        probabilities={"prompt": 0.5, "none": 0.5},
        arm="prompt" if message_id else "none",
        delivery=DecisionDelivery.PENDING if message_id else DecisionDelivery.NOT_SENT,
        message_id=message_id,
    )
    h.store.decisions[record.decision_id] = record
    return record


def test_a_stop_between_parts_records_the_parts_that_went_and_why_the_rest_did_not(logged: Captured) -> None:
    # Given a three-part SMS, and a STOP committed while its first part goes
    h = memory_harness()
    participant = h.enroll()

    def stop_lands() -> None:
        stored = h.store.participants[participant.id]
        h.store.participants[participant.id] = stored.model_copy(
            update={"status": ParticipantStatus.PAUSED, "opted_out": True}
        )

    messenger = InParts(3, between=stop_lands)
    outcomes = recording(h, messenger)
    outcome = messages_outcome(h, participant, count=1)

    # When it is sent, only its first part goes
    assert apply_effects(h.app, outcome) == 0
    assert messenger.asked == 1

    # Then its outcome says skipped, after which part, with the part that went and what it went over
    assert outcomes.written["s0"] == DeliveryOutcome(
        status="skipped",
        reason="participant opted out (after part 1 of 3)",
        provider_id="SM-daily:1#0-1",
        parts=["SM-daily:1#0-1"],
        at=h.clock.now(),
        channel="sms",
        segments=3,
    )
    # and the log says which message stopped, for whom, and why
    [record] = [r for r in logged.records if r.getMessage() == "message stopped between its parts"]
    assert (record.participant_id, record.message_id, record.reason) == (  # type: ignore[attr-defined]
        participant.id,
        "daily:1#0",
        "participant opted out",
    )


def test_a_message_in_parts_goes_in_full_when_nothing_changed_between_them() -> None:
    h = memory_harness()
    participant = h.enroll()
    messenger = InParts(2)
    outcomes = recording(h, messenger)

    assert apply_effects(h.app, messages_outcome(h, participant, count=1)) == 1

    assert messenger.asked == 1  # the rule is asked before the second part
    assert outcomes.written["s0"] == DeliveryOutcome(
        status="sent",
        provider_id="SM-daily:1#0-2",
        parts=["SM-daily:1#0-1", "SM-daily:1#0-2"],
        at=h.clock.now(),
        channel="sms",
        segments=2,
    )


def test_a_message_decided_for_a_paused_participant_goes_in_full_while_they_stay_paused() -> None:
    # Given a message decided while the participant is paused (the part check compares with that status)
    h = memory_harness()
    participant = h.enroll()
    paused = participant.model_copy(update={"status": ParticipantStatus.PAUSED})
    h.store.participants[participant.id] = paused
    messenger = InParts(2)
    outcomes = recording(h, messenger)

    assert apply_effects(h.app, messages_outcome(h, paused, count=1, status=ParticipantStatus.PAUSED)) == 1
    assert outcomes.written["s0"].status == "sent"


def test_consent_withdrawn_between_parts_stops_the_rest_in_a_study_that_requires_it() -> None:
    # Given a study that requires consent, and a participant whose consent is on record until the first part went
    h = memory_harness()
    enrolled = h.enroll()
    participant = enrolled.model_copy(update={"consent": engine_consent(h.clock.now(), "sms")})
    h.store.participants[participant.id] = participant

    def withdrawn() -> None:
        h.store.participants[participant.id] = participant.model_copy(update={"consent": None})

    outcomes = recording(h, InParts(2, between=withdrawn))
    h.app = replace(h.app, deps=replace(h.app.deps, config=replace(h.app.deps.config, consent_required=True)))

    assert apply_effects(h.app, messages_outcome(h, participant, count=1)) == 0
    delivery = outcomes.written["s0"]
    assert (delivery.status, delivery.reason) == ("skipped", "no consent on record (after part 1 of 2)")


@pytest.mark.parametrize(
    ("result", "channel"),
    [
        (SendResult(provider="whatsapp_cloud", provider_message_id="wamid.1", template="daily_prompt"), "whatsapp"),
        (SendResult(provider="twilio", provider_message_id="SM-1", segments=2), "sms"),
        (SendResult(provider="twilio", provider_message_id="SM-1"), "whatsapp"),
        (SendResult(provider="local", provider_message_id="local-1"), "local"),
    ],
)
def test_a_sent_message_records_its_channel_template_and_segments(result: SendResult, channel: str) -> None:
    h = memory_harness()
    participant = h.enroll()

    class Sends:
        def send(self, message: OutboundMessage, before_part: Any = None) -> SendResult:
            return result

    outcomes = recording(h, Sends())

    assert apply_effects(h.app, messages_outcome(h, participant, count=1)) == 1
    assert outcomes.written["s0"] == DeliveryOutcome(
        status="sent",
        provider_id=result.provider_message_id,
        at=h.clock.now(),
        channel=channel,
        template=result.template,
        segments=result.segments,
    )


def test_a_message_the_provider_skips_records_the_channel_it_would_have_gone_over() -> None:
    h = memory_harness()
    participant = h.enroll()

    class Skipping:
        def send(self, message: OutboundMessage, before_part: Any = None) -> SendResult:
            return SendResult(provider="whatsapp_cloud", skipped="outside_window")

    outcomes = recording(h, Skipping())

    assert apply_effects(h.app, messages_outcome(h, participant, count=1)) == 0
    assert outcomes.written["s0"] == DeliveryOutcome(
        status="skipped", reason="outside_window", at=h.clock.now(), channel="whatsapp"
    )


def test_a_carrier_opt_out_records_every_later_message_of_the_event_skipped_with_the_code() -> None:
    # Given three messages, the first refused because the number opted out at the carrier
    h = memory_harness()
    participant = h.enroll()
    refused = MessagingError("unsubscribed recipient", code="21610", retryable=False, undeliverable=True)
    messenger = ScriptedMessenger(h, refused)
    outcomes = recording(h, messenger)

    assert apply_effects(h.app, messages_outcome(h, participant, count=3)) == 0

    # Then neither later message is tried, and each is recorded skipped, with the carrier's answer
    assert messenger.sent == []
    skipped = DeliveryOutcome(status="skipped", reason="carrier reports the number opted out (21610)", at=h.clock.now())
    assert (outcomes.written["s1"], outcomes.written["s2"]) == (skipped, skipped)
    assert outcomes.written["s0"] == DeliveryOutcome(
        status="failed", code="21610", reason="undeliverable", at=h.clock.now()
    )


@pytest.mark.logs_errors  # a send failure is the case itself
def test_a_send_failing_for_now_records_when_it_failed(logged: Captured) -> None:
    h = memory_harness()
    participant = h.enroll()
    outcomes = recording(h, ScriptedMessenger(h, MessagingError("provider down")))

    with pytest.raises(MessagingError):
        apply_effects(h.app, messages_outcome(h, participant, count=1))
    assert outcomes.written["s0"] == DeliveryOutcome(status="failed", reason="retried", at=h.clock.now())


@pytest.mark.logs_errors  # a send failure is the case itself
def test_a_second_redelivery_still_knows_what_the_first_delivery_sent(logged: Captured) -> None:
    # Given an event whose second message failed for now, then failed again on its redelivery
    h = memory_harness()
    participant = h.enroll()
    down = MessagingError("provider down")
    messenger = ScriptedMessenger(h, lambda m: SendResult(provider="local"), down, down)
    h.app = replace(h.app, messenger=messenger)
    with pytest.raises(MessagingError):
        apply_effects(h.app, messages_outcome(h, participant))
    again = messages_outcome(h, participant)
    again.replayed = True
    with pytest.raises(MessagingError):
        apply_effects(h.app, again)

    # When it is delivered a third time, the first message is still not sent again
    third = messages_outcome(h, participant)
    third.replayed = True
    assert apply_effects(h.app, third) == 1
    assert messenger.sent == ["daily:1#0", "daily:1#1"]


def redelivered(h: MemoryHarness, participant: ConversationParticipant, count: int = 2) -> EventOutcome:
    again = messages_outcome(h, participant, count=count)
    again.replayed = True
    return again


@pytest.mark.logs_errors  # a send failure is the case itself
def test_a_redelivery_that_sends_the_rest_leaves_nothing_for_a_third_copy(logged: Captured) -> None:
    # Given an event whose second message failed for now, then went on its redelivery
    h = memory_harness()
    participant = h.enroll()
    messenger = ScriptedMessenger(h, lambda m: SendResult(provider="local"), MessagingError("provider down"))
    h.app = replace(h.app, messenger=messenger)
    with pytest.raises(MessagingError):
        apply_effects(h.app, messages_outcome(h, participant))
    assert apply_effects(h.app, redelivered(h, participant)) == 1

    # When a third copy of the event is delivered, nothing is sent again
    assert apply_effects(h.app, redelivered(h, participant)) == 0
    assert messenger.sent == ["daily:1#0", "daily:1#1"]
    # and the sent record says both went, with no part left to resume
    assert h.app.ledger.partial(participant.id, "daily:1") == {"daily:1#0", "daily:1#1"}
    assert h.app.ledger.accepted_parts(participant.id, "daily:1") == {}


@pytest.mark.logs_errors  # a send failure is the case itself
def test_a_resumed_message_is_on_the_sent_record_before_it_leaves(logged: Captured) -> None:
    # Given an event whose only message failed for now
    h = memory_harness()
    participant = h.enroll()
    h.app = replace(h.app, messenger=ScriptedMessenger(h, MessagingError("provider down")))
    with pytest.raises(MessagingError):
        apply_effects(h.app, messages_outcome(h, participant, count=1))
    assert h.app.ledger.partial(participant.id, "daily:1") == set()

    # When its redelivery sends it, the record already says it went at the moment it leaves
    # (a process killed after that instant leaves a record on which no later copy sends it again)
    on_record: list[set[str] | None] = []
    messenger = ScriptedMessenger(h, lambda m: on_record.append(h.app.ledger.partial(participant.id, "daily:1")))
    h.app = replace(h.app, messenger=messenger)
    assert apply_effects(h.app, redelivered(h, participant, count=1)) == 1
    assert on_record == [{"daily:1#0"}]


@pytest.mark.logs_errors  # a send failure is the case itself
def test_a_resumed_send_that_fails_again_is_taken_off_the_record_and_sent_by_the_next_copy(logged: Captured) -> None:
    h = memory_harness()
    participant = h.enroll()
    down = MessagingError("provider down")
    messenger = ScriptedMessenger(h, down, down)
    h.app = replace(h.app, messenger=messenger)
    with pytest.raises(MessagingError):
        apply_effects(h.app, messages_outcome(h, participant, count=1))
    with pytest.raises(MessagingError):
        apply_effects(h.app, redelivered(h, participant, count=1))
    assert h.app.ledger.partial(participant.id, "daily:1") == set()

    assert apply_effects(h.app, redelivered(h, participant, count=1)) == 1
    assert apply_effects(h.app, redelivered(h, participant, count=1)) == 0
    assert messenger.sent == ["daily:1#0"]


@pytest.mark.logs_errors  # a send failure and the lost record are the case itself
def test_a_resumed_message_whose_record_cannot_be_written_is_not_sent(logged: Captured) -> None:
    # Given an event whose only message failed for now, and a ledger that then cannot be written
    h = memory_harness()
    participant = h.enroll()
    messenger = ScriptedMessenger(h, MessagingError("provider down"))
    h.app = replace(h.app, messenger=messenger)
    with pytest.raises(MessagingError):
        apply_effects(h.app, messages_outcome(h, participant, count=1))
    record_partial = h.app.ledger.record_partial

    def failing(*args: Any, **kwargs: Any) -> None:
        raise StoreError("throttled", operation="record_partial", code="ThrottlingException")

    h.app.ledger.record_partial = failing  # type: ignore[method-assign]

    # When it is redelivered, the message does not leave, and the event fails (it is redelivered)
    with pytest.raises(StoreError):
        apply_effects(h.app, redelivered(h, participant, count=1))
    assert messenger.sent == []

    # Then, the ledger back, the next copy sends it once
    h.app.ledger.record_partial = record_partial  # type: ignore[method-assign]
    assert apply_effects(h.app, redelivered(h, participant, count=1)) == 1
    assert apply_effects(h.app, redelivered(h, participant, count=1)) == 0
    assert messenger.sent == ["daily:1#0"]


@pytest.mark.logs_errors  # a send failure is the case itself
def test_messages_a_resumed_carrier_opt_out_skips_are_on_the_record_for_a_third_copy(logged: Captured) -> None:
    # Given an event whose two messages failed for now; on its redelivery the first is refused
    # because the number opted out at the carrier, which skips the second
    h = memory_harness()
    participant = h.enroll()
    refused = MessagingError("unsubscribed recipient", code="21610", retryable=False, undeliverable=True)
    messenger = ScriptedMessenger(h, MessagingError("provider down"), refused)
    h.app = replace(h.app, messenger=messenger)
    with pytest.raises(MessagingError):
        apply_effects(h.app, messages_outcome(h, participant))
    assert apply_effects(h.app, redelivered(h, participant)) == 0

    # Then the record has both, and a third copy tries neither
    assert h.app.ledger.partial(participant.id, "daily:1") == {"daily:1#0", "daily:1#1"}
    assert apply_effects(h.app, redelivered(h, participant)) == 0
    assert messenger.sent == []


@pytest.mark.parametrize(
    ("send", "delivery", "sent"),
    [
        (lambda m: SendResult(provider="local"), DecisionDelivery.SENT, True),
        (MessagingError("invalid", code="21211", retryable=False, undeliverable=True), DecisionDelivery.FAILED, False),
        (lambda m: SendResult(provider="whatsapp_cloud", skipped="outside_window"), DecisionDelivery.NOT_SENT, False),
    ],
)
def test_a_decisions_delivery_follows_its_prompts_outcome(
    send: Callable[[OutboundMessage], SendResult] | Exception, delivery: DecisionDelivery, sent: bool
) -> None:
    # Given an event with a decision without a prompt (the no-prompt arm) and then one with its prompt
    h = memory_harness()
    participant = h.enroll()
    none_arm = decision(h, participant, 1, None)
    prompted = decision(h, participant, 2, "daily:1#0")
    outcome = messages_outcome(h, participant, count=1)
    outcome.decisions = [none_arm, prompted]

    class Sends:
        def send(self, message: OutboundMessage, before_part: Any = None) -> SendResult:
            if isinstance(send, Exception):
                raise send
            return send(message)

    h.app = replace(h.app, messenger=Sends())
    apply_effects(h.app, outcome)

    # Then the prompted decision's delivery (and when it was sent) follows the prompt; the other is untouched
    stored = h.app.decisions.get(prompted.decision_id)
    assert stored is not None
    assert (stored.delivery, stored.sent_at) == (delivery, h.clock.now() if sent else None)
    assert h.app.decisions.get(none_arm.decision_id) == none_arm


@pytest.mark.logs_errors  # the lost delivery is logged at ERROR: the case itself
def test_a_decisions_delivery_that_cannot_be_written_is_logged_and_the_message_still_counts(logged: Captured) -> None:
    h = memory_harness()
    participant = h.enroll()
    prompted = decision(h, participant, 1, "daily:1#0")
    outcome = messages_outcome(h, participant, count=1)
    outcome.decisions = [prompted]

    def failing(record: DecisionRecord) -> None:
        raise StoreError("throttled", operation="update", code="ThrottlingException")

    h.app.decisions.update = failing  # type: ignore[method-assign]

    assert apply_effects(h.app, outcome) == 1
    stored = h.store.decisions[prompted.decision_id]
    assert stored.delivery is DecisionDelivery.PENDING  # never counted as sent
    [record] = [r for r in logged.records if r.getMessage() == "could not record a decision's delivery"]
    assert record.levelname == "ERROR"
    assert record.participant_id == participant.id  # type: ignore[attr-defined]


@pytest.mark.logs_errors  # a send failure is the case itself
def test_a_failed_send_keeps_the_schedules_its_redelivery_must_apply(logged: Captured) -> None:
    h = memory_harness()
    participant = h.enroll()
    h.app = replace(h.app, messenger=ScriptedMessenger(h, MessagingError("provider down")))
    outcome = messages_outcome(h, participant, count=1)
    outcome.schedules = {"intensity": None, "daily": None}

    with pytest.raises(MessagingError):
        apply_effects(h.app, outcome)

    kept = h.app.ledger.unfinished(participant.id, "daily:1")
    assert kept is not None and kept.schedules == ["daily", "intensity"]


def test_a_reply_nothing_committed_for_records_no_outcome() -> None:
    # Given a degraded reply: sent, though nothing was committed (no transcript entry to write to)
    h = memory_harness()
    participant = h.enroll()
    outcomes = recording(h, ScriptedMessenger(h))
    outcome = messages_outcome(h, participant, count=1)
    outcome.committed_at = None

    assert apply_effects(h.app, outcome) == 1
    assert outcomes.written == {}


def test_schedules_that_fail_after_the_send_mark_the_participant_for_repair() -> None:
    # Given a message that goes, and a scheduler that then fails the event's schedule change
    h = memory_harness()
    participant = h.enroll()
    messenger = ScriptedMessenger(h)
    h.app = replace(h.app, messenger=messenger)
    outcome = messages_outcome(h, participant, count=1)
    outcome.schedules = {"daily": None}
    h.timers.fail_next = TimerError("throttled")

    # When its effects are applied, the event fails for the schedules only
    with pytest.raises(EffectsPending):
        apply_effects(h.app, outcome)

    # Then the message went once, and the participant is marked: the next event or the sweep repairs them
    assert messenger.sent == ["daily:1#0"]
    assert participant.id in h.store.pending_effects.markers
