"""Reconcile: the live schedules of a participant equal what their state wants, through the API and
the CLI (docs/architecture.md#effects)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from typing import Any

from promptpipe.flow.timer_names import participant_prefix
from promptpipe.flow.tools.base import ToolContext
from promptpipe.flow.tools.scheduler import SchedulerTool
from promptpipe.models.events import ScheduledPromptPayload
from promptpipe.models.store import EventRecord
from promptpipe.usecases.schedules import reconcile
from tests.support.schedules import apply_schedules

BASE = "/conversation/participants"


def _enrolled_with_a_schedule(env: Any) -> tuple[str, str]:
    response = env.api("POST", BASE, json_body={"phone_number": "+14165550142", "timezone": "America/Toronto"})
    assert response.status == 201, response.body
    pid = response.body["result"]["id"]
    session = env.app.sessions.open(pid, "setup")
    assert (
        SchedulerTool(10)
        .execute(ToolContext(env.app.deps, session), {"action": "create", "type": "fixed", "fixed_time": "09:30"})
        .ok
    )
    apply_schedules(env.app, session.commit())
    [name] = env.app.timers.list_names(participant_prefix(pid))
    return pid, name


def _orphan(env: Any, pid: str, schedule_id: str = "sched_0000000000000000") -> str:
    name = f"{pid}-{schedule_id}"
    env.app.timers.schedule_daily_prompt(
        name=name,
        hour=7,
        minute=0,
        timezone="UTC",
        payload=ScheduledPromptPayload(participant_id=pid, schedule_id=schedule_id),
    )
    return name


def test_reconcile_recreates_a_missing_schedule_and_deletes_an_orphan(local_env_factory: Any) -> None:
    # Given a participant whose registered schedule was lost and who has an orphan in the group
    env = local_env_factory()
    pid, registered = _enrolled_with_a_schedule(env)
    env.app.timers.cancel(registered)
    orphan = _orphan(env, pid)
    # When reconcile runs through the API
    response = env.api("POST", f"{BASE}/{pid}/reconcile")
    # Then both repairs are reported and made: the group equals the registry
    assert response.status == 200, response.body
    result = response.body["result"]
    assert (result["created_missing"], result["deleted_orphans"], result["repairs"]) == ([registered], [orphan], 2)
    assert env.app.timers.list_names(participant_prefix(pid)) == [registered]
    # And a second run finds nothing to repair
    assert env.api("POST", f"{BASE}/{pid}/reconcile").body["result"]["repairs"] == 0


def test_reconcile_all_removes_the_schedules_of_a_deleted_participant(local_env_factory: Any) -> None:
    # Given a deleted participant whose in-flight turn created a schedule after the delete's clean-up
    env = local_env_factory()
    pid, _ = _enrolled_with_a_schedule(env)
    assert env.api("DELETE", f"{BASE}/{pid}").status == 200
    assert env.app.timers.list_names(participant_prefix(pid)) == []
    late = _orphan(env, pid)
    # When everyone is reconciled
    response = env.api("POST", "/conversation/reconcile")
    # Then the late schedule is gone
    assert response.status == 200, response.body
    [report] = [r for r in response.body["result"]["participants"] if r["participant_id"] == pid]
    assert report["deleted_orphans"] == [late] and env.app.timers.list_names(participant_prefix(pid)) == []


def test_a_one_shot_whose_time_has_passed_is_not_recreated(local_env_factory: Any) -> None:
    # Given a delivered prompt whose reminder one-shot vanished after its time
    env = local_env_factory()
    pid, registered = _enrolled_with_a_schedule(env)
    from promptpipe.flow.delivery import deliver_daily_prompt

    session = env.app.sessions.open(pid, "prompt")
    assert deliver_daily_prompt(
        env.app.deps, session, ScheduledPromptPayload(participant_id=pid, schedule_id=registered.split("-", 1)[1])
    ).delivered
    apply_schedules(env.app, session.commit())
    reminder = f"{pid}-reminder"
    env.app.timers.cancel(reminder)
    env.clock.advance(timedelta(hours=6))
    # When reconcile runs / Then it reports the one-shot as past, not re-created
    report = reconcile(env.app, pid)
    assert reminder in report.skipped_past and reminder not in report.created_missing


def test_the_cli_reconciles_through_the_api(local_env_factory: Any, monkeypatch: Any, capsys: Any) -> None:
    # Given a participant with an orphan schedule, and the CLI pointed at that local stack's API
    from contextlib import contextmanager

    from promptpipe.cli import commands as cli
    from promptpipe.coordinator.client import CoordinatorClient
    from promptpipe.exit_codes import CliError
    from promptpipe.local.api_transport import InProcessTransport

    env = local_env_factory()
    pid, _ = _enrolled_with_a_schedule(env)
    orphan = _orphan(env, pid)

    @contextmanager
    def client(_args: Any) -> Any:
        yield CoordinatorClient(InProcessTransport(env))

    monkeypatch.setattr(cli, "coordinator_client", client)
    # When `promptpipe reconcile ID` runs / Then it prints the repair and the orphan is gone
    assert cli.cmd_reconcile(argparse.Namespace(participant_id=pid, all=False)) == 0
    assert f"{pid}: deleted orphan schedule {orphan}" in capsys.readouterr().out
    assert orphan not in env.app.timers.list_names(participant_prefix(pid))
    # And `--all` works too; an id together with --all (or neither) is a usage error
    assert cli.cmd_reconcile(argparse.Namespace(participant_id="", all=True)) == 0
    assert "0 repair(s)" in capsys.readouterr().out
    try:
        cli.cmd_reconcile(argparse.Namespace(participant_id="", all=False))
    except CliError as exc:
        assert exc.code == cli.EXIT_USAGE
    else:
        raise AssertionError("expected a usage error")


def test_event_records_stay_slim_and_bounded() -> None:
    # A record carries references, not bodies: a day's worth of events stays a few KB
    record = EventRecord(
        event_id="SM" + "0" * 32,
        committed_at=datetime(2026, 3, 2, tzinfo=UTC),
        version=123,
        token="0123456789abcdef-1",
        messages=[{"id": "SM" + "0" * 32 + "#0", "seq": "0000000123#001"}],  # type: ignore[list-item]
        schedules=["p_" + "0" * 32 + "-reminder"],
    )
    assert len(record.model_dump_json()) < 300
