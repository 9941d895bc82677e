"""Schedule drift after a settings change (docs/architecture.md#effects): schedules written under one
prep time, flexible window and target are rewritten by ``reconcile`` once the deployment's settings
change, checked on the scheduler (moto) itself; a second reconcile changes nothing."""

from __future__ import annotations

import random
from typing import Any

from promptpipe.flow.deps import IdGenerator
from promptpipe.flow.timer_names import participant_prefix
from promptpipe.flow.tools.base import ToolContext
from promptpipe.flow.tools.scheduler import SchedulerTool
from promptpipe.wiring import build_app, set_app
from tests.support.schedules import apply_schedules

BASE = "/conversation/participants"
NEW_PROMPT_ARN = "arn:aws:lambda:us-east-1:123456789012:function:promptpipe-scheduled-prompt-v2"
NEW_ROLE_ARN = "arn:aws:iam::123456789012:role/promptpipe-scheduler-v2"


def _enrol_with_daily_prompt(env: Any, phone: str, hhmm: str) -> str:
    response = env.api("POST", BASE, json_body={"phone_number": phone, "timezone": "America/Toronto"})
    assert response.status == 201, response.body
    pid = str(response.body["result"]["id"])
    session = env.app.sessions.open(pid, "setup")
    created = SchedulerTool(env.settings.scheduler_prep_time_minutes).execute(
        ToolContext(env.app.deps, session), {"action": "create", "type": "fixed", "fixed_time": hhmm}
    )
    assert created.ok
    apply_schedules(env.app, session.commit())
    return pid


def _redeploy(env: Any, **overrides: Any) -> None:
    """The same table and schedule group, the functions built again with changed settings."""
    env.settings = env.settings.model_copy(update=overrides)
    env.app = build_app(
        env.settings, clock=env.clock, messenger=env.outbox, rng=random.Random(0), ids=IdGenerator(random.Random(0))
    )
    set_app(env.app)


def _live(env: Any, pid: str) -> dict[str, Any]:
    scheduler = env.app.timers._client  # the moto scheduler the adapter writes to
    [name] = env.app.timers.list_names(participant_prefix(pid))
    return dict(scheduler.get_schedule(Name=name, GroupName=env.settings.schedule_group_name))


def test_reconcile_rewrites_schedules_written_under_older_settings(local_env_factory: Any) -> None:
    # Given two participants whose daily prompts were written with a 10-minute prep time, no window
    env = local_env_factory(scheduler_prep_time_minutes=10, daily_prompt_flexible_window_minutes=0)
    sam = _enrol_with_daily_prompt(env, "+14165550142", "09:30")
    kim = _enrol_with_daily_prompt(env, "+14165550143", "18:00")
    before = _live(env, sam)
    assert before["ScheduleExpression"] == "cron(20 9 * * ? *)"
    assert before["FlexibleTimeWindow"] == {"Mode": "OFF"}
    # When the deployment changes prep time, flexible window, prompt target and scheduler role
    _redeploy(
        env,
        scheduler_prep_time_minutes=20,
        daily_prompt_flexible_window_minutes=15,
        scheduled_prompt_function_arn=NEW_PROMPT_ARN,
        scheduler_role_arn=NEW_ROLE_ARN,
    )
    # and reconcile runs for everyone through the API
    response = env.api("POST", "/conversation/reconcile")
    # Then each live schedule was rewritten to the new settings
    assert response.status == 200, response.body
    after = _live(env, sam)
    assert after["ScheduleExpression"] == "cron(10 9 * * ? *)"  # 09:30 less the new 20 minutes
    assert after["ScheduleExpressionTimezone"] == "America/Toronto"
    assert after["FlexibleTimeWindow"] == {"Mode": "FLEXIBLE", "MaximumWindowInMinutes": 15}
    assert (after["Target"]["Arn"], after["Target"]["RoleArn"]) == (NEW_PROMPT_ARN, NEW_ROLE_ARN)
    assert after["Target"]["Input"] == before["Target"]["Input"]  # the payload did not change
    assert _live(env, kim)["ScheduleExpression"] == "cron(40 17 * * ? *)"
    # and the report names the fields that differed
    reports = {r["participant_id"]: r for r in response.body["result"]["participants"]}
    fields = ["expression", "flexible_window_minutes", "target_arn", "role_arn"]
    for pid in (sam, kim):
        [drifted] = reports[pid]["updated_drifted"]
        assert drifted["fields"] == fields
        assert (reports[pid]["created_missing"], reports[pid]["deleted_orphans"], reports[pid]["repairs"]) == (
            [],
            [],
            1,
        )
    # And a second reconcile finds nothing to rewrite
    again = env.api("POST", "/conversation/reconcile").body["result"]
    assert again["repairs"] == 0
    assert all(r["updated_drifted"] == [] for r in again["participants"])


def test_a_schedule_that_matches_is_only_read(local_env_factory: Any) -> None:
    # Given a participant whose schedule matches the settings
    env = local_env_factory()
    pid = _enrol_with_daily_prompt(env, "+14165550142", "09:30")
    before = _live(env, pid)
    # When reconcile runs
    result = env.api("POST", f"{BASE}/{pid}/reconcile").body["result"]
    # Then nothing is rewritten (the schedule's modification time has not moved)
    assert (result["updated_drifted"], result["repairs"]) == ([], 0)
    assert _live(env, pid)["LastModificationDate"] == before["LastModificationDate"]


def test_eventbridge_describe_reads_back_what_planned_says_a_put_writes(aws: None) -> None:
    # The comparison is only sound if a schedule just put reads back equal to its plan (no drift
    # reported for every schedule, every time), for each kind and with a window, DLQ and retries.
    from datetime import UTC, datetime

    import boto3

    from promptpipe.adapters.eventbridge_timers import EventBridgeTimers
    from promptpipe.flow.effects import put_schedule
    from promptpipe.models.effects import ScheduleSpec
    from promptpipe.models.events import ScheduledPromptPayload, TimerKind, TimerPayload

    client = boto3.client("scheduler", region_name="us-east-1")
    client.create_schedule_group(Name="drift")

    def adapter(window: int) -> EventBridgeTimers:
        return EventBridgeTimers(
            client,
            group_name="drift",
            timers_function_arn="arn:aws:lambda:us-east-1:123456789012:function:timers",
            scheduled_prompt_function_arn="arn:aws:lambda:us-east-1:123456789012:function:prompt",
            role_arn="arn:aws:iam::123456789012:role/scheduler",
            dlq_arn="arn:aws:sqs:us-east-1:123456789012:dlq",
            daily_window_minutes=window,
        )

    at = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
    prompt = ScheduledPromptPayload(participant_id="p_1", schedule_id="s", created_at=at)
    specs = [
        ScheduleSpec(name="p_1-d", kind="daily_prompt", hour=7, minute=20, timezone="Europe/Paris", prompt=prompt),
        ScheduleSpec(name="p_1-r", kind="prompt_at", at=at, prompt=prompt),
        ScheduleSpec(
            name="p_1-t",
            kind="timer",
            at=at,
            timer=TimerPayload(participant_id="p_1", kind=TimerKind.AUTO_FEEDBACK, timer_id="p_1-t"),
        ),
    ]
    timers = adapter(window=5)
    for spec in specs:
        put_schedule(timers, spec)
        live = timers.describe(spec.name)
        assert live is not None and timers.planned(spec).differences(live) == []
    assert timers.describe("p_1-missing") is None
    daily = timers.describe("p_1-d")
    assert daily is not None and adapter(window=0).planned(specs[0]).differences(daily) == ["flexible_window_minutes"]


def test_the_cli_prints_each_rewritten_schedule_and_its_fields(
    local_env_factory: Any, monkeypatch: Any, capsys: Any
) -> None:
    import argparse
    from contextlib import contextmanager

    from promptpipe.cli import commands as cli
    from promptpipe.coordinator.client import CoordinatorClient
    from promptpipe.local.api_transport import InProcessTransport

    # Given a daily prompt written with no window, and a deployment that now has one
    env = local_env_factory(scheduler_prep_time_minutes=10, daily_prompt_flexible_window_minutes=0)
    pid = _enrol_with_daily_prompt(env, "+14165550142", "09:30")
    [name] = env.app.timers.list_names(participant_prefix(pid))
    _redeploy(env, daily_prompt_flexible_window_minutes=5)

    @contextmanager
    def client(_args: Any) -> Any:
        yield CoordinatorClient(InProcessTransport(env))

    monkeypatch.setattr(cli, "coordinator_client", client)
    # When `promptpipe reconcile ID` runs / Then it names the schedule and the field it rewrote
    assert cli.cmd_reconcile(argparse.Namespace(participant_id=pid, all=False)) == 0
    out = capsys.readouterr().out
    assert f"{pid}: rewrote drifted schedule {name} (flexible_window_minutes)" in out
    assert "1 repair(s) for 1 participant(s)" in out
    assert _live(env, pid)["FlexibleTimeWindow"] == {"Mode": "FLEXIBLE", "MaximumWindowInMinutes": 5}


def test_reconcile_costs_one_list_and_one_read_per_live_schedule(local_env_factory: Any) -> None:
    # The cost stated in docs/architecture.md#effects: per participant one ListSchedules page and one
    # GetSchedule per live wanted schedule; an UpdateSchedule only for one that drifted.
    env = local_env_factory()
    pid = _enrol_with_daily_prompt(env, "+14165550142", "09:30")
    client = env.app.timers._client  # the adapter's own scheduler client
    calls: list[str] = []
    client.meta.events.register("before-call.scheduler.*", lambda model, **_: calls.append(model.name))
    assert env.api("POST", f"{BASE}/{pid}/reconcile").body["result"]["repairs"] == 0
    assert calls == ["ListSchedules", "GetSchedule"]
