"""The timers and scheduled-prompt Lambda handlers on the local stack (moto + real handlers + pump).

- Duplicates: each kind's schedule Input is handed to its handler as EventBridge would, twice with
  the same execution id (Powertools idempotency: one effect) and again with another execution id
  after the guard moved on (stale: no effect).
- Lifecycle: pausing deletes the participant's schedules from the moto group, resuming restores them.
- DST: a daily 08:00 America/Toronto schedule fires at 07:50 local every day across the 2027 changes.
- Random windows: one delivery a day inside the window, at different times, the same for a seed.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from promptpipe.adapters.aws import aws_client
from promptpipe.flow.deps import IdGenerator
from promptpipe.flow.timer_events import FEEDBACK_FOLLOWUP_TEXT, FEEDBACK_NUDGE_TEXT, REMINDER_TEXT
from promptpipe.flow.tools.base import ToolContext
from promptpipe.flow.tools.scheduler import SchedulerTool
from promptpipe.flow.tools.state_transition import StateTransitionTool
from promptpipe.local.demo import send_sms
from promptpipe.local.environment import TIMERS_ARN, LocalEnvironment
from promptpipe.local.lambda_runtime import FakeLambdaContext
from promptpipe.models.messaging import OutboundKind
from promptpipe.models.state import DataKey
from tests.support.schedules import apply_schedules

TORONTO = ZoneInfo("America/Toronto")
PHONE = "+14165550142"


# --- driving the local stack -------------------------------------------------------------------


class Participant:
    """An enrolled participant who talks through signed Twilio webhooks."""

    def __init__(self, env: LocalEnvironment, phone: str = PHONE, timezone: str = "America/Toronto") -> None:
        self.env = env
        response = env.api(
            "POST", "/conversation/participants", json_body={"phone_number": phone, "name": "Sam", "timezone": timezone}
        )
        assert response.status == 201, response.body
        self.id: str = response.body["result"]["id"]
        self.phone: str = response.body["result"]["phone_number"]
        self._sent = 0

    def say(self, text: str) -> None:
        self._sent += 1
        self.env.note_inbound(self.id, text)
        assert send_sms(self.env, self.phone, text, f"SM{self.id[-8:]}{self._sent:04d}") == 200

    def intake(self, time_text: str = "Around 7:30am works for me.") -> None:
        for text in (
            "Hi! I'd like to exercise more.",
            "I want to feel more energetic during the day.",
            time_text,
            "After my morning coffee.",
            "Yes, please.",  # the yes to the proposed daily time: the schedule is made on it
        ):
            self.say(text)

    def state(self) -> dict[str, Any]:
        return self.env.api("GET", f"/conversation/participants/{self.id}/state").body["result"]

    def raw(self) -> dict[str, str]:
        return self.env.app.store.load(self.id).flow.state_data

    def set_status(self, status: str) -> None:
        response = self.env.api("PUT", f"/conversation/participants/{self.id}", json_body={"status": status})
        assert response.status == 200, response.body

    def override(self, sub_state: str) -> None:
        response = self.env.api(
            "POST", f"/conversation/participants/{self.id}/state", json_body={"sub_state": sub_state, "reason": "test"}
        )
        assert response.status == 200, response.body

    def messages(self, *kinds: OutboundKind) -> list[Any]:
        return [m for m in self.env.messages(self.id) if not kinds or m.kind in kinds]


def scheduler(env: LocalEnvironment) -> Any:
    return aws_client("scheduler", env.settings)


def group_names(env: LocalEnvironment, participant_id: str) -> list[str]:
    items = scheduler(env).list_schedules(GroupName=env.settings.schedule_group_name)["Schedules"]
    return sorted(i["Name"] for i in items if participant_id in i["Name"])


def captured(env: LocalEnvironment, name: str) -> tuple[str, str]:
    """The (target ARN, Input) EventBridge holds for a schedule."""
    schedule = scheduler(env).get_schedule(Name=name, GroupName=env.settings.schedule_group_name)
    return schedule["Target"]["Arn"], schedule["Target"]["Input"]


def invoke(env: LocalEnvironment, name: str | tuple[str, str], execution_id: str) -> dict[str, Any]:
    """Hand a schedule's Input (read now, or captured earlier) to its target handler, as EventBridge
    does (scheduler context placeholders filled), without going through the pump."""
    arn, text = captured(env, name) if isinstance(name, str) else name
    event = json.loads(
        text.replace("<aws.scheduler.scheduled-time>", env.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")).replace(
            "<aws.scheduler.execution-id>", execution_id
        )
    )
    from functions.scheduled_prompt import handler as scheduled_prompt
    from functions.timers import handler as timers

    target = timers.handler if arn == TIMERS_ARN else scheduled_prompt.handler
    return target(event, FakeLambdaContext(function_name="promptpipe-test"))


def at_local(day: date, hhmm: str, zone: ZoneInfo = TORONTO) -> datetime:
    hour, minute = (int(x) for x in hhmm.split(":"))
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone).astimezone(UTC)


MONDAY = date(2026, 3, 2)
START = at_local(MONDAY, "08:00")


@pytest.fixture
def enrolled(local_env_factory: Any) -> Participant:
    """A participant after intake (daily 07:30 Toronto, firing at 07:20); nothing fired yet."""
    env = local_env_factory(start=START)
    participant = Participant(env)
    participant.intake()
    assert participant.state()["sub_state"] == "FEEDBACK"
    return participant


def daily_name(p: Participant) -> str:
    [schedule] = p.state()["schedules"]
    return schedule["timer_id"]


def deliver_once(p: Participant, execution_id: str = "exec-prompt-1") -> None:
    p.env.clock.set(at_local(MONDAY + timedelta(days=1), "07:20"))
    invoke(p.env, daily_name(p), execution_id)


# --- every kind fired twice → one effect; stale → none -------------------------------------------


def test_daily_prompt_invoked_twice_with_one_execution_id_delivers_once(enrolled: Participant) -> None:
    # Given a participant after intake
    p = enrolled
    # When the daily schedule's Input reaches the scheduled-prompt handler twice (a retry)
    deliver_once(p, "exec-prompt-1")
    invoke(p.env, daily_name(p), "exec-prompt-1")
    # Then one prompt (and one poll) went out and one was counted
    assert len(p.messages(OutboundKind.DAILY_PROMPT)) == 1
    assert len(p.messages(OutboundKind.INTENSITY_POLL)) == 1
    assert p.state()["profile"]["total_prompts"] == 1
    # And the reminder and auto-feedback one-shots exist in the group, as at() schedules
    reminder, autofb = f"{p.id}-reminder", f"{p.id}-autofb"
    assert {reminder, autofb} <= set(group_names(p.env, p.id))
    item = scheduler(p.env).get_schedule(Name=reminder, GroupName=p.env.settings.schedule_group_name)
    assert item["ScheduleExpression"] == "at(2026-03-03T17:20:00)" and item["ActionAfterCompletion"] == "DELETE"


def test_reminder_twice_one_message_and_stale_execution_none(enrolled: Participant) -> None:
    # Given a delivered prompt and its reminder due at 12:20
    p = enrolled
    deliver_once(p)
    reminder = captured(p.env, f"{p.id}-reminder")
    p.env.clock.set(at_local(MONDAY + timedelta(days=1), "12:20"))
    # When the reminder's Input is delivered twice with one execution id
    invoke(p.env, reminder, "exec-reminder-1")
    invoke(p.env, reminder, "exec-reminder-1")
    # And once more with another execution id (the pending prompt is already cleared)
    invoke(p.env, reminder, "exec-reminder-2")
    # Then one reminder, with the contract's text
    assert [m.body for m in p.messages(OutboundKind.REMINDER)] == [REMINDER_TEXT]
    assert p.state()["daily_prompt_pending"] is None


def test_auto_feedback_twice_one_effect_and_stale_execution_none(enrolled: Participant) -> None:
    # Given a participant moved back to INTAKE, then a delivered prompt (auto-feedback armed)
    p = enrolled
    p.override("INTAKE")
    deliver_once(p)
    autofb = captured(p.env, f"{p.id}-autofb")
    p.env.clock.set(at_local(MONDAY + timedelta(days=1), "07:25"))
    # When the auto-feedback Input is delivered
    invoke(p.env, autofb, "exec-autofb-1")
    assert p.state()["sub_state"] == "FEEDBACK"
    # And, after an operator moved the participant back, delivered again: same and another execution
    p.override("INTAKE")
    invoke(p.env, autofb, "exec-autofb-1")
    invoke(p.env, autofb, "exec-autofb-2")
    # Then the move to FEEDBACK happened once
    assert p.state()["sub_state"] == "INTAKE"


def test_state_transition_twice_one_effect_and_stale_execution_none(enrolled: Participant) -> None:
    # Given a participant in INTAKE with a transition to FEEDBACK scheduled in 30 minutes
    p = enrolled
    p.override("INTAKE")
    session = p.env.app.sessions.open(p.id, "delayed-transition")
    assert (
        StateTransitionTool()
        .execute(ToolContext(p.env.app.deps, session), {"target_state": "FEEDBACK", "delay_minutes": 30})
        .ok
    )
    apply_schedules(p.env.app, session.commit())
    transition = captured(p.env, f"{p.id}-transition")
    one_shot = scheduler(p.env).get_schedule(Name=f"{p.id}-transition", GroupName=p.env.settings.schedule_group_name)
    # When it fires / Then FEEDBACK, and the pending transition is cleared; the one-shot is the
    # scheduler's to delete once it has run (ActionAfterCompletion=DELETE), not the handler's
    p.env.clock.advance(timedelta(minutes=30))
    invoke(p.env, transition, "exec-transition-1")
    assert p.state()["sub_state"] == "FEEDBACK" and one_shot["ActionAfterCompletion"] == "DELETE"
    assert not p.state()["pending_timers"]
    # When, after an operator moved the participant back, it is delivered again
    p.override("INTAKE")
    invoke(p.env, transition, "exec-transition-1")
    invoke(p.env, transition, "exec-transition-2")
    # Then nothing moves
    assert p.state()["sub_state"] == "INTAKE"


def test_feedback_timeout_and_follow_up_twice_one_effect_each(local_env_factory: Any) -> None:
    # Given feedback timers on, a participant after intake and a delivered prompt
    env = local_env_factory(start=START, feedback_timers_enabled=True)
    p = Participant(env)
    p.intake()
    deliver_once(p)
    # When the timeout's Input is delivered twice, then under another execution id
    timeout = captured(env, f"{p.id}-fbtimeout")
    env.clock.advance(timedelta(minutes=15))
    for execution in ("exec-timeout-1", "exec-timeout-1", "exec-timeout-2"):
        invoke(env, timeout, execution)
    # And the follow-up's likewise, 3 h later
    followup = captured(env, f"{p.id}-fbfollowup")
    env.clock.advance(timedelta(hours=3))
    for execution in ("exec-followup-1", "exec-followup-1", "exec-followup-2"):
        invoke(env, followup, execution)
    # Then one nudge and one follow-up went out
    assert [m.body for m in p.messages(OutboundKind.FEEDBACK_NUDGE)] == [FEEDBACK_NUDGE_TEXT, FEEDBACK_FOLLOWUP_TEXT]
    assert p.raw()[DataKey.FEEDBACK_STATE.value] == "followup_sent"


def test_a_stale_reminder_from_yesterday_changes_nothing_today(enrolled: Participant) -> None:
    # Given Tuesday's prompt, and the Input EventBridge held for Tuesday's reminder
    p = enrolled
    deliver_once(p, "exec-tuesday")
    tuesday_reminder = captured(p.env, f"{p.id}-reminder")
    # When Wednesday's prompt replaces the reminder, and Tuesday's Input arrives late anyway
    p.env.clock.set(at_local(MONDAY + timedelta(days=2), "07:20"))
    invoke(p.env, daily_name(p), "exec-wednesday")
    p.env.clock.set(at_local(MONDAY + timedelta(days=2), "07:30"))
    invoke(p.env, tuesday_reminder, "late")
    # Then no reminder goes out and Wednesday's prompt is still pending
    assert p.messages(OutboundKind.REMINDER) == []
    assert p.state()["daily_prompt_pending"]["sent_at"] == "2026-03-04T12:20:00Z"


# --- pause and resume (docs/behaviour.md#B-LIFE-1) ------------------------------------------------


def test_pause_stops_prompts_and_resume_restores_them_at_the_right_local_time(enrolled: Participant) -> None:
    # Given a participant after intake whose first prompt arrives Tuesday 07:20
    p, env = enrolled, enrolled.env
    name = daily_name(p)
    env.advance_to(at_local(MONDAY + timedelta(days=1), "08:00"))
    assert len(p.messages(OutboundKind.DAILY_PROMPT)) == 1
    assert name in group_names(env, p.id) and f"{p.id}-reminder" in group_names(env, p.id)
    # When they are paused at 08:00
    p.set_status("paused")
    # Then every schedule of theirs is gone from the group
    assert group_names(env, p.id) == []
    # And no prompt (nor reminder) fires for three days
    firings = env.advance_to(at_local(MONDAY + timedelta(days=4), "10:00"))
    assert [f for f in firings if p.id in f.name] == []
    assert len(p.messages(OutboundKind.DAILY_PROMPT)) == 1 and p.messages(OutboundKind.REMINDER) == []
    # When they are resumed on Friday at 10:00 (after that day's 07:20)
    p.set_status("active")
    # Then the daily schedule is back, same name, same cron and zone
    assert group_names(env, p.id) == [name]
    item = scheduler(env).get_schedule(Name=name, GroupName=env.settings.schedule_group_name)
    assert (
        item["ScheduleExpression"] == "cron(20 7 * * ? *)" and item["ScheduleExpressionTimezone"] == "America/Toronto"
    )
    # And nothing missed is caught up: the next prompt is Saturday at 07:20 local
    env.advance_to(at_local(MONDAY + timedelta(days=5), "08:00"))
    prompts = p.messages(OutboundKind.DAILY_PROMPT)
    assert [m.sent_at.astimezone(TORONTO).strftime("%a %H:%M") for m in prompts] == ["Tue 07:20", "Sat 07:20"]


def test_stop_and_start_keywords_pause_and_resume(enrolled: Participant) -> None:
    # Given a participant after intake
    p, env = enrolled, enrolled.env
    name = daily_name(p)
    # When they text STOP / Then their schedules are deleted and no prompt comes
    p.say("STOP")
    assert p.state()["status"] == "paused" and group_names(env, p.id) == []
    env.advance_to(at_local(MONDAY + timedelta(days=2), "08:00"))
    assert p.messages(OutboundKind.DAILY_PROMPT) == []
    # When they text START / Then the schedule is restored and prompts resume the next morning
    p.say("START")
    assert p.state()["status"] == "active" and group_names(env, p.id) == [name]
    env.advance_to(at_local(MONDAY + timedelta(days=3), "08:00"))
    assert [m.sent_at.astimezone(TORONTO).strftime("%a %H:%M") for m in p.messages(OutboundKind.DAILY_PROMPT)] == [
        "Thu 07:20"
    ]


# --- DST ------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("first_day", "change_day", "utc_before", "utc_after"),
    [
        (date(2027, 3, 10), date(2027, 3, 14), "12:50", "11:50"),  # spring forward: EST → EDT
        (date(2027, 11, 3), date(2027, 11, 7), "11:50", "12:50"),  # fall back: EDT → EST
    ],
)
def test_daily_0800_toronto_fires_once_a_day_at_0750_across_dst(
    local_env_factory: Any, first_day: date, change_day: date, utc_before: str, utc_after: str
) -> None:
    # Given a participant enrolled at noon, whose intake sets a daily 08:00 America/Toronto schedule
    env = local_env_factory(start=at_local(first_day, "12:00"))
    p = Participant(env)
    p.intake("Around 8am works for me.")
    [schedule] = p.state()["schedules"]
    assert (schedule["type"], schedule["fixed_time"], schedule["timezone"]) == ("fixed", "08:00", "America/Toronto")
    # When the pump runs for a week across the DST change
    firings = env.advance_to(at_local(first_day + timedelta(days=8), "00:00"))
    # Then the daily prompt fired once a day, every day, at 07:50 local (08:00 minus the 10 min prep)
    daily = [f for f in firings if f.kind == "daily_prompt"]
    local = [f.at.astimezone(TORONTO) for f in daily]
    assert [d.date() for d in local] == [first_day + timedelta(days=i) for i in range(1, 8)]
    assert {d.strftime("%H:%M") for d in local} == {"07:50"}
    # And the UTC instant moved by an hour on the change day
    for firing in daily:
        expected = utc_before if firing.at.astimezone(TORONTO).date() < change_day else utc_after
        assert firing.at.strftime("%H:%M") == expected
    # And the participant received exactly those seven prompts
    prompts = p.messages(OutboundKind.DAILY_PROMPT)
    assert [m.sent_at for m in prompts] == [f.at for f in daily]


# --- random windows (docs/behaviour.md#B-SCHED-6) -------------------------------------------------


def random_week(env: LocalEnvironment, seed: int) -> list[datetime]:
    """Enroll, create a random 08:00-10:00 Toronto schedule, run a week; the prompts' send times."""
    env.app.deps.ids = IdGenerator(random.Random(seed))  # the local wiring draws ids from secrets
    p = Participant(env)
    session = env.app.sessions.open(p.id, "create-random")
    args = {"action": "create", "type": "random", "random_start_time": "08:00", "random_end_time": "10:00"}
    result = SchedulerTool(env.settings.scheduler_prep_time_minutes).execute(ToolContext(env.app.deps, session), args)
    apply_schedules(env.app, session.commit())
    assert result.ok and result.data["starts_today"] is False
    env.advance_to(at_local(MONDAY + timedelta(days=8), "00:00"))
    return [m.sent_at for m in p.messages(OutboundKind.DAILY_PROMPT)]


def test_random_window_delivers_inside_the_window_every_day_deterministically(local_env_factory: Any) -> None:
    # Given a random 08:00-10:00 schedule (prep 10: deliveries between 07:50 and 09:50 Toronto)
    first_env = local_env_factory(start=START, seed=11)
    # When the pump runs for a week
    times = random_week(first_env, seed=11)
    first_env.close()
    # Then one prompt a day, each inside the window
    local = [t.astimezone(TORONTO) for t in times]
    assert [d.date() for d in local] == [MONDAY + timedelta(days=i) for i in range(1, 8)]
    for instant in local:
        assert (7, 50) <= (instant.hour, instant.minute) <= (9, 50), instant
    # And at different times on different days
    assert len({d.strftime("%H:%M") for d in local}) >= 5
    # And the same seed gives the same times
    second_env = local_env_factory(start=START, seed=11)
    assert random_week(second_env, seed=11) == times


# --- a corrupt stored value never stops the prompts ---------------------------------------------


def test_a_corrupt_profile_neither_stops_the_daily_prompt_nor_a_done_answer(
    enrolled: Participant, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from promptpipe.adapters.dynamodb_items import FLOW_SK, participant_pk

    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)
    # Given a participant after intake whose stored profile got corrupted (written outside the app)
    p = enrolled
    aws_client("dynamodb", p.env.settings).update_item(
        TableName=p.env.settings.table_name,
        Key={"pk": {"S": participant_pk(p.id)}, "sk": {"S": FLOW_SK}},
        UpdateExpression="SET state_data.#profile = :corrupt",
        ExpressionAttributeNames={"#profile": DataKey.USER_PROFILE.value},
        ExpressionAttributeValues={":corrupt": {"S": '{"habit_domain": "private words", "success_count": '}},
    )
    capfd.readouterr()
    # When the daily schedule fires through the scheduled-prompt handler
    deliver_once(p)
    # Then the prompt and the poll went out (the generator sees an empty profile and falls back)
    assert len(p.messages(OutboundKind.DAILY_PROMPT)) == 1
    assert len(p.messages(OutboundKind.INTENSITY_POLL)) == 1
    # When the participant answers "1" (Done) through the webhook and the worker
    p.env.clock.set(at_local(MONDAY + timedelta(days=1), "07:40"))
    p.say("1")
    # Then it counted on a fresh profile, which replaced the corrupt one
    profile = p.state()["profile"]
    assert (profile["success_count"], profile["total_prompts"]) == (1, 1)
    assert json.loads(p.raw()[DataKey.USER_PROFILE.value])["success_count"] == 1
    # And the corrupt value was counted as a metric, by key, and its content was never printed
    output = capfd.readouterr()
    text = output.out + output.err
    blobs = [json.loads(line) for line in text.splitlines() if line.startswith("{") and '"_aws"' in line]
    corrupt = [b for b in blobs if "CorruptStateValues" in b]
    assert corrupt and all(b["key"] == DataKey.USER_PROFILE.value for b in corrupt)
    assert "private words" not in text
