"""Infrastructure tests: the synthesized PromptPipe stack (one synth per process), the deployment
config and the local bundler. No Docker, no AWS: bundling is skipped for the stack tests."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Match, Template
from cdk_nag import AwsSolutionsChecks

from infra import constants as c
from infra.aws_sdk import narrow_aws_sdk
from infra.bundling import (
    FUNCTION_EXTRAS,
    LOCAL_ONLY,
    REPO_ROOT,
    PipLocalBundler,
    asset_hash,
    bytecode_python,
    check_deployable,
    compile_asset,
    deploy_check,
    pip_command,
    runtime_requirements,
)
from infra.constants import Config
from infra.stack import PromptPipeStack
from promptpipe.settings import Settings
from tests.infra.synth import PREFIX, Synth, as_list, render, statement_actions, synthesize

_render, _as_list, _actions = render, as_list, statement_actions


def _references(statement: dict[str, Any], logical_id: str) -> bool:
    return f'"{logical_id}"' in json.dumps(statement.get("Resource"))


ALL_KEYS = {spec.key for spec in c.ALL_FUNCTIONS}
# The public webhook changes no schedule: STOP / START's schedule changes run in the worker.
SCHEDULE_CREATORS = ALL_KEYS - {c.WEBHOOK.key}
# Actions that take no resource ARN, the only ones allowed on "*".
NO_RESOURCE_ACTIONS = {"xray:PutTraceSegments", "xray:PutTelemetryRecords", "scheduler:ListSchedules"}
# The spend cap's state machine (docs/safety.md#limits-at-the-edge): its log delivery and its traces'
# sampling, none of which takes a resource ARN.
NO_RESOURCE_ACTIONS |= {
    "logs:CreateLogDelivery",
    "logs:DeleteLogDelivery",
    "logs:DescribeLogGroups",
    "logs:DescribeResourcePolicies",
    "logs:GetLogDelivery",
    "logs:ListLogDeliveries",
    "logs:PutResourcePolicy",
    "logs:UpdateLogDelivery",
    "xray:GetSamplingRules",
    "xray:GetSamplingTargets",
}


# --- cdk-nag -------------------------------------------------------------------------------


def test_cdk_nag_reports_no_unacknowledged_finding(synth: Synth) -> None:
    # Given the app synthesized with the AwsSolutions plugin registered (the fixture)
    # When the checks run again on the stack
    report = AwsSolutionsChecks().validate_scope(synth.stack)
    # Then nothing is left, and the synth's own validation report is empty
    assert report.success, [v.rule_name for v in report.violations]
    written = json.loads((synth.outdir / "validation-report.json").read_text())
    assert written["pluginReports"] == []


def test_every_acknowledgement_has_a_specific_reason(synth: Synth) -> None:
    # Acknowledgements are construct metadata, written to the assembly beside the template.
    metadata = json.loads((synth.outdir / f"{synth.stack.artifact_id}.metadata.json").read_text())
    acknowledged = {
        (path, rule): reason
        for path, entries in metadata.items()
        for entry in entries
        if entry["type"] == cdk.Validations.ACKNOWLEDGED_RULES_METADATA_KEY
        for rule, reason in entry["data"].items()
    }
    # 5 functions x (L1 + IAM5 X-Ray) + 4 x IAM5 schedules (not the webhook: it changes none)
    # + 2 SMG4 + 3 APIG4 + 2 SnapStart annotations + the spend cap's state machine (IAM5: log delivery, X-Ray)
    assert len(acknowledged) == 22
    rules = {rule.split("::", 1)[1].split("[")[0] for _, rule in acknowledged}
    assert rules == {
        "AwsSolutions-IAM5",
        "AwsSolutions-L1",
        "AwsSolutions-SMG4",
        "AwsSolutions-APIG4",
        "@aws-cdk/aws-lambda:snapStartRequirePublish",
    }
    assert all(len(reason) >= 40 for reason in acknowledged.values())


# --- inventory -------------------------------------------------------------------------------


def test_resource_counts(synth: Synth) -> None:
    t = synth.template
    t.resource_count_is("AWS::Lambda::Function", 5)
    t.resource_count_is("AWS::DynamoDB::GlobalTable", 1)  # one table: no idempotency table
    t.resource_count_is("AWS::SQS::Queue", 3)
    t.resource_count_is("AWS::ApiGatewayV2::Api", 1)
    t.resource_count_is("AWS::Scheduler::ScheduleGroup", 1)
    t.resource_count_is("AWS::SecretsManager::Secret", 2)
    t.resource_count_is("AWS::CloudWatch::Dashboard", 1)
    t.resource_count_is("AWS::Lambda::Alias", 2)
    t.resource_count_is("AWS::Lambda::EventSourceMapping", 1)
    t.resource_count_is("AWS::SNS::Topic", 2)  # the alarms, the safety alerts (docs/safety.md)
    t.resource_count_is("AWS::KMS::Key", 2)
    t.has_resource_properties("AWS::Scheduler::ScheduleGroup", {"Name": "promptpipe"})


def test_template_has_no_dependency_cycle(synth: Synth) -> None:
    # Given the resources and what each one references
    edges: dict[str, set[str]] = {}
    for logical_id, resource in synth.resources.items():
        text = json.dumps({k: v for k, v in resource.items() if k != "DependsOn"})
        edges[logical_id] = {other for other in synth.resources if f'"{other}"' in text} - {logical_id}
        edges[logical_id] |= set(_as_list(resource.get("DependsOn", [])))
    # When walking the graph depth-first, Then no resource is reached from itself
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in edges[node]:
            assert state.get(nxt) != 1, f"cycle: {[*path, node, nxt]}"
            if nxt not in state:
                visit(nxt, [*path, node])
        state[node] = 2

    for node in edges:
        if node not in state:
            visit(node, [])


# --- storage -----------------------------------------------------------------------------


def test_single_table_is_retained_on_demand_encrypted_and_recoverable(synth: Synth) -> None:
    # Its shape (keys, index, TTL) is the declaration's: tests/infra/test_table_shape.py
    synth.template.resource_count_is("AWS::DynamoDB::GlobalTable", 1)
    synth.template.has_resource(
        "AWS::DynamoDB::GlobalTable",
        {
            "DeletionPolicy": "Retain",
            "Properties": Match.object_like(
                {
                    "BillingMode": "PAY_PER_REQUEST",
                    "SSESpecification": {"SSEEnabled": True, "SSEType": "KMS"},
                    "Replicas": [
                        Match.object_like({"PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True}})
                    ],
                }
            ),
        },
    )


def test_no_function_names_an_idempotency_table(synth: Synth) -> None:
    for spec in c.ALL_FUNCTIONS:
        assert "IDEMPOTENCY_TABLE_NAME" not in synth.function(spec.key)["Environment"]["Variables"]


# --- queues --------------------------------------------------------------------------------


def test_inbound_fifo_queue_redrives_to_fifo_dlq_after_three_receives(synth: Synth) -> None:
    dlq = synth.queue_id(f"{PREFIX}-inbound-dlq.fifo")
    inbound = synth.resources[synth.queue_id(f"{PREFIX}-inbound.fifo")]["Properties"]
    assert inbound["FifoQueue"] is True
    assert inbound["RedrivePolicy"] == {
        "deadLetterTargetArn": {"Fn::GetAtt": [dlq, "Arn"]},
        "maxReceiveCount": 3,
    }
    assert inbound["VisibilityTimeout"] >= 6 * synth.function("worker")["Timeout"]
    assert synth.resources[dlq]["Properties"]["FifoQueue"] is True


def test_scheduler_dlq_is_a_standard_queue(synth: Synth) -> None:
    props = synth.resources[synth.queue_id(f"{PREFIX}-scheduler-dlq")]["Properties"]
    assert "FifoQueue" not in props


def test_every_queue_enforces_tls_and_encryption(synth: Synth) -> None:
    queues = synth.of_type("AWS::SQS::Queue")
    tls_denied = set()
    for policy in synth.of_type("AWS::SQS::QueuePolicy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if statement["Effect"] == "Deny" and statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}:
                tls_denied |= {ref["Ref"] for ref in policy["Properties"]["Queues"]}
    assert tls_denied == set(queues)
    assert all(q["Properties"]["SqsManagedSseEnabled"] for q in queues.values())


# --- functions ------------------------------------------------------------------------------


def test_functions_runtime_tracing_logs_and_powertools(synth: Synth) -> None:
    log_groups = synth.of_type("AWS::Logs::LogGroup")
    for spec in c.ALL_FUNCTIONS:
        fn = synth.function(spec.key)
        assert fn["Runtime"] == "python3.12"
        assert fn["Architectures"] == ["x86_64"]
        assert fn["Handler"] == spec.handler
        assert fn["TracingConfig"] == {"Mode": "Active"}
        assert (fn["MemorySize"], fn["Timeout"]) == (spec.memory_mb, spec.timeout_s)
        log_group = log_groups[fn["LoggingConfig"]["LogGroup"]["Ref"]]["Properties"]
        assert log_group["LogGroupName"] == f"/aws/lambda/{PREFIX}-{spec.key}"
        assert log_group["RetentionInDays"] == 30
        env = fn["Environment"]["Variables"]
        assert env["POWERTOOLS_SERVICE_NAME"] == "promptpipe"
        assert env["POWERTOOLS_METRICS_NAMESPACE"] == "PromptPipe"
        assert env["PARTICIPANTS_INDEX_NAME"] == "gsi1"
        assert env["PYDANTIC_DISABLE_PLUGINS"] == "__all__"  # cold start (docs/benchmarks.md)


def test_handler_strings_name_functions_in_the_asset() -> None:
    # Checked from source rather than by import: handlers build clients at import time.
    repo_root = Path(__file__).resolve().parents[2]
    for spec in c.ALL_FUNCTIONS:
        module, attribute = spec.handler.rsplit(".", 1)
        source = (repo_root / (module.replace(".", "/") + ".py")).read_text()
        assert f"\ndef {attribute}(" in source, spec.handler


def test_webhook_and_worker_sizes(synth: Synth) -> None:
    webhook, worker = synth.function("webhook"), synth.function("worker")
    assert (webhook["MemorySize"], webhook["Timeout"]) == (256, 10)
    assert (worker["MemorySize"], worker["Timeout"]) == (1024, 60)


def test_environment_names_are_settings_fields(synth: Synth) -> None:
    # Given the settings object every function builds from its environment
    known = {name.upper() for name in Settings.model_fields}
    for spec in c.ALL_FUNCTIONS:
        env = synth.function(spec.key)["Environment"]["Variables"]
        # Then every variable set by the stack is read by it (or by Powertools, or by pydantic itself)
        unknown = {k for k in env if k not in known and not k.startswith(("POWERTOOLS_", "PYDANTIC_"))}
        assert not unknown, (spec.key, unknown)


def test_every_function_is_deployed_with_the_settings_its_handler_requires(synth: Synth) -> None:
    # A setting the handler requires in Lambda but the stack does not set would fail the cold start.
    import importlib

    for spec in c.ALL_FUNCTIONS:
        module, attribute = spec.handler.rsplit(".", 1)
        required = getattr(importlib.import_module(module), attribute).required_settings
        env = synth.function(spec.key)["Environment"]["Variables"]
        missing = [name.upper() for name in required if name.upper() not in env]
        assert not missing, (spec.key, missing)
        assert {"TIMERS_FUNCTION_ARN", "SCHEDULER_ROLE_ARN"} <= {name.upper() for name in required}


def test_snapstart_only_on_llm_functions_behind_live_alias(synth: Synth) -> None:
    for spec in c.ALL_FUNCTIONS:
        snap = synth.function(spec.key).get("SnapStart")
        assert (snap == {"ApplyOn": "PublishedVersions"}) == (spec.key in {"worker", "scheduled-prompt"})
    aliased = {
        props["FunctionName"]["Ref"]
        for props in (a["Properties"] for a in synth.of_type("AWS::Lambda::Alias").values())
        if props["Name"] == "live"
    }
    assert aliased == {synth.function_id("worker"), synth.function_id("scheduled-prompt")}


def test_worker_consumes_the_fifo_queue_through_its_alias(synth: Synth) -> None:
    (mapping,) = [m["Properties"] for m in synth.of_type("AWS::Lambda::EventSourceMapping").values()]
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": [synth.queue_id(f"{PREFIX}-inbound.fifo"), "Arn"]}
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["BatchSize"] <= 10
    (alias_id,) = [
        k
        for k, v in synth.of_type("AWS::Lambda::Alias").items()
        if v["Properties"]["FunctionName"] == {"Ref": synth.function_id("worker")}
    ]
    assert f'"{alias_id}"' in json.dumps(mapping["FunctionName"])
    assert json.dumps(mapping["FunctionName"]).endswith(':live"]]}')


def test_scheduler_targets_fail_into_the_scheduler_dlq(synth: Synth) -> None:
    dlq = {"Fn::GetAtt": [synth.queue_id(f"{PREFIX}-scheduler-dlq"), "Arn"]}
    for key in ("scheduled-prompt", "timers"):
        assert synth.function(key)["DeadLetterConfig"] == {"TargetArn": dlq}


# --- IAM -------------------------------------------------------------------------------------


def _scheduler_role_id(synth: Synth) -> str:
    (role_id,) = [
        k
        for k, v in synth.of_type("AWS::IAM::Role").items()
        if v["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]["Principal"]
        == {"Service": "scheduler.amazonaws.com"}
    ]
    return role_id


def test_scheduler_role_invokes_only_the_two_targets_and_the_workers_sweep(synth: Synth) -> None:
    role_id = _scheduler_role_id(synth)
    statements = synth.statements(role_id)
    invoke = [s for s in statements if "lambda:InvokeFunction" in _actions(s)]
    assert len(invoke) == 1
    assert _actions(invoke[0]) == {"lambda:InvokeFunction"}
    targets = {_render(r).split(":function:")[1] for r in _as_list(invoke[0]["Resource"])}
    assert targets == {
        "promptpipe-timers",
        "promptpipe-scheduled-prompt",
        "promptpipe-scheduled-prompt:live",
        "promptpipe-worker:live",  # the unanswered-turns sweep (tests/infra/test_record_sweeps.py)
    }
    others = [s for s in statements if s not in invoke]
    assert [_actions(s) for s in others] == [{"sqs:SendMessage"}]
    assert _references(others[0], synth.queue_id(f"{PREFIX}-scheduler-dlq"))
    trust = synth.resources[role_id]["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]
    assert trust["Condition"] == {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}}


def test_functions_target_the_arns_the_scheduler_role_may_invoke(synth: Synth) -> None:
    for spec in c.ALL_FUNCTIONS:
        env = synth.function(spec.key)["Environment"]["Variables"]
        assert _render(env["TIMERS_FUNCTION_ARN"]).endswith(":function:promptpipe-timers")
        assert _render(env["SCHEDULED_PROMPT_FUNCTION_ARN"]).endswith(":function:promptpipe-scheduled-prompt:live")
        assert env["SCHEDULER_ROLE_ARN"] == {"Fn::GetAtt": [_scheduler_role_id(synth), "Arn"]}
        assert env["SCHEDULE_GROUP_NAME"] == "promptpipe"


def test_pass_role_only_for_the_scheduler_role_and_schedule_creators(synth: Synth) -> None:
    scheduler_role = _scheduler_role_id(synth)
    creator_roles = {synth.role_id(key) for key in SCHEDULE_CREATORS}
    passing_roles = set()
    for policy in synth.of_type("AWS::IAM::Policy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if any(a.startswith("iam:") for a in _actions(statement)):
                assert _actions(statement) == {"iam:PassRole"}
                assert statement["Resource"] == {"Fn::GetAtt": [scheduler_role, "Arn"]}
                assert statement["Condition"] == {"StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}}
                passing_roles |= {ref["Ref"] for ref in policy["Properties"]["Roles"]}
    assert passing_roles == creator_roles
    assert scheduler_role not in passing_roles
    webhook = synth.statements(synth.role_id(c.WEBHOOK.key))
    assert not [s for s in webhook if any(a.startswith(("scheduler:", "iam:")) for a in _actions(s))]


def test_schedule_permissions_are_confined_to_the_group(synth: Synth) -> None:
    for key in SCHEDULE_CREATORS:
        statements = [
            s for s in synth.statements(synth.role_id(key)) if any(a.startswith("scheduler:") for a in _actions(s))
        ]
        # ListSchedules takes no resource ARN: on "*" with no scheduler action beside it (minimizePolicies
        # may merge it with X-Ray's, which take no ARN either); the rest in the group
        listing = [s for s in statements if "scheduler:ListSchedules" in _actions(s)]
        assert all(_actions(s) <= NO_RESOURCE_ACTIONS and s["Resource"] == "*" for s in listing)
        (scoped,) = [s for s in statements if s not in listing]
        assert {"scheduler:CreateSchedule", "scheduler:UpdateSchedule"} <= _actions(scoped)
        # GetSchedule: reconcile reads each live schedule's specification (the enrollment API only)
        allowed = {"scheduler:CreateSchedule", "scheduler:UpdateSchedule", "scheduler:DeleteSchedule"}
        assert _actions(scoped) <= allowed | ({"scheduler:GetSchedule"} if key == c.ENROLLMENT.key else set())
        assert _render(scoped["Resource"]).endswith(":schedule/promptpipe/*")


def test_least_privilege_matrix(synth: Synth) -> None:
    openai = synth.secret_id(f"{PREFIX}/openai")
    channel = synth.secret_id(f"{PREFIX}/channel")
    inbound = synth.queue_id(f"{PREFIX}-inbound.fifo")
    (table,) = synth.of_type("AWS::DynamoDB::GlobalTable")

    def holders(logical_id: str, action: str) -> set[str]:
        return {
            spec.key
            for spec in c.ALL_FUNCTIONS
            if any(
                action in _actions(s) and _references(s, logical_id) for s in synth.statements(synth.role_id(spec.key))
            )
        }

    assert holders(openai, "secretsmanager:GetSecretValue") == {"worker", "scheduled-prompt"}
    assert holders(channel, "secretsmanager:GetSecretValue") == ALL_KEYS
    # (the worker: its unanswered-turns sweep puts dead-lettered turns back)
    assert holders(inbound, "sqs:SendMessage") == {"enrollment", "webhook", "worker"}
    assert holders(inbound, "sqs:ReceiveMessage") == {"worker"}
    # (The exact table actions of each role are checked against the code by test_iam_derived.py.)
    assert not holders(table, "dynamodb:Scan")
    # The public webhook reads phone claims (and a redelivered STOP's sent record in the participant's
    # partition); it writes no claim unless auto-enrolment is on.
    webhook_reads = [s for s in synth.statements(synth.role_id("webhook")) if "dynamodb:GetItem" in _actions(s)]
    assert [s["Condition"] for s in webhook_reads] == [
        {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["PARTICIPANT#*", "PHONE#*"]}}
    ]
    on_claims = [s for s in synth.statements(synth.role_id("webhook")) if "PHONE#*" in json.dumps(s.get("Condition"))]
    assert [_actions(s) for s in on_claims] == [{"dynamodb:GetItem"}]
    # Every statement on the table's items is confined by partition-key prefix.
    for spec in c.ALL_FUNCTIONS:
        for statement in synth.statements(synth.role_id(spec.key)):
            if statement["Resource"] == {"Fn::GetAtt": [table, "Arn"]}:
                leading = statement["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"]
                assert leading and all(k in ("PARTICIPANT#*", "PHONE#*", "FLOW#*", "AUDIT#*") for k in leading)
    # No service-wide or global actions anywhere; "*" resources only for actions that take no
    # resource ARN: X-Ray's, and ListSchedules (a reconcile lists a participant's schedules).
    # (cdk.json's @aws-cdk/aws-iam:minimizePolicies may merge them into one statement.)
    for policy in synth.of_type("AWS::IAM::Policy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            assert not any(a == "*" or a.endswith(":*") for a in _actions(statement))
            if statement["Resource"] == "*":
                assert _actions(statement) <= NO_RESOURCE_ACTIONS
    assert not synth.template.find_resources("AWS::IAM::Role", {"Properties": {"ManagedPolicyArns": Match.any_value()}})


def test_llm_secret_only_where_the_llm_is_called(synth: Synth) -> None:
    for spec in c.ALL_FUNCTIONS:
        env = synth.function(spec.key)["Environment"]["Variables"]
        assert ("OPENAI_SECRET_NAME" in env) == spec.snap_start
        assert env["CHANNEL_SECRET_NAME"] == f"{PREFIX}/channel"


# --- API -------------------------------------------------------------------------------------


def test_route_authorization(synth: Synth) -> None:
    routes = {
        r["Properties"]["RouteKey"]: r["Properties"].get("AuthorizationType")
        for r in synth.of_type("AWS::ApiGatewayV2::Route").values()
    }
    base = "/conversation/participants"
    assert routes == {
        f"ANY {base}": "AWS_IAM",
        f"ANY {base}/{{id}}": "AWS_IAM",
        f"ANY {base}/{{id}}/history": "AWS_IAM",
        f"ANY {base}/{{id}}/state": "AWS_IAM",
        f"ANY {base}/{{id}}/reconcile": "AWS_IAM",
        "ANY /conversation/reconcile": "AWS_IAM",
        "ANY /conversation/participant-rows": "AWS_IAM",
        "ANY /conversation/flows/{id}": "AWS_IAM",
        "ANY /conversation/flows/{id}/versions": "AWS_IAM",
        "ANY /conversation/studies/{id}/decisions": "AWS_IAM",
        f"ANY {base}/{{id}}/staff-messages": "AWS_IAM",
        "ANY /conversation/audit": "AWS_IAM",
        "ANY /conversation/enrolment-checks": "AWS_IAM",
        "POST /webhooks/twilio": "NONE",
        "GET /webhooks/whatsapp": "NONE",
        "POST /webhooks/whatsapp": "NONE",
    }


def test_every_route_of_the_api_document_is_deployed(synth: Synth) -> None:
    """A route the enrollment function answers in-process but API Gateway lacks would be a 404 when
    deployed: every path of the OpenAPI document matches a route (a ``{param}`` of the route matches
    any one segment, as API Gateway's does: /flows/validate is /flows/{id})."""
    from functions.enrollment.openapi import openapi_document

    deployed = [
        re.compile(re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(r["Properties"]["RouteKey"].split(" ", 1)[1])) + "$")
        for r in synth.of_type("AWS::ApiGatewayV2::Route").values()
    ]
    documented = openapi_document()["paths"]
    assert [path for path in documented if not any(route.match(path) for route in deployed)] == []


def test_stage_is_throttled_and_access_logged(synth: Synth) -> None:
    synth.template.has_resource_properties(
        "AWS::ApiGatewayV2::Stage",
        {
            "StageName": "$default",
            "AutoDeploy": True,
            "DefaultRouteSettings": {"ThrottlingRateLimit": 50, "ThrottlingBurstLimit": 100},
            "AccessLogSettings": {"DestinationArn": Match.any_value(), "Format": Match.string_like_regexp("requestId")},
        },
    )


def test_outputs_and_webhook_base_url(synth: Synth) -> None:
    outputs = synth.template.to_json()["Outputs"]
    assert {"ApiUrl", "TwilioWebhookUrl", "WhatsAppWebhookUrl"} <= set(outputs)
    assert _render(outputs["TwilioWebhookUrl"]["Value"]).endswith(">/webhooks/twilio")
    assert _render(outputs["WhatsAppWebhookUrl"]["Value"]).endswith(">/webhooks/whatsapp")
    env = synth.function("webhook")["Environment"]["Variables"]
    assert env["PUBLIC_WEBHOOK_BASE_URL"] == outputs["ApiUrl"]["Value"]


# --- secrets ---------------------------------------------------------------------------------


def test_no_secret_value_in_the_template(synth: Synth) -> None:
    for secret in synth.of_type("AWS::SecretsManager::Secret").values():
        props = secret["Properties"]
        assert "SecretString" not in props
        generated = props["GenerateSecretString"]
        assert generated["GenerateStringKey"]
        placeholders = json.loads(generated["SecretStringTemplate"])
        assert all(value == "" for value in placeholders.values())


# --- monitoring --------------------------------------------------------------------------------


def test_alarm_on_every_dead_letter_queue(synth: Synth) -> None:
    for name in (f"{PREFIX}-inbound-dlq.fifo", f"{PREFIX}-scheduler-dlq"):
        synth.template.has_resource_properties(
            "AWS::CloudWatch::Alarm",
            {
                "MetricName": "ApproximateNumberOfMessagesVisible",
                "Namespace": "AWS/SQS",
                "Dimensions": [{"Name": "QueueName", "Value": {"Fn::GetAtt": [synth.queue_id(name), "QueueName"]}}],
                "Threshold": 0,
                "ComparisonOperator": "GreaterThanThreshold",
            },
        )


def test_alarm_on_every_function_errors(synth: Synth) -> None:
    for spec in c.ALL_FUNCTIONS:
        synth.template.has_resource_properties(
            "AWS::CloudWatch::Alarm",
            {
                "MetricName": "Errors",
                "Namespace": "AWS/Lambda",
                "Dimensions": [{"Name": "FunctionName", "Value": {"Ref": synth.function_id(spec.key)}}],
            },
        )
    # DLQs (2), needs-a-person, safety, webhook, messages not delivered; one per function; the spend cap
    synth.template.resource_count_is("AWS::CloudWatch::Alarm", 6 + len(c.ALL_FUNCTIONS) + 1)


def test_alarm_when_a_participant_needs_a_person(synth: Synth) -> None:
    (alarm,) = [
        a["Properties"]
        for a in synth.of_type("AWS::CloudWatch::Alarm").values()
        if "needs a person" in a["Properties"]["AlarmDescription"]
    ]
    assert (alarm["Threshold"], alarm["ComparisonOperator"]) == (0, "GreaterThanThreshold")
    assert "NeedsPerson" in json.dumps(alarm)


def test_alarm_when_a_webhook_has_no_signing_secret(synth: Synth) -> None:
    (alarm,) = [
        a["Properties"]
        for a in synth.of_type("AWS::CloudWatch::Alarm").values()
        if "signing secret" in a["Properties"]["AlarmDescription"]
    ]
    [query] = alarm["Metrics"]
    stat = query["MetricStat"]
    assert (stat["Metric"]["Namespace"], stat["Metric"]["MetricName"]) == ("PromptPipe", "WebhookMisconfigured")
    # The dimension set the webhook's EMF metric carries (tests/integration/test_webhook_misconfigured.py)
    assert stat["Metric"]["Dimensions"] == [{"Name": "service", "Value": "promptpipe"}]
    assert (stat["Stat"], stat["Period"]) == ("Sum", 300)
    assert (alarm["Threshold"], alarm["ComparisonOperator"]) == (0, "GreaterThanThreshold")
    assert alarm["TreatMissingData"] == "notBreaching" and alarm["AlarmActions"] and alarm["OKActions"]


def alarm_topic_id(synth: Synth) -> str:
    (topic,) = [
        k for k, v in synth.of_type("AWS::SNS::Topic").items() if v["Properties"]["TopicName"].endswith("-alarms")
    ]
    return topic


ALARM_EMAIL = "oncall@example.org"
EXTERNAL_TOPIC = "arn:aws:sns:us-east-1:123456789012:ops-pager"


def _alarm_actions(synth: Synth) -> list[tuple[Any, Any]]:
    return [
        (alarm["Properties"].get("AlarmActions"), alarm["Properties"].get("OKActions"))
        for alarm in synth.of_type("AWS::CloudWatch::Alarm").values()
    ]


def test_every_alarm_notifies_the_stack_alarm_topic(synth: Synth) -> None:
    # Given the default deployment (no alarm context)
    topic = alarm_topic_id(synth)
    # Then every alarm, firing and recovering, notifies the stack's own topic
    actions = _alarm_actions(synth)
    # DLQs, function errors, needs-a-person, safety, webhook, messages not delivered, the spend cap
    assert len(actions) == 2 + len(c.ALL_FUNCTIONS) + 4 + 1
    assert set(map(json.dumps, (a for pair in actions for a in pair))) == {json.dumps([{"Ref": topic}])}
    # And nobody is subscribed by the stack; the topic's ARN is an output to subscribe to
    synth.template.resource_count_is("AWS::SNS::Subscription", 0)
    assert synth.template.to_json()["Outputs"]["AlarmTopicArn"]["Value"] == {"Ref": topic}


def test_alarm_topic_is_encrypted_tls_only_and_open_to_cloudwatch_alarms(synth: Synth) -> None:
    topic = alarm_topic_id(synth)
    props = synth.resources[topic]["Properties"]
    key = props["KmsMasterKeyId"]["Fn::GetAtt"][0]
    key_props = synth.resources[key]["Properties"]
    assert key_props["EnableKeyRotation"] is True
    # CloudWatch may use the key (it cannot use the AWS managed aws/sns key) ...
    key_statements = key_props["KeyPolicy"]["Statement"]
    assert any(
        s.get("Principal") == {"Service": "cloudwatch.amazonaws.com"}
        and {"kms:Decrypt", "kms:GenerateDataKey*"} <= _actions(s)
        for s in key_statements
    )
    # ... and publish to the topic; any request without TLS is denied
    (policy,) = [
        p for p in synth.of_type("AWS::SNS::TopicPolicy").values() if p["Properties"]["Topics"] == [{"Ref": topic}]
    ]
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    assert any(
        s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}} for s in statements
    )
    (publish,) = [s for s in statements if s["Effect"] == "Allow"]
    assert publish["Principal"] == {"Service": "cloudwatch.amazonaws.com"}
    assert _actions(publish) == {"sns:Publish"}
    assert publish["Condition"]["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}


def test_alarm_email_context_subscribes_that_address(tmp_path: Path) -> None:
    # Given an e-mail address in context (cdk synth -c alarmEmail=...)
    synth = synthesize(tmp_path, {"alarmEmail": ALARM_EMAIL})
    topic = alarm_topic_id(synth)
    # Then the stack's topic has exactly that subscription, and every alarm still notifies the topic
    synth.template.resource_count_is("AWS::SNS::Subscription", 1)
    synth.template.has_resource_properties(
        "AWS::SNS::Subscription", {"Protocol": "email", "Endpoint": ALARM_EMAIL, "TopicArn": {"Ref": topic}}
    )
    assert {json.dumps(a) for pair in _alarm_actions(synth) for a in pair} == {json.dumps([{"Ref": topic}])}


def test_alarm_topic_arn_context_replaces_the_stack_topic(tmp_path: Path) -> None:
    # Given an existing topic (and an address) in context
    synth = synthesize(tmp_path, {"alarmTopicArn": EXTERNAL_TOPIC, "alarmEmail": ALARM_EMAIL})
    # Then the stack creates no alarm topic nor its key (the safety alert topic stays), and every
    # alarm notifies the given one
    synth.template.resource_count_is("AWS::SNS::Topic", 1)
    synth.template.resource_count_is("AWS::KMS::Key", 1)
    assert [v["Properties"]["TopicName"] for v in synth.of_type("AWS::SNS::Topic").values()] == [
        "promptpipe-safety-alerts"
    ]
    assert {json.dumps(a) for pair in _alarm_actions(synth) for a in pair} == {json.dumps([EXTERNAL_TOPIC])}
    synth.template.has_resource_properties(
        "AWS::SNS::Subscription", {"Protocol": "email", "Endpoint": ALARM_EMAIL, "TopicArn": EXTERNAL_TOPIC}
    )


def test_dashboard_graphs_the_application_metrics(synth: Synth) -> None:
    (dashboard,) = synth.of_type("AWS::CloudWatch::Dashboard").values()
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    for metric in (
        "TurnsProcessed",
        "ToolCalls",
        "LLMCalls",
        "LLMLatencyMs",
        "LLMPromptTokens",
        "LLMCompletionTokens",
        "DailyPromptsDelivered",
        "RemindersSent",
        "AutoFeedbackTransitions",
        "StateTransitions",
        "OptOuts",
        "WebhookRejected",
        "FeedbackNudgesSent",
        "StateSaveFailures",
        "ApproximateNumberOfMessagesVisible",
    ):
        assert metric in body, metric
    assert "PromptPipe" in body and "promptpipe" in body


# --- deployment config (no synth) ----------------------------------------------------------------


class _Context:
    def __init__(self, values: dict[str, Any]) -> None:
        self._values = values

    def try_get_context(self, key: str) -> Any:
        return self._values.get(key)


def test_config_defaults_and_context_overrides() -> None:
    assert Config.from_context(_Context({})) == Config()
    config = Config.from_context(
        _Context({"genaiModel": "gpt-4.1", "autoEnrollNewUsers": "true", "logRetentionDays": "90"})
    )
    assert (config.genai_model, config.auto_enroll_new_users, config.log_retention_days) == ("gpt-4.1", True, 90)
    assert config.function_name(c.TIMERS) == "promptpipe-timers"


def test_reserved_concurrency_is_off_by_default_and_set_from_context(synth: Synth) -> None:
    def reserved(template: dict[str, Any]) -> dict[str, Any]:
        return {
            r["Properties"]["Handler"]: r["Properties"].get("ReservedConcurrentExecutions")
            for r in template["Resources"].values()
            if r["Type"] == "AWS::Lambda::Function" and "Handler" in r["Properties"]
        }

    assert set(reserved(synth.template.to_json()).values()) == {None}
    app = cdk.App(context={"aws:cdk:bundling-stacks": []})
    config = Config.from_context(_Context({"webhookReservedConcurrency": "50", "scheduledPromptMaxConcurrency": "600"}))
    stack = PromptPipeStack(app, "Concurrency", config=config)
    assert reserved(Template.from_stack(stack).to_json()) == {
        "functions.enrollment.handler.handler": None,
        "functions.inbound.webhook.handler": 50,
        "functions.inbound.worker.handler": None,
        "functions.scheduled_prompt.handler.handler": 600,
        "functions.timers.handler.handler": None,
    }


def test_whatsapp_templates_from_context() -> None:
    config = Config.from_context(
        _Context(
            {
                "whatsappTemplateName": "daily_habit_prompt",
                "whatsappTemplateLanguage": "en",
                "whatsappTemplateQuickReplies": "true",
                "twilioTemplateContentSid": "HX" + "a" * 32,
            }
        )
    )
    assert config.whatsapp_template_name == "daily_habit_prompt"
    assert (config.whatsapp_template_language, config.whatsapp_template_quick_replies) == ("en", True)
    assert config.twilio_template_content_sid == "HX" + "a" * 32


def test_every_accepted_log_retention_maps_to_the_cdk_enum() -> None:
    from infra.components import retention
    from infra.constants import _LOG_RETENTION_DAYS

    assert all(retention(days) for days in _LOG_RETENTION_DAYS)


@pytest.mark.parametrize(
    "context",
    [
        {"messagingProvider": "sms"},
        {"twilioChannel": "telegram"},
        {"scheduleGroupName": "has space"},
        {"autoEnrollNewUsers": "maybe"},
        {"logRetentionDays": "31"},
        {"publicWebhookBaseUrl": "http://insecure.example"},
        {"webhookReservedConcurrency": "-1"},
        {"twilioTemplateContentSid": "not-a-content-sid"},
        {"whatsappTemplateLanguage": "English"},
        {"alarmEmail": "not-an-address"},
        {"alarmTopicArn": "arn:aws:sqs:us-east-1:123456789012:not-a-topic"},
        {"promptStore": "s3"},
        {"promptStorePrefix": "prompts/without/leading/slash"},
    ],
)
def test_config_rejects_invalid_context(context: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        Config.from_context(_Context(context))


# --- bundling (no synth, no pip) ---------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\ndependencies = ["boto3>=1.35", "pydantic>=2.8", "aws-lambda-powertools>=3"]\n'
        '[project.optional-dependencies]\nllm = ["openai>=3.0"]\ndev = ["x[llm]", "pytest>=8"]\n'
    )
    for relative, text in {
        "requirements.lock": "pydantic==2.14.4\naws-lambda-powertools==3.37.0\nopenai==3.57.0\n",
        "functions/__init__.py": "",
        "functions/inbound/webhook.py": "def handler(event, context): ...\n",
        "functions/__pycache__/x.cpython-311.pyc": "junk",
        "shared/promptpipe/__init__.py": "",
        "shared/promptpipe/local/server.py": "",
        "shared/promptpipe/console/static/app.css": "",
        "prompts/intake_bot_system.txt": "You are a coach.\n",
    }.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_runtime_requirements_are_the_projects_with_the_functions_extras(repo: Path) -> None:
    assert runtime_requirements(repo) == ["boto3>=1.35", "pydantic>=2.8", "aws-lambda-powertools>=3"]
    assert runtime_requirements(repo, ("llm",)) == [
        "boto3>=1.35",
        "pydantic>=2.8",
        "aws-lambda-powertools>=3",
        "openai>=3.0",
    ]
    with pytest.raises(ValueError, match="no extra"):
        runtime_requirements(repo, ("nope",))
    command = pip_command(["pydantic>=2.8"], "/out", repo / "requirements.lock")
    assert command[-1] == "pydantic>=2.8"
    assert {"--only-binary=:all:", "manylinux2014_x86_64", "3.12", "cp", "--target"} <= set(command)
    assert command[command.index("--constraint") + 1] == str(repo / "requirements.lock")


def test_each_function_bundles_only_its_closure() -> None:
    """The webhook and enrollment never carry the model client; the model-calling functions do."""
    assert set(FUNCTION_EXTRAS) == {spec.key for spec in c.ALL_FUNCTIONS}
    for key, extras in FUNCTION_EXTRAS.items():
        names = {req.split(">")[0].split("[")[0] for req in runtime_requirements(extras=extras)}
        assert ("openai" in names) == (key in ("worker", "scheduled-prompt")), key
        assert "twilio" not in names
        assert "boto3" in names  # the SDK at the locked version, not the runtime's


def test_functions_with_different_closures_get_different_assets(synth: Synth) -> None:
    keys = {}
    for function in synth.of_type("AWS::Lambda::Function").values():
        code = function["Properties"]["Code"]
        if "S3Key" in code:
            keys[function["Properties"]["Handler"]] = json.dumps(code["S3Key"])
    assert keys["functions.inbound.worker.handler"] == keys["functions.scheduled_prompt.handler.handler"]
    assert keys["functions.inbound.webhook.handler"] == keys["functions.enrollment.handler.handler"]
    assert keys["functions.inbound.webhook.handler"] != keys["functions.inbound.worker.handler"]


def test_asset_hash_follows_sources_not_caches(repo: Path) -> None:
    before = asset_hash(repo, ["pydantic"])
    (repo / "functions/__pycache__/y.pyc").write_text("more junk")
    assert asset_hash(repo, ["pydantic"]) == before
    assert asset_hash(repo, ["pydantic", "twilio"]) != before
    (repo / "prompts/intake_bot_system.txt").write_text("You are a kind coach.\n")
    assert asset_hash(repo, ["pydantic"]) != before


# botocore's endpoint data in miniature: one service the functions call, one they do not.
BOTOCORE_ENDPOINTS = {
    "version": 3,
    "partitions": [
        {
            "partition": "aws",
            "regions": {"eu-west-1": {}},
            "services": {"dynamodb": {"endpoints": {}}, "s3": {"endpoints": {}}},
        }
    ],
}


def test_local_bundler_installs_then_copies_code(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    # Given a fake pip that "installs" a dependency, the AWS SDK (the locked botocore, with the data of
    # a service the functions call and of one they do not) and a console script
    out = tmp_path_factory.mktemp("asset")
    calls: list[list[str]] = []
    version = "1.0.0"

    def fake_pip(command: list[str], check: bool) -> None:
        calls.append(command)
        target = Path(command[command.index("--target") + 1])
        (target / "botocore/data").mkdir(parents=True)
        (target / "botocore/data/endpoints.json").write_text(json.dumps(BOTOCORE_ENDPOINTS))
        for relative in (
            "pydantic/__init__.py",
            "botocore/__init__.py",
            f"botocore-{version}.dist-info/METADATA",
            "botocore/data/_retry.json",
            "botocore/data/dynamodb/2012-08-10/service-2.json.gz",
            "botocore/data/s3/2006-03-01/service-2.json.gz",
            "boto3/__init__.py",
            "boto3/data/s3/2006-03-01/resources-1.json",
            "bin/x",
        ):
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            (target / relative).write_text("")

    # When bundling
    assert PipLocalBundler(repo, ["pydantic"], run=fake_pip).try_bundle(
        str(out), image=cdk.DockerImage.from_registry("unused")
    )
    # Then the asset holds the dependencies, the SDK's data narrowed to our services, and the code at its root
    names = {p.name for p in out.iterdir()}
    assert names == {
        "pydantic",
        "botocore",
        f"botocore-{version}.dist-info",
        "boto3",
        "functions",
        "promptpipe",
        "prompts",
    }
    assert {p.name for p in (out / "botocore/data").iterdir()} == {"dynamodb", "endpoints.json", "_retry.json"}
    assert json.loads((out / "botocore/data/endpoints.json").read_text()) == {
        "version": 3,
        "partitions": [{"partition": "aws", "regions": {"eu-west-1": {}}, "services": {"dynamodb": {"endpoints": {}}}}],
    }
    assert not (out / "boto3/data").exists()
    assert (out / "functions/inbound/webhook.py").is_file()
    assert not (out / "functions/__pycache__").exists()
    assert sorted(p.name for p in (out / "promptpipe").iterdir()) == ["__init__.py"]  # no local-only package
    assert (out / "prompts/intake_bot_system.txt").is_file()
    assert len(calls) == 1
    assert "--constraint" in calls[0]  # the lock pins every version


def test_the_bundle_refuses_a_botocore_without_its_endpoint_data(tmp_path: Path) -> None:
    (tmp_path / "botocore/data").mkdir(parents=True)
    with pytest.raises(RuntimeError, match=r"botocore/data/endpoints\.json is missing"):
        narrow_aws_sdk(tmp_path)


@pytest.mark.parametrize(
    ("python", "environ", "refused"),
    [
        (None, {}, True),
        (None, {"ALLOW_UNCOMPILED": "0"}, True),
        (None, {"ALLOW_UNCOMPILED": "1"}, False),
        ("/opt/python3.12", {}, False),
    ],
)
def test_a_deploy_without_bytecode_is_refused_in_one_line_unless_allowed(
    python: str | None, environ: dict[str, str], refused: bool
) -> None:
    refusal = check_deployable(python, environ)
    assert (refusal is not None) is refused
    if refusal is not None:
        assert "\n" not in refusal
        assert "ALLOW_UNCOMPILED=1" in refusal and "uv python install 3.12" in refusal


def test_make_deploys_check_exits_1_with_the_line_or_0(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LAMBDA_PYTHON", "/no/such/python3.12")  # no Python of the runtime's version
    assert deploy_check({}) == 1
    assert capsys.readouterr().err.startswith("make deploy: no Python 3.12")
    assert deploy_check({"ALLOW_UNCOMPILED": "1"}) == 0
    assert capsys.readouterr().err == ""


def test_make_deploy_runs_the_check_before_cdk_deploy() -> None:
    recipe = (REPO_ROOT / "Makefile").read_text().split("\ndeploy:", 1)[1].split("\n\n", 1)[0]
    check, deploy = recipe.index("-m infra.bundling"), recipe.index("deploy $(CDK_ARGS)")
    assert check < deploy


def test_local_bundler_needs_the_lock(repo: Path, tmp_path: Path) -> None:
    (repo / "requirements.lock").unlink()
    with pytest.raises(RuntimeError, match=r"requirements\.lock is missing"):
        PipLocalBundler(repo, ["pydantic"], run=lambda *a, **k: None).try_bundle(
            str(tmp_path / "out"), image=cdk.DockerImage.from_registry("unused")
        )


def _asset_with_sources(root: Path) -> Path:
    for relative in (
        "pydantic/__init__.py",
        "pydantic/old_syntax.py",
        "six.py",
        "pydantic-2.0.dist-info/METADATA",
        "promptpipe/__init__.py",
        "functions/inbound/webhook.py",
        "prompts/intake_bot_system.txt",
    ):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text("VALUE = 1\n" if relative.endswith(".py") else "")
    (root / "pydantic/old_syntax.py").write_text("print 'python 2'\n")
    return root


def test_compiling_the_asset_leaves_dependencies_as_bytecode_and_our_code_beside_its_sources(tmp_path: Path) -> None:
    # Given an asset, and a fake compileall that compiles every dependency file but one
    out = _asset_with_sources(tmp_path)
    commands: list[list[str]] = []

    def fake_run(command: list[str], check: bool) -> None:
        commands.append(command)
        if "-b" in command:
            for path in out.rglob("*.py"):
                if path.name != "old_syntax.py" and not path.is_relative_to(out / "promptpipe"):
                    path.with_suffix(".pyc").write_text("bytecode")

    # When compiling with the runtime's Python
    compile_asset(out, "/opt/python3.12", run=fake_run)

    # Then the dependencies were compiled beside their sources, which are dropped where bytecode
    # exists, and our code compiled into __pycache__ with its sources kept
    dependencies, own = commands
    assert dependencies[:2] == ["/opt/python3.12", "-m"] and "unchecked-hash" in dependencies
    assert sorted(dependencies[dependencies.index("-b") + 1 :]) == sorted(
        str(out / name) for name in ("pydantic", "pydantic-2.0.dist-info", "six.py")
    )
    assert not (out / "pydantic/__init__.py").exists() and (out / "pydantic/__init__.pyc").is_file()
    assert not (out / "six.py").exists()
    assert (out / "pydantic/old_syntax.py").is_file()  # did not compile: kept as source
    assert "-b" not in own and own[-3:] == [str(out / d) for d in ("functions", "promptpipe", "prompts")]
    assert (out / "promptpipe/__init__.py").is_file() and (out / "functions/inbound/webhook.py").is_file()


@pytest.mark.skipif(bytecode_python() is None, reason="no Python of the Lambda runtime's version here")
def test_a_compiled_asset_imports_from_bytecode_alone(tmp_path: Path) -> None:
    out = _asset_with_sources(tmp_path)
    (out / "pydantic/old_syntax.py").unlink()
    python = bytecode_python()
    assert python is not None
    compile_asset(out, python)
    assert not list((out / "pydantic").glob("*.py"))
    probe = "import pydantic, functions.inbound.webhook as w; print(pydantic.__file__, w.VALUE)"
    done = subprocess.run(
        [python, "-c", probe],
        env={"PYTHONPATH": str(out), "PYTHONDONTWRITEBYTECODE": "1"},
        cwd=out,  # not the repository, whose sources would be found first
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == [str(out / "pydantic/__init__.pyc"), "1"]


def test_without_a_python_of_the_runtime_version_the_asset_is_not_compiled_and_the_bundler_says_so(
    repo: Path, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path_factory.mktemp("asset")
    commands: list[list[str]] = []

    def fake_pip(command: list[str], check: bool) -> None:
        commands.append(command)
        (out / "botocore/data").mkdir(parents=True)
        (out / "botocore/data/endpoints.json").write_text(json.dumps(BOTOCORE_ENDPOINTS))

    PipLocalBundler(repo, ["pydantic"], run=fake_pip, bytecode=None).try_bundle(str(out))
    assert len(commands) == 1  # pip only
    assert "ships without bytecode" in capsys.readouterr().err
    assert asset_hash(repo, ["pydantic"], "3.12") != asset_hash(repo, ["pydantic"], None)


def test_the_packages_left_out_of_the_asset_are_above_every_function_in_the_layers() -> None:
    """What the asset leaves out no function can import: the import contracts' layers put it above
    ``functions`` (and import-linter holds the code to them)."""
    with (REPO_ROOT / "pyproject.toml").open("rb") as handle:
        contracts = tomllib.load(handle)["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c["id"] == "layers")
    above = layers[: layers.index("functions")]
    assert {path.removeprefix("shared/").replace("/", ".") for path in LOCAL_ONLY} <= set(above)


def test_asset_hash_ignores_the_local_only_packages(repo: Path) -> None:
    before = asset_hash(repo, ["pydantic"])
    (repo / "shared/promptpipe/local/server.py").write_text("changed = True\n")
    assert asset_hash(repo, ["pydantic"]) == before


def test_asset_hash_follows_the_lock(repo: Path) -> None:
    before = asset_hash(repo, ["pydantic"])
    (repo / "requirements.lock").write_text("pydantic==2.8.0\n")
    assert asset_hash(repo, ["pydantic"]) != before


def test_local_bundler_failure_is_explicit(repo: Path, tmp_path: Path) -> None:
    def failing_pip(command: list[str], check: bool) -> None:
        raise subprocess.CalledProcessError(1, command)

    with pytest.raises(RuntimeError, match="pip could not install"):
        PipLocalBundler(repo, ["pydantic"], run=failing_pip).try_bundle(
            str(tmp_path / "out"), image=cdk.DockerImage.from_registry("unused")
        )


def test_the_ssm_prompt_store_is_wired_to_the_model_calling_functions_only(tmp_path_factory) -> None:
    from tests.infra.synth import render, synthesize

    ssm = synthesize(tmp_path_factory.mktemp("cdk.out"), {"promptStore": "ssm", "promptStorePrefix": "/study/prompts"})
    for spec in c.ALL_FUNCTIONS:
        env = ssm.function(spec.key)["Environment"]["Variables"]
        reads_prompts = spec.key in {"worker", "scheduled-prompt"}
        assert (env.get("PROMPT_STORE"), env.get("PROMPT_STORE_PREFIX")) == (
            ("ssm", "/study/prompts") if reads_prompts else (None, None)
        ), spec.key
        statements = [
            statement
            for policy in ssm.template.find_resources("AWS::IAM::Policy").values()
            if any(render(role) == f"<{ssm.role_id(spec.key)}>" for role in policy["Properties"]["Roles"])
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]
            if "ssm:GetParameter" in statement["Action"]
        ]
        if reads_prompts:  # (and the spend cap's state, docs/safety.md#budgets)
            assert {render(r) for s in statements for r in as_list(s["Resource"])} == {
                "arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>:parameter/study/prompts/*",
                "arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>:parameter/promptpipe/spend-cap/state",
            }, spec.key
        else:
            assert statements == [], spec.key


def test_the_default_deployment_reads_prompts_from_its_bundle(synth: Synth) -> None:
    for spec in c.ALL_FUNCTIONS:
        assert "PROMPT_STORE" not in synth.function(spec.key)["Environment"]["Variables"]


# --- model endpoints (docs/architecture.md#model-endpoints) ---------------------------------------

ENDPOINTS = {
    "together": {
        "base_url": "https://api.together.xyz/v1",
        "models": ["meta-llama/Llama-3-70b"],
        "secret_name": "study/together",
    },
    "local": {"base_url": "https://llm.example.org/v1", "models": ["m1", "m2"], "secret_name": "study/local-llm"},
}


@pytest.fixture(scope="module")
def with_endpoints(tmp_path_factory: pytest.TempPathFactory) -> Synth:
    context = {"llmEndpoints": json.dumps(ENDPOINTS), "genaiAllowedModels": "gpt-4.1-mini"}
    return synthesize(tmp_path_factory.mktemp("cdk.out"), context)


def test_model_endpoint_secrets_are_readable_exactly_by_the_functions_that_call_the_model(
    with_endpoints: Synth, synth: Synth
) -> None:
    wanted = {
        f"arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:{e['secret_name']}-??????"
        for e in ENDPOINTS.values()
    }
    for spec in c.ALL_FUNCTIONS:
        granted = set()
        for statement in with_endpoints.statements(with_endpoints.role_id(spec.key)):
            if "secretsmanager:GetSecretValue" in as_list(statement["Action"]):
                granted |= {render(r) for r in as_list(statement["Resource"])}
        endpoint_grants = {arn for arn in granted if ":secret:study/" in arn}
        assert endpoint_grants == (wanted if spec.snap_start else set()), spec.key
        env = with_endpoints.function(spec.key)["Environment"]["Variables"]
        reads_routes = spec.snap_start or spec is c.ENROLLMENT
        assert ("LLM_ENDPOINTS" in env) == reads_routes, spec.key
        if reads_routes:
            assert {n: e["base_url"] for n, e in json.loads(env["LLM_ENDPOINTS"]).items()} == {
                n: e["base_url"] for n, e in ENDPOINTS.items()
            }
            assert json.loads(env["GENAI_ALLOWED_MODELS"]) == ["gpt-4.1-mini"]
    # the default deployment lists none and grants none
    for spec in c.ALL_FUNCTIONS:
        assert "LLM_ENDPOINTS" not in synth.function(spec.key)["Environment"]["Variables"]


def test_an_invalid_llm_endpoints_context_fails_the_synth() -> None:
    for value in ("not json", json.dumps({"x": {"base_url": "ftp://h", "models": ["m"], "secret_name": "s"}})):
        with pytest.raises(ValueError, match="llmEndpoints"):
            c.Config(llm_endpoints=value).validate()
