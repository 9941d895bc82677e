"""The write-once runner's paths that do not end in a plain commit (``usecases/write_once.py``): an
event for a participant who is gone, a redelivery that reads its effects back, the webhook handing its
schedule changes to the worker, the pending-effects marker, a save that fails for good."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.errors import MessagingError, ParticipantNotFound, StoreError
from promptpipe.flow.effects import daily_spec, put_schedule
from promptpipe.flow.lifecycle import OPT_OUT_CONFIRMATION
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.models.messaging import InboundKind, InboundMessage, OutboundMessage, SendResult
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.state import ScheduleInfo, ScheduleType, StateData
from promptpipe.models.store import EventRecord, StateCommit
from promptpipe.ports import PartCheck
from promptpipe.usecases.events import process_turn
from promptpipe.usecases.outcomes import EventOutcome
from promptpipe.usecases.receive_inbound import receive_inbound
from promptpipe.usecases.sending import apply_effects
from promptpipe.usecases.write_once import resume, run_once
from tests.support import MemoryHarness, RecordingQueue, memory_harness
from tests.support.logs import Captured

GONE = "p_" + "9" * 32
PREP_MINUTES = 10  # Settings().scheduler_prep_time_minutes


def daily(h: MemoryHarness, participant_id: str) -> ScheduleInfo:
    return ScheduleInfo(
        id="s1",
        type=ScheduleType.FIXED,
        fixed_time="08:30",
        timezone="UTC",
        created_at=h.clock.now(),
        timer_id=f"{participant_id}-d1",
    )


def with_live_daily(h: MemoryHarness, participant: ConversationParticipant) -> ScheduleInfo:
    """A daily prompt in the participant's registry and live at the scheduler."""
    schedule = daily(h, participant.id)
    flow = h.store.flows[participant.id]
    data = StateData(dict(flow.state_data))
    data.set_schedules([schedule])
    h.store.flows[participant.id] = flow.model_copy(update={"state_data": data.raw})
    put_schedule(h.timers, daily_spec(participant.id, schedule, PREP_MINUTES))
    return schedule


def message_event(h: MemoryHarness, participant: ConversationParticipant, text: str, msg_id: str) -> TurnEvent:
    return TurnEvent(
        kind=TurnKind.MESSAGE,
        participant_id=participant.id,
        event_id=msg_id,
        message=h.message(participant, text, msg_id=msg_id),
        enqueued_at=h.clock.now(),
    )


def stop(h: MemoryHarness, participant: ConversationParticipant, msg_id: str) -> None:
    receive_inbound(
        h.app,
        InboundMessage(
            provider="local",
            provider_message_id=msg_id,
            from_phone=participant.phone_number,
            body="STOP",
            kind=InboundKind.TEXT,
            received_at=h.clock.now(),
        ),
    )


def schedule_events(h: MemoryHarness) -> list[TurnEvent]:
    """What was queued for the worker to apply, the enrolment's greeting aside."""
    assert isinstance(h.app.queue, RecordingQueue)
    return [event for event in h.app.queue.events if event.kind is not TurnKind.GREETING]


def test_an_event_for_a_participant_who_is_gone_removes_the_schedule_that_fired_it(logged: Captured) -> None:
    # Given a daily prompt still live for a participant who is no longer there
    h = memory_harness()
    schedule = daily(h, GONE)
    put_schedule(h.timers, daily_spec(GONE, schedule, PREP_MINUTES))
    worked: list[str] = []

    # When it fires
    outcome = run_once(
        h.app, GONE, "daily:exec-1", lambda session, out: worked.append("ran"), firing_schedules=(schedule.timer_id,)
    )

    # Then nothing ran or was committed, the orphan schedule is gone, and the log names the participant
    assert worked == [] and h.store.commits == 0
    assert h.timers.describe(schedule.timer_id) is None
    assert (outcome.participant_id, outcome.event_id, outcome.outbound, outcome.replayed) == (
        GONE,
        "daily:exec-1",
        [],
        False,
    )
    [record] = [r for r in logged.records if r.name == "promptpipe.usecases.write_once"]
    assert record.getMessage() == "event for a participant that no longer exists"
    assert record.participant_id == GONE  # type: ignore[attr-defined]


def test_a_redelivered_turn_reads_back_the_effects_of_its_first_delivery() -> None:
    # Given a turn processed and its reply sent
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("Hi! What habit would you like to build?")]))
    participant = h.enroll()
    event = message_event(h, participant, "hi there", "SM-hi")
    first = process_turn(h.app, event)
    apply_effects(h.app, first)
    sent = len(h.outbox.messages())
    h.clock.advance(timedelta(minutes=3))

    # When the queue delivers the same event again
    again = process_turn(h.app, event)

    # Then it is a replay with the very effects of the first delivery (what a failed send resumes from)
    assert again.replayed and not first.replayed
    assert (again.participant_id, again.event_id) == (participant.id, "SM-hi")
    assert [(m.message_id, m.body) for m in again.outbound] == [(m.message_id, m.body) for m in first.outbound]
    assert again.outbound
    assert again.seqs == first.seqs and again.seqs
    assert again.committed_at == first.committed_at is not None
    assert again.decided_status is ParticipantStatus.ACTIVE
    assert again.recipient is not None and again.recipient.id == participant.id
    # and nothing is sent twice
    apply_effects(h.app, again)
    assert len(h.outbox.messages()) == sent


def test_resume_wants_each_recorded_schedule_as_the_state_wants_it_now() -> None:
    # Given an active participant with a daily prompt, and an event record naming it and one timer
    # the state no longer wants
    h = memory_harness()
    participant = h.enroll()
    schedule = with_live_daily(h, participant)
    h.clock.advance(timedelta(hours=2))
    committed_at = h.clock.now()
    record = EventRecord(
        event_id="evt-1",
        committed_at=committed_at,
        schedules=[schedule.timer_id, f"{participant.id}-gone"],
        status=ParticipantStatus.ACTIVE,
    )

    # When its effects are read back
    effects = resume(h.app, h.app.sessions.open(participant.id, "evt-2"), record)

    # Then the daily prompt is wanted as it would be created now, the other is deleted, no message
    assert effects.schedules == {
        schedule.timer_id: daily_spec(participant.id, schedule, PREP_MINUTES, created_at=h.clock.now()),
        f"{participant.id}-gone": None,
    }
    assert effects.messages == [] and effects.seqs == {}
    assert (effects.participant_id, effects.event_id, effects.committed_at) == (participant.id, "evt-1", committed_at)
    assert effects.decided_status is ParticipantStatus.ACTIVE
    assert effects.recipient is not None and effects.recipient.id == participant.id


def test_the_webhook_hands_its_schedule_changes_to_the_worker_on_every_delivery() -> None:
    # Given an active participant with a live daily prompt
    h = memory_harness()
    participant = h.enroll()
    schedule = with_live_daily(h, participant)

    # When they text STOP (the webhook holds no Scheduler rights)
    stop(h, participant, "SM-stop")

    # Then the deletion goes to the worker through the queue, and the webhook left the schedule alone
    [event] = schedule_events(h)
    assert event.kind is TurnKind.SCHEDULES
    assert (event.participant_id, event.event_id) == (participant.id, "SM-stop")
    assert event.schedules == [schedule.timer_id]
    assert event.enqueued_at == h.clock.now()
    assert h.timers.describe(schedule.timer_id) is not None

    # And a redelivery of the same STOP (the provider retried) hands it over again
    h.clock.advance(timedelta(minutes=1))
    stop(h, participant, "SM-stop")
    assert [(e.kind, e.event_id, e.schedules) for e in schedule_events(h)] == [
        (TurnKind.SCHEDULES, "SM-stop", [schedule.timer_id])
    ] * 2
    assert h.timers.describe(schedule.timer_id) is not None


def test_the_webhook_leaves_the_pending_effects_marker_to_the_worker_which_repairs_it() -> None:
    # Given a participant whose schedule changes failed after an earlier commit (the marker is set)
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("Hello!")]))
    participant = h.enroll()
    token = h.store.pending_effects.mark(participant.id)

    # When a webhook event commits for them, the marker stays (the webhook cannot repair schedules)
    stop(h, participant, "SM-stop")
    assert h.store.pending_effects.markers == {participant.id: token}

    # And the worker's next event repairs the schedules and clears it
    other = h.enroll(phone="+14155550102")
    marker = h.store.pending_effects.mark(other.id)
    assert marker
    outcome = process_turn(h.app, message_event(h, other, "hello", "SM-hello"))
    assert outcome.pending_effects == marker
    apply_effects(h.app, outcome)
    assert other.id not in h.store.pending_effects.markers


@pytest.mark.logs_errors  # the failed save is logged at ERROR
def test_a_turn_whose_save_fails_for_good_still_sends_its_reply_marked_degraded(logged: Captured) -> None:
    # Given a participant, and a store whose next commit fails and does not land
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("Hi! What habit would you like to build?")]))
    participant = h.enroll()
    commit = h.store.commit

    def failing(request: StateCommit) -> None:
        h.store.commit = commit  # type: ignore[method-assign]
        raise StoreError("throttled", operation="DynamoStateStore.commit", code="ThrottlingException")

    h.store.commit = failing  # type: ignore[method-assign]
    before = len(h.outbox.messages())

    # When a message is processed by the worker
    outcome: EventOutcome = process_turn(h.app, message_event(h, participant, "hi there", "SM-hi"))
    apply_effects(h.app, outcome)

    # Then the reply goes out all the same, flagged degraded, with no schedule change
    assert outcome.degraded and outcome.outbound and outcome.schedules == {}
    assert [m.body for m in h.outbox.messages()[before:]] == [m.body for m in outcome.outbound]
    [record] = [r for r in logged.records if r.getMessage() == "state commit failed; delivering the reply anyway"]
    assert record.participant_id == participant.id  # type: ignore[attr-defined]


def test_a_webhook_stop_whose_confirmation_fails_to_send_confirms_on_the_providers_retry() -> None:
    # Given an active participant with a live daily prompt, and a provider that fails the next send
    h = memory_harness()
    participant = h.enroll()
    schedule = with_live_daily(h, participant)
    before = len(h.outbox.messages())
    h.outbox.fail_next(1)

    # When they text STOP, the send failure reaches the webhook (the provider retries) ...
    with pytest.raises(MessagingError):
        stop(h, participant, "SM-stop")
    assert len(h.outbox.messages()) == before

    # ... and the retry sends the confirmation once, and hands the deletion to the worker again
    h.clock.advance(timedelta(minutes=1))
    stop(h, participant, "SM-stop")
    assert [m.body for m in h.outbox.messages()[before:]] == [OPT_OUT_CONFIRMATION]
    assert [e.schedules for e in schedule_events(h)] == [[schedule.timer_id]] * 2


def test_a_failed_reply_is_resumed_from_its_kept_record_after_the_state_window_lost_it() -> None:
    # Given a turn whose reply failed to send (the worker raised; the queue will redeliver it); the
    # redelivery, its record out of the window, spends a model call whose answer is discarded
    # (docs/reliability.md#known-gaps)
    hello = ScriptedLLM.text("Hi! What habit would you like to build?")
    h = memory_harness(ScriptedLLM([hello, ScriptedLLM.text("discarded")]))
    participant = h.enroll()
    event = message_event(h, participant, "hi there", "SM-hi")
    first = process_turn(h.app, event)
    h.outbox.fail_next(1)
    with pytest.raises(MessagingError):
        apply_effects(h.app, first)
    before = len(h.outbox.messages())
    # and, before the redelivery, enough later commits that the state item's window no longer holds its record
    h.store.events[participant.id] = []

    # When the queue redelivers it
    h.clock.advance(timedelta(minutes=5))
    again = process_turn(h.app, event)
    apply_effects(h.app, again)

    # Then the reply is resumed from the record kept with the failure and sent once
    assert again.replayed
    assert [m.body for m in h.outbox.messages()[before:]] == ["Hi! What habit would you like to build?"]
    assert again.committed_at == first.committed_at and again.seqs == first.seqs


class CountingProvider:
    """The local outbox behind a provider that does not deduplicate (Twilio and Meta do not):
    every send that returns is one message on the participant's phone."""

    def __init__(self, h: MemoryHarness) -> None:
        self.outbox, self.accepted = h.outbox, list[str]()

    def send(self, message: OutboundMessage, before_part: PartCheck | None = None) -> SendResult:
        result = self.outbox.send(message, before_part)
        self.accepted.append(message.message_id)
        return result


@pytest.mark.parametrize("record_from", ["state item", "sent ledger"])
def test_a_reply_resumed_by_its_second_copy_is_not_sent_again_by_a_third(record_from: str) -> None:
    # Given a turn whose reply failed to send, its record in the state item's window or (after enough
    # later commits) only in the record kept with the failure; each copy past the window spends a
    # model call whose answer is discarded (docs/reliability.md#known-gaps)
    hello = ScriptedLLM.text("Hi! What habit would you like to build?")
    h = memory_harness(ScriptedLLM([hello, ScriptedLLM.text("discarded"), ScriptedLLM.text("discarded")]))
    participant = h.enroll()
    provider = CountingProvider(h)
    h.app = replace(h.app, messenger=provider)  # the context is frozen
    event = message_event(h, participant, "hi there", "SM-hi")
    first = process_turn(h.app, event)
    h.outbox.fail_next(1)
    with pytest.raises(MessagingError):
        apply_effects(h.app, first)
    [reply] = first.outbound

    def redeliver() -> EventOutcome:
        if record_from == "sent ledger":
            h.store.events[participant.id] = []  # the state item's window no longer holds the record
        h.clock.advance(timedelta(minutes=5))
        outcome = process_turn(h.app, event)
        apply_effects(h.app, outcome)
        return outcome

    # When the second copy sends the reply, and then a third copy of the event arrives
    second, third = redeliver(), redeliver()

    # Then the provider accepted the reply once across the three copies
    assert second.replayed and third.replayed
    assert provider.accepted == [reply.message_id]
    # and its transcript entry says sent, once, with the provider id of that one send
    [entry] = [e for e in h.store.transcripts[participant.id] if e.outbound is not None]
    assert entry.delivery is not None and entry.delivery.status == "sent"
    assert entry.delivery.provider_id == h.outbox.messages()[-1].provider_message_id


def test_a_participant_deleted_during_the_event_gets_nothing(logged: Captured) -> None:
    # Given a participant deleted while their turn was being worked on (the commit finds them gone)
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("Hi! What habit would you like to build?")]))
    participant = h.enroll()
    before = len(h.outbox.messages())

    def gone(request: StateCommit) -> None:
        raise ParticipantNotFound(participant.id)

    h.store.commit = gone  # type: ignore[method-assign]

    # When the worker processes their message
    outcome = process_turn(h.app, message_event(h, participant, "hi there", "SM-hi"))
    apply_effects(h.app, outcome)

    # Then nothing is sent, and the log says why, naming them
    assert outcome.outbound == [] and len(h.outbox.messages()) == before
    [record] = [r for r in logged.records if r.getMessage() == "participant deleted during the event"]
    assert record.participant_id == participant.id  # type: ignore[attr-defined]

    # And an operator's write for them is told they are not there (the API's 404)
    with pytest.raises(ParticipantNotFound):
        run_once(
            h.app,
            participant.id,
            "update-now",
            lambda session, out: session.apply("touch", lambda op: None),
            replay=False,
        )


def test_a_turn_whose_commit_landed_though_its_answer_was_lost_sends_its_reply_once(logged: Captured) -> None:
    # Given a store whose next commit lands but answers with an error
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("Hi! What habit would you like to build?")]))
    participant = h.enroll()
    commit = h.store.commit

    def lands_then_fails(request: StateCommit) -> None:
        h.store.commit = commit  # type: ignore[method-assign]
        commit(request)
        raise StoreError("answer lost", operation="DynamoStateStore.commit", code="RequestTimeout")

    h.store.commit = lands_then_fails  # type: ignore[method-assign]
    before = len(h.outbox.messages())

    # When the worker processes a message
    outcome = process_turn(h.app, message_event(h, participant, "hi there", "SM-hi"))
    apply_effects(h.app, outcome)

    # Then the landed commit counts: the reply goes out once, not degraded, and the log says so
    assert not outcome.degraded and outcome.committed_at is not None
    assert [m.body for m in h.outbox.messages()[before:]] == ["Hi! What habit would you like to build?"]
    [record] = [r for r in logged.records if r.getMessage() == "the commit landed although its answer failed"]
    assert record.participant_id == participant.id  # type: ignore[attr-defined]
