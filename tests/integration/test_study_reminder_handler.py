"""A study's decision point at the reminder on the local stack (moto DynamoDB and Scheduler, the real
timers handler): the reminder's schedule delivered three times with one execution id sends at most
one reminder and leaves one decision row (docs/studies.md)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from promptpipe.adapters.aws import aws_client
from promptpipe.flow.timer_names import timer_name
from promptpipe.flow.tools.base import ToolContext
from promptpipe.flow.tools.scheduler import SchedulerTool
from promptpipe.local.lambda_runtime import FakeLambdaContext
from promptpipe.models.api import StateOverride
from promptpipe.models.events import TimerKind
from promptpipe.models.messaging import OutboundKind
from promptpipe.models.state import SubState
from promptpipe.usecases.participants import override_state
from promptpipe.usecases.studies import with_study
from tests.support import enroll_over_api
from tests.support.schedules import apply_schedules
from tests.unit.test_study_reminder import FRIENDLY, reminder_study


def _invoke(env: Any, name: str, execution_id: str) -> dict[str, Any]:
    """The schedule's Input handed to its target as EventBridge Scheduler does."""
    from functions.scheduled_prompt import handler as scheduled_prompt
    from functions.timers import handler as timers

    item = aws_client("scheduler", env.settings).get_schedule(Name=name, GroupName=env.settings.schedule_group_name)
    text = (
        item["Target"]["Input"]
        .replace("<aws.scheduler.execution-id>", execution_id)
        .replace("<aws.scheduler.scheduled-time>", env.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ"))
    )
    handler = timers.handler if item["Target"]["Arn"].endswith("timers") else scheduled_prompt.handler
    result: dict[str, Any] = handler(json.loads(text), FakeLambdaContext(function_name="test"))
    return result


def test_a_redelivered_reminder_makes_one_decision_row(local_env_factory: Any) -> None:
    env = local_env_factory()
    app = env.app
    definition = reminder_study(0.0)  # the framing arm: a reminder goes out
    with_study(app, definition)
    pid = enroll_over_api(env)
    override_state(app, pid, StateOverride(sub_state=SubState.FEEDBACK, reason="past intake"))
    session = app.sessions.open(pid, "setup")
    tool = SchedulerTool(env.settings.scheduler_prep_time_minutes)
    assert tool.execute(ToolContext(app.deps, session), {"action": "create", "type": "fixed", "fixed_time": "09:30"}).ok
    apply_schedules(app, session.commit())
    daily = env.api("GET", f"/conversation/participants/{pid}/state").body["result"]["schedules"][0]["timer_id"]
    env.clock.advance(timedelta(hours=1))
    assert _invoke(env, daily, "exec-prompt")["messages"] >= 1  # the prompt, its decision, the reminder armed
    reminder = timer_name(TimerKind.DAILY_PROMPT_REMINDER, pid)
    env.clock.advance(timedelta(hours=6))  # past the reminder's due time

    # When EventBridge Scheduler delivers the reminder three times with one execution id
    results = [_invoke(env, reminder, "exec-reminder") for _ in range(3)]

    # Then one decision row at the reminder and one reminder sent, with the arm's text
    assert [r["replayed"] for r in results] == [False, True, True]
    rows = [r for r in app.decisions.for_participant(pid) if r.decision_point == "reminder"]
    assert len(rows) == 1
    assert (rows[0].arm, rows[0].available, rows[0].delivery) == ("friendly", True, "sent")
    [reminder_sent] = [m for m in env.messages(pid) if m.kind is OutboundKind.REMINDER]
    assert reminder_sent.body == FRIENDLY and rows[0].message_id == reminder_sent.message_id
