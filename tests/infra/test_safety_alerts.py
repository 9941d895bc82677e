"""The safety net in the stack (docs/safety.md): the study team's alert topic, the ``SafetyFlag``
alarm, and who may publish to the topic (the worker, the webhook for a crisis inside an opt-out, the
timers function's sweep of the hold alerts left pending, the scheduled-prompt function for a hold a
daily firing places)."""

from __future__ import annotations

import json
from typing import Any

from infra import constants as c
from tests.infra.synth import Synth, statement_actions

# timers: the hold-alert sweep; scheduled prompt: the alert of a hold a daily firing places
ALERTING = {c.WORKER.key, c.WEBHOOK.key, c.TIMERS.key, c.SCHEDULED_PROMPT.key}


def _safety_topic(synth: Synth) -> tuple[str, dict[str, Any]]:
    ((topic, props),) = [
        (k, v["Properties"])
        for k, v in synth.of_type("AWS::SNS::Topic").items()
        if v["Properties"]["TopicName"] == "promptpipe-safety-alerts"
    ]
    return topic, props


def test_the_safety_alert_topic_is_encrypted_with_its_own_key_and_tls_only(synth: Synth) -> None:
    topic, props = _safety_topic(synth)
    key = props["KmsMasterKeyId"]["Fn::GetAtt"][0]
    assert synth.resources[key]["Properties"]["EnableKeyRotation"] is True
    (policy,) = [
        p for p in synth.of_type("AWS::SNS::TopicPolicy").values() if p["Properties"]["Topics"] == [{"Ref": topic}]
    ]
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    assert any(
        s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}} for s in statements
    )
    assert synth.template.to_json()["Outputs"]["SafetyAlertTopicArn"]["Value"] == {"Ref": topic}


def test_a_safety_flag_metric_raises_an_alarm_that_notifies_the_alarm_topic(synth: Synth) -> None:
    (alarm,) = [
        a["Properties"]
        for a in synth.of_type("AWS::CloudWatch::Alarm").values()
        if "safety screen" in a["Properties"]["AlarmDescription"]
    ]
    [query] = alarm["Metrics"]
    stat = query["MetricStat"]
    assert (stat["Metric"]["Namespace"], stat["Metric"]["MetricName"]) == ("PromptPipe", "SafetyFlag")
    # the dimension set the flag's EMF metric carries (session metrics: the service only)
    assert stat["Metric"]["Dimensions"] == [{"Name": "service", "Value": "promptpipe"}]
    assert (alarm["Threshold"], alarm["ComparisonOperator"]) == (0, "GreaterThanThreshold")
    assert alarm["TreatMissingData"] == "notBreaching" and alarm["AlarmActions"] and alarm["OKActions"]


def test_only_the_functions_that_alert_may_publish_to_the_topic_and_use_its_key(synth: Synth) -> None:
    topic, props = _safety_topic(synth)
    key = props["KmsMasterKeyId"]["Fn::GetAtt"][0]
    for spec in c.ALL_FUNCTIONS:
        statements = synth.statements(synth.role_id(spec.key))
        publish = [s for s in statements if "sns:Publish" in statement_actions(s)]
        uses_key = [s for s in statements if json.dumps(s["Resource"]) == json.dumps({"Fn::GetAtt": [key, "Arn"]})]
        if spec.key in ALERTING:
            assert [s["Resource"] for s in publish] == [{"Ref": topic}], spec.key
            assert [statement_actions(s) for s in uses_key] == [{"kms:GenerateDataKey", "kms:Decrypt"}], spec.key
            variables = synth.function(spec.key)["Environment"]["Variables"]
            assert variables["SAFETY_ALERT_TOPIC_ARN"] == {"Ref": topic}
        else:
            assert publish == [] and uses_key == [], spec.key
            assert "SAFETY_ALERT_TOPIC_ARN" not in synth.function(spec.key)["Environment"]["Variables"]


def test_the_console_url_reaches_the_functions_that_alert(tmp_path_factory: Any, synth: Synth) -> None:
    import pytest

    from tests.infra.synth import synthesize

    # Unset (the default): no CONSOLE_URL anywhere; set: on the functions that alert, and only those
    assert all("CONSOLE_URL" not in synth.function(spec.key)["Environment"]["Variables"] for spec in c.ALL_FUNCTIONS)
    linked = synthesize(tmp_path_factory.mktemp("cdk.out"), {"consoleUrl": "https://console.example.org"})
    for spec in c.ALL_FUNCTIONS:
        variables = linked.function(spec.key)["Environment"]["Variables"]
        assert (variables.get("CONSOLE_URL") == "https://console.example.org") is (spec.key in ALERTING), spec.key
    with pytest.raises(ValueError, match="consoleUrl"):
        c.Config(console_url="console.example.org").validate()
