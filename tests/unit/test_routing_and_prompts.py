"""Model routing per purpose / study / participant, the OpenAI request it produces, and the prompt
library's store with its TTL cache."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from promptpipe.adapters.openai_llm import OpenAILLM
from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.flow import routing
from promptpipe.flow.prompts import PromptLibrary, prompt_files, text_version
from promptpipe.models.api import StateOverride
from promptpipe.models.llm import ChatMessage, ChatRequest
from promptpipe.models.llm_routes import LLMRoute
from promptpipe.settings import Settings
from promptpipe.usecases.participants import override_state
from tests.support import memory_harness

ROUTES = {
    "intake": {"model": "intake-model", "temperature": 0.3},
    "generator": {"model": "gen-model", "max_tokens": 120},
}


def test_route_precedence_participant_then_study_then_purpose() -> None:
    settings = Settings(
        llm_routes=ROUTES,
        llm_study_routes={"pilot": {"intake": {"model": "pilot-model"}}},
        study_id="pilot",
        llm_endpoints={"local": {"base_url": "http://local:8080/v1", "models": ["vip"], "secret_name": "local-key"}},
    )
    assert routing.resolve(settings, "intake") == LLMRoute(model="pilot-model", temperature=0.3)
    raw: dict[str, str] = {}
    routing.store_participant_routes(raw, {"intake": LLMRoute(model="vip", base_url="http://local:8080/v1")})
    route = routing.resolve(settings, "intake", raw)
    assert (route.model, route.temperature, route.base_url) == ("vip", 0.3, "http://local:8080/v1")
    assert routing.resolve(settings, "prompt_generator").model == "gen-model"  # request purpose → route name
    assert routing.resolve(settings, "feedback") == LLMRoute()  # GENAI_* defaults apply
    routing.store_participant_routes(raw, {})
    assert routing.PARTICIPANT_ROUTES_KEY not in raw


def test_routes_are_read_as_json_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_ROUTES", '{"classifier": {"model": "small", "max_tokens": 60}}')
    monkeypatch.setenv("LLM_STUDY_ROUTES", '{"pilot": {"intake": {"model": "pilot-model"}}}')
    settings = Settings()
    assert settings.llm_routes == {"classifier": LLMRoute(model="small", max_tokens=60)}
    assert settings.llm_study_routes == {"pilot": {"intake": LLMRoute(model="pilot-model")}}
    monkeypatch.setenv("LLM_ROUTES", "not json")
    with pytest.raises(ValueError, match="llm_routes"):
        Settings()


def test_routed_request_keeps_what_the_request_set() -> None:
    request = ChatRequest(messages=[], max_tokens=60)
    out = routing.routed(request, LLMRoute(model="m", max_tokens=500, temperature=0.2))
    assert (out.model, out.max_tokens, out.temperature) == ("m", 60, 0.2)


def test_turn_and_generator_calls_use_their_routes() -> None:
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("generate_habit_prompt", {"delivery_mode": "immediate"}),
            ScriptedLLM.text("Stretch after coffee."),
            ScriptedLLM.text("Try it!"),
        ]
    )
    h = memory_harness(llm, settings=Settings(llm_routes=ROUTES))
    p = h.enroll()
    h.store.flows[p.id].state_data["userProfile"] = '{"prompt_anchor": "after coffee", "preferred_time": "09:30"}'
    from tests.unit.test_pipeline import turn

    outcome = turn(h, p, "give me a prompt now")
    assert [(r.purpose, r.model) for r in llm.requests] == [
        ("intake", "intake-model"),
        ("prompt_generator", "gen-model"),
        ("intake", "intake-model"),
    ]
    assert llm.requests[1].max_tokens == 120 and llm.requests[0].temperature == 0.3
    assert outcome.turn.audit["llm_calls"][1]["purpose"] == "prompt_generator"


def test_state_override_accepts_routes_per_purpose_only() -> None:
    body = StateOverride(llm_routes={"intake": {"model": "x"}}, reason="trial")
    assert body.llm_routes == {"intake": LLMRoute(model="x")}
    with pytest.raises(
        ValueError, match="Input should be 'intake', 'feedback', 'generator', 'classifier' or 'synthesis'"
    ):
        StateOverride(llm_routes={"chitchat": {"model": "x"}}, reason="trial")


# --- the OpenAI request --------------------------------------------------------------------------
def llm() -> OpenAILLM:
    return OpenAILLM(api_key="test", model="gpt-4o-mini", temperature=0.1, max_tokens=1000)


def test_reasoning_models_get_max_completion_tokens_and_no_temperature() -> None:
    kwargs = llm()._request_kwargs(ChatRequest(messages=[ChatMessage(role="user", content="hi")], model="o3-mini"))
    assert kwargs["max_completion_tokens"] == 1000 and "max_tokens" not in kwargs and "temperature" not in kwargs
    plain = llm()._request_kwargs(ChatRequest(messages=[ChatMessage(role="user", content="hi")]))
    assert plain["max_tokens"] == 1000 and plain["temperature"] == 0.1


def test_tool_choice_parallel_calls_and_json_mode_are_passed_through() -> None:
    from promptpipe.flow.tools.state_transition import StateTransitionTool

    request = ChatRequest(
        messages=[ChatMessage(role="user", content="hi")],
        tools=[StateTransitionTool().definition],
        tool_choice="required",
        parallel_tool_calls=True,
    )
    kwargs = llm()._request_kwargs(request)
    assert (kwargs["tool_choice"], kwargs["parallel_tool_calls"]) == ("required", True)
    json_mode = ChatRequest(messages=[], response_format={"type": "json_object"})
    assert llm()._request_kwargs(json_mode)["response_format"] == {"type": "json_object"}


def test_cached_tokens_are_read_from_the_usage() -> None:
    usage = SimpleNamespace(
        prompt_tokens=1500, completion_tokens=20, prompt_tokens_details=SimpleNamespace(cached_tokens=1280)
    )
    message = SimpleNamespace(content="hi", tool_calls=None)
    completion = SimpleNamespace(
        choices=[SimpleNamespace(message=message, finish_reason="stop")], usage=usage, model="m"
    )
    response = llm()._to_response(completion, request_model="m", latency_ms=1.0)
    assert response.usage.cached_tokens == 1280
    usage.prompt_tokens_details = None
    assert llm()._to_response(completion, request_model="m", latency_ms=1.0).usage.cached_tokens == 0


# --- the prompt library --------------------------------------------------------------------------
class FakeStore:
    def __init__(self) -> None:
        self.items: dict[str, str] = {}
        self.fetches = 0
        self.fail = False

    def fetch(self, name: str) -> str | None:
        self.fetches += 1
        if self.fail:
            raise ConnectionError("store down")
        return self.items.get(name)

    def push(self, name: str, text: str) -> str:
        self.items[name] = text
        return "1"


def test_store_prompt_is_cached_for_the_ttl_then_reloaded() -> None:
    now = [0.0]
    store = FakeStore()
    store.items["intake"] = "You are the v2 coach."
    library = PromptLibrary(prompt_files(Settings()), store=store, ttl=300, now=lambda: now[0])
    first = library.get("intake")
    assert (first.text, first.source) == ("You are the v2 coach.", "store")
    assert first.version == f"store:{text_version('You are the v2 coach.')}"
    store.items["intake"] = "You are the v3 coach."
    now[0] = 299
    assert library.get("intake").text == "You are the v2 coach." and store.fetches == 1
    now[0] = 301
    assert library.get("intake").text == "You are the v3 coach." and store.fetches == 2


def test_missing_or_failing_store_falls_back_to_the_file() -> None:
    store = FakeStore()
    library = PromptLibrary(prompt_files(Settings()), store=store, ttl=0)
    assert library.get("feedback").source == "file"
    store.fail = True
    assert library.get("intake").source == "file"
    assert PromptLibrary({}, store=None).get("classifier").source == "builtin"


def test_the_built_in_coach_prompts_name_the_tools_of_the_table() -> None:
    """Without its file, the intake prompt is the built-in one, naming the table's tools (built at
    that first use, so that the scheduled prompt never loads the tool table)."""
    from promptpipe.controller.tool_table import HABIT_PROMPT, PROFILE, SCHEDULER, TRANSITION

    library = PromptLibrary({}, store=None)
    intake, feedback = library.get("intake"), library.get("feedback")
    assert (intake.source, feedback.source) == ("builtin", "builtin")
    assert all(row.name in intake.text for row in (PROFILE, HABIT_PROMPT, SCHEDULER, TRANSITION))
    assert PROFILE.name in feedback.text and TRANSITION.name in feedback.text


def test_ssm_store_push_fetch_and_cli(monkeypatch, capsys) -> None:
    moto = pytest.importorskip("moto")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    import boto3

    from promptpipe.adapters.prompt_store import SSMPromptStore
    from promptpipe.cli import commands as cli
    from promptpipe.settings import set_settings

    with moto.mock_aws():
        client = boto3.client("ssm", region_name="us-east-1")
        store = SSMPromptStore("/test/prompts", client, max_age=0)
        assert store.fetch("intake") is None
        assert store.push("intake", "hello") == "1" and store.fetch("intake") == "hello"
        set_settings(Settings(prompt_store_prefix="/cli/prompts", aws_region="us-east-1"))
        try:
            assert cli.main(["prompts", "diff", "synthesis"]) == 1
            assert cli.main(["prompts", "push", "synthesis"]) == 0
            assert cli.main(["prompts", "diff", "synthesis"]) == 0
            assert cli.main(["prompts", "push", "synthesis"]) == 0
        finally:
            set_settings(None)
        out = capsys.readouterr().out
        assert "pushed /cli/prompts/synthesis version 1" in out and "synthesis: unchanged" in out
        assert "store and file agree" in out


def test_a_participants_routes_set_through_the_override_route_the_next_turn() -> None:
    # Given a participant whose operator routes their intake to a trial model
    llm = ScriptedLLM([ScriptedLLM.text("Hello!"), ScriptedLLM.text("Hello again!")])
    h = memory_harness(llm, settings=Settings(genai_allowed_models=["trial-model"]))
    p = h.enroll()
    view = override_state(h.app, p.id, StateOverride(llm_routes={"intake": {"model": "trial-model"}}, reason="trial"))
    assert view.version == 1
    from tests.unit.test_pipeline import turn

    # When they write / Then the turn's model call uses the participant's route
    turn(h, p, "hi")
    assert [(r.purpose, r.model) for r in llm.requests] == [("intake", "trial-model")]
    # And an empty mapping clears it again
    override_state(h.app, p.id, StateOverride(llm_routes={}, reason="trial over"))
    turn(h, p, "hi again")
    assert llm.requests[-1].model != "trial-model"
