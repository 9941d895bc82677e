"""The flow definitions the participants API manages (docs/controller.md): validate one, read one
(latest or a version), push one as a new version, list the versions.

The catalog is the flow deps' (``FlowDeps.flows``); the controller is imported by the call that
needs it, not by the API at every cold start (docs/benchmarks.md, section 2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from promptpipe.errors import ConfigurationError
from promptpipe.usecases.context import AppContext

if TYPE_CHECKING:
    from promptpipe.controller.catalog import FlowCatalog
    from promptpipe.controller.definition import FlowDefinition
    from promptpipe.controller.ports import FlowVersionInfo
    from promptpipe.controller.problems import Problem


def _catalog(app: AppContext) -> FlowCatalog:
    flows = app.deps.flows
    if flows is None:
        raise ConfigurationError("the flow catalog is not configured")
    return flows


def problems_json(problems: list[Problem]) -> list[dict[str, str]]:
    return [p.model_dump() for p in problems]


def validate_flow(definition: dict[str, Any]) -> tuple[bool, list[Problem]]:
    """Whether ``definition`` is a valid flow, with every problem (nothing stored)."""
    from promptpipe.controller.catalog import FlowCatalog

    parsed, problems = FlowCatalog.validate(definition)
    return parsed is not None, problems


def get_flow(app: AppContext, flow_id: str, version: int | None = None) -> FlowDefinition:
    """The latest version of ``flow_id``, or ``version`` of it (``FlowNotFound`` if none)."""
    flows = _catalog(app)
    return flows.latest(flow_id) if version is None else flows.get(flow_id, version)


def push_flow(app: AppContext, flow_id: str, definition: dict[str, Any], *, created_by: str) -> FlowDefinition:
    """Store ``definition`` as the next version of ``flow_id`` (``DefinitionInvalid``,
    ``FlowPushConflict`` as the catalog raises them)."""
    return _catalog(app).push(definition, flow_id=flow_id, created_by=created_by)


def flow_versions(app: AppContext, flow_id: str) -> list[FlowVersionInfo]:
    return _catalog(app).versions(flow_id)
