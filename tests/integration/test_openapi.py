"""The participants API's OpenAPI document, generated from the Powertools resolver.

``openapi-spec-validator`` is not a dependency, so the document's structure is asserted directly:
an OpenAPI 3.1 document with every route, its path parameters and the request body schemas."""

from __future__ import annotations

import json
from typing import Any

import pytest

BASE = "/conversation/participants"
ROUTES = {
    BASE: {"get", "post"},
    f"{BASE}/{{participant_id}}": {"get", "put", "delete"},
    f"{BASE}/{{participant_id}}/history": {"get"},
    f"{BASE}/{{participant_id}}/state": {"get", "post"},
    f"{BASE}/{{participant_id}}/reconcile": {"post"},
    "/conversation/reconcile": {"post"},
    "/conversation/participant-rows": {"get"},
    "/conversation/flows/validate": {"post"},
    "/conversation/flows/{flow_id}": {"get", "put"},
    "/conversation/flows/{flow_id}/versions": {"get"},
    # the console's coordination (docs/console.md)
    "/conversation/participants/{participant_id}/staff-messages": {"post"},
    "/conversation/audit": {"get", "post"},
    "/conversation/enrolment-checks": {"post"},
    # a study's randomised decisions (docs/studies.md)
    "/conversation/studies/{study_id}/decisions": {"get"},
}


@pytest.fixture
def document(aws: None) -> dict[str, Any]:
    from functions.enrollment.handler import app

    return json.loads(app.get_openapi_json_schema(title="PromptPipe participants API", version="0.1.0"))


def resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref", "")
    prefix = "#/components/schemas/"
    assert ref.startswith(prefix), schema
    return document["components"]["schemas"][ref[len(prefix) :]]


def body_schema(document: dict[str, Any], path: str, method: str) -> dict[str, Any]:
    request = document["paths"][path][method]["requestBody"]
    assert request["required"] is True
    return resolve(document, request["content"]["application/json"]["schema"])


def test_document_is_openapi_3_1_with_every_route(document: dict[str, Any]) -> None:
    # Given the document generated from the resolver
    # Then it is OpenAPI 3.1 with the API's title, and exactly the API's routes and methods
    assert document["openapi"].startswith("3.1.")
    assert document["info"] == {"title": "PromptPipe participants API", "version": "0.1.0"}
    assert {path: set(item) for path, item in document["paths"].items()} == ROUTES
    # And every operation has a unique id and at least one response
    operations = [op for item in document["paths"].values() for op in item.values()]
    assert len({op["operationId"] for op in operations}) == len(operations)
    assert all(op["responses"] for op in operations)


def test_enrollment_request_body_is_documented(document: dict[str, Any]) -> None:
    # Given the enrollment operation
    schema = body_schema(document, BASE, "post")

    # Then its body is EnrollmentRequest: phone_number required, the optional profile fields, nothing else
    assert schema["title"] == "EnrollmentRequest"
    assert schema["required"] == ["phone_number"]
    assert set(schema["properties"]) == {
        "phone_number",
        "name",
        "gender",
        "ethnicity",
        "background",
        "timezone",
        "language",
        "consent",
        "test_participant",
        "by",  # the coordinator acting, for the audit (docs/console.md)
    }
    assert schema["additionalProperties"] is False
    # And enrollment documents its 201 (docs/behaviour.md#B-API-1), not the default 200
    assert "201" in document["paths"][BASE]["post"]["responses"]


def test_update_and_override_bodies_and_path_parameters_are_documented(document: dict[str, Any]) -> None:
    # Given the update and state override operations
    update = body_schema(document, f"{BASE}/{{participant_id}}", "put")
    override = body_schema(document, f"{BASE}/{{participant_id}}/state", "post")

    # Then the update is partial (nothing required) and the override requires a reason
    assert update["title"] == "ParticipantUpdate"
    assert "required" not in update or update["required"] == []
    assert set(update["properties"]) == {
        "name",
        "gender",
        "ethnicity",
        "background",
        "timezone",
        "status",
        "consent",
        "withdrawal",
        "test_participant",
        "by",
        "reason",
        "preferred_time",  # the daily prompt's time (docs/behaviour.md#B-API-9)
    }
    assert update["properties"]["preferred_time"]["anyOf"][0]["pattern"] == r"^([01]?[0-9]|2[0-3]):[0-5][0-9]$"
    assert "daily schedule moves" in update["properties"]["preferred_time"]["description"]
    assert override["title"] == "StateOverride"
    assert override["required"] == ["reason"]
    # And every per-participant operation takes participant_id in the path
    for path, methods in ROUTES.items():
        if "{participant_id}" not in path:
            continue
        for method in methods:
            parameters = {p["name"]: p for p in document["paths"][path][method]["parameters"]}
            assert (parameters["participant_id"]["in"], parameters["participant_id"]["required"]) == ("path", True)


def test_paging_query_parameters_are_documented(document: dict[str, Any]) -> None:
    # Given the list and history operations
    listing = {p["name"]: p for p in document["paths"][BASE]["get"]["parameters"]}
    history = {p["name"]: p for p in document["paths"][f"{BASE}/{{participant_id}}/history"]["get"]["parameters"]}

    # Then limit and next_token are query parameters, and history can leave out the audit metadata
    assert {"limit", "next_token"} <= set(listing)
    assert all(listing[name]["in"] == "query" for name in ("limit", "next_token"))
    assert {"limit", "next_token", "include_audit"} <= set(history)


def test_consent_and_withdrawal_are_documented_with_their_three_fields(document: dict[str, Any]) -> None:
    # Given the enrolment and update bodies, and the participant the API answers with
    enrolment = body_schema(document, BASE, "post")
    update = body_schema(document, f"{BASE}/{{participant_id}}", "put")
    participant = document["components"]["schemas"]["ConversationParticipant"]

    # Then each names consent (and the update and the participant, withdrawal) as the one record:
    # when, the form's version and how, all required, with what CONSENT_REQUIRED means
    assert "CONSENT_REQUIRED" in enrolment["properties"]["consent"]["description"]
    assert "withdrawn" in update["properties"]["withdrawal"]["description"]
    assert {"consent", "withdrawal"} <= set(participant["properties"])
    record = document["components"]["schemas"]["ConsentRecord"]
    assert record["required"] == ["at", "version", "method"]
    assert "implied" in record["properties"]["method"]["description"]
