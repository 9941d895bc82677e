"""Who acts, for API calls (docs/console.md, "Accountability"): the enrollment handler takes the AWS
principal that API Gateway's IAM authoriser vouched for (``requestContext.authorizer.iam`` of an HTTP
API payload 2.0 event, shaped as API Gateway sends it) as the who of every audit record; a ``by`` the
caller sends is kept as a note (``named``) and never replaces it; an unsigned call (locally) is
recorded as such. The reasons of a pause and a withdrawal reach the record through the API."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from promptpipe.local.environment import LocalEnvironment, local_settings
from promptpipe.models.audit import UNNAMED_CALLER

BASE = "/conversation/participants"
START = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)
ROLE_ARN = "arn:aws:sts::111122223333:assumed-role/study-ops/ana-laptop"
# An IAM authoriser's caller as API Gateway writes it (HTTP API, payload 2.0): an assumed role's
# session; the keys it leaves empty are null, not absent.
ASSUMED_ROLE = {
    "accessKey": "ASIAIOSFODNN7EXAMPLE",
    "accountId": "111122223333",
    "callerId": "AROAEXAMPLEID:ana-laptop",
    "cognitoIdentity": None,
    "principalOrgId": None,
    "userArn": ROLE_ARN,
    "userId": "AROAEXAMPLEID:ana-laptop",
}


@pytest.fixture
def env() -> Iterator[LocalEnvironment]:
    with LocalEnvironment(start=START, settings=local_settings(offline_coach=True, openai_api_key=None)) as environment:
        yield environment


def _audit(env: LocalEnvironment, pid: str | None = None) -> list[dict[str, Any]]:
    answer = env.api("GET", "/conversation/audit", query={"participant_id": pid} if pid else None)
    return list(answer.body["result"]["records"])


def _enrol(env: LocalEnvironment, **fields: Any) -> str:
    answer = env.api("POST", BASE, json_body={"phone_number": "+14165550142", "name": "Sam"} | fields, iam=ASSUMED_ROLE)
    assert answer.status == 201, answer.body
    return str(answer.body["result"]["id"])


def test_every_action_signed_by_a_principal_is_recorded_as_that_principal_with_by_as_a_note(
    env: LocalEnvironment,
) -> None:
    pid = _enrol(env, by="Ana")
    signed = {"iam": ASSUMED_ROLE}
    # A caller that claims to be someone else is still recorded as who signed the call
    env.api("PUT", f"{BASE}/{pid}", json_body={"status": "paused", "reason": "on holiday", "by": "Boss"}, **signed)
    env.api("PUT", f"{BASE}/{pid}", json_body={"status": "active"}, **signed)
    env.api("PUT", f"{BASE}/{pid}", json_body={"timezone": "Europe/Madrid", "reason": "moved", "by": "Ana"}, **signed)
    staff = env.api("POST", f"{BASE}/{pid}/staff-messages", json_body={"body": "Hi, Ana here.", "by": "Ana"}, **signed)
    assert staff.status == 201, staff.body
    release = {"release_hold": True, "reason": "talked it through", "by": "Ana"}
    assert env.api("POST", f"{BASE}/{pid}/state", json_body=release, **signed).status == 200
    env.api("PUT", f"{BASE}/{pid}", json_body={"status": "withdrawn", "reason": "moved away", "by": "Ana"}, **signed)
    records = _audit(env, pid)
    assert [(r["action"], r["by"], r["named"], r["reason"]) for r in records] == [
        ("enrol", ROLE_ARN, "Ana", ""),
        ("pause", ROLE_ARN, "Boss", "on holiday"),
        ("resume", ROLE_ARN, "", ""),
        ("edit", ROLE_ARN, "Ana", "moved"),
        ("staff_message", ROLE_ARN, "Ana", ""),
        ("release", ROLE_ARN, "Ana", "talked it through"),
        ("withdraw", ROLE_ARN, "Ana", "moved away"),
    ]
    # The staff message still signs the transcript with the name the console gave (what the page shows)
    history = env.api("GET", f"{BASE}/{pid}/history").body["result"]["messages"]
    assert [m["metadata"]["staff"] for m in history if m["kind"] == "staff"] == ["Ana"]


def test_a_deletion_an_erasure_and_an_export_are_recorded_as_their_signer(env: LocalEnvironment) -> None:
    kept = _enrol(env)
    erased = env.api("POST", BASE, json_body={"phone_number": "+14165550143"}, iam=ASSUMED_ROLE).body["result"]["id"]
    user = {"accountId": "111122223333", "userArn": "arn:aws:iam::111122223333:user/ben", "callerId": "AIDAEXAMPLE"}
    query = {"keep_transcript": "true", "by": "Ben", "reason": "left the study"}
    assert env.api("DELETE", f"{BASE}/{kept}", query=query, iam=user).status == 200
    query = {"keep_transcript": "false", "by": "Ben", "reason": "asked to be forgotten"}
    assert env.api("DELETE", f"{BASE}/{erased}", query=query, iam=user).status == 200
    assert env.api("POST", "/conversation/audit", json_body={"action": "export", "by": "Ben"}, iam=user).status == 201
    found = {(r["participant_id"], r["action"]): r for r in _audit(env)}
    ben = "arn:aws:iam::111122223333:user/ben"
    assert (found[kept, "delete"]["by"], found[kept, "delete"]["reason"]) == (ben, "left the study")
    assert (found[erased, "erasure"]["by"], found[erased, "erasure"]["named"]) == (ben, "Ben")
    assert found[erased, "erasure"]["reason"] == "asked to be forgotten"
    assert (found["", "export"]["by"], found["", "export"]["named"]) == (ben, "Ben")


def test_a_principal_without_an_arn_is_its_caller_id(env: LocalEnvironment) -> None:
    pid = _enrol(env)
    caller_only = {"accountId": "111122223333", "callerId": "AIDAEXAMPLECALLER", "userArn": None}
    env.api("PUT", f"{BASE}/{pid}", json_body={"status": "paused", "reason": "travel"}, iam=caller_only)
    assert (_audit(env, pid)[-1]["by"], _audit(env, pid)[-1]["reason"]) == ("AIDAEXAMPLECALLER", "travel")


def test_an_unsigned_call_is_recorded_as_unsigned_whatever_by_it_sends(env: LocalEnvironment) -> None:
    answer = env.api("POST", BASE, json_body={"phone_number": "+14165550144", "by": "arn:aws:iam::1:root"})
    pid = answer.body["result"]["id"]
    env.api("PUT", f"{BASE}/{pid}", json_body={"status": "withdrawn", "reason": "by phone", "by": "Ana"})
    records = _audit(env, pid)
    assert [(r["by"], r["named"], r["reason"]) for r in records] == [
        (UNNAMED_CALLER, "arn:aws:iam::1:root", ""),
        (UNNAMED_CALLER, "Ana", "by phone"),
    ]


def test_a_pushed_flow_is_created_by_its_signer_and_unsigned_by_nobody(env: LocalEnvironment) -> None:
    flow = {
        "id": "intake",
        "primaryGoal": {"type": "GATE", "gate": "G"},
        "gates": {"G": {"satisfiedBy": {"metricsAll": ["habit"]}}},
        "nodes": [{"id": "ask", "produces": ["habit"]}],
    }
    assert env.api("PUT", "/conversation/flows/intake", json_body=flow, iam=ASSUMED_ROLE).status == 200
    assert env.api("PUT", "/conversation/flows/intake", json_body={**flow, "description": "2"}).status == 200
    versions = env.api("GET", "/conversation/flows/intake/versions").body["result"]["versions"]
    assert [v["created_by"] for v in versions][-2:] == [ROLE_ARN, ""]


def test_the_principal_reader_takes_what_api_gateway_may_leave_out() -> None:
    from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2

    from functions.enrollment.coordination import signing_principal

    def event(context: dict[str, Any] | None) -> APIGatewayProxyEventV2:
        return APIGatewayProxyEventV2({} if context is None else {"requestContext": context})

    assert signing_principal(event({"authorizer": {"iam": ASSUMED_ROLE}})) == ROLE_ARN
    assert signing_principal(event({"authorizer": {"iam": None}})) == ""  # the key may be null
    assert signing_principal(event({"authorizer": {"lambda": {"sub": "x"}}})) == ""  # another authoriser
    assert signing_principal(event({})) == ""
    assert signing_principal(event(None)) == ""  # no request context at all
