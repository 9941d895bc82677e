"""The daily prompt's time moved by a coordinator (``PUT /conversation/participants/{id}`` with
``preferred_time``, docs/behaviour.md#B-API-9), through the real handlers on the local stack (moto's
EventBridge Scheduler): the live cron moves to the new time in the participant's zone, the state's
registry and the coach's profile agree, a retry makes no second schedule, and a paused participant's
schedule moves within the pause."""

from __future__ import annotations

from typing import Any

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.errors import TimerError
from promptpipe.local.environment import LocalEnvironment
from tests.integration.test_enrollment_api import BASE, schedule_names, scheduling_llm, send_sms, with_daily_schedule


def state_of(env: LocalEnvironment, pid: str) -> dict[str, Any]:
    response = env.api("GET", f"{BASE}/{pid}/state")
    assert response.status == 200, response.body
    return response.body["result"]


def live(env: LocalEnvironment, name: str) -> tuple[str, str]:
    schedule = env.app.timers.describe(name)
    assert schedule is not None, f"{name} is not live"
    return schedule.expression, schedule.timezone


def test_the_live_cron_moves_to_the_new_time_in_the_participants_zone(local_env_factory) -> None:
    # Given a participant in New York whose coach made a 09:30 daily prompt (fired 10 min before)
    env = local_env_factory(llm=scheduling_llm())
    pid = with_daily_schedule(env)
    [name] = schedule_names(env)
    prep = env.settings.scheduler_prep_time_minutes
    assert live(env, name) == (f"cron({30 - prep} 9 * * ? *)", "America/New_York")

    # When the coordinator sets the preferred time to 19:00
    response = env.api("PUT", f"{BASE}/{pid}", json_body={"preferred_time": "19:00", "by": "Ana", "reason": "evenings"})

    # Then the same schedule (same name, no second one) fires at 19:00 less the prep time, New York time
    assert response.status == 200, response.body
    assert schedule_names(env) == [name]
    assert live(env, name) == (f"cron({60 - prep} 18 * * ? *)", "America/New_York")
    # And the state agrees: the registry's schedule and the coach's profile say 19:00
    state = state_of(env, pid)
    assert [(s["fixed_time"], s["timezone"], s["timer_id"]) for s in state["schedules"]] == [
        ("19:00", "America/New_York", name)
    ]
    assert state["profile"]["preferred_time"] == "19:00"
    assert state["effects_pending"] is False


def test_a_retry_of_the_edit_makes_no_second_schedule(local_env_factory) -> None:
    env = local_env_factory(llm=scheduling_llm())
    pid = with_daily_schedule(env)
    [name] = schedule_names(env)
    prep = env.settings.scheduler_prep_time_minutes

    # When the same edit is sent twice (a lost answer retried), spelled without the leading zero
    for _ in range(2):
        assert env.api("PUT", f"{BASE}/{pid}", json_body={"preferred_time": "7:45"}).status == 200

    # Then there is still one schedule, at 07:45 less the prep time, and one registry entry
    assert schedule_names(env) == [name]
    assert live(env, name) == (f"cron({45 - prep} 7 * * ? *)", "America/New_York")
    assert [s["fixed_time"] for s in state_of(env, pid)["schedules"]] == ["07:45"]
    # And reconcile finds nothing to repair
    report = env.api("POST", f"{BASE}/{pid}/reconcile")
    assert report.status == 200, report.body
    assert report.body["message"] == "0 repair(s)"


def test_a_zone_and_a_time_edited_together_move_the_cron_to_the_new_time_in_the_new_zone(local_env_factory) -> None:
    env = local_env_factory(llm=scheduling_llm())
    pid = with_daily_schedule(env)
    [name] = schedule_names(env)
    prep = env.settings.scheduler_prep_time_minutes
    body = {"timezone": "Europe/Madrid", "preferred_time": "08:30"}
    assert env.api("PUT", f"{BASE}/{pid}", json_body=body).status == 200
    assert live(env, name) == (f"cron({30 - prep} 8 * * ? *)", "Europe/Madrid")


def test_a_bad_time_is_a_400_and_nothing_moves(local_env_factory) -> None:
    env = local_env_factory(llm=scheduling_llm())
    pid = with_daily_schedule(env)
    [name] = schedule_names(env)
    before = live(env, name)
    for bad in ("7pm", "25:00", "19:60", ""):
        response = env.api("PUT", f"{BASE}/{pid}", json_body={"preferred_time": bad})
        assert response.status == 400, (bad, response.body)
        assert "preferred_time" in response.body["message"]
    assert live(env, name) == before
    assert [s["fixed_time"] for s in state_of(env, pid)["schedules"]] == ["09:30"]


def test_a_participant_without_a_schedule_gets_the_profile_and_no_schedule(local_env_factory) -> None:
    env = local_env_factory(llm=ScriptedLLM([ScriptedLLM.text("Hello! What habit shall we build?")]))
    response = env.api("POST", BASE, json_body={"phone_number": "+14155550101", "timezone": "America/New_York"})
    pid = response.body["result"]["id"]
    assert env.api("PUT", f"{BASE}/{pid}", json_body={"preferred_time": "19:00"}).status == 200
    state = state_of(env, pid)
    assert state["profile"]["preferred_time"] == "19:00" and state["schedules"] == []
    assert schedule_names(env) == []  # the cap holds: the edit never adds a schedule


def test_a_paused_schedule_moves_within_the_pause_and_comes_back_at_the_new_time(local_env_factory) -> None:
    # Given a participant who paused their daily prompts for 3 days (schedulePause)
    env = local_env_factory(
        llm=scheduling_llm(
            ScriptedLLM.tool_call("scheduler", {"action": "pause", "days": 3}),
            ScriptedLLM.text("Paused for 3 days."),
            ScriptedLLM.tool_call("scheduler", {"action": "resume"}),
            ScriptedLLM.text("Back on."),
        )
    )
    pid = with_daily_schedule(env)
    [name] = schedule_names(env)
    prep = env.settings.scheduler_prep_time_minutes
    assert send_sms(env, "pause for 3 days please", "SM-pause").status == 200
    assert name not in schedule_names(env)

    # When the coordinator moves the time to 19:00
    assert env.api("PUT", f"{BASE}/{pid}", json_body={"preferred_time": "19:00"}).status == 200

    # Then nothing is live yet (the pause holds), and the paused schedule says 19:00
    assert name not in schedule_names(env)
    state = state_of(env, pid)
    assert state["schedules"] == []
    # And when the pause ends (here: the participant asks for them back), it comes back at 19:00
    assert send_sms(env, "turn my prompts back on please", "SM-back").status == 200
    assert live(env, name) == (f"cron({60 - prep} 18 * * ? *)", "America/New_York")
    assert [s["fixed_time"] for s in state_of(env, pid)["schedules"]] == ["19:00"]


def test_a_scheduler_failure_after_the_commit_is_repaired_by_the_retry_with_one_schedule(
    local_env_factory, monkeypatch
) -> None:
    # Given a 09:30 daily prompt, and EventBridge Scheduler failing on the next put
    env = local_env_factory(llm=scheduling_llm())
    pid = with_daily_schedule(env)
    [name] = schedule_names(env)
    prep = env.settings.scheduler_prep_time_minutes
    timers = env.app.deps.timers
    put = timers.schedule_daily_prompt
    failures = [TimerError("scheduler unavailable")]

    def failing_once(**kwargs: Any) -> None:
        if failures:
            raise failures.pop()
        put(**kwargs)

    monkeypatch.setattr(timers, "schedule_daily_prompt", failing_once)

    # When the time is edited: the state lands, the schedule change does not (202: pending)
    first = env.api("PUT", f"{BASE}/{pid}", json_body={"preferred_time": "19:00"})
    assert first.status == 202, first.body
    assert [s["fixed_time"] for s in state_of(env, pid)["schedules"]] == ["19:00"]
    assert live(env, name) == (f"cron({30 - prep} 9 * * ? *)", "America/New_York")  # not yet moved

    # Then the retried request applies it: one schedule, at the new time, nothing pending
    again = env.api("PUT", f"{BASE}/{pid}", json_body={"preferred_time": "19:00"})
    assert again.status == 200, again.body
    assert schedule_names(env) == [name]
    assert live(env, name) == (f"cron({60 - prep} 18 * * ? *)", "America/New_York")
    assert state_of(env, pid)["effects_pending"] is False


def test_a_participant_paused_by_status_gets_the_new_time_when_active_again(local_env_factory) -> None:
    # Given a participant the organiser paused (nothing live, the registry kept)
    env = local_env_factory(llm=scheduling_llm())
    pid = with_daily_schedule(env)
    [name] = schedule_names(env)
    prep = env.settings.scheduler_prep_time_minutes
    assert env.api("PUT", f"{BASE}/{pid}", json_body={"status": "paused"}).status == 200
    assert schedule_names(env) == []

    # When the time is edited while paused: still nothing live, the registry says 19:00
    assert env.api("PUT", f"{BASE}/{pid}", json_body={"preferred_time": "19:00"}).status == 200
    assert schedule_names(env) == []
    assert [s["fixed_time"] for s in state_of(env, pid)["schedules"]] == ["19:00"]

    # Then, active again, the schedule comes back at the new time
    assert env.api("PUT", f"{BASE}/{pid}", json_body={"status": "active"}).status == 200
    assert schedule_names(env) == [name]
    assert live(env, name) == (f"cron({60 - prep} 18 * * ? *)", "America/New_York")
