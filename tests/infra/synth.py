"""The synthesized stack as the infrastructure tests read it (one synth per test process)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from aws_cdk.assertions import Template

from infra.app import build_app
from infra.stack import PromptPipeStack

PREFIX = "promptpipe"
REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Synth:
    app: cdk.App
    stack: PromptPipeStack
    template: Template
    outdir: Path
    resources: dict[str, dict[str, Any]]  # template.to_json() goes through jsii: read once

    def of_type(self, cfn_type: str) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.resources.items() if v["Type"] == cfn_type}

    def function_id(self, key: str) -> str:
        (logical_id,) = [
            k
            for k, v in self.of_type("AWS::Lambda::Function").items()
            if v["Properties"]["FunctionName"] == f"{PREFIX}-{key}"
        ]
        return logical_id

    def function(self, key: str) -> dict[str, Any]:
        return self.resources[self.function_id(key)]["Properties"]

    def role_id(self, key: str) -> str:
        return str(self.function(key)["Role"]["Fn::GetAtt"][0])

    def statements(self, role_id: str) -> list[dict[str, Any]]:
        found = []
        for policy in self.of_type("AWS::IAM::Policy").values():
            if {"Ref": role_id} in policy["Properties"]["Roles"]:
                found += policy["Properties"]["PolicyDocument"]["Statement"]
        return found

    def queue_id(self, name: str) -> str:
        (logical_id,) = [k for k, v in self.of_type("AWS::SQS::Queue").items() if v["Properties"]["QueueName"] == name]
        return logical_id

    def schedule(self, name: str) -> dict[str, Any]:
        """The properties of the stack's one schedule named ``name``."""
        schedules = self.of_type("AWS::Scheduler::Schedule").values()
        (properties,) = [s["Properties"] for s in schedules if s["Properties"]["Name"] == name]
        return properties

    def secret_id(self, name: str) -> str:
        (logical_id,) = [
            k for k, v in self.of_type("AWS::SecretsManager::Secret").items() if v["Properties"]["Name"] == name
        ]
        return logical_id


def synthesize(outdir: Path, context: dict[str, Any] | None = None) -> Synth:
    """The app exactly as ``cdk synth`` builds it (cdk-nag plugin included), minus bundling."""
    # cdk.json's context (the feature flags) as the CLI passes it, minus bundling.
    flags = json.loads((REPO_ROOT / "cdk.json").read_text())["context"]
    app, stack = build_app(context={**flags, "aws:cdk:bundling-stacks": [], **(context or {})}, outdir=str(outdir))
    # Raises RuntimeError("ValidationFailed ...") if cdk-nag reports an unacknowledged finding.
    assembly = app.synth()
    template = Template.from_json(assembly.get_stack_by_name(stack.stack_name).template)
    return Synth(app=app, stack=stack, template=template, outdir=outdir, resources=template.to_json()["Resources"])


def render(value: Any) -> str:
    """An ARN-like value with intrinsics as text: Ref -> <Id>, GetAtt -> <Id.Attr>, Join joined."""
    if isinstance(value, str):
        return value
    if "Ref" in value:
        return f"<{value['Ref']}>"
    if "Fn::GetAtt" in value:
        return "<{}>".format(".".join(value["Fn::GetAtt"]))
    if "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return str(separator).join(render(part) for part in parts)
    return json.dumps(value)


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def statement_actions(statement: dict[str, Any]) -> set[str]:
    return set(as_list(statement["Action"]))
