"""One construct per concern; each builds its resources in small ``_build_*`` methods and exposes
them as attributes. ``acknowledge`` records a cdk-nag finding as accepted, always with its reason."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_logs as logs
from constructs import IConstruct

_RETENTION = {
    1: logs.RetentionDays.ONE_DAY,
    3: logs.RetentionDays.THREE_DAYS,
    5: logs.RetentionDays.FIVE_DAYS,
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    60: logs.RetentionDays.TWO_MONTHS,
    90: logs.RetentionDays.THREE_MONTHS,
    120: logs.RetentionDays.FOUR_MONTHS,
    150: logs.RetentionDays.FIVE_MONTHS,
    180: logs.RetentionDays.SIX_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
    400: logs.RetentionDays.THIRTEEN_MONTHS,
    545: logs.RetentionDays.EIGHTEEN_MONTHS,
    731: logs.RetentionDays.TWO_YEARS,
    1827: logs.RetentionDays.FIVE_YEARS,
    3653: logs.RetentionDays.TEN_YEARS,
}


def acknowledge(scope: IConstruct, *findings: tuple[str, str]) -> None:
    """Acknowledge cdk-nag findings ``(rule id, reason)`` on ``scope`` and its children."""
    for rule_id, reason in findings:
        cdk.Validations.of(scope).acknowledge(cdk.Acknowledgment(id=rule_id, reason=reason))


def retention(days: int) -> logs.RetentionDays:
    """The CloudWatch Logs retention enum for a number of days (validated in ``Config``)."""
    return _RETENTION[days]


def wildcard_resource_finding(scope: IConstruct, resource: str) -> str:
    """The AwsSolutions-IAM5 finding id cdk-nag reports for ``resource`` (an ARN, maybe with tokens).

    cdk-nag names a finding by the resolved resource, rendering ``Ref`` as ``<Name>`` and
    ``Fn::GetAtt`` as ``<Name.Attr>``; resolving here keeps the id right whether the stack is
    environment-agnostic or bound to an account and region."""
    return f"AwsSolutions-IAM5[Resource::{_render(cdk.Stack.of(scope).resolve(resource))}]"


def _render(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Ref" in value:
        return f"<{value['Ref']}>"
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        return "<{}>".format(".".join(value["Fn::GetAtt"]))
    if isinstance(value, dict) and "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return str(separator).join(_render(part) for part in parts)
    raise ValueError(f"cannot render {value!r} as a cdk-nag finding id")
