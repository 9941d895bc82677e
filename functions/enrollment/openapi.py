"""The participants API's OpenAPI document, as the API really is: the resolver's own schema (routes,
models, validation), plus SigV4 security and the links between operations. Served by
``promptpipe openapi`` and the local server; not needed by the Lambda function itself."""

from __future__ import annotations

import json
from typing import Any

from functions.enrollment.handler import BASE, FLOWS, app

TITLE = "PromptPipe participants API"
SIGV4 = {
    "type": "apiKey",
    "name": "Authorization",
    "in": "header",
    "description": "AWS Signature Version 4 (service execute-api) with IAM credentials allowed to invoke the API. "
    "The local server (promptpipe serve) needs none.",
    "x-amazon-apigateway-authtype": "awsSigv4",
}


def _links(ids: dict[tuple[str, str], str], source: str) -> dict[str, Any]:
    """Links from an answer carrying a participant (id at ``source``) to the per-participant operations."""
    targets = {
        "GetParticipant": ("get", f"{BASE}/{{participant_id}}"),
        "UpdateParticipant": ("put", f"{BASE}/{{participant_id}}"),
        "DeleteParticipant": ("delete", f"{BASE}/{{participant_id}}"),
        "GetHistory": ("get", f"{BASE}/{{participant_id}}/history"),
        "GetState": ("get", f"{BASE}/{{participant_id}}/state"),
        "OverrideState": ("post", f"{BASE}/{{participant_id}}/state"),
    }
    return {
        name: {"operationId": ids[key], "parameters": {"participant_id": source}}
        for name, key in targets.items()
        if key in ids
    }


def openapi_document() -> dict[str, Any]:
    """The document Powertools generates, corrected to what the API answers: 400 (not 422) on a
    validation failure, 413 and 415 wherever a body is read, the SigV4 security scheme, and links
    between operations."""

    document = json.loads(app.get_openapi_json_schema(title=TITLE, version="0.1.0"))
    ids: dict[tuple[str, str], str] = {}
    for path, item in document["paths"].items():
        for method, operation in item.items():
            ids[(method, path)] = operation["operationId"]
            responses = operation["responses"]
            responses.pop("422", None)
            validated = operation.get("requestBody") or any(
                p.get("in") == "query" for p in operation.get("parameters", [])
            )
            error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}}
            if validated and "400" not in responses:
                responses["400"] = {"description": "Invalid request: the message names the field", "content": error}
            if operation.get("requestBody"):
                responses["413"] = {"description": "Body over MAX_API_BODY_BYTES (64 KiB by default)", "content": error}
                responses["415"] = {"description": "The body is not JSON (content-type)", "content": error}
    flow_links = {
        name: {"operationId": ids[key], "parameters": {"flow_id": "$response.body#/result/id"}}
        for name, key in (
            ("GetFlow", ("get", f"{FLOWS}/{{flow_id}}")),
            ("GetFlowVersions", ("get", f"{FLOWS}/{{flow_id}}/versions")),
        )
    }
    document["paths"][f"{FLOWS}/{{flow_id}}"]["put"]["responses"]["200"]["links"] = flow_links
    for method in ("get", "put"):
        document["paths"][f"{FLOWS}/{{flow_id}}"][method]["responses"]["405"] = {
            "description": "The flow id `validate` is reserved (POST /conversation/flows/validate)",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}},
        }
    document["paths"][BASE]["post"]["responses"]["201"]["links"] = _links(ids, "$response.body#/result/id")
    document["paths"][f"{BASE}/{{participant_id}}"]["get"]["responses"]["200"]["links"] = _links(
        ids, "$request.path.participant_id"
    )
    list_op = document["paths"][BASE]["get"]
    list_op["responses"]["200"]["links"] = {
        "NextPage": {
            "operationId": list_op["operationId"],
            "parameters": {"next_token": "$response.body#/result/next_token"},
        }
    }
    history = document["paths"][f"{BASE}/{{participant_id}}/history"]["get"]
    history["responses"]["200"]["links"] = {
        "NextPage": {
            "operationId": history["operationId"],
            "parameters": {
                "participant_id": "$request.path.participant_id",
                "next_token": "$response.body#/result/next_token",
            },
        }
    }
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    text = json.dumps(document["paths"])
    for unused in ("HTTPValidationError", "ValidationError", "ResponseValidationError"):
        if f"#/components/schemas/{unused}" not in text:
            schemas.pop(unused, None)
    document["components"]["securitySchemes"] = {"sigv4": SIGV4}
    document["security"] = [{"sigv4": []}]
    return document
