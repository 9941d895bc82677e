"""The OpenAPI document says what the API does: typed answers, 400 not 422, the validation rules,
links, the SigV4 scheme; the local server serves it with Swagger UI (assets from a package, no CDN)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from promptpipe.local.environment import LocalEnvironment, local_settings
from promptpipe.local.server import LocalServer

BASE = "/conversation/participants"


@pytest.fixture
def document(aws: None) -> dict[str, Any]:
    from functions.enrollment.openapi import openapi_document

    return openapi_document()


def _operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            yield method, path, operation


def _schema(document: dict[str, Any], name: str) -> dict[str, Any]:
    return document["components"]["schemas"][name]


def test_no_422_and_400_wherever_input_is_validated(document: dict[str, Any]) -> None:
    assert "422" not in json.dumps(document["paths"])
    assert "HTTPValidationError" not in document["components"]["schemas"]
    for method, path, operation in _operations(document):
        validated = operation.get("requestBody") or any(p["in"] == "query" for p in operation.get("parameters", []))
        assert ("400" in operation["responses"]) == bool(validated), (method, path)


def test_every_answer_is_typed(document: dict[str, Any]) -> None:
    expected = {
        ("post", BASE): {
            "200": "ParticipantEnvelope",  # a retry of the request that enrolled them
            "201": "ParticipantEnvelope",
            "400": "ErrorEnvelope",
            "409": "ErrorEnvelope",
            "413": "ErrorEnvelope",
            "415": "ErrorEnvelope",
        },
        ("get", BASE): {"200": "ParticipantPageEnvelope", "400": "ErrorEnvelope"},
        ("get", f"{BASE}/{{participant_id}}"): {"200": "ParticipantEnvelope", "404": "ErrorEnvelope"},
        ("get", f"{BASE}/{{participant_id}}/history"): {
            "200": "TranscriptPageEnvelope",
            "400": "ErrorEnvelope",
            "404": "ErrorEnvelope",
        },
        ("get", f"{BASE}/{{participant_id}}/state"): {"200": "StateViewEnvelope", "404": "ErrorEnvelope"},
    }
    for (method, path), answers in expected.items():
        responses = document["paths"][path][method]["responses"]
        got = {
            code: r["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1] for code, r in responses.items()
        }
        assert got == answers, (method, path)
    page = _schema(document, "ParticipantPage")
    assert page["properties"]["participants"]["items"]["$ref"].endswith("/ConversationParticipant")
    assert "Opaque" in page["properties"]["next_token"]["description"]
    assert _schema(document, "ErrorEnvelope")["required"] == ["message"]


def test_validation_rules_are_in_the_schema(document: dict[str, Any]) -> None:
    enrollment = _schema(document, "EnrollmentRequest")
    assert enrollment["properties"]["phone_number"]["minLength"] == 1
    override = _schema(document, "StateOverride")
    assert [branch["required"] for branch in override["anyOf"]] == [
        ["sub_state"],
        ["debug_mode"],
        ["llm_routes"],
        ["profile"],
        ["release_hold"],
    ]
    params = {p["name"]: p for p in document["paths"][BASE]["get"]["parameters"]}
    assert params["limit"]["schema"]["minimum"] == 1 and params["limit"]["schema"]["maximum"] == 1000
    assert params["phone"]["schema"]["anyOf"][0]["minLength"] == 1
    assert "Opaque" in params["next_token"]["description"]


def test_links_chain_operations_that_exist(document: dict[str, Any]) -> None:
    ids = {operation["operationId"] for _m, _p, operation in _operations(document)}
    created = document["paths"][BASE]["post"]["responses"]["201"]["links"]
    assert set(created) == {
        "GetParticipant",
        "UpdateParticipant",
        "DeleteParticipant",
        "GetHistory",
        "GetState",
        "OverrideState",
    }
    assert all(link["operationId"] in ids for link in created.values())
    assert created["GetState"]["parameters"] == {"participant_id": "$response.body#/result/id"}
    next_page = document["paths"][BASE]["get"]["responses"]["200"]["links"]["NextPage"]
    assert next_page["parameters"] == {"next_token": "$response.body#/result/next_token"}


def test_sigv4_security_scheme_applies_to_every_operation(document: dict[str, Any]) -> None:
    scheme = document["components"]["securitySchemes"]["sigv4"]
    assert scheme["x-amazon-apigateway-authtype"] == "awsSigv4"
    assert document["security"] == [{"sigv4": []}]


def test_error_answers_for_bodies_methods_and_content_types_are_in_the_envelope() -> None:
    settings = local_settings(offline_coach=True, openai_api_key=None)
    with LocalEnvironment(start=datetime(2026, 3, 2, 13, 0, tzinfo=UTC), settings=settings) as env:
        cases = [
            ("POST", BASE, b"\xff", "application/json", 400, "not UTF-8"),
            ("POST", BASE, b'{"phone_number": "+14165550142"}', "multipart/form-data", 400, "send JSON"),
            ("POST", BASE, b'{"phone_number": "+14165550142"}', "text/plain", 415, "Unsupported content type"),
            ("PATCH", f"{BASE}/p_1", None, None, 405, "allowed: GET, PUT, DELETE"),
            ("GET", f"{BASE}/p_1/reconcile", None, None, 405, "allowed: POST"),
            ("TRACE", "/conversation/reconcile", None, None, 405, "allowed: POST"),
            ("GET", "/elsewhere", None, None, 404, "No such route"),
        ]
        for method, path, body, content_type, status, words in cases:
            headers = {"content-type": content_type} if content_type else None
            answer = env.api(method, path, body=body, base64_body=body is not None, headers=headers)
            assert answer.status == status, (method, path, content_type)
            assert answer.body["status"] == "error" and words in answer.body["message"]
        assert env.api("PATCH", BASE).headers["allow"] == "GET, POST"


def test_the_state_override_rule_is_what_the_api_enforces() -> None:
    settings = local_settings(offline_coach=True, openai_api_key=None)
    with LocalEnvironment(start=datetime(2026, 3, 2, 13, 0, tzinfo=UTC), settings=settings) as env:
        pid = env.api("POST", BASE, json_body={"phone_number": "+14165550142"}).body["result"]["id"]
        for body in ({"reason": "x"}, {"reason": "x", "sub_state": None, "debug_mode": None}):
            assert env.api("POST", f"{BASE}/{pid}/state", json_body=body).status == 400
        assert env.api("POST", f"{BASE}/{pid}/state", json_body={"reason": "x", "debug_mode": True}).status == 200
        assert env.api("POST", BASE, json_body={"phone_number": ""}).status == 400


def test_the_local_server_serves_the_document_and_swagger_ui_without_a_cdn() -> None:
    env = LocalEnvironment(
        start=datetime(2026, 3, 2, 13, 0, tzinfo=UTC), settings=local_settings(offline_coach=True, openai_api_key=None)
    )
    server = LocalServer("127.0.0.1", 0, env=env, tick_seconds=3600).start()
    try:
        with urllib.request.urlopen(f"{server.url}/openapi.json", timeout=30) as answer:
            served = json.loads(answer.read())
        from functions.enrollment.openapi import openapi_document

        expected = openapi_document()
        assert served["paths"] == expected["paths"]
        assert served["components"] == expected["components"]
        assert served["security"] == []  # the local server needs no signature
        with urllib.request.urlopen(f"{server.url}/docs", timeout=30) as answer:
            page = answer.read().decode()
        assert "src='/docs/swagger-ui-bundle.min.js'" in page and "href='/docs/swagger-ui.min.css'" in page
        assert "https://" not in page.split("<script>")[0]  # nothing loaded from elsewhere
        for asset in ("swagger-ui-bundle.min.js", "swagger-ui.min.css"):
            with urllib.request.urlopen(f"{server.url}/docs/{asset}", timeout=30) as answer:
                assert len(answer.read()) > 10_000
    finally:
        server.stop()
