"""Seven days of one participant, end to end on the local stack.

Enrollment through the participants API, every message through a signed Twilio webhook, turns through
the SQS FIFO worker, daily prompts and timers through the scheduler pump firing the real Lambda
handlers on moto, the offline rule-based coach as the model. The week starts on Monday 2026-03-02
in America/Toronto and crosses the start of daylight saving time (Sunday 2026-03-08), so the daily
07:20 prompt moves from 12:20 to 11:20 UTC while staying at 07:20 local.

Script (day 0 = enrollment day, local times):
- day 0 08:00 enroll; 08:02-08:07 intake over five messages (exercise, energy, 07:30, after coffee, yes)
- day 1 "1" (Done) and what helped (a feedback conversation: the motivator is saved)
- day 2 no answer: the reminder comes 5 h after the prompt; a late reply names the barrier
- day 3 "more" (intensity up), then "Done"
- day 4 the prompt reflects the higher intensity; "Done"
- day 5 "Done", then the same answer again in the poll's canonical form (counted once)
- day 6 (DST starts) "1"; day 7 "Done"
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from promptpipe.adapters.aws import aws_client
from promptpipe.flow.timer_events import REMINDER_TEXT
from promptpipe.local.demo import send_sms
from promptpipe.local.environment import LocalEnvironment, TimelineEntry
from promptpipe.models.state import DataKey, StateData

ZONE = ZoneInfo("America/Toronto")
DAY0 = date(2026, 3, 2)  # a Monday
PHONE = "+1 416 555 0199"

# (day, local time, what the participant texts)
SCRIPT: tuple[tuple[int, str, str], ...] = (
    (0, "08:02", "Hi! I'd like to exercise more."),
    (0, "08:03", "I want to feel more energetic during the day."),
    (0, "08:05", "Around 7:30am works for me."),
    (0, "08:06", "After my morning coffee."),
    (0, "08:07", "Yes, please."),
    (1, "07:41", "1"),
    (1, "07:43", "It felt good, the stretching woke me up."),
    (2, "18:30", "Sorry, busy day. I forgot because I was rushing to work."),
    (3, "07:35", "more"),
    (3, "07:36", "Done"),
    (4, "07:50", "Done"),
    (5, "07:30", "Done"),
    (5, "07:31", "Q: Did you do it? A: Done"),
    (6, "07:45", "1"),
    (7, "07:30", "Done"),
)
END = (7, "13:00")  # past the hour of a day-7 reminder, had there been one


def at_local(day: int, hhmm: str) -> datetime:
    base = DAY0 + timedelta(days=day)
    hour, minute = (int(x) for x in hhmm.split(":"))
    return datetime(base.year, base.month, base.day, hour, minute, tzinfo=ZONE).astimezone(UTC)


def local(entry: TimelineEntry) -> tuple[int, str]:
    when = entry.at.astimezone(ZONE)
    return (when.date() - DAY0).days, when.strftime("%H:%M")


def run_week(env: LocalEnvironment) -> tuple[str, dict[str, Any]]:
    """Enroll, play the script through signed webhooks and the pump; return the id and final state."""
    enrolled = env.api(
        "POST",
        "/conversation/participants",
        json_body={"phone_number": PHONE, "name": "Sam", "timezone": "America/Toronto", "background": "Nurse"},
    )
    assert enrolled.status == 201, enrolled.body
    pid, phone = enrolled.body["result"]["id"], enrolled.body["result"]["phone_number"]
    assert phone == "+14165550199"
    for index, (day, hhmm, text) in enumerate(SCRIPT):
        env.advance_to(at_local(day, hhmm))
        env.note_inbound(pid, text)
        assert send_sms(env, phone, text, f"SMweek{index:04d}") == 200
    env.advance_to(at_local(*END))
    state = env.api("GET", f"/conversation/participants/{pid}/state").body["result"]
    return pid, state


def test_seven_days_of_a_participant(local_env_factory: Any) -> None:
    # Given the local stack with the offline coach, at Monday 08:00 in Toronto
    env = local_env_factory(start=at_local(0, "08:00"), seed=3)

    # When the participant enrolls, does the intake and lives through the scripted week
    pid, state = run_week(env)
    timeline = sorted((e for e in env.timeline if e.participant_id == pid), key=lambda e: e.at)
    coach = [e for e in timeline if e.actor == "coach"]
    timers = [e for e in timeline if e.actor == "timer"]

    # Then, day by day, the counts of each kind of event are exactly these
    per_day: dict[int, Counter[str]] = {}
    for entry in timeline:
        per_day.setdefault(local(entry)[0], Counter())[f"{entry.actor}:{entry.kind}"] += 1
    ordinary = {  # a day with a prompt answered before its reminder
        "timer:daily_prompt": 1,
        "timer:auto_feedback": 1,
        "coach:daily_prompt": 1,
        "coach:intensity_poll": 1,
    }
    assert per_day == {
        0: Counter({"coach:greeting": 1, "participant:message": 5, "coach:reply": 5}),
        1: Counter({**ordinary, "participant:message": 2, "coach:reply": 2}),
        2: Counter(
            {
                **ordinary,
                "timer:daily_prompt_reminder": 1,
                "coach:reminder": 1,
                "participant:message": 1,
                "coach:reply": 1,
            }
        ),
        3: Counter({**ordinary, "participant:message": 2, "coach:reply": 2}),
        4: Counter({**ordinary, "participant:message": 1, "coach:reply": 1}),
        5: Counter({**ordinary, "participant:message": 2, "coach:reply": 2}),
        6: Counter({**ordinary, "participant:message": 1, "coach:reply": 1}),
        7: Counter({**ordinary, "participant:message": 1, "coach:reply": 1}),
    }
    # And nothing failed in a handler
    assert [e for e in env.timeline if e.actor == "system" and "failed" in e.text] == []

    # And the intake turned into a schedule whose first prompt is "tomorrow"
    intake_replies = [e.text for e in coach if e.kind == "reply" and local(e)[0] == 0]
    assert "Your first prompt comes tomorrow" in intake_replies[-1]  # on the yes to the proposed time
    assert "around 7:30am" in intake_replies[-1]

    # And every daily prompt came at 07:20 local (07:30 minus 10 min prep), the poll with it;
    # across the DST start the UTC time moved from 12:20 to 11:20
    prompts = [e for e in coach if e.kind == "daily_prompt"]
    assert [local(e) for e in prompts] == [(day, "07:20") for day in range(1, 8)]
    assert [e.at.strftime("%H:%M") for e in prompts] == ["12:20"] * 5 + ["11:20"] * 2
    assert [local(e) for e in coach if e.kind == "intensity_poll"] == [(day, "07:20") for day in range(1, 8)]
    assert all("Did you do it? Reply 1 for Done or 2 for Next time." in e.text for e in prompts)
    assert [local(e) for e in timers if e.kind == "daily_prompt"] == [(day, "07:20") for day in range(1, 8)]
    assert [local(e) for e in timers if e.kind == "auto_feedback"] == [(day, "07:25") for day in range(1, 8)]

    # And the one missed day got its reminder 5 h after the prompt, with the contract's text
    reminders = [e for e in coach if e.kind == "reminder"]
    assert [(local(e), e.text) for e in reminders] == [((2, "12:20"), REMINDER_TEXT)]
    assert [local(e) for e in timers if e.kind == "daily_prompt_reminder"] == [(2, "12:20")]

    # And the intensity change shows in the prompts: one minute at normal, three at high (from day 4),
    # and the poll offers no "Increase" once at high
    assert all("try 1 minute of" in e.text for e in prompts[:3])
    assert all("try 3 minutes of" in e.text for e in prompts[3:])
    polls = [e.text for e in coach if e.kind == "intensity_poll"]
    assert all("MORE (increase)" in text for text in polls[:3])
    assert all("MORE" not in text and "LESS (decrease)" in text for text in polls[3:])
    [intensity_reply] = [e.text for e in coach if local(e) == (3, "07:35")]
    assert "intensity: high" in intensity_reply

    # And "Done" counted once per prompt: the coach's running count on each Done reply
    done_counts = [e.text for e in coach if e.kind == "reply" and "you did it" in e.text]
    assert [local(e) for e in coach if e.kind == "reply" and "you did it" in e.text] == [
        (1, "07:41"),
        (3, "07:36"),
        (4, "07:50"),
        (5, "07:30"),
        (5, "07:31"),  # the repeated answer to day 5's prompt is not a second count
        (6, "07:45"),
        (7, "07:30"),
    ]
    assert [text.split("That's ")[1].split(" done")[0] for text in done_counts] == ["1", "2", "3", "4", "4", "5", "6"]

    # And the feedback conversation saved the motivator (day 1) and the barrier (day 2)
    [barrier_reply] = [e.text for e in coach if local(e) == (2, "18:30")]
    assert "visible cue" in barrier_reply

    # And the final state is this
    assert state["status"] == "active" and state["sub_state"] == "FEEDBACK"
    profile = state["profile"]
    assert {k: profile[k] for k in ("habit_domain", "preferred_time", "prompt_anchor", "intensity")} == {
        "habit_domain": "exercise",
        "preferred_time": "07:30",
        "prompt_anchor": "After my morning coffee",
        "intensity": "high",
    }
    assert "energetic" in profile["motivational_frame"]
    assert (profile["success_count"], profile["total_prompts"]) == (6, 7)
    assert profile["last_barrier"] == "forgot"
    assert profile["last_tweak"].startswith("leave a visible cue")
    assert "stretching woke me up" in profile["last_motivator"]
    assert profile["last_successful_prompt"].startswith("After your morning coffee, try 3 minutes of")
    [schedule] = state["schedules"]
    assert (schedule["type"], schedule["fixed_time"], schedule["timezone"]) == ("fixed", "07:30", "America/Toronto")
    # nothing pending: day 7's answer cancelled its reminder, the auto-feedback already fired
    assert state["daily_prompt_pending"] is None and state["pending_timers"] == {}

    # And EventBridge holds just the daily schedule: cron 07:20 in Toronto
    scheduler = aws_client("scheduler", env.settings)
    group = env.settings.schedule_group_name
    names = [s["Name"] for s in scheduler.list_schedules(GroupName=group)["Schedules"] if pid in s["Name"]]
    assert names == [schedule["timer_id"]]
    item = scheduler.get_schedule(Name=names[0], GroupName=group)
    assert (item["ScheduleExpression"], item["ScheduleExpressionTimezone"]) == ("cron(20 7 * * ? *)", "America/Toronto")

    # And each delivered prompt is in the conversation history (docs/behaviour.md#B-DELIV-2)
    data = env.app.store.load(pid).flow.state_data
    history = StateData(dict(data)).history()
    assistant = [m.content for m in history if m.role == "assistant"]
    assert all(e.text.split("\n\nDid you do it?")[0] in assistant for e in prompts)
    assert data[DataKey.LAST_INTENSITY_PROMPT_DATE.value] == "2026-03-09"
    assert data[DataKey.DAILY_PROMPT_REMINDER_SENT_AT.value] == "2026-03-04T17:20:00Z"
