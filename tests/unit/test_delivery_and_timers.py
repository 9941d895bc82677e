"""Daily delivery and the one-shot timers, with in-memory fakes: docs/behaviour.md on delivery, reminder,
auto-feedback, intensity, Done, feedback timers and lifecycle; scenarios SC-6, SC-7, SC-8 and SC-11; cases S4–S6 and
S12–S14.

A daily schedule "fires" by running its registered payload through ``usecases.daily_prompts.run_scheduled_prompt``
with an execution id, as the scheduled-prompt handler does; one-shots fire through ``fire_due`` at
their time, once, and are deleted afterwards (EventBridge's ActionAfterCompletion=DELETE).
Duplicated and late firings are replayed by hand with the payload EventBridge held.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from promptpipe.adapters.memory_audit import MemoryAuditLog
from promptpipe.adapters.memory_decisions import InMemoryDecisionLog
from promptpipe.adapters.memory_timers import ScheduledTimer
from promptpipe.adapters.phone_claims import MemoryPhoneClaims
from promptpipe.adapters.sent_ledger import InMemorySentLedger
from promptpipe.adapters.team_alerts import LogTeamAlerts
from promptpipe.config import CoreConfig
from promptpipe.errors import LLMError
from promptpipe.flow.delivery import FALLBACK_PROMPT
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.session import SessionFactory
from promptpipe.flow.timer_events import FEEDBACK_FOLLOWUP_TEXT, FEEDBACK_NUDGE_TEXT, REMINDER_TEXT
from promptpipe.flow.tools.base import ToolContext
from promptpipe.flow.tools.scheduler import SchedulerTool
from promptpipe.models.api import ParticipantUpdate, StateOverride
from promptpipe.models.events import ScheduledPromptPayload, TimerKind, TimerPayload, TurnEvent, TurnKind
from promptpipe.models.llm import ChatRequest, ChatResponse, ToolCall
from promptpipe.models.messaging import OutboundKind
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.profile import UserProfile
from promptpipe.models.state import DataKey, StateData, SubState
from promptpipe.settings import Settings
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.daily_prompts import run_scheduled_prompt
from promptpipe.usecases.events import process_turn
from promptpipe.usecases.outcomes import EventOutcome
from promptpipe.usecases.participants import delete_participant, override_state, update_participant
from promptpipe.usecases.sending import apply_effects
from promptpipe.usecases.timer_firings import run_timer
from promptpipe.wiring import NoDeadLetters
from tests.support import MemoryHarness, RecordingQueue, memory_harness
from tests.support.schedules import apply_schedules

TORONTO = ZoneInfo("America/Toronto")
HONOLULU = ZoneInfo("Pacific/Honolulu")
REPLY = "Thanks for the update!"


class StubLLM:
    """The generator answers with a prompt naming the intensity it was given; conversation turns
    play ``turns`` first (e.g. a tool call), then answer ``REPLY``."""

    def __init__(self, *, generator_fails: bool = False, turns: list[ChatResponse] | None = None) -> None:
        self.generator_fails = generator_fails
        self.turns = list(turns or [])
        self.requests: list[ChatRequest] = []

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request.model_copy(deep=True))
        if request.purpose == "prompt_generator":
            if self.generator_fails:
                raise LLMError("model unavailable")
            intensity = re.search(r"Intensity: (\w+)", request.messages[0].content or "")
            level = intensity[1] if intensity else "?"
            return ChatResponse(content=f"After coffee, stretch ({level}). Would that feel doable?")
        if self.turns:
            return self.turns.pop(0)
        return ChatResponse(content=REPLY)

    def generator_requests(self) -> list[ChatRequest]:
        return [r for r in self.requests if r.purpose == "prompt_generator"]


def at_local(day: date, hhmm: str, zone: ZoneInfo = TORONTO) -> datetime:
    hour, minute = (int(x) for x in hhmm.split(":"))
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone).astimezone(UTC)


MONDAY = date(2026, 3, 2)  # tests.support.START is Monday 07:00 in Toronto


def given(
    *,
    settings: Settings | None = None,
    llm: StubLLM | None = None,
    zone: str = "America/Toronto",
    sub_state: str = "FEEDBACK",
    profile: dict[str, Any] | None = None,
    schedule: dict[str, Any] | None = None,
) -> tuple[MemoryHarness, ConversationParticipant, ScheduledTimer]:
    """A participant past intake (complete profile, sub-state) with one registered daily schedule."""
    h = memory_harness(llm or StubLLM(), settings=settings)
    p = h.enroll(timezone=zone) if zone else h.enroll()
    data = h.store.flows[p.id].state_data
    fields = {"habit_domain": "exercise", "preferred_time": "09:30", "prompt_anchor": "after coffee", **(profile or {})}
    data[DataKey.USER_PROFILE.value] = json.dumps(UserProfile(**fields).to_json_dict())
    if sub_state:
        data[DataKey.CONVERSATION_STATE.value] = sub_state
    args = schedule or {"action": "create", "type": "fixed", "fixed_time": "09:30"}
    session = h.app.sessions.open(p.id, "create-schedule")
    assert SchedulerTool(10).execute(ToolContext(h.app.deps, session), args).ok
    apply_schedules(h.app, session.commit())
    [daily] = [s for s in h.timers.schedules.values() if s.kind == "daily_prompt"]
    return h, p, daily


def deliver(h: MemoryHarness, schedule: ScheduledTimer, at: datetime | None = None, event_id: str = "") -> EventOutcome:
    """The daily schedule fires (as the scheduled-prompt handler runs it)."""
    if at is not None:
        h.clock.set(at)
    payload = schedule.payload
    assert isinstance(payload, ScheduledPromptPayload)
    outcome = run_scheduled_prompt(h.app, payload, event_id=event_id or f"{schedule.name}:{h.clock.now().isoformat()}")
    apply_effects(h.app, outcome)
    return outcome


def fire(h: MemoryHarness, payload: TimerPayload | ScheduledPromptPayload, event_id: str) -> EventOutcome:
    if isinstance(payload, TimerPayload):
        outcome = run_timer(h.app, payload, event_id=event_id)
    else:
        outcome = run_scheduled_prompt(h.app, payload, event_id=event_id)
    apply_effects(h.app, outcome)
    return outcome


def fire_due(h: MemoryHarness, until: datetime) -> list[tuple[ScheduledTimer, EventOutcome]]:
    """Fire every due one-shot in time order (each deleted once fired), then set the clock."""
    fired: list[tuple[ScheduledTimer, EventOutcome]] = []
    while due := h.timers.due(until):
        schedule = due[0]
        del h.timers.schedules[schedule.name]
        h.clock.set(max(schedule.at, h.clock.now()))
        fired.append((schedule, fire(h, schedule.payload, f"{schedule.name}:{schedule.at.isoformat()}")))
    h.clock.set(until)
    return fired


def reply(
    h: MemoryHarness,
    p: ConversationParticipant,
    text: str,
    *,
    at: datetime | None = None,
    answer_id: str | None = None,
    received_at: datetime | None = None,
) -> EventOutcome:
    if at is not None:
        h.clock.set(at)
    message = h.message(p, text, answer_id=answer_id, msg_id=f"SM{len(h.store.transcripts.get(p.id, []))}")
    if received_at is not None:
        message = message.model_copy(update={"received_at": received_at})
    outcome = process_turn(
        h.app,
        TurnEvent(
            kind=TurnKind.MESSAGE,
            participant_id=p.id,
            event_id=message.provider_message_id,
            message=message,
            enqueued_at=h.clock.now(),
        ),
    )
    apply_effects(h.app, outcome)
    return outcome


def sent(h: MemoryHarness, p: ConversationParticipant, *kinds: OutboundKind) -> list[Any]:
    return [m for m in h.outbox.messages(p.id) if not kinds or m.kind in kinds]


def state(h: MemoryHarness, p: ConversationParticipant) -> dict[str, str]:
    return h.data(p.id)


def profile(h: MemoryHarness, p: ConversationParticipant) -> dict[str, Any]:
    return json.loads(h.data(p.id)[DataKey.USER_PROFILE.value])


def timer(h: MemoryHarness, kind: TimerKind, p: ConversationParticipant) -> ScheduledTimer | None:
    prefix = {
        TimerKind.DAILY_PROMPT_REMINDER: "reminder",
        TimerKind.AUTO_FEEDBACK: "autofb",
        TimerKind.FEEDBACK_TIMEOUT: "fbtimeout",
        TimerKind.FEEDBACK_FOLLOWUP: "fbfollowup",
        TimerKind.STATE_TRANSITION: "transition",
    }[kind]
    return h.timers.get(f"{p.id}-{prefix}")


def participant_timers(h: MemoryHarness, p: ConversationParticipant) -> list[str]:
    return sorted(name for name, s in h.timers.schedules.items() if s.payload.participant_id == p.id)


# === the delivery sequence (docs/behaviour.md#B-DELIV-1, B-DELIV-2, case S4) ==================


def test_s4_delivery_sends_prompt_and_poll_arms_reminder_and_auto_feedback_and_stores_pending() -> None:
    # Given a participant past intake with a 09:30 Toronto schedule
    h, p, daily = given()
    sent_at = at_local(MONDAY, "09:20")
    # When the schedule fires at 09:20
    outcome = deliver(h, daily, at=sent_at)
    # Then two messages go out: the prompt with the "Done" question, then the intensity poll.
    # Adaptation of S4 ("no poll support → prompt, intensity text"): the "Done" question travels
    # with the prompt (buttons or numbered text, per channel), the poll is its own message.
    assert outcome.delivery is not None and outcome.delivery.delivered
    prompt, poll = sent(h, p)
    assert (
        prompt.kind is OutboundKind.DAILY_PROMPT
        and prompt.body == "After coffee, stretch (normal). Would that feel doable?"
    )
    assert prompt.question is not None and [o.title for o in prompt.question.options] == ["Done", "Next time"]
    assert "Did you do it? Reply 1 for Done or 2 for Next time." in prompt.body_text
    assert poll.kind is OutboundKind.INTENSITY_POLL
    assert poll.question is not None and [o.title for o in poll.question.options] == [
        "Decrease",
        "Keep current",
        "Increase",
    ]
    # And the reminder is armed for 5 h later, guarded by the sent time, with the pending state stored
    reminder = timer(h, TimerKind.DAILY_PROMPT_REMINDER, p)
    assert reminder is not None and reminder.at == sent_at + timedelta(hours=5)
    assert reminder.payload.expected_sent_at == sent_at
    data = state(h, p)
    assert json.loads(data[DataKey.DAILY_PROMPT_PENDING.value]) == {
        "sent_at": "2026-03-02T14:20:00Z",
        "to": p.phone_number,
        "reminder_due_at": "2026-03-02T19:20:00Z",
    }
    assert data[DataKey.DAILY_PROMPT_REMINDER_TIMER_ID.value] == reminder.name
    # And the auto-feedback timer is armed for 5 minutes later
    autofb = timer(h, TimerKind.AUTO_FEEDBACK, p)
    assert autofb is not None and autofb.at == sent_at + timedelta(minutes=5)
    assert data[DataKey.AUTO_FEEDBACK_TIMER_ID.value] == autofb.name
    # And lastPromptSentAt, total_prompts, lastHabitPrompt, the intensity date (local) are recorded
    assert data[DataKey.LAST_PROMPT_SENT_AT.value] == "2026-03-02T14:20:00Z"
    assert profile(h, p)["total_prompts"] == 1
    assert data[DataKey.LAST_HABIT_PROMPT.value] == prompt.body
    assert data[DataKey.LAST_INTENSITY_PROMPT_DATE.value] == "2026-03-02"
    # And the prompt is in the conversation history and the transcript (docs/behaviour.md#B-DELIV-2)
    history = StateData(dict(data)).history()
    assert history[-1].role == "assistant" and history[-1].content == prompt.body
    kinds = [e.kind for e in h.store.transcripts[p.id]]
    assert kinds[-2:] == ["daily_prompt", "intensity_poll"]
    # And the generator was asked for a scheduled delivery
    [request] = h.llm.generator_requests()  # type: ignore[attr-defined]
    assert "scheduled daily prompt" in (request.messages[0].content or "")


@pytest.mark.parametrize("broken", ["model", "profile"])
def test_generation_failure_sends_the_fallback_prompt(broken: str) -> None:
    # Given a generator that fails, or a profile the generator refuses (no anchor)
    if broken == "model":
        h, p, daily = given(llm=StubLLM(generator_fails=True))
    else:
        h, p, daily = given(profile={"prompt_anchor": ""})
    # When the schedule fires
    outcome = deliver(h, daily, at=at_local(MONDAY, "09:20"))
    # Then our own short fallback prompt goes out and the rest of the sequence runs
    assert outcome.delivery is not None and outcome.delivery.used_fallback
    assert sent(h, p, OutboundKind.DAILY_PROMPT)[0].body == FALLBACK_PROMPT
    assert profile(h, p)["total_prompts"] == 1
    assert timer(h, TimerKind.DAILY_PROMPT_REMINDER, p) is not None


def test_no_delivery_when_inactive_or_schedule_no_longer_registered() -> None:
    # Given a registered schedule whose participant is paused
    h, p, daily = given()
    h.store.participants[p.id] = h.store.participants[p.id].model_copy(update={"status": "paused"})
    # When it fires / Then nothing is sent or armed
    outcome = deliver(h, daily, at=at_local(MONDAY, "09:20"))
    assert outcome.delivery is not None and outcome.delivery.skipped_reason == "participant paused"
    # Given an active participant whose schedule was deleted from the registry
    h2, p2, daily2 = given()
    h2.store.flows[p2.id].state_data[DataKey.SCHEDULE_REGISTRY.value] = "[]"
    # When the old schedule fires anyway / Then nothing is sent
    outcome2 = deliver(h2, daily2, at=at_local(MONDAY, "09:20"))
    assert outcome2.delivery is not None and outcome2.delivery.skipped_reason == "schedule no longer registered"
    for harness, participant in ((h, p), (h2, p2)):
        assert sent(harness, participant) == []
        assert [n for n in participant_timers(harness, participant) if not n.startswith(participant.id)] == []


def test_one_prompt_per_scheduler_execution() -> None:
    # Given a delivered prompt
    h, p, daily = given()
    first = deliver(h, daily, at=at_local(MONDAY, "09:20"), event_id="prompt-exec-1")
    # When the same execution is invoked again (a retry)
    again = deliver(h, daily, event_id="prompt-exec-1")
    # Then the stored messages are handed back, nothing is generated or counted twice
    assert again.replayed and [m.message_id for m in again.outbound] == [m.message_id for m in first.outbound]
    assert len(sent(h, p, OutboundKind.DAILY_PROMPT)) == 1
    assert profile(h, p)["total_prompts"] == 1
    assert len(h.llm.generator_requests()) == 1  # type: ignore[attr-defined]


# === reminders: docs/behaviour.md#SC-6, SC-7, cases S5, S6, S12–S14 ============================


def test_scenario_6_s5_reply_before_the_reminder_cancels_it() -> None:
    # Given a prompt delivered at 09:20
    h, p, daily = given()
    sent_at = at_local(MONDAY, "09:20")
    deliver(h, daily, at=sent_at)
    reminder = timer(h, TimerKind.DAILY_PROMPT_REMINDER, p)
    assert reminder is not None
    # When the participant replies 10 minutes later
    reply(h, p, "It went well", at=sent_at + timedelta(minutes=10))
    # Then the pending state and the reminder id are cleared, the reply time recorded and the
    # reminder's EventBridge schedule deleted
    data = state(h, p)
    assert DataKey.DAILY_PROMPT_PENDING.value not in data
    assert DataKey.DAILY_PROMPT_REMINDER_TIMER_ID.value not in data
    assert data[DataKey.DAILY_PROMPT_RESPONDED_AT.value] == "2026-03-02T14:30:00Z"
    assert reminder.name in h.timers.cancelled and timer(h, TimerKind.DAILY_PROMPT_REMINDER, p) is None
    # When the reminder fires anyway 5 h after the prompt (a firing already in flight)
    h.clock.set(reminder.at)
    outcome = fire(h, reminder.payload, "late-reminder")
    # Then it does nothing
    assert outcome.timer is not None and not outcome.timer.applied
    assert sent(h, p, OutboundKind.REMINDER) == []


def test_a_reply_older_than_the_prompt_does_not_cancel_its_reminder() -> None:
    # Given a prompt delivered at 09:20
    h, p, daily = given()
    sent_at = at_local(MONDAY, "09:20")
    deliver(h, daily, at=sent_at)
    # When a message received at 09:19 (queued behind the delivery) is processed
    reply(h, p, "morning!", at=sent_at + timedelta(minutes=1), received_at=sent_at - timedelta(minutes=1))
    # Then the prompt is still pending and its reminder still armed
    assert DataKey.DAILY_PROMPT_PENDING.value in state(h, p)
    assert timer(h, TimerKind.DAILY_PROMPT_REMINDER, p) is not None


def test_scenario_7_s6_reminder_fires_then_a_late_reply_finds_nothing_pending() -> None:
    # Given a prompt delivered at 09:20 and no reply
    h, p, daily = given()
    sent_at = at_local(MONDAY, "09:20")
    deliver(h, daily, at=sent_at)
    # When 5 hours pass
    fired = fire_due(h, sent_at + timedelta(hours=5))
    # Then the reminder fired once with the contract's text: three messages in all
    assert [(s.payload.kind, o.timer.applied if o.timer else None) for s, o in fired] == [
        (TimerKind.AUTO_FEEDBACK, False),  # already in FEEDBACK
        (TimerKind.DAILY_PROMPT_REMINDER, True),
    ]
    messages = sent(h, p)
    assert len(messages) == 3 and messages[-1].kind is OutboundKind.REMINDER
    assert messages[-1].body == REMINDER_TEXT and "haven't heard back" in messages[-1].body
    assert messages[-1].sent_at == sent_at + timedelta(hours=5)
    # And the reminder time is recorded and the pending state cleared
    data = state(h, p)
    assert data[DataKey.DAILY_PROMPT_REMINDER_SENT_AT.value] == "2026-03-02T19:20:00Z"
    assert DataKey.DAILY_PROMPT_PENDING.value not in data
    assert DataKey.DAILY_PROMPT_REMINDER_TIMER_ID.value not in data
    # When the participant replies late
    outcome = reply(h, p, "Sorry, busy day", at=sent_at + timedelta(hours=9))
    # Then there is nothing to cancel: no responded time, and the reply is handled normally
    assert DataKey.DAILY_PROMPT_RESPONDED_AT.value not in state(h, p)
    assert [m.body for m in outcome.outbound] == [REPLY]


def test_reminder_fired_twice_sends_once_and_a_stale_reminder_sends_nothing() -> None:
    # Given Monday's prompt and its reminder payload
    h, p, daily = given()
    monday = at_local(MONDAY, "09:20")
    deliver(h, daily, at=monday)
    monday_reminder = timer(h, TimerKind.DAILY_PROMPT_REMINDER, p)
    assert monday_reminder is not None
    # When it fires, and the same execution is delivered again
    h.clock.set(monday_reminder.at)
    fire(h, monday_reminder.payload, "reminder-exec-1")
    again = fire(h, monday_reminder.payload, "reminder-exec-1")
    # And once more under another execution id
    other = fire(h, monday_reminder.payload, "reminder-exec-2")
    # Then one reminder was sent
    assert again.replayed
    assert other.timer is not None and not other.timer.applied
    assert len(sent(h, p, OutboundKind.REMINDER)) == 1
    # Given Tuesday's prompt (a new pending state)
    deliver(h, daily, at=monday + timedelta(days=1))
    # When Monday's reminder payload arrives again (a very late retry)
    stale = fire(h, monday_reminder.payload, "reminder-exec-3")
    # Then it does not match Tuesday's prompt: nothing is sent and Tuesday's reminder stays armed
    assert stale.timer is not None and not stale.timer.applied and "stale" in stale.timer.detail
    assert len(sent(h, p, OutboundKind.REMINDER)) == 1
    assert DataKey.DAILY_PROMPT_PENDING.value in state(h, p)


def test_s13_reminder_delay_zero_disables_reminders() -> None:
    # Given DAILY_PROMPT_REMINDER_DELAY=0
    h, p, daily = given(settings=Settings(daily_prompt_reminder_delay=timedelta(0)))
    # When a prompt is delivered
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    # Then no reminder timer and no pending state exist; the rest of the sequence still ran
    assert timer(h, TimerKind.DAILY_PROMPT_REMINDER, p) is None
    assert DataKey.DAILY_PROMPT_PENDING.value not in state(h, p)
    assert timer(h, TimerKind.AUTO_FEEDBACK, p) is not None
    # And nothing fires later
    fire_due(h, at_local(MONDAY, "23:00"))
    assert sent(h, p, OutboundKind.REMINDER) == []


def test_s14_unreadable_pending_state_makes_the_reminder_a_no_op() -> None:
    # Given a delivered prompt whose pending state got corrupted
    h, p, daily = given()
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    h.store.flows[p.id].state_data[DataKey.DAILY_PROMPT_PENDING.value] = "{not json"
    # When the reminder fires / Then nothing is sent
    fire_due(h, at_local(MONDAY, "14:20"))
    assert sent(h, p, OutboundKind.REMINDER) == []
    # And a reply is still handled normally
    assert [m.body for m in reply(h, p, "hi there").outbound] == [REPLY]


def test_s12_reminders_survive_a_restart_without_re_arming() -> None:
    # Adaptation of S12: the original re-armed in-memory reminders at startup (overdue → +5 s).
    # Ours are EventBridge schedules: a restart re-arms nothing, and the schedules that exist still
    # fire — an overdue one at once, a future one at its time; a participant without a pending
    # prompt has none.
    # Given three participants: reminder overdue at restart, due in 2 h, and none
    h = memory_harness(StubLLM())
    participants = []
    for phone in ("+14155550111", "+14155550112", "+14155550113"):
        p = h.enroll(phone, timezone="America/Toronto")
        data = h.store.flows[p.id].state_data
        data[DataKey.USER_PROFILE.value] = json.dumps(
            UserProfile(habit_domain="exercise", preferred_time="09:30", prompt_anchor="after coffee").to_json_dict()
        )
        data[DataKey.CONVERSATION_STATE.value] = "FEEDBACK"
        session = h.app.sessions.open(p.id, f"create-{phone}")
        SchedulerTool(10).execute(
            ToolContext(h.app.deps, session), {"action": "create", "type": "fixed", "fixed_time": "09:30"}
        )
        apply_schedules(h.app, session.commit())
        participants.append(p)
    overdue, later, without = participants
    dailies = {s.payload.participant_id: s for s in h.timers.schedules.values() if s.kind == "daily_prompt"}
    deliver(h, dailies[overdue.id], at=at_local(MONDAY, "06:00"))  # reminder due 11:00
    deliver(h, dailies[later.id], at=at_local(MONDAY, "08:00"))  # reminder due 13:00
    # When the process restarts at 11:00 (a new application over the same durable stores)
    restart = at_local(MONDAY, "11:00")
    h.clock.set(restart)
    deps = FlowDeps(config=CoreConfig(), llm=StubLLM(), timers=h.timers, clock=h.clock, prompts=h.app.deps.prompts)
    h.app = AppContext(
        deps=deps,
        repo=h.store,
        store=h.store,
        messenger=h.outbox,
        queue=RecordingQueue(),
        sessions=SessionFactory(h.store, h.clock),
        ledger=InMemorySentLedger(),
        phone_claims=MemoryPhoneClaims(h.store),
        pending_effects=h.store.pending_effects,
        deliveries=h.store,
        inbound=h.store,
        dead_letters=NoDeadLetters(),
        alerts=LogTeamAlerts(),
        decisions=InMemoryDecisionLog(h.store),
        audit=MemoryAuditLog(),
    )
    reminders = [s for s in h.timers.schedules.values() if s.payload.kind is TimerKind.DAILY_PROMPT_REMINDER]
    # Then exactly two reminder schedules exist: the overdue one and the one due in 2 h
    assert sorted((s.payload.participant_id, s.at) for s in reminders) == sorted(
        [(overdue.id, restart), (later.id, restart + timedelta(hours=2))]
    )
    # And they fire: the overdue one at once, the other at its time; the third participant gets none
    fire_due(h, restart + timedelta(hours=3))
    assert [m.sent_at for m in sent(h, overdue, OutboundKind.REMINDER)] == [restart]
    assert [m.sent_at for m in sent(h, later, OutboundKind.REMINDER)] == [restart + timedelta(hours=2)]
    assert sent(h, without, OutboundKind.REMINDER) == []


# === intensity poll: docs/behaviour.md#SC-8, B-INT-2 ===========================================


def test_scenario_8_intensity_poll_at_most_once_per_local_day() -> None:
    # Given a Toronto participant and a prompt at 09:20
    h, p, daily = given()
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    assert state(h, p)[DataKey.LAST_INTENSITY_PROMPT_DATE.value] == "2026-03-02"
    # When a second prompt is sent the same (local) day, at 23:30 — already Tuesday in UTC
    deliver(h, daily, at=at_local(MONDAY, "23:30"))
    # Then no second poll goes out
    assert len(sent(h, p, OutboundKind.DAILY_PROMPT)) == 2
    assert len(sent(h, p, OutboundKind.INTENSITY_POLL)) == 1
    # When the next local day's prompt is sent / Then the poll comes again, dated that day
    deliver(h, daily, at=at_local(MONDAY + timedelta(days=1), "09:20"))
    assert len(sent(h, p, OutboundKind.INTENSITY_POLL)) == 2
    assert state(h, p)[DataKey.LAST_INTENSITY_PROMPT_DATE.value] == "2026-03-03"


def test_scenario_8_far_west_zone_uses_the_local_date_not_utc() -> None:
    # Given a participant in Honolulu (UTC-10), schedule in their zone
    h, p, daily = given(zone="Pacific/Honolulu")
    # When prompts go out at 13:30 and 15:30 local on Monday — 23:30 Monday and 01:30 Tuesday UTC
    deliver(h, daily, at=at_local(MONDAY, "13:30", HONOLULU))
    deliver(h, daily, at=at_local(MONDAY, "15:30", HONOLULU))
    # Then one poll: the same local day, although the UTC dates differ (the original compared UTC)
    assert len(sent(h, p, OutboundKind.INTENSITY_POLL)) == 1
    assert state(h, p)[DataKey.LAST_INTENSITY_PROMPT_DATE.value] == "2026-03-02"
    # When prompts go out at 23:00 Monday and 01:00 Tuesday local — both on Tuesday in UTC
    deliver(h, daily, at=at_local(MONDAY, "23:00", HONOLULU))
    tuesday = MONDAY + timedelta(days=1)
    deliver(h, daily, at=at_local(tuesday, "01:00", HONOLULU))
    assert at_local(MONDAY, "23:00", HONOLULU).date() == at_local(tuesday, "01:00", HONOLULU).date()
    # Then Tuesday (local) gets its own poll, though the UTC date did not change
    assert len(sent(h, p, OutboundKind.INTENSITY_POLL)) == 2
    assert state(h, p)[DataKey.LAST_INTENSITY_PROMPT_DATE.value] == "2026-03-03"


@pytest.mark.parametrize(
    ("intensity", "options"),
    [
        ("low", ["Keep current", "Increase"]),
        ("normal", ["Decrease", "Keep current", "Increase"]),
        ("high", ["Decrease", "Keep current"]),
    ],
)
def test_poll_options_follow_the_current_intensity(intensity: str, options: list[str]) -> None:
    # Given a participant at an intensity / When a prompt is delivered / Then the docs/behaviour.md#B-INT-3 options
    h, p, daily = given(profile={"intensity": intensity})
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    [poll] = sent(h, p, OutboundKind.INTENSITY_POLL)
    assert poll.question is not None and [o.title for o in poll.question.options] == options


@pytest.mark.parametrize(
    ("text", "answer_id", "expected"),
    [
        ("more", None, "high"),
        ("LESS", None, "low"),
        ("same", None, "normal"),
        ("high", None, "high"),
        ("Q: How's the intensity? A: Decrease", None, "low"),
        ("", "intensity:increase", "high"),
    ],
)
def test_intensity_answers_on_every_channel_change_the_next_prompt(
    text: str, answer_id: str | None, expected: str
) -> None:
    # Given a delivered prompt and poll at normal intensity
    h, p, daily = given()
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    # When the participant answers the poll by word, level, canonical text or button
    reply(h, p, text, answer_id=answer_id, at=at_local(MONDAY, "09:35"))
    # Then the intensity is saved, and the next prompt is generated with it (docs/behaviour.md#B-GEN-4)
    assert profile(h, p)["intensity"] == expected
    deliver(h, daily, at=at_local(MONDAY + timedelta(days=1), "09:20"))
    assert f"Intensity: {expected}" in (h.llm.generator_requests()[-1].messages[0].content or "")  # type: ignore[attr-defined]
    assert (
        sent(h, p, OutboundKind.DAILY_PROMPT)[-1].body == f"After coffee, stretch ({expected}). Would that feel doable?"
    )


# === "Done": docs/behaviour.md#B-DONE-2 ========================================================


def test_done_counts_once_per_delivered_prompt() -> None:
    # Given a delivered prompt
    h, p, daily = given()
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    # When the participant answers "1", then "done" for the same prompt
    reply(h, p, "1", at=at_local(MONDAY, "09:40"))
    reply(h, p, "done", at=at_local(MONDAY, "09:41"))
    reply(h, p, "Q: Did you do it? A: Done", at=at_local(MONDAY, "09:42"))
    # Then success_count rose by one
    assert profile(h, p)["success_count"] == 1
    # And the model saw the canonical answer
    feedback_turns = [r for r in h.llm.requests if r.purpose == "feedback"]  # type: ignore[attr-defined]
    assert feedback_turns[0].messages[-1].content == "Q: Did you do it? A: Done"
    # When the next prompt is answered with the button / Then it counts again
    deliver(h, daily, at=at_local(MONDAY + timedelta(days=1), "09:20"))
    reply(h, p, "", answer_id="done:done", at=at_local(MONDAY + timedelta(days=1), "09:30"))
    assert profile(h, p)["success_count"] == 2 and profile(h, p)["total_prompts"] == 2


def test_next_time_and_done_without_a_prompt_do_not_count() -> None:
    # Given a delivered prompt answered "Next time"
    h, p, daily = given()
    reply(h, p, "Q: Did you do it? A: Done", at=at_local(MONDAY, "08:00"))  # no prompt delivered yet
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    reply(h, p, "2", at=at_local(MONDAY, "09:30"))
    # Then nothing was counted
    assert profile(h, p)["success_count"] == 0


@pytest.mark.parametrize(("first_text", "first_id"), [("2", None), ("Next time", None), ("", "done:next_time")])
def test_next_time_then_1_is_not_counted_as_done(first_text: str, first_id: str | None) -> None:
    # Given a delivered prompt answered "Next time" (by number, by title or by button)
    h, p, daily = given()
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    reply(h, p, first_text, answer_id=first_id, at=at_local(MONDAY, "09:30"))
    assert profile(h, p)["success_count"] == 0
    # When the participant then sends "1"
    reply(h, p, "1", at=at_local(MONDAY, "09:31"))
    # Then the "Done" question is no longer open: nothing is counted, the intensity is untouched,
    # and the model sees the "1" as typed, not as the canonical "Done"
    assert profile(h, p)["success_count"] == 0
    assert profile(h, p)["intensity"] == "normal"
    feedback_turns = [r for r in h.llm.requests if r.purpose == "feedback"]  # type: ignore[attr-defined]
    assert feedback_turns[0].messages[-1].content == "Q: Did you do it? A: Next time"
    assert feedback_turns[-1].messages[-1].content == "1"


@pytest.mark.parametrize("text", ["yes", "Yes!", "y", "no", "nope"])
def test_a_bare_yes_or_no_after_a_prompt_reaches_the_model_as_typed(text: str) -> None:
    # Given a delivered prompt, which ends with a yes/no question ("Would that feel doable?")
    h, p, daily = given()
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    # When the participant answers "yes" or "no"
    reply(h, p, text, at=at_local(MONDAY, "09:40"))
    # Then it is not a "Done"/"Next time" answer: nothing is counted and the model sees the words typed
    assert profile(h, p)["success_count"] == 0
    feedback_turns = [r for r in h.llm.requests if r.purpose == "feedback"]  # type: ignore[attr-defined]
    assert feedback_turns[-1].messages[-1].content == text


def test_a_repeated_1_counts_once_and_changes_nothing_else() -> None:
    # Given a delivered prompt and poll at normal intensity
    h, p, daily = given()
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    # When the participant sends "1" twice
    reply(h, p, "1", at=at_local(MONDAY, "09:40"))
    reply(h, p, "1", at=at_local(MONDAY, "09:41"))
    # Then Done counted once and the intensity is untouched
    assert profile(h, p)["success_count"] == 1
    assert profile(h, p)["intensity"] == "normal"


# === auto-feedback: docs/behaviour.md#SC-11 ====================================================


def test_scenario_11_auto_feedback_moves_to_feedback_after_5_minutes() -> None:
    # Given a participant still in INTAKE receiving a prompt at 09:20
    h, p, daily = given(sub_state="INTAKE")
    sent_at = at_local(MONDAY, "09:20")
    deliver(h, daily, at=sent_at)
    # When 4:59 pass / Then still INTAKE
    fire_due(h, sent_at + timedelta(minutes=4, seconds=59))
    assert state(h, p)[DataKey.CONVERSATION_STATE.value] == "INTAKE"
    # When the 5th minute is reached / Then FEEDBACK, and the timer id is cleared; no message is sent
    [(schedule, outcome)] = fire_due(h, sent_at + timedelta(minutes=5))
    assert schedule.payload.kind is TimerKind.AUTO_FEEDBACK and outcome.timer is not None and outcome.timer.applied
    assert state(h, p)[DataKey.CONVERSATION_STATE.value] == "FEEDBACK"
    assert DataKey.AUTO_FEEDBACK_TIMER_ID.value not in state(h, p)
    assert outcome.outbound == []


def test_scenario_11_already_in_feedback_skips() -> None:
    # Given a participant in FEEDBACK receiving a prompt
    h, p, daily = given(sub_state="FEEDBACK")
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    # When the auto-feedback timer fires / Then it skips
    [(_, outcome)] = fire_due(h, at_local(MONDAY, "09:25"))
    assert outcome.timer is not None and not outcome.timer.applied and outcome.timer.detail == "already in FEEDBACK"
    assert state(h, p)[DataKey.CONVERSATION_STATE.value] == "FEEDBACK"


def test_scenario_11_a_reply_that_writes_the_sub_state_cancels_auto_feedback() -> None:
    # Given a prompt at 09:20 to a participant in INTAKE; the reply at 09:22 asks for another habit,
    # and the model moves the conversation (an immediate transition, a sub-state write)
    llm = StubLLM(
        turns=[
            ChatResponse(
                tool_calls=[ToolCall(id="c1", name="transition_state", arguments='{"target_state": "INTAKE"}')]
            ),
            ChatResponse(content="Sure, let's pick another habit."),
        ]
    )
    h, p, daily = given(llm=llm, sub_state="INTAKE")
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    autofb = timer(h, TimerKind.AUTO_FEEDBACK, p)
    assert autofb is not None
    reply(h, p, "Can we try a different habit?", at=at_local(MONDAY, "09:22"))
    # Then the auto-feedback id is cleared and its schedule deleted
    assert DataKey.AUTO_FEEDBACK_TIMER_ID.value not in state(h, p)
    assert autofb.name in h.timers.cancelled and timer(h, TimerKind.AUTO_FEEDBACK, p) is None
    # And its firing, if delivered anyway at 09:25, leaves the participant in INTAKE
    h.clock.set(autofb.at)
    outcome = fire(h, autofb.payload, "late-autofb")
    assert outcome.timer is not None and not outcome.timer.applied
    assert state(h, p)[DataKey.CONVERSATION_STATE.value] == "INTAKE"


def test_scenario_11_any_sub_state_write_cancels_auto_feedback() -> None:
    # Given a prompt at 09:20 to a participant in INTAKE
    h, p, daily = given(sub_state="INTAKE")
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    autofb = timer(h, TimerKind.AUTO_FEEDBACK, p)
    assert autofb is not None
    # When an operator writes the sub-state at 09:21 (not a transition tool call)
    h.clock.set(at_local(MONDAY, "09:21"))
    override_state(h.app, p.id, StateOverride(sub_state=SubState.INTAKE, reason="checking"))
    # Then the auto-feedback is cancelled, in the state and in the timer backend: nothing moves the
    # participant at 09:25
    assert DataKey.AUTO_FEEDBACK_TIMER_ID.value not in state(h, p)
    assert autofb.name in h.timers.cancelled and timer(h, TimerKind.AUTO_FEEDBACK, p) is None
    fire_due(h, at_local(MONDAY, "09:30"))
    assert state(h, p)[DataKey.CONVERSATION_STATE.value] == "INTAKE"


def test_scenario_11_newer_prompt_within_4_5_minutes_skips_and_its_own_timer_decides() -> None:
    # Given two schedules a minute apart (09:30 and 09:31) for a participant in INTAKE
    h, p, first = given(sub_state="INTAKE")
    session = h.app.sessions.open(p.id, "second-schedule")
    SchedulerTool(10).execute(
        ToolContext(h.app.deps, session), {"action": "create", "type": "fixed", "fixed_time": "09:31"}
    )
    apply_schedules(h.app, session.commit())
    [second] = [s for s in h.timers.schedules.values() if s.kind == "daily_prompt" and s.name != first.name]
    t0 = at_local(MONDAY, "09:20")
    deliver(h, first, at=t0)
    older = timer(h, TimerKind.AUTO_FEEDBACK, p)
    assert older is not None
    deliver(h, second, at=t0 + timedelta(minutes=1))
    newer = timer(h, TimerKind.AUTO_FEEDBACK, p)
    assert newer is not None and newer.at == t0 + timedelta(minutes=6)
    # When the first prompt's auto-feedback fires at 09:25 (a delivery already in flight)
    h.clock.set(t0 + timedelta(minutes=5))
    outcome = fire(h, older.payload, "older-autofb")
    # Then it skips: a newer prompt went out 4 minutes ago
    assert outcome.timer is not None and not outcome.timer.applied and "newer prompt" in outcome.timer.detail
    assert state(h, p)[DataKey.CONVERSATION_STATE.value] == "INTAKE"
    # And the newer prompt's own timer moves the participant to FEEDBACK at 09:26
    fire_due(h, t0 + timedelta(minutes=6))
    assert state(h, p)[DataKey.CONVERSATION_STATE.value] == "FEEDBACK"


@pytest.mark.parametrize("early_seconds", [0, 30, 59])
def test_an_auto_feedback_firing_early_in_its_minute_is_not_taken_for_a_newer_prompt(early_seconds: int) -> None:
    # Given a prompt sent at 09:20:50 (EventBridge fires anywhere within the scheduled minute) whose
    # auto-feedback is due at 09:25:50
    h, p, daily = given(sub_state="INTAKE")
    sent_at = at_local(MONDAY, "09:20") + timedelta(seconds=50)
    deliver(h, daily, at=sent_at)
    autofb = timer(h, TimerKind.AUTO_FEEDBACK, p)
    assert autofb is not None and autofb.payload.expected_sent_at == sent_at
    # When the scheduler fires it at the start of 09:25 — 4 min 10 s or more after the prompt, which
    # an elapsed-time guard of 4 min 30 s took for "a newer prompt was sent"
    h.clock.set(at_local(MONDAY, "09:25") + timedelta(seconds=early_seconds))
    outcome = fire(h, autofb.payload, f"autofb-early-{early_seconds}")
    # Then it applies: the guard is the identity of the prompt it was armed for
    assert outcome.timer is not None and outcome.timer.applied, outcome.timer
    assert state(h, p)[DataKey.CONVERSATION_STATE.value] == "FEEDBACK"


def test_auto_feedback_fired_twice_has_one_effect() -> None:
    # Given a prompt to a participant in INTAKE and its auto-feedback firing
    h, p, daily = given(sub_state="INTAKE")
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    autofb = timer(h, TimerKind.AUTO_FEEDBACK, p)
    assert autofb is not None
    h.clock.set(autofb.at)
    assert fire(h, autofb.payload, "autofb-exec-1").timer.applied  # type: ignore[union-attr]
    # When the operator moves them back to INTAKE and the firing is delivered again
    override_state(h.app, p.id, StateOverride(sub_state=SubState.INTAKE, reason="test"))
    same = fire(h, autofb.payload, "autofb-exec-1")
    other = fire(h, autofb.payload, "autofb-exec-2")
    # Then neither repeats the effect
    assert same.replayed
    assert other.timer is not None and not other.timer.applied
    assert state(h, p)[DataKey.CONVERSATION_STATE.value] == "INTAKE"


def test_auto_feedback_can_be_switched_off() -> None:
    h, p, daily = given(settings=Settings(auto_feedback_after_prompt_enabled=False), sub_state="INTAKE")
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    assert timer(h, TimerKind.AUTO_FEEDBACK, p) is None
    fire_due(h, at_local(MONDAY, "10:00"))
    assert state(h, p)[DataKey.CONVERSATION_STATE.value] == "INTAKE"


# === feedback timers: docs/behaviour.md#B-FBT-1 to B-FBT-3 =====================================

FEEDBACK_ON = Settings(feedback_timers_enabled=True)


def test_feedback_timers_are_off_by_default() -> None:
    h, p, daily = given()
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    assert timer(h, TimerKind.FEEDBACK_TIMEOUT, p) is None
    assert DataKey.FEEDBACK_STATE.value not in state(h, p)


def test_feedback_timeout_nudges_then_follow_up_and_the_reminder_stays_silent() -> None:
    # Given feedback timers on and a prompt at 09:20 with no reply
    h, p, daily = given(settings=FEEDBACK_ON)
    sent_at = at_local(MONDAY, "09:20")
    deliver(h, daily, at=sent_at)
    assert state(h, p)[DataKey.FEEDBACK_STATE.value] == "waiting_initial"
    timeout = timer(h, TimerKind.FEEDBACK_TIMEOUT, p)
    assert timeout is not None and timeout.at == sent_at + timedelta(minutes=15)
    # When 15 minutes pass / Then the nudge goes out and the follow-up is armed for 3 h later
    fire_due(h, sent_at + timedelta(minutes=15))
    assert [m.body for m in sent(h, p, OutboundKind.FEEDBACK_NUDGE)] == [FEEDBACK_NUDGE_TEXT]
    assert state(h, p)[DataKey.FEEDBACK_STATE.value] == "waiting_followup"
    followup = timer(h, TimerKind.FEEDBACK_FOLLOWUP, p)
    assert followup is not None and followup.at == sent_at + timedelta(minutes=15, hours=3)
    # When 3 more hours pass / Then the follow-up goes out
    fire_due(h, sent_at + timedelta(minutes=15, hours=3))
    assert [m.body for m in sent(h, p, OutboundKind.FEEDBACK_NUDGE)] == [FEEDBACK_NUDGE_TEXT, FEEDBACK_FOLLOWUP_TEXT]
    assert state(h, p)[DataKey.FEEDBACK_STATE.value] == "followup_sent"
    # When the 5 h reminder comes due / Then no reminder is added on top of the feedback nudges
    fire_due(h, sent_at + timedelta(hours=6))
    assert sent(h, p, OutboundKind.REMINDER) == []
    assert DataKey.DAILY_PROMPT_PENDING.value not in state(h, p)
    assert [m.kind for m in sent(h, p)] == [
        OutboundKind.DAILY_PROMPT,
        OutboundKind.INTENSITY_POLL,
        OutboundKind.FEEDBACK_NUDGE,
        OutboundKind.FEEDBACK_NUDGE,
    ]


def test_reminder_first_then_no_feedback_nudge_for_the_same_prompt() -> None:
    # Given a 1 h reminder and a 2 h feedback timeout
    settings = Settings(
        feedback_timers_enabled=True,
        daily_prompt_reminder_delay=timedelta(hours=1),
        feedback_initial_timeout=timedelta(hours=2),
    )
    h, p, daily = given(settings=settings)
    sent_at = at_local(MONDAY, "09:20")
    deliver(h, daily, at=sent_at)
    # When 6 hours pass without a reply
    fire_due(h, sent_at + timedelta(hours=6))
    # Then the participant got the reminder only: one nudge for the prompt (docs/behaviour.md#B-FBT-2)
    assert len(sent(h, p, OutboundKind.REMINDER)) == 1
    assert sent(h, p, OutboundKind.FEEDBACK_NUDGE) == []
    assert state(h, p)[DataKey.FEEDBACK_STATE.value] == "followup_sent"


def test_a_feedback_reply_cancels_the_feedback_timers() -> None:
    # Given feedback timers on and a prompt at 09:20
    h, p, daily = given(settings=FEEDBACK_ON)
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    timeout = timer(h, TimerKind.FEEDBACK_TIMEOUT, p)
    assert timeout is not None
    # When the participant replies at 09:30 (in FEEDBACK)
    reply(h, p, "Did it, felt great", at=at_local(MONDAY, "09:30"))
    # Then feedback is completed, the timeout schedule deleted, and its late firing does nothing
    assert state(h, p)[DataKey.FEEDBACK_STATE.value] == "completed"
    assert timeout.name in h.timers.cancelled and timer(h, TimerKind.FEEDBACK_TIMEOUT, p) is None
    h.clock.set(timeout.at)
    assert not fire(h, timeout.payload, "late-timeout").timer.applied  # type: ignore[union-attr]
    fire_due(h, at_local(MONDAY, "23:00"))
    assert sent(h, p, OutboundKind.FEEDBACK_NUDGE, OutboundKind.REMINDER) == []


def test_feedback_timeout_and_follow_up_fired_twice_have_one_effect() -> None:
    # Given feedback timers on, a prompt, and the timeout firing
    h, p, daily = given(settings=FEEDBACK_ON)
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    timeout = timer(h, TimerKind.FEEDBACK_TIMEOUT, p)
    assert timeout is not None
    h.clock.set(timeout.at)
    fire(h, timeout.payload, "timeout-1")
    # When the timeout is delivered again, under the same and another execution id
    assert fire(h, timeout.payload, "timeout-1").replayed
    assert not fire(h, timeout.payload, "timeout-2").timer.applied  # type: ignore[union-attr]
    # And the follow-up fires, then is delivered again
    followup = timer(h, TimerKind.FEEDBACK_FOLLOWUP, p)
    assert followup is not None
    h.clock.set(followup.at)
    fire(h, followup.payload, "followup-1")
    assert fire(h, followup.payload, "followup-1").replayed
    assert not fire(h, followup.payload, "followup-2").timer.applied  # type: ignore[union-attr]
    # Then exactly one nudge and one follow-up were sent
    assert [m.body for m in sent(h, p, OutboundKind.FEEDBACK_NUDGE)] == [FEEDBACK_NUDGE_TEXT, FEEDBACK_FOLLOWUP_TEXT]


# === random windows: docs/behaviour.md#B-SCHED-6 ===============================================


def run_random_week(seed: int = 7) -> tuple[MemoryHarness, ConversationParticipant, list[datetime]]:
    """A random 08:00-10:00 Toronto schedule: each day's trigger (07:50) arms a one-shot that
    delivers the prompt. Returns the delivery instants."""
    h, p, trigger = given(
        schedule={"action": "create", "type": "random", "random_start_time": "08:00", "random_end_time": "10:00"}
    )
    assert trigger.payload.kind == "random_window" and (trigger.hour, trigger.minute) == (7, 50)
    for day in range(7):
        local_day = MONDAY + timedelta(days=day)
        deliver(h, trigger, at=at_local(local_day, "07:50"), event_id=f"exec-{local_day.isoformat()}")
        fire_due(h, at_local(local_day, "23:59"))
    return h, p, [m.sent_at for m in sent(h, p, OutboundKind.DAILY_PROMPT)]


def test_random_window_delivers_inside_the_window_every_day_at_different_times() -> None:
    # Given a random 08:00-10:00 Toronto schedule (prep 10: the window is 07:50-09:50)
    # When seven days pass
    h, p, deliveries = run_random_week()
    # Then there is exactly one prompt per local day, each inside the window
    local = [d.astimezone(TORONTO) for d in deliveries]
    assert [d.date() for d in local] == [MONDAY + timedelta(days=i) for i in range(7)]
    for instant in local:
        assert (7, 50) <= (instant.hour, instant.minute) <= (9, 50), instant
    # And the times differ from day to day (a real random draw, not the window start)
    assert len({(d.hour, d.minute) for d in local}) >= 5
    assert any((d.hour, d.minute) != (7, 50) for d in local)
    # And each delivery counted as a prompt
    assert profile(h, p)["total_prompts"] == 7


def test_random_window_is_deterministic_for_the_same_executions() -> None:
    # Given the same seed and execution ids / Then the same delivery times
    assert run_random_week(seed=7)[2] == run_random_week(seed=7)[2]


def test_a_repeated_random_trigger_arms_one_delivery() -> None:
    # Given a random schedule whose daily trigger is invoked twice for the same execution
    h, p, trigger = given(
        schedule={"action": "create", "type": "random", "random_start_time": "08:00", "random_end_time": "10:00"}
    )
    first = deliver(h, trigger, at=at_local(MONDAY, "07:50"), event_id="exec-monday")
    again = deliver(h, trigger, event_id="exec-monday")
    # Then the repeat finds the committed record and re-applies the same one-shot, under the same name
    assert first.delivery is not None and again.replayed
    [one_shot] = [s for s in h.timers.schedules.values() if s.kind == "prompt_at"]
    assert one_shot.at == first.delivery.random_delivery_at
    fire_due(h, at_local(MONDAY, "12:00"))
    assert len(sent(h, p, OutboundKind.DAILY_PROMPT)) == 1


# === lifecycle: docs/behaviour.md#B-LIFE-1 =====================================================


def test_pause_cancels_everything_and_resume_restores_the_schedule() -> None:
    # Given a delivered prompt: the daily schedule, a reminder and an auto-feedback timer exist
    h, p, daily = given(sub_state="INTAKE")
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    reminder = timer(h, TimerKind.DAILY_PROMPT_REMINDER, p)
    assert reminder is not None and len(participant_timers(h, p)) == 3
    # When the participant is paused at 09:21
    h.clock.set(at_local(MONDAY, "09:21"))
    update_participant(h.app, p.id, ParticipantUpdate(status="paused"))
    # Then every schedule of theirs is deleted and the timer state cleared; the registry stays
    assert participant_timers(h, p) == []
    data = state(h, p)
    for key in (DataKey.DAILY_PROMPT_PENDING, DataKey.DAILY_PROMPT_REMINDER_TIMER_ID, DataKey.AUTO_FEEDBACK_TIMER_ID):
        assert key.value not in data
    assert len(json.loads(data[DataKey.SCHEDULE_REGISTRY.value])) == 1
    # And firings already in flight change nothing while paused
    h.clock.set(reminder.at)
    assert not fire(h, reminder.payload, "inflight-reminder").timer.applied  # type: ignore[union-attr]
    assert deliver(h, daily, at=at_local(MONDAY + timedelta(days=1), "09:20")).delivery.delivered is False  # type: ignore[union-attr]
    assert len(sent(h, p, OutboundKind.DAILY_PROMPT)) == 1 and sent(h, p, OutboundKind.REMINDER) == []
    # When they are resumed on Wednesday at 10:00
    resumed_at = at_local(MONDAY + timedelta(days=2), "10:00")
    h.clock.set(resumed_at)
    update_participant(h.app, p.id, ParticipantUpdate(status="active"))
    # Then the registered schedule is back under the same name, time and zone, anchored at the resume
    restored = h.timers.get(daily.name)
    assert restored is not None and (restored.hour, restored.minute, restored.timezone) == (9, 20, "America/Toronto")
    assert restored.payload.created_at == resumed_at
    assert participant_timers(h, p) == [daily.name]
    # And it delivers again
    deliver(h, restored, at=at_local(MONDAY + timedelta(days=3), "09:20"))
    assert len(sent(h, p, OutboundKind.DAILY_PROMPT)) == 2


@pytest.mark.parametrize("status", ["completed", "withdrawn"])
def test_completing_or_withdrawing_cancels_everything(status: str) -> None:
    h, p, daily = given()
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    update_participant(h.app, p.id, ParticipantUpdate(status=status))
    assert participant_timers(h, p) == []


def test_deleting_a_participant_cancels_everything() -> None:
    # Given a delivered prompt: daily schedule, reminder, auto-feedback and feedback timeout exist
    h, p, daily = given(settings=FEEDBACK_ON)
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    assert len(participant_timers(h, p)) == 4
    # When the participant is deleted / Then no schedule of theirs is left
    delete_participant(h.app, p.id)
    assert participant_timers(h, p) == []
    assert daily.name in h.timers.cancelled


def test_stale_feedback_timers_from_yesterdays_prompt_do_nothing_today() -> None:
    # Given feedback timers on: Monday's prompt got its nudge and follow-up, held by EventBridge as
    # these payloads; Tuesday's prompt is now waiting for its own timeout
    h, p, daily = given(settings=FEEDBACK_ON)
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    monday_timeout = timer(h, TimerKind.FEEDBACK_TIMEOUT, p)
    fire_due(h, at_local(MONDAY, "09:35"))
    monday_followup = timer(h, TimerKind.FEEDBACK_FOLLOWUP, p)
    assert monday_timeout is not None and monday_followup is not None
    fire_due(h, at_local(MONDAY, "23:00"))
    assert len(sent(h, p, OutboundKind.FEEDBACK_NUDGE)) == 2
    tuesday = MONDAY + timedelta(days=1)
    deliver(h, daily, at=at_local(tuesday, "09:20"))
    # When Monday's timeout is delivered again at 09:25 (a late retry, another execution id)
    h.clock.set(at_local(tuesday, "09:25"))
    stale = fire(h, monday_timeout.payload, "monday-timeout-retry")
    # Then it does not nudge about Tuesday's prompt ten minutes early
    assert stale.timer is not None and not stale.timer.applied
    assert len(sent(h, p, OutboundKind.FEEDBACK_NUDGE)) == 2
    # When Tuesday's own timeout fires / Then its nudge goes out, and Monday's follow-up, delivered
    # late during Tuesday's wait, does not replace Tuesday's follow-up
    fire_due(h, at_local(tuesday, "09:35"))
    assert len(sent(h, p, OutboundKind.FEEDBACK_NUDGE)) == 3
    h.clock.set(at_local(tuesday, "10:00"))
    late = fire(h, monday_followup.payload, "monday-followup-retry")
    assert late.timer is not None and not late.timer.applied
    fire_due(h, at_local(tuesday, "23:00"))
    assert [m.body for m in sent(h, p, OutboundKind.FEEDBACK_NUDGE)] == [
        FEEDBACK_NUDGE_TEXT,
        FEEDBACK_FOLLOWUP_TEXT,
        FEEDBACK_NUDGE_TEXT,
        FEEDBACK_FOLLOWUP_TEXT,
    ]
    assert [m.sent_at.astimezone(TORONTO).strftime("%H:%M") for m in sent(h, p, OutboundKind.FEEDBACK_NUDGE)] == [
        "09:35",
        "12:35",
        "09:35",
        "12:35",
    ]


def test_feedback_nudges_skip_a_participant_who_already_replied() -> None:
    # Given feedback timers on and a delivered prompt that the participant answered in INTAKE at +2 min
    from promptpipe.settings import Settings

    h, p, daily = given(settings=Settings(feedback_timers_enabled=True), sub_state="INTAKE")
    sent_at = at_local(MONDAY, "09:20")
    deliver(h, daily, at=sent_at)
    reply(h, p, "Done", at=sent_at + timedelta(minutes=2))
    # When the feedback timeout fires at +15 min (and the follow-up would, 3 h later)
    fire_due(h, sent_at + timedelta(hours=4))
    # Then no nudge was sent
    assert not [m for m in h.outbox.messages(p.id) if m.kind.value == "feedback_nudge"]


def test_on_sms_the_intensity_poll_is_the_last_line_of_the_prompts_message() -> None:
    # Given a participant reached over Twilio SMS
    from promptpipe.adapters.messengers import with_question_text
    from promptpipe.settings import MessagingProvider

    h, p, daily = given(settings=Settings(messaging_provider=MessagingProvider.TWILIO, twilio_channel="sms"))
    # When Monday's prompt is delivered
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    # Then one message carries the prompt, the Done question and the day's poll, in that order
    [prompt] = sent(h, p)
    assert prompt.kind is OutboundKind.DAILY_PROMPT and prompt.follow_up is not None
    text = with_question_text(prompt.body, prompt.question, prompt.follow_up)
    assert text == prompt.body_text
    done_at, poll_at = text.index("1 Done, 2 Next time"), text.index("Intensity: 3 less, 4 same, 5 more")
    assert text.index(prompt.body) < done_at < poll_at
    # And the poll counts as asked today: a word answers it, and Tuesday's prompt carries it again
    assert state(h, p)[DataKey.LAST_INTENSITY_PROMPT_DATE.value] == MONDAY.isoformat()
    deliver(h, daily, at=at_local(MONDAY, "21:00"))
    assert sent(h, p)[-1].follow_up is None  # at most once a day
    deliver(h, daily, at=at_local(MONDAY + timedelta(days=1), "09:20"))
    assert sent(h, p)[-1].follow_up is not None


def test_with_a_button_channel_the_poll_stays_a_message_of_its_own() -> None:
    h, p, daily = given()
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    assert [m.kind for m in sent(h, p)] == [OutboundKind.DAILY_PROMPT, OutboundKind.INTENSITY_POLL]
    assert sent(h, p)[0].follow_up is None


def test_a_reminder_due_in_quiet_hours_moves_to_the_end_of_the_window() -> None:
    # Given a participant whose habit time is 20:00 (the prompt goes at 19:50 Toronto) and the
    # default quiet hours 21:00-08:00
    h, p, daily = given(schedule={"action": "create", "type": "fixed", "fixed_time": "20:00"})
    sent_at = at_local(MONDAY, "19:50")
    deliver(h, daily, at=sent_at)
    # Then the reminder, due 00:50, is armed for 08:00 the next morning, guarded by the same prompt
    reminder = timer(h, TimerKind.DAILY_PROMPT_REMINDER, p)
    assert reminder is not None and reminder.at == at_local(MONDAY + timedelta(days=1), "08:00")
    assert reminder.payload.expected_sent_at == sent_at
    pending = json.loads(state(h, p)[DataKey.DAILY_PROMPT_PENDING.value])
    assert pending["reminder_due_at"] == "2026-03-03T13:00:00Z"
    # And the prompt's audit says quiet hours moved its reminder (the console's strip shows it)
    [prompt] = [e for e in h.store.transcripts[p.id] if e.kind == "daily_prompt"]
    assert prompt.metadata["reminder_quiet_hours"] == "moved"
    # And it fires then, once
    fire_due(h, at_local(MONDAY + timedelta(days=1), "08:00"))
    assert [m.kind for m in sent(h, p, OutboundKind.REMINDER)] == [OutboundKind.REMINDER]


def test_without_quiet_hours_the_reminder_keeps_its_time() -> None:
    h, p, daily = given(
        settings=Settings(quiet_hours_enabled=False),
        schedule={"action": "create", "type": "fixed", "fixed_time": "20:00"},
    )
    deliver(h, daily, at=at_local(MONDAY, "19:50"))
    reminder = timer(h, TimerKind.DAILY_PROMPT_REMINDER, p)
    assert reminder is not None and reminder.at == at_local(MONDAY + timedelta(days=1), "00:50")
    [prompt] = [e for e in h.store.transcripts[p.id] if e.kind == "daily_prompt"]
    assert "reminder_quiet_hours" not in prompt.metadata


def test_a_nudge_stale_by_the_end_of_quiet_hours_is_not_armed() -> None:
    # Given quiet hours that end after the next day's prompt would go out (a long night, 12:00-10:00)
    h, p, daily = given(
        settings=Settings(
            quiet_hours_start="12:00", quiet_hours_end="10:00", quiet_hours_max_delay=timedelta(hours=23)
        ),
        schedule={"action": "create", "type": "fixed", "fixed_time": "09:30"},
    )
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    # Then the reminder (due 14:20, in the window until 10:00 tomorrow, after tomorrow's 09:20
    # prompt) is dropped, and nothing waits on it
    assert timer(h, TimerKind.DAILY_PROMPT_REMINDER, p) is None
    assert DataKey.DAILY_PROMPT_REMINDER_TIMER_ID.value not in state(h, p)
