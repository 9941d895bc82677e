"""The synthesis call runs on the turn's model route (docs/pipeline.md, "Model routing")."""

from __future__ import annotations

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.config import CoreConfig
from promptpipe.flow import routing
from promptpipe.models.api import StateOverride
from promptpipe.models.llm_routes import LLMRoute
from promptpipe.settings import Settings
from promptpipe.usecases.participants import override_state
from tests.support import memory_harness
from tests.unit.test_pipeline import failing_schedule, turn


def test_a_participant_on_a_trial_model_gets_it_for_the_synthesis_too() -> None:
    # Given a participant routed to a trial model for intake, and a turn whose tools keep failing
    llm = ScriptedLLM([failing_schedule() for _ in range(4)] + [ScriptedLLM.text("I couldn't set it yet.")])
    h = memory_harness(llm, settings=Settings(genai_allowed_models=["trial-model"]))
    p = h.enroll()
    override_state(h.app, p.id, StateOverride(llm_routes={"intake": {"model": "trial-model"}}, reason="trial"))
    outcome = turn(h, p, "Please move my reminder to 8pm")
    # Then the synthesis call that writes the reply uses the trial model as well
    assert [(r.purpose, r.model) for r in llm.requests][-1] == ("synthesis", "trial-model")
    assert {r.model for r in llm.requests} == {"trial-model"}
    assert outcome.turn.audit["pipeline"]["synthesised"]


def test_a_synthesis_route_still_wins_at_its_level() -> None:
    settings = Settings(
        llm_routes={"synthesis": {"model": "small", "max_tokens": 200}, "intake": {"model": "big"}},
        genai_allowed_models=["trial"],
    )
    config = CoreConfig.from_settings(settings)
    assert routing.resolve(config, "synthesis", {}, turn="intake") == LLMRoute(model="small", max_tokens=200)
    raw: dict[str, str] = {}
    routing.store_participant_routes(raw, {"intake": LLMRoute(model="trial", temperature=0.2)})
    # the participant's route (a level above the study's and the purpose's) applies to the side call
    assert routing.resolve(config, "synthesis", raw, turn="intake") == LLMRoute(
        model="trial", temperature=0.2, max_tokens=200
    )
    assert routing.resolve(config, "synthesis", {}) == LLMRoute(model="small", max_tokens=200)
