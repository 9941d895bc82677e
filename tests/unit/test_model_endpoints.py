"""Where a model route may send a call: the deployment's endpoints and models only (settings, the
check of a participant's override, and the warning when a stored one is no longer allowed)."""

from __future__ import annotations

import logging

import pytest

from promptpipe.config import CoreConfig
from promptpipe.errors import ValidationFailed
from promptpipe.flow import routing
from promptpipe.models.llm_routes import LLMRoute
from promptpipe.settings import Settings

STUDY = {"base_url": "https://llm.example.org/v1", "models": ["study-model"], "secret_name": "pp/study"}


def config(**values: object) -> CoreConfig:
    return CoreConfig.from_settings(Settings.model_validate(values))


def test_endpoints_and_allowed_models_are_read_as_json_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "LLM_ENDPOINTS",
        '{"study": {"base_url": "https://llm.example.org/v1", "models": ["m"], "secret_name": "pp/study"}}',
    )
    monkeypatch.setenv("GENAI_ALLOWED_MODELS", '["gpt-4.1-mini"]')
    settings = Settings()
    assert settings.llm_endpoints["study"].url == "https://llm.example.org/v1"
    assert settings.genai_allowed_models == ["gpt-4.1-mini"]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"llm_routes": {"classifier": {"base_url": "https://other.example/v1", "model": "m"}}}, "not an endpoint"),
        ({"llm_routes": {"intake": {"base_url": STUDY["base_url"], "model": "gpt-4o"}}}, "name one of the models"),
        ({"llm_routes": {"intake": {"base_url": STUDY["base_url"] + "/"}}}, "name one of the models"),
        ({"llm_study_routes": {"p": {"intake": {"base_url": "https://x.example/v1"}}}}, "llm_study_routes.p.intake"),
        ({"llm_endpoints": {"a": STUDY, "b": {**STUDY, "base_url": STUDY["base_url"] + "/"}}}, "same base_url"),
    ],
    ids=["unlisted-endpoint", "unlisted-model", "default-model-elsewhere", "study-route", "same-url-twice"],
)
def test_the_deployments_own_routes_name_only_its_endpoints(values: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Settings.model_validate({"llm_endpoints": {"study": STUDY}, **values})


def test_a_participant_may_name_the_default_endpoint_with_its_models_or_a_listed_one_with_its_own() -> None:
    allowed = config(
        llm_endpoints={"study": STUDY},
        genai_allowed_models=["gpt-4.1-mini"],
        llm_routes={"classifier": {"model": "small"}},
    )
    for route in (
        LLMRoute(model="gpt-4o-mini"),  # GENAI_MODEL
        LLMRoute(model="gpt-4.1-mini"),  # GENAI_ALLOWED_MODELS
        LLMRoute(model="small"),  # named by the deployment's own route
        LLMRoute(temperature=0.5),  # the default model
        LLMRoute(base_url=STUDY["base_url"] + "/", model="study-model"),
    ):
        routing.check_participant_routes(allowed, {"intake": route}, {})


def test_a_refused_route_names_every_allowed_endpoint_and_model() -> None:
    allowed = config(llm_endpoints={"study": STUDY}, genai_allowed_models=["gpt-4.1-mini"])
    routes = {
        "intake": LLMRoute(base_url="http://attacker.example/v1"),
        "feedback": LLMRoute(base_url=STUDY["base_url"]),  # GENAI_MODEL is not served there
    }
    with pytest.raises(ValidationFailed) as refused:
        routing.check_participant_routes(allowed, routes, {})
    assert str(refused.value) == (
        f"llm_routes.feedback: model 'gpt-4o-mini' is not allowed at {STUDY['base_url']}; "
        "llm_routes.intake: base_url 'http://attacker.example/v1' is not an endpoint of this deployment; "
        "allowed: the default endpoint (no base_url) with model gpt-4.1-mini, gpt-4o-mini; "
        f"{STUDY['base_url']} with model study-model"
    )
    assert refused.value.field == "llm_routes"


def test_a_study_route_fills_what_the_override_leaves_before_the_check() -> None:
    # The study routes intake to the listed endpoint; an override of the temperature alone stays there
    allowed = config(
        llm_endpoints={"study": STUDY},
        llm_study_routes={"pilot": {"intake": {"base_url": STUDY["base_url"], "model": "study-model"}}},
    )
    routing.check_participant_routes(allowed, {"intake": LLMRoute(temperature=0.2)}, {"studyId": "pilot"})
    resolved = routing.resolve(allowed, "intake", {"studyId": "pilot"})
    assert (resolved.base_url, resolved.model) == (STUDY["base_url"], "study-model")


def test_a_stored_route_no_longer_allowed_is_ignored_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    raw: dict[str, str] = {}
    routing.store_participant_routes(raw, {"intake": LLMRoute(base_url="http://gone.example/v1", model="m")})
    with caplog.at_level(logging.WARNING, logger="promptpipe.flow.routing"):
        route = routing.resolve(config(llm_routes={"intake": {"temperature": 0.3}}), "intake", raw)
    assert route == LLMRoute(temperature=0.3)  # the deployment's route, as if no override were stored
    assert [r.getMessage() for r in caplog.records] == ["participant model route not allowed here; ignored"]
