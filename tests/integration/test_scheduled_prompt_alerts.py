"""The scheduled-prompt function reaches the study team (docs/safety.md, "Asking for a person"): the
alert of an announced hold a daily firing places is published after its commit on the team's topic,
named by the settings as the stack names it (``SAFETY_ALERT_TOPIC_ARN``, ``infra/access.py``), not
only logged. On the local stack: moto's SNS, DynamoDB and Scheduler, the real handler.

No daily firing places a hold today; the test makes one do so (the flow controller's hand-off, as a
turn places it) by wrapping the delivery the use case runs, so the path from the commit to the topic
is the one a future hold of the daily prompt would take."""

from __future__ import annotations

import json
from typing import Any

import pytest

from functions.scheduled_prompt import handler as scheduled_prompt
from promptpipe.adapters.aws import aws_client
from promptpipe.adapters.dynamodb_items import needs_person_key
from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.flow.hold import place
from promptpipe.flow.timer_names import participant_prefix
from promptpipe.local.environment import LocalEnvironment
from promptpipe.local.lambda_runtime import FakeLambdaContext
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.models.messaging import InboundMessage
from promptpipe.models.safety import HoldReason
from promptpipe.usecases import daily_prompts
from tests.support import enroll_over_api
from tests.support.team_inbox import team_inbox

TOPIC_ARN = "arn:aws:sns:us-east-1:123456789012:promptpipe-safety-alerts"
PHONE = "+12125550181"
SCHEDULE = {"action": "create", "type": "fixed", "fixed_time": "09:30"}


def _with_a_daily_schedule(env: LocalEnvironment) -> tuple[str, dict[str, Any]]:
    """A participant whose first turn made the daily 09:30 prompt; the schedule's Input."""
    pid = enroll_over_api(env, PHONE)
    env.drain()
    message = InboundMessage(
        provider="twilio", provider_message_id="SMsetup", from_phone=PHONE, body="remind me at 9:30 every day",
        received_at=env.clock.now(),
    )  # fmt: skip
    event = TurnEvent(
        kind=TurnKind.MESSAGE, participant_id=pid, event_id="SMsetup", message=message, enqueued_at=env.clock.now()
    )
    env.app.queue.enqueue(event)
    env.drain()
    [name] = env.app.timers.list_names(participant_prefix(pid))
    item = aws_client("scheduler", env.settings).get_schedule(Name=name, GroupName=env.settings.schedule_group_name)
    return pid, json.loads(item["Target"]["Input"])


@pytest.fixture
def handing_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """The daily firing's delivery, then the flow controller's hand-off placed in the same commit."""
    deliver = daily_prompts.deliver_daily_prompt

    def deliver_then_hand_off(deps: Any, session: Any, payload: Any) -> Any:
        result = deliver(deps, session, payload)
        session.apply("handoff_hold", place(HoldReason.HANDOFF, "flow controller", detail="deadlock"))
        return result

    monkeypatch.setattr(daily_prompts, "deliver_daily_prompt", deliver_then_hand_off)


def test_a_hold_a_daily_firing_places_is_published_on_the_team_topic_once(
    local_env_factory: Any, handing_off: None
) -> None:
    llm = ScriptedLLM(
        [
            ScriptedLLM.text("Hello! What habit would you like to build?"),
            ScriptedLLM.tool_call("scheduler", SCHEDULE),
            ScriptedLLM.text("Done: a prompt every day at 09:30."),
            ScriptedLLM.text("Time for your one-minute walk!"),
        ]
    )
    env = local_env_factory(llm=llm, safety_alert_topic_arn=TOPIC_ARN)
    inbox = team_inbox(env.settings)
    assert inbox.topic_arn == TOPIC_ARN  # the topic the settings name
    pid, payload = _with_a_daily_schedule(env)
    assert inbox.received() == []

    invocation = {**payload, "execution_id": "exec-1"}
    scheduled_prompt.handler(invocation, FakeLambdaContext(function_name="scheduled-prompt"))

    [alert] = inbox.received()
    assert alert["Subject"] == f"Needs a person: participant {pid} (repeated failure)"
    assert f"Hold reference: {pid}@" in alert["Message"]
    marker = env.app.repo._client.get_item(TableName=env.settings.table_name, Key=needs_person_key(pid))["Item"]
    assert marker["alert_pending"]["BOOL"] is False  # published, and marked so

    # The scheduler's retry of the same execution publishes nothing more
    scheduled_prompt.handler(invocation, FakeLambdaContext(function_name="scheduled-prompt"))
    assert inbox.received() == []
