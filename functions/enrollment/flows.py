"""The flow definitions routes (docs/controller.md): validate, read, push, list the versions."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from functions.enrollment.answers import (
    BAD_REQUEST,
    FLOWS,
    ApiRouter,
    answer,
    dump,
    envelope,
    method_not_allowed,
)
from functions.enrollment.coordination import signing_principal
from promptpipe.models.api import ErrorEnvelope, FlowEnvelope, FlowValidationEnvelope, FlowVersionsEnvelope
from promptpipe.usecases import flows
from promptpipe.wiring import get_app

router = ApiRouter()

FLOW_NOT_FOUND = {404: answer("Flow (or version) not found", ErrorEnvelope)}
FLOW = {200: answer("The flow definition", FlowEnvelope)}
FLOW_CONFLICT = {409: answer("Concurrent pushes kept winning: the message names the version that won", ErrorEnvelope)}
FlowBody = Annotated[dict[str, Any], Body(description="A flow definition (docs/controller.md)")]
# ``validate`` is the path of POST …/validate, not a flow id: GET and PUT on it are refused rather
# than read or store a flow of that name (the document lists POST only for that path).
VALIDATE = "validate"


@router.post(
    f"{FLOWS}/validate",
    responses={
        200: answer("Whether the definition is valid, with every problem", FlowValidationEnvelope),
        **BAD_REQUEST,
    },
)
def validate_flow(definition: FlowBody) -> Response[dict[str, Any]]:
    valid, problems = flows.validate_flow(definition)
    return envelope(200, result={"valid": valid, "problems": flows.problems_json(problems)})


@router.get(f"{FLOWS}/<flow_id>", responses={**FLOW, **BAD_REQUEST, **FLOW_NOT_FOUND})
def get_flow(flow_id: str, version: Annotated[int | None, Query(ge=1)] = None) -> Response[dict[str, Any]]:
    if flow_id == VALIDATE:
        return method_not_allowed("POST")
    return envelope(200, result=flows.get_flow(get_app(), flow_id, version).to_json_dict())


@router.put(f"{FLOWS}/<flow_id>", responses={**FLOW, **BAD_REQUEST, **FLOW_CONFLICT})
def put_flow(flow_id: str, definition: FlowBody) -> Response[dict[str, Any]]:
    if flow_id == VALIDATE:
        return method_not_allowed("POST")
    stored = flows.push_flow(get_app(), flow_id, definition, created_by=signing_principal(router.current_event))
    return envelope(200, message=f"Flow stored as version {stored.version}", result=stored.to_json_dict())


@router.get(
    f"{FLOWS}/<flow_id>/versions",
    responses={200: answer("The stored versions", FlowVersionsEnvelope), **FLOW_NOT_FOUND},
)
def flow_versions(flow_id: str) -> Response[dict[str, Any]]:
    versions = flows.flow_versions(get_app(), flow_id)
    return envelope(200, result={"flow_id": flow_id, "versions": [dump(v) for v in versions]})
