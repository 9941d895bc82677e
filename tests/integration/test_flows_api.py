"""Flow definitions over the API (docs/controller.md): the real enrollment handler, moto DynamoDB."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3

FLOWS = "/conversation/flows"
PHONE = "+14155550111"
TWILIO_URL = "https://localhost/webhooks/twilio"
INTAKE = json.loads((Path(__file__).parents[2] / "prompts" / "flows" / "intake.json").read_text())


def sms(env: Any, text: str, sid: str) -> Any:
    from promptpipe.local.signing import twilio_form, twilio_signature

    params = {"MessageSid": sid, "AccountSid": "AC1", "From": PHONE, "To": "+14155550000", "Body": text}
    signature = twilio_signature(TWILIO_URL, params, env.settings.twilio_auth_token)
    return env.api(
        "POST",
        "/webhooks/twilio",
        body=twilio_form(params),
        headers={"content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature},
        base64_body=True,
    )


def flow_items(env: Any, flow_id: str) -> list[str]:
    client = boto3.client("dynamodb", region_name="us-east-1")
    items = client.query(
        TableName=env.settings.table_name,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": f"FLOW#{flow_id}"}},
    )["Items"]
    return sorted(i["sk"]["S"] for i in items)


def test_default_intake_flow_is_read_when_absent_and_seeded_by_the_versions_route(local_env_factory) -> None:
    env = local_env_factory()
    assert flow_items(env, "intake") == []
    response = env.api("GET", f"{FLOWS}/intake")
    assert response.status == 200, response.body
    assert response.body["status"] == "ok"
    assert response.body["result"]["id"] == "intake" and response.body["result"]["version"] == 1
    assert flow_items(env, "intake") == []  # a read writes nothing (the worker reads the same way)
    versions = env.api("GET", f"{FLOWS}/intake/versions")
    assert [v["version"] for v in versions.body["result"]["versions"]] == [1]
    assert flow_items(env, "intake") == ["LATEST", "V#000001"]


def test_put_stores_a_new_version_and_get_reads_latest_and_pinned(local_env_factory) -> None:
    env = local_env_factory()
    env.api("GET", f"{FLOWS}/intake")  # seeds version 1
    changed = json.loads(json.dumps(INTAKE))
    changed["nodes"][2]["retryPolicy"] = {"maxAttempts": 1, "onExhaust": "HANDOFF"}
    response = env.api("PUT", f"{FLOWS}/intake", json_body=changed)
    assert response.status == 200, response.body
    assert response.body["result"]["version"] == 2
    assert flow_items(env, "intake") == ["LATEST", "V#000001", "V#000002"]

    latest = env.api("GET", f"{FLOWS}/intake").body["result"]
    assert latest["version"] == 2 and latest["nodes"][2]["retryPolicy"]["maxAttempts"] == 1
    pinned = env.api("GET", f"{FLOWS}/intake", query={"version": "1"}).body["result"]
    assert pinned["version"] == 1 and pinned["nodes"][2]["retryPolicy"] is None

    versions = env.api("GET", f"{FLOWS}/intake/versions").body["result"]["versions"]
    assert [v["version"] for v in versions] == [1, 2]


def test_put_of_an_invalid_flow_is_400_with_every_problem_and_stores_nothing(local_env_factory) -> None:
    env = local_env_factory()
    bad = json.loads(json.dumps(INTAKE))
    bad["id"] = "coaching"
    bad["nodes"][1]["requires"] = ["NO_SUCH_GATE"]
    bad["factAliases"] = {"a": "b", "b": "a"}
    response = env.api("PUT", f"{FLOWS}/coaching", json_body=bad)
    assert response.status == 400
    assert response.body["status"] == "error"
    problems = {(p["path"], p["message"]) for p in response.body["result"]["problems"]}
    assert ("$.nodes[1].requires[0]", "undefined gate 'NO_SUCH_GATE'") in problems
    assert any(path == "$.factAliases.a" for path, _ in problems)
    assert flow_items(env, "coaching") == []
    assert env.api("GET", f"{FLOWS}/coaching").status == 404


def test_put_with_a_mismatched_id_is_400(local_env_factory) -> None:
    env = local_env_factory()
    response = env.api("PUT", f"{FLOWS}/other", json_body=INTAKE)
    assert response.status == 400
    assert response.body["result"]["problems"][0]["path"] == "$.id"
    assert flow_items(env, "other") == [] and flow_items(env, "intake") == []


def test_validate_reports_without_storing(local_env_factory) -> None:
    env = local_env_factory()
    ok = env.api("POST", f"{FLOWS}/validate", json_body=INTAKE)
    assert ok.status == 200 and ok.body["result"] == {"valid": True, "problems": []}
    bad = env.api("POST", f"{FLOWS}/validate", json_body={"id": "x", "nodes": []})
    assert bad.status == 200 and bad.body["result"]["valid"] is False
    assert {p["path"] for p in bad.body["result"]["problems"]} >= {"$.primaryGoal", "$.nodes"}
    assert flow_items(env, "intake") == [] and flow_items(env, "x") == []


def test_unknown_flow_is_404(local_env_factory) -> None:
    env = local_env_factory()
    assert env.api("GET", f"{FLOWS}/nope").status == 404
    assert env.api("GET", f"{FLOWS}/nope/versions").status == 404
    assert env.api("GET", f"{FLOWS}/intake", query={"version": "9"}).status == 404


def test_dynamo_store_refuses_a_version_that_is_not_next(local_env_factory) -> None:
    import pytest

    from promptpipe.adapters.dynamodb_flows import DynamoFlowDefinitionStore
    from promptpipe.controller.definition import parse_definition
    from promptpipe.controller.ports import FlowVersionConflict, StoredFlow

    env = local_env_factory()
    store = DynamoFlowDefinitionStore(env.settings.table_name, boto3.client("dynamodb", region_name="us-east-1"))
    v1 = parse_definition({**INTAKE, "id": "race", "version": 1})
    store.put(StoredFlow(definition=v1, created_at=env.clock.now()))
    with pytest.raises(FlowVersionConflict):
        store.put(StoredFlow(definition=v1, created_at=env.clock.now()))  # a second writer of v1
    with pytest.raises(FlowVersionConflict):
        store.put(StoredFlow(definition=v1.model_copy(update={"version": 3}), created_at=env.clock.now()))
    store.put(StoredFlow(definition=v1.model_copy(update={"version": 2}), created_at=env.clock.now()))
    assert [v.version for v in store.versions("race")] == [1, 2]
    latest = store.latest("race")
    assert latest is not None and latest.definition.version == 2
    assert flow_items(env, "race") == ["LATEST", "V#000001", "V#000002"]


def test_a_pushed_retry_policy_hands_off_visible_in_state_and_resolved_by_override(local_env_factory) -> None:
    from promptpipe.flow.steering import HOLDING_MESSAGE

    env = local_env_factory()
    changed = json.loads(json.dumps(INTAKE))
    changed["nodes"][0]["retryPolicy"] = {"maxAttempts": 1, "onExhaust": "HANDOFF"}
    # The bundled default is stored as version 1 first, so the push is version 2
    assert env.api("PUT", f"{FLOWS}/intake", json_body=changed).body["result"]["version"] == 2
    response = env.api("POST", "/conversation/participants", json_body={"phone_number": PHONE})
    assert response.status == 201  # the greeting asks for the habit (habit EXECUTE)
    pid = response.body["result"]["id"]
    assert sms(env, "idk", "SM-1").status == 200
    assert env.outbox.messages()[-1].body_text == HOLDING_MESSAGE

    state = env.api("GET", f"/conversation/participants/{pid}/state").body["result"]
    assert state["controller"]["needs_person"] is True
    assert state["controller"]["flow"] == "intake@2"
    assert state["controller"]["hold"]["nodeId"] == "habit"

    override = {"sub_state": "INTAKE", "reason": "called them; they want to walk more"}
    response = env.api("POST", f"/conversation/participants/{pid}/state", json_body=override)
    assert response.status == 200
    assert response.body["result"]["controller"]["needs_person"] is False


def test_validate_is_not_a_flow_id_and_bodies_are_json_objects(local_env_factory) -> None:
    env = local_env_factory()
    # GET and PUT on the validate path neither read nor store a flow named "validate"
    for method, body in (("GET", None), ("PUT", {**INTAKE, "id": "validate"})):
        response = env.api(method, f"{FLOWS}/validate", json_body=body)
        assert response.status == 405, response.body
        assert response.headers["allow"] == "POST"
    assert flow_items(env, "validate") == []
    # A one-element array is not taken for its element (Powertools' validation would unwrap it)
    response = env.api(
        "POST", f"{FLOWS}/validate", body=json.dumps([INTAKE]), headers={"content-type": "application/json"}
    )
    assert response.status == 400
    assert response.body == {"status": "error", "message": "Invalid request: the body must be a JSON object"}
    response = env.api("POST", f"{FLOWS}/validate", json_body=INTAKE)
    assert response.status == 200 and response.body["result"] == {"valid": True, "problems": []}
