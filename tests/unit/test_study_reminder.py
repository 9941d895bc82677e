"""A study's decision point at the reminder (docs/studies.md): drawn when the reminder fires, from
the generator seeded as the daily prompt's (study, participant, point, study day), recorded in the
reminder's commit, the arm shaping or withholding the reminder; availability as for the daily
prompt; every other day a row from the sweep."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from promptpipe.errors import ValidationFailed
from promptpipe.flow.timer_events import REMINDER_TEXT
from promptpipe.models.decision import DecisionDelivery, UnavailableReason
from promptpipe.models.events import TimerKind
from promptpipe.models.messaging import OutboundKind
from promptpipe.models.safety import ConversationHold, HoldReason
from promptpipe.models.state import DataKey
from promptpipe.models.study import StudyDefinition
from promptpipe.rules.randomise import draw
from promptpipe.usecases.studies import parse_study, sweep_study
from tests.unit.test_delivery_and_timers import MONDAY, at_local, deliver, fire, reply, sent, timer
from tests.unit.test_study_engine import in_study, rows

FRIENDLY = "No rush! When you get a minute, tell us how today's step went."


def reminder_study(no_reminder: float) -> StudyDefinition:
    return StudyDefinition.model_validate(
        {
            "id": "s-rem",
            "name": "Reminder study",
            "duration_days": 28,
            "closing_message": "Thanks!",
            "decision_points": [
                {
                    "name": "daily_prompt",
                    "arms": [
                        {"name": "no_prompt", "probability": 0.0},
                        {"name": "framing_a", "probability": 1.0, "framing": "Lead with their benefit."},
                    ],
                },
                {
                    "name": "reminder",
                    "at": "reminder",
                    "arms": [
                        {"name": "no_reminder", "probability": no_reminder},
                        {"name": "friendly", "probability": 1 - no_reminder, "framing": FRIENDLY},
                    ],
                },
            ],
        }
    )


def prompted(no_reminder: float) -> tuple[Any, Any, Any]:
    """A study participant whose daily prompt went out at 09:30 and got no reply; the reminder timer."""
    h, p, daily, _ = in_study(reminder_study(no_reminder))
    deliver(h, daily, at_local(MONDAY, "09:30"))
    reminder = timer(h, TimerKind.DAILY_PROMPT_REMINDER, p)
    assert reminder is not None
    h.clock.set(reminder.at)
    return h, p, reminder


def reminder_row(h: Any, p: Any) -> Any:
    [row] = [r for r in rows(h, p) if r.decision_point == "reminder"]
    return row


def test_a_framing_arm_at_the_reminder_is_sent_as_written_and_recorded_in_its_commit() -> None:
    h, p, reminder = prompted(0.0)
    outcome = fire(h, reminder.payload, "reminder-1")
    [message] = sent(h, p, OutboundKind.REMINDER)
    assert message.body == FRIENDLY != REMINDER_TEXT
    assert [d.decision_point for d in outcome.decisions] == ["reminder"]  # in the reminder's commit
    row = reminder_row(h, p)
    assert (row.available, row.arm, row.study_day, row.probabilities) == (
        True,
        "friendly",
        1,
        {
            "no_reminder": 0.0,
            "friendly": 1.0,
        },
    )
    assert row.message_id == message.message_id and row.delivery is DecisionDelivery.SENT
    assert DataKey.DAILY_PROMPT_REMINDER_SENT_AT.value in h.data(p.id)


def test_the_no_prompt_arm_withholds_the_reminder_and_records_the_decision() -> None:
    h, p, reminder = prompted(1.0)
    outcome = fire(h, reminder.payload, "reminder-1")
    assert sent(h, p, OutboundKind.REMINDER) == []
    assert outcome.timer is not None and not outcome.timer.applied and "no reminder" in outcome.timer.detail
    row = reminder_row(h, p)
    assert (row.available, row.arm, row.delivery, row.message_id) == (True, "no_reminder", "not_sent", None)
    data = h.data(p.id)
    assert DataKey.DAILY_PROMPT_REMINDER_SENT_AT.value not in data  # no reminder went out
    assert DataKey.DAILY_PROMPT_PENDING.value not in data  # and it is not due again


def test_the_reminder_draws_from_the_generator_seeded_as_the_daily_prompts() -> None:
    drawn = set()
    for n in range(12):  # other studies (the harness mints the same participant id): both arms appear
        definition = reminder_study(0.5).model_copy(update={"id": f"s-rem-{n}"})
        h, p, daily, _ = in_study(definition)
        deliver(h, daily, at_local(MONDAY, "09:30"))
        reminder = timer(h, TimerKind.DAILY_PROMPT_REMINDER, p)
        assert reminder is not None
        h.clock.set(reminder.at)
        fire(h, reminder.payload, f"reminder-{n}")
        expected, _ = draw(definition.id, p.id, definition.decision_points[1], 1)
        assert reminder_row(h, p).arm == expected.name
        drawn.add(expected.name)
        assert len(sent(h, p, OutboundKind.REMINDER)) == (expected.framing is not None)
    assert drawn == {"no_reminder", "friendly"}


def test_a_redelivered_reminder_draws_the_same_arm_and_makes_one_row() -> None:
    h, p, reminder = prompted(0.5)
    first = fire(h, reminder.payload, "reminder-1")
    again = fire(h, reminder.payload, "reminder-1")  # the scheduler's retry
    later = fire(h, reminder.payload, "reminder-2")  # another execution: stale, the prompt is no longer pending
    assert again.replayed and not again.decisions and not later.decisions
    assert reminder_row(h, p).arm == first.decisions[0].arm
    assert len(sent(h, p, OutboundKind.REMINDER)) <= 1


def test_a_held_participant_gets_an_on_hold_row_at_the_reminder_and_no_reminder() -> None:
    h, p, reminder = prompted(0.0)
    h.store.flows[p.id].state_data[DataKey.HOLD.value] = ConversationHold(
        reason=HoldReason.STAFF, since=h.clock.now(), set_by="staff"
    ).model_dump_json()
    fire(h, reminder.payload, "reminder-1")
    assert sent(h, p, OutboundKind.REMINDER) == []
    row = reminder_row(h, p)
    assert (row.available, row.unavailable_reason, row.arm) == (False, UnavailableReason.ON_HOLD, None)


def test_a_day_without_a_reminder_gets_its_row_from_the_sweep() -> None:
    h, p, daily, _ = in_study(reminder_study(0.0))
    deliver(h, daily, at_local(MONDAY, "09:30"))
    reply(h, p, "did it!! 10 min walk", at=at_local(MONDAY, "10:00"))  # the reminder is cancelled
    h.clock.set(at_local(MONDAY + timedelta(days=1), "08:00"))
    sweep_study(h.app)
    row = reminder_row(h, p)
    assert (row.study_day, row.available, row.unavailable_reason) == (1, False, UnavailableReason.NOT_SCHEDULED)
    assert sent(h, p, OutboundKind.REMINDER) == []


def test_without_a_reminder_decision_point_the_reminder_is_the_usual_one() -> None:
    h, p, daily, _ = in_study(reminder_study(0.0).model_copy(update={"decision_points": ()}))
    deliver(h, daily, at_local(MONDAY, "09:30"))
    reminder = timer(h, TimerKind.DAILY_PROMPT_REMINDER, p)
    assert reminder is not None
    h.clock.set(reminder.at)
    fire(h, reminder.payload, "reminder-1")
    assert [m.body for m in sent(h, p, OutboundKind.REMINDER)] == [REMINDER_TEXT]
    assert rows(h, p) == []


def test_two_decision_points_at_the_reminder_are_refused() -> None:
    document = reminder_study(0.0).model_dump(mode="json")
    document["decision_points"].append({**document["decision_points"][1], "name": "reminder_two"})
    with pytest.raises(ValidationFailed, match="more than one decision point at the same place"):
        parse_study(__import__("json").dumps(document))


def test_a_stale_reminder_firing_while_held_records_nothing() -> None:
    h, p, reminder = prompted(0.0)
    reply(h, p, "done, walked 10 min", at=reminder.at - timedelta(hours=1))  # the prompt is answered
    h.store.flows[p.id].state_data[DataKey.HOLD.value] = ConversationHold(
        reason=HoldReason.STAFF, since=h.clock.now(), set_by="staff"
    ).model_dump_json()
    h.clock.set(reminder.at)
    fire(h, reminder.payload, "reminder-in-flight")  # a firing already in flight when it was cancelled
    assert [r for r in rows(h, p) if r.decision_point == "reminder"] == []


def late_prompt() -> tuple[Any, Any, Any]:
    """A prompt at 21:30 local whose reminder comes due after local midnight (the next study day)."""
    h, p, daily, _ = in_study(reminder_study(0.0))
    deliver(h, daily, at_local(MONDAY, "21:30"))
    reminder = timer(h, TimerKind.DAILY_PROMPT_REMINDER, p)
    assert reminder is not None and reminder.at > at_local(MONDAY + timedelta(days=1), "00:00")
    return h, p, reminder


def test_a_reminder_after_midnight_decides_for_the_day_of_its_prompt() -> None:
    h, p, reminder = late_prompt()
    h.clock.set(reminder.at)
    fire(h, reminder.payload, "reminder-1")
    row = reminder_row(h, p)
    assert (row.study_day, row.arm) == (1, "friendly")
    assert [m.body for m in sent(h, p, OutboundKind.REMINDER)] == [FRIENDLY]


def test_a_reminder_whose_day_the_sweep_already_wrote_sends_nothing_and_records_nothing_more() -> None:
    h, p, reminder = late_prompt()
    h.clock.set(at_local(MONDAY + timedelta(days=1), "00:30"))
    sweep_study(h.app)  # between midnight and the reminder: day 1 has no reminder decision yet
    assert (reminder_row(h, p).study_day, reminder_row(h, p).available) == (1, False)
    h.clock.set(reminder.at)
    outcome = fire(h, reminder.payload, "reminder-1")
    assert not outcome.decisions and sent(h, p, OutboundKind.REMINDER) == []  # never a reminder without its decision
    assert len([r for r in rows(h, p) if r.decision_point == "reminder"]) == 1


def test_a_second_reminder_the_same_day_follows_the_days_arm_and_records_nothing_new() -> None:
    h, p, reminder = prompted(0.0)
    fire(h, reminder.payload, "reminder-1")
    daily = next(s for s in h.timers.schedules.values() if s.kind == "daily_prompt")
    deliver(h, daily, at_local(MONDAY, "15:00"), event_id="fire-2")  # a second prompt the same day
    second = timer(h, TimerKind.DAILY_PROMPT_REMINDER, p)
    assert second is not None
    h.clock.set(second.at)
    outcome = fire(h, second.payload, "reminder-2")
    assert not outcome.decisions
    assert [m.body for m in sent(h, p, OutboundKind.REMINDER)] == [FRIENDLY, FRIENDLY]
    assert reminder_row(h, p).study_day == 1
