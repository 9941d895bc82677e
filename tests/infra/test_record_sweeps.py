"""The record under faults, in the stack (docs/reliability.md, "The record under faults"): the
unanswered-turns sweep schedule that redrives the inbound dead-letter queue through the worker,
the worker's rights for it, and the alarm on messages that stay undelivered."""

from __future__ import annotations

import json
from typing import Any

from infra import constants as c
from tests.infra.synth import PREFIX, Synth, as_list, render, statement_actions


def _sweep(synth: Synth) -> dict[str, Any]:
    return synth.schedule(f"{PREFIX}-unanswered-turns-sweep")


def test_the_unanswered_turns_sweep_invokes_the_worker_every_15_minutes(synth: Synth) -> None:
    schedule = _sweep(synth)
    assert schedule["ScheduleExpression"] == f"rate({c.UNANSWERED_SWEEP_MINUTES} minutes)"
    target = schedule["Target"]
    assert json.loads(target["Input"]) == {"sweep": "unanswered"}
    assert render(target["Arn"]).endswith(f"function:{PREFIX}-worker:{c.LIVE_ALIAS}")
    assert target["RetryPolicy"]["MaximumRetryAttempts"] == 0
    # and the scheduler's role may invoke it
    (role,) = [
        k
        for k, v in synth.of_type("AWS::IAM::Role").items()
        if v["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]["Principal"]
        == {"Service": "scheduler.amazonaws.com"}
    ]
    invoke = [s for s in synth.statements(role) if "lambda:InvokeFunction" in statement_actions(s)]
    resources = [render(r) for s in invoke for r in as_list(s["Resource"])]
    assert any(r.endswith(f"function:{PREFIX}-worker:{c.LIVE_ALIAS}") for r in resources)


def test_the_worker_may_redrive_the_inbound_dead_letter_queue_and_nobody_else(synth: Synth) -> None:
    dlq = synth.queue_id(f"{PREFIX}-inbound-dlq.fifo")

    def on_dlq(key: str) -> set[str]:
        return {
            action
            for s in synth.statements(synth.role_id(key))
            if f'"{dlq}"' in json.dumps(s.get("Resource"))
            for action in statement_actions(s)
        }

    assert on_dlq(c.WORKER.key) == {"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"}
    assert all(not on_dlq(spec.key) for spec in c.ALL_FUNCTIONS if spec.key != c.WORKER.key)
    variables = synth.function(c.WORKER.key)["Environment"]["Variables"]
    assert "INBOUND_DLQ_URL" in variables and "INBOUND_QUEUE_URL" in variables


def test_an_alarm_when_a_message_stays_undelivered(synth: Synth) -> None:
    (alarm,) = [
        a["Properties"]
        for a in synth.of_type("AWS::CloudWatch::Alarm").values()
        if "stayed undelivered" in a["Properties"]["AlarmDescription"]
    ]
    assert (alarm["Threshold"], alarm["ComparisonOperator"]) == (0, "GreaterThanThreshold")
    assert "MessagesNotDelivered" in json.dumps(alarm)
