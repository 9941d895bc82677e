"""A study's own settings over the deployment's (docs/studies.md, "Per-study settings"): a
participant in the study gets the study's help text and contact, its safety resources and its
model budget, and the cost figures use its prices; a participant outside it (a test participant)
gets the deployment's."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.errors import ValidationFailed
from promptpipe.flow.study_settings import config_for, model_prices
from promptpipe.models.api import ParticipantUpdate
from promptpipe.models.messaging import InboundMessage
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.study import StudyDefinition
from promptpipe.rules.model_prices import PRICES
from promptpipe.settings import Settings
from promptpipe.usecases.outcome_metrics import outcome_metrics
from promptpipe.usecases.outcomes import EventOutcome
from promptpipe.usecases.participants import update_participant
from promptpipe.usecases.receive_text import receive_text
from promptpipe.usecases.studies import parse_study, with_study
from promptpipe.wiring import _study_facts
from tests.support import MemoryHarness, memory_harness, turn

STUDY_HELP = "{study} (sleep arm): questions? Write to {contact}. Reply STOP to end."
STUDY_RESOURCES = "the campus crisis line, 555-0100, any hour"


def own_study(**settings: Any) -> StudyDefinition:
    return StudyDefinition.model_validate(
        {
            "id": "sleep",
            "name": "Sleep study",
            "duration_days": 28,
            "closing_message": "Thanks!",
            "settings": {
                "help_text": STUDY_HELP,
                "contact": "sleep-lab@example.edu",
                "safety_resources": STUDY_RESOURCES,
                **settings,
            },
        }
    )


def harness(study: StudyDefinition, llm: ScriptedLLM | None = None, **settings: Any) -> MemoryHarness:
    defaults = {"study_name": "Walk Study", "study_contact": "walk@example.edu", **settings}
    h = memory_harness(llm or ScriptedLLM(), settings=Settings(**defaults))
    with_study(h.app, study)
    return h


def two(h: MemoryHarness) -> tuple[ConversationParticipant, ConversationParticipant]:
    """A participant in the study, and a staff phone kept out of it (a test participant)."""
    inside = h.enroll("+14155550101")
    outside = h.enroll("+14155550102")
    update_participant(h.app, outside.id, ParticipantUpdate(test_participant=True))
    return inside, h.store.participants[outside.id]


def ask_help(h: MemoryHarness, participant: ConversationParticipant, msg_id: str) -> str:
    message = InboundMessage(
        provider="twilio",
        provider_message_id=msg_id,
        from_phone=participant.phone_number,
        body="HELP",
        received_at=h.clock.now(),
    )
    assert receive_text(h.app, message).action == "help"
    return h.outbox.messages(participant.id)[-1].body


def test_a_participant_in_the_study_gets_its_help_text_and_contact_one_outside_the_deployments() -> None:
    h = harness(own_study())
    inside, outside = two(h)
    assert ask_help(h, inside, "SM-1") == (
        "Walk Study (sleep arm): questions? Write to sleep-lab@example.edu. Reply STOP to end."
    )
    default = ask_help(h, outside, "SM-2")
    assert default.startswith("Walk Study:") and "walk@example.edu" in default and "sleep" not in default


def test_the_study_help_text_is_used_in_every_language() -> None:
    h = harness(own_study())
    inside = h.enroll("+14155550101", language="es")
    assert "sleep-lab@example.edu" in ask_help(h, inside, "SM-1") and "(sleep arm)" in ask_help(h, inside, "SM-2")


def test_a_study_setting_left_unset_keeps_the_deployments() -> None:
    h = harness(own_study(help_text=None, contact=None))
    inside, _ = two(h)
    reply = ask_help(h, inside, "SM-1")
    assert reply.startswith("Walk Study:") and "walk@example.edu" in reply


def test_the_crisis_reply_names_the_studys_resources_for_a_participant_in_it() -> None:
    h = harness(own_study())
    inside, outside = two(h)
    inside_reply = turn(h, inside, "i want to end it all").turn
    outside_reply = turn(h, outside, "i want to end it all").turn
    assert inside_reply is not None and inside_reply.reply is not None
    assert STUDY_RESOURCES in inside_reply.reply and "988" not in inside_reply.reply
    assert outside_reply is not None and outside_reply.reply is not None
    assert "988" in outside_reply.reply and STUDY_RESOURCES not in outside_reply.reply


def test_the_studys_model_budget_applies_to_its_participants() -> None:
    llm = ScriptedLLM([ScriptedLLM.text(f"answer {n}") for n in range(10)])
    h = harness(own_study(budget_model_calls_per_day=1), llm, budget_model_calls_per_day=5)
    inside, outside = two(h)
    turn(h, inside, "one")
    over = turn(h, inside, "two")
    assert over.turn is not None and over.turn.audit == {"skipped": "over budget"}
    for text in ("one", "two", "three"):  # the deployment's 5 a day
        done = turn(h, outside, text)
        assert done.turn is not None and done.turn.audit.get("skipped") is None
    assert llm.calls == 4


def test_config_for_reads_each_study_setting_through_the_one_reader() -> None:
    h = harness(own_study(budget_model_calls_per_hour=3, budget_input_chars_per_day=900))
    inside, outside = two(h)
    mine = config_for(h.app.deps.config, h.app.deps.study, inside)
    assert (mine.study_contact, mine.budget_model_calls_per_hour, mine.budget_input_chars_per_day) == (
        "sleep-lab@example.edu",
        3,
        900,
    )
    assert mine.budget_model_calls_per_day == h.app.deps.config.budget_model_calls_per_day  # not set: the default
    assert config_for(h.app.deps.config, h.app.deps.study, outside) is h.app.deps.config
    assert config_for(h.app.deps.config, None, inside) is h.app.deps.config


def test_the_cost_figures_use_the_studys_prices() -> None:
    prices = model_prices(own_study(prices={"GPT-4o-mini": (1.0, 2.0)}))
    assert prices is not None and prices["gpt-4o"] == PRICES["gpt-4o"]
    assert model_prices(own_study()) is None and model_prices(None) is None
    call = {"model": "gpt-4o-mini", "latency_ms": 5, "prompt_tokens": 1_000_000, "completion_tokens": 1_000_000}
    outcome = EventOutcome(participant_id="p", event_id="e")
    outcome.turn = dataclasses.replace(_turn(), audit={"llm_calls": [call]})

    def cost(points: list[Any]) -> float:
        [usd] = [m.value for m in points if m.name == "ModelCostUSD"]
        return float(usd)

    assert cost(outcome_metrics(outcome, prices)) == pytest.approx(3.0)  # 1 M in at $1, 1 M out at $2
    assert cost(outcome_metrics(outcome)) == pytest.approx(0.15 + 0.60)  # the list price


def _turn() -> Any:
    from promptpipe.flow.conversation import TurnResult

    return TurnResult(module="feedback", reply=None)


def test_the_offline_coach_is_given_the_studys_contact_from_outside() -> None:
    settings = Settings(study_contact="walk@example.edu", study_team="the walk lab")
    facts = _study_facts(settings, own_study())
    assert (facts.contact, facts.team) == ("sleep-lab@example.edu", "the walk lab")
    assert _study_facts(settings, None).contact == "walk@example.edu"


@pytest.mark.parametrize(
    ("field", "says"),
    [("budget_daily_usd", "studyDailySpendCapUsd"), ("budget_per_participant_daily_usd", "budget_model_calls_per_day")],
)
def test_a_usd_budget_the_engine_does_not_enforce_is_refused_with_what_to_set(field: str, says: str) -> None:
    document = own_study().model_dump(mode="json")
    document["settings"][field] = 5.0
    with pytest.raises(ValidationFailed, match=says):
        parse_study(__import__("json").dumps(document))


def test_the_consoles_cost_estimate_prices_at_the_studys_prices() -> None:
    from datetime import UTC, datetime
    from zoneinfo import ZoneInfo

    from promptpipe.console.delivery import CostPrices, cost_by_day
    from tests.support import priced_reply

    priced = priced_reply(datetime(2026, 3, 2, 14, tzinfo=UTC), segments=2)
    study = own_study(prices={"gpt-4o-mini": (1.0, 2.0)}, sms_segment_usd=0.05)
    [day] = cost_by_day([priced], ZoneInfo("UTC"), CostPrices.of(study))
    assert (day.model_usd, day.messages_usd) == (pytest.approx(1.0), pytest.approx(0.10))
    [listed] = cost_by_day([priced], ZoneInfo("UTC"), CostPrices.of(None))
    assert (listed.model_usd, listed.messages_usd) == (pytest.approx(0.15), pytest.approx(2 * 0.0083))
