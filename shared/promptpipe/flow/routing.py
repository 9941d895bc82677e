"""Model routing: the model (temperature, max tokens, base URL) of each call, by purpose.

Precedence, each level filling only what the one above leaves unset: the participant's override
(state API), the study's routes (``LLM_STUDY_ROUTES`` for ``STUDY_ID`` or the participant's study),
the purpose's route (``LLM_ROUTES``), then the ``GENAI_*`` defaults of the adapter (``None`` here).
"""

from __future__ import annotations

import json
from typing import Any

from promptpipe.config import CoreConfig
from promptpipe.models.llm import ChatRequest, LLMRoute

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


def resolve(
    config: CoreConfig, purpose: str, raw: dict[str, Any] | None = None, *, turn: str | None = None
) -> LLMRoute:
    """The route of a call. ``turn``: the purpose of the turn a side call serves (the synthesis
    call of an intake turn): at each level the turn's route fills what the call's own leaves
    unset, so a participant moved to a trial model for intake gets it for the synthesis too."""
    names = [route_name(purpose), *([route_name(turn)] if turn else [])]

    def level(routes: dict[str, LLMRoute]) -> LLMRoute | None:
        found = [routes[name] for name in names if name in routes]
        if not found:
            return None
        combined = found[-1]
        for route in reversed(found[:-1]):
            combined = route.over(combined)
        return combined

    route = level(config.llm_routes) or LLMRoute()
    study = str((raw or {}).get(STUDY_KEY) or config.study_id)
    study_route = level(config.llm_study_routes.get(study, {})) if study else None
    if study_route is not None:
        route = study_route.over(route)
    override = level(participant_routes(raw or {}))
    if override is not None:
        route = override.over(route)
    return route


def routed(request: ChatRequest, route: LLMRoute) -> ChatRequest:
    """``request`` with the route's fields where the request leaves them unset."""
    update: dict[str, Any] = {}
    for name in ("model", "temperature", "max_tokens", "base_url"):
        if getattr(request, name) is None and getattr(route, name) is not None:
            update[name] = getattr(route, name)
    return request.model_copy(update=update) if update else request
