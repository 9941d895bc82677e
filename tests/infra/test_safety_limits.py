"""Limits at the edge and the study's spend cap in the synthesized stack (docs/safety.md): each
webhook route throttled apart from the participants API, the worker's queue trigger with a maximum
concurrency, and the spend-cap alarm whose state the model-calling functions read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra.constants import Config
from tests.infra.synth import Synth, as_list, render, statement_actions, synthesize

WEBHOOK_ROUTES = ("POST /webhooks/twilio", "GET /webhooks/whatsapp", "POST /webhooks/whatsapp")
PARAMETER = "/promptpipe/spend-cap/state"


def test_each_webhook_route_has_its_own_throttle_apart_from_the_participants_api(synth: Synth) -> None:
    # Given the one stage and the API's routes
    (stage,) = [s["Properties"] for s in synth.of_type("AWS::ApiGatewayV2::Stage").values()]
    route_keys = {r["Properties"]["RouteKey"] for r in synth.of_type("AWS::ApiGatewayV2::Route").values()}
    defaults = Config()

    # Then the participants API keeps the stage's default throttle, and each webhook route (all of
    # which exist) has its own, as configured
    assert stage["DefaultRouteSettings"] == {
        "ThrottlingRateLimit": defaults.api_rate_limit,
        "ThrottlingBurstLimit": defaults.api_burst_limit,
    }
    webhook = {"ThrottlingRateLimit": defaults.webhook_rate_limit, "ThrottlingBurstLimit": defaults.webhook_burst_limit}
    assert stage["RouteSettings"] == dict.fromkeys(WEBHOOK_ROUTES, webhook)
    assert set(WEBHOOK_ROUTES) <= route_keys
    assert not any(key.startswith("ANY /conversation") for key in stage["RouteSettings"])
    # And the stage is created after the routes it names (CloudFormation refuses unknown route keys)
    (stage_id,) = synth.of_type("AWS::ApiGatewayV2::Stage")
    webhook_route_ids = {
        k for k, v in synth.of_type("AWS::ApiGatewayV2::Route").items() if v["Properties"]["RouteKey"] in WEBHOOK_ROUTES
    }
    assert webhook_route_ids <= set(synth.resources[stage_id].get("DependsOn", []))


def test_the_worker_queue_trigger_has_a_maximum_concurrency(synth: Synth) -> None:
    (mapping,) = [m["Properties"] for m in synth.of_type("AWS::Lambda::EventSourceMapping").values()]
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": Config().worker_max_concurrency}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("worker_max_concurrency", 1),
        ("worker_max_concurrency", 1001),
        ("webhook_rate_limit", 0),
        ("webhook_burst_limit", 0),
    ],
)
def test_limits_outside_what_aws_accepts_fail_the_synth_early(field: str, value: int) -> None:
    with pytest.raises(ValueError, match="invalid CDK context"):
        Config(**{field: value}).validate()


def test_the_spend_cap_alarm_sums_the_days_model_cost_and_notifies(synth: Synth) -> None:
    (alarm,) = [
        a["Properties"]
        for a in synth.of_type("AWS::CloudWatch::Alarm").values()
        if a["Properties"].get("MetricName") == "ModelCostUSD"
    ]
    assert (alarm["Namespace"], alarm["Statistic"], alarm["Period"]) == ("PromptPipe", "Sum", 86400)
    assert alarm["Dimensions"] == [{"Name": "service", "Value": "promptpipe"}]
    assert alarm["Threshold"] == Config().study_daily_spend_cap_usd
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert alarm["AlarmActions"] and alarm["OKActions"] == alarm["AlarmActions"]


def test_each_alarm_change_is_copied_into_the_parameter_the_model_calling_functions_read(synth: Synth) -> None:
    # Given the parameter, the rule on the alarm's state changes and the state machine it starts
    (parameter,) = [p["Properties"] for p in synth.of_type("AWS::SSM::Parameter").values()]
    assert (parameter["Name"], parameter["Value"]) == (PARAMETER, "OK")
    (rule,) = [r["Properties"] for r in synth.of_type("AWS::Events::Rule").values()]
    assert rule["EventPattern"]["detail-type"] == ["CloudWatch Alarm State Change"]
    (alarm_id,) = [
        k
        for k, a in synth.of_type("AWS::CloudWatch::Alarm").items()
        if a["Properties"].get("MetricName") == "ModelCostUSD"
    ]
    assert rule["EventPattern"]["resources"] == [{"Fn::GetAtt": [alarm_id, "Arn"]}]
    (machine_id, machine) = next(iter(synth.of_type("AWS::StepFunctions::StateMachine").items()))
    assert rule["Targets"][0]["Arn"] == {"Ref": machine_id}
    definition = json.dumps(machine["Properties"]["DefinitionString"])
    assert "aws-sdk:ssm:putParameter" in definition and "$.detail.state.value" in definition
    assert machine["Properties"]["StateMachineType"] == "EXPRESS"

    # Then the worker and the scheduled prompt (the model-calling functions) name it and may read it
    # (nothing else), and the other functions do neither
    arn = f"arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>:parameter{PARAMETER}"
    for key in ("worker", "scheduled-prompt", "enrollment", "webhook", "timers"):
        env = synth.function(key)["Environment"]["Variables"]
        reads = [
            statement
            for statement in synth.statements(synth.role_id(key))
            if any(render(r) == arn for r in as_list(statement["Resource"]))
        ]
        if key in ("worker", "scheduled-prompt"):
            assert env["SPEND_CAP_PARAMETER"] == PARAMETER
            assert [statement_actions(s) for s in reads] == [{"ssm:GetParameter"}]
        else:
            assert "SPEND_CAP_PARAMETER" not in env and reads == []


def test_without_a_spend_cap_there_is_no_alarm_parameter_or_read(tmp_path: Path) -> None:
    synth = synthesize(tmp_path, context={"studyDailySpendCapUsd": "0"})
    assert synth.of_type("AWS::SSM::Parameter") == {} and synth.of_type("AWS::StepFunctions::StateMachine") == {}
    assert "SPEND_CAP_PARAMETER" not in synth.function("worker")["Environment"]["Variables"]
    assert not any("ssm:GetParameter" in statement_actions(s) for s in synth.statements(synth.role_id("worker")))
