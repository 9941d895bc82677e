"""Model routing: the model (temperature, max tokens, base URL) of each call, by purpose.

Precedence, each level filling only what the one above leaves unset: the participant's override
(state API), the study's routes (``LLM_STUDY_ROUTES`` for ``STUDY_ID`` or the participant's study),
the purpose's route (``LLM_ROUTES``), then the ``GENAI_*`` defaults of the adapter (``None`` here).

A route may send a call only where the deployment says (``allowed``): the default endpoint (no
``base_url``) with ``GENAI_MODEL``, ``GENAI_ALLOWED_MODELS`` and the models ``LLM_ROUTES`` name, or
an endpoint of ``LLM_ENDPOINTS`` with its models (and its own key). A participant's route naming
anything else is refused when set (``check_participant_routes``: 400) and, stored before the
deployment changed, ignored with a warning at the turn (``resolve``): it is never called.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from promptpipe.config import CoreConfig
from promptpipe.errors import ValidationFailed
from promptpipe.models.llm import ChatRequest
from promptpipe.models.llm_routes import LLMRoute, endpoint_url

logger = logging.getLogger(__name__)

PURPOSES = ("intake", "feedback", "generator", "classifier", "synthesis")
# The state-data key of a participant's override: {"intake": {"model": "..."}, ...} as JSON.
PARTICIPANT_ROUTES_KEY = "llmRoutes"
STUDY_KEY = "studyId"
# Request purposes that are not route names.
_ROUTE_OF_PURPOSE = {"prompt_generator": "generator"}


def route_name(purpose: str) -> str:
    return _ROUTE_OF_PURPOSE.get(purpose, purpose)


def participant_routes(raw: dict[str, Any]) -> dict[str, LLMRoute]:
    """The override stored in a participant's state data (unreadable → none)."""
    text = raw.get(PARTICIPANT_ROUTES_KEY) or ""
    try:
        value = json.loads(text) if text else {}
        return {k: LLMRoute.model_validate(v) for k, v in value.items() if isinstance(v, dict)}
    except (ValueError, TypeError, AttributeError):
        return {}


def store_participant_routes(raw: dict[str, Any], routes: dict[str, LLMRoute]) -> None:
    """Write (or with an empty mapping, clear) a participant's override into its state data."""
    if routes:
        raw[PARTICIPANT_ROUTES_KEY] = json.dumps({k: v.model_dump(exclude_none=True) for k, v in routes.items()})
    else:
        raw.pop(PARTICIPANT_ROUTES_KEY, None)


def _level(routes: dict[str, LLMRoute], names: list[str]) -> LLMRoute | None:
    """The routes of ``names`` at one level, the first filling what the later leave unset."""
    found = [routes[name] for name in names if name in routes]
    if not found:
        return None
    combined = found[-1]
    for route in reversed(found[:-1]):
        combined = route.over(combined)
    return combined


def _deployment_route(config: CoreConfig, names: list[str], raw: dict[str, Any] | None) -> LLMRoute:
    route = _level(config.llm_routes, names) or LLMRoute()
    study = str((raw or {}).get(STUDY_KEY) or config.study_id)
    study_route = _level(config.llm_study_routes.get(study, {}), names) if study else None
    return study_route.over(route) if study_route is not None else route


def resolve(
    config: CoreConfig, purpose: str, raw: dict[str, Any] | None = None, *, turn: str | None = None
) -> LLMRoute:
    """The route of a call. ``turn``: the purpose of the turn a side call serves (the synthesis
    call of an intake turn): at each level the turn's route fills what the call's own leaves
    unset, so a participant moved to a trial model for intake gets it for the synthesis too."""
    names = [route_name(purpose), *([route_name(turn)] if turn else [])]
    route = _deployment_route(config, names, raw)
    override = _level(participant_routes(raw or {}), names)
    if override is not None:
        chosen = override.over(route)
        refusal = allowed(config).refusal(chosen, config.genai_model)
        if refusal is None:
            return chosen
        # Stored before the deployment's endpoints changed: the deployment's own route is used.
        logger.warning(
            "participant model route not allowed here; ignored", extra={"route": names[0], "reason": refusal}
        )
    return route


@dataclass(frozen=True)
class AllowedEndpoints:
    """The models each endpoint may be asked for: ``None`` is the default endpoint."""

    models: dict[str | None, frozenset[str]]

    def refusal(self, route: LLMRoute, default_model: str) -> str | None:
        """Why ``route`` (resolved) may not be called, or ``None`` when it may."""
        url = endpoint_url(route.base_url) if route.base_url else None
        if url not in self.models:
            return f"base_url {route.base_url!r} is not an endpoint of this deployment"
        model = route.model or default_model
        if model not in self.models[url]:
            where = "the default endpoint" if url is None else url
            return f"model {model!r} is not allowed at {where}"
        return None

    def describe(self) -> str:
        parts = []
        for url, models in sorted(self.models.items(), key=lambda item: (item[0] is not None, item[0] or "")):
            where = "the default endpoint (no base_url)" if url is None else url
            parts.append(f"{where} with model {', '.join(sorted(models))}")
        return "; ".join(parts)


def allowed(config: CoreConfig) -> AllowedEndpoints:
    routes = [*config.llm_routes.values(), *(r for rs in config.llm_study_routes.values() for r in rs.values())]
    default = {config.genai_model, *config.genai_allowed_models}
    default |= {r.model for r in routes if r.model and not r.base_url}
    models: dict[str | None, frozenset[str]] = {None: frozenset(default)}
    for endpoint in config.llm_endpoints.values():
        models[endpoint.url] = frozenset(endpoint.models)
    return AllowedEndpoints(models)


def check_participant_routes(config: CoreConfig, routes: dict[str, LLMRoute], raw: dict[str, Any]) -> None:
    """``ValidationFailed`` (400) naming the allowed endpoints and models when a route, over the
    deployment's route for its purpose, would call anything else."""
    policy = allowed(config)
    problems = []
    for name, route in sorted(routes.items()):
        refusal = policy.refusal(route.over(_deployment_route(config, [name], raw)), config.genai_model)
        if refusal is not None:
            problems.append(f"llm_routes.{name}: {refusal}")
    if problems:
        raise ValidationFailed("; ".join(problems) + "; allowed: " + policy.describe(), field="llm_routes")


def routed(request: ChatRequest, route: LLMRoute) -> ChatRequest:
    """``request`` with the route's fields where the request leaves them unset."""
    update: dict[str, Any] = {}
    for name in ("model", "temperature", "max_tokens", "base_url"):
        if getattr(request, name) is None and getattr(route, name) is not None:
            update[name] = getattr(route, name)
    return request.model_copy(update=update) if update else request
