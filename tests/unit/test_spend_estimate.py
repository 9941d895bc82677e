"""The cost estimate behind the study's spend cap, from the one price table (rules/model_prices.py)."""

from __future__ import annotations

import pytest

from promptpipe.rules.model_prices import PRICES, ModelPrice, cost_usd, price_of


def test_a_call_costs_its_uncached_input_cached_input_and_output_at_their_prices() -> None:
    # gpt-4o-mini: 0.15 in, 0.075 cached in, 0.60 out per 1M tokens
    assert cost_usd("gpt-4o-mini", 1_000_000, 0) == pytest.approx(0.15)
    assert cost_usd("gpt-4o-mini", 0, 1_000_000) == pytest.approx(0.60)
    assert cost_usd("gpt-4o-mini", 1_000_000, 0, cached_tokens=1_000_000) == pytest.approx(0.075)
    assert cost_usd("gpt-4o-mini", 3000, 200, cached_tokens=1000) == pytest.approx(
        (2000 * 0.15 + 1000 * 0.075 + 200 * 0.60) / 1_000_000
    )


def test_cached_tokens_beyond_the_prompt_are_not_a_discount() -> None:
    assert cost_usd("gpt-4o", 100, 0, cached_tokens=500) == pytest.approx(100 * 1.25 / 1_000_000)
    assert cost_usd("gpt-4o", 100, 0, cached_tokens=-5) == pytest.approx(100 * 2.50 / 1_000_000)


def test_a_dated_snapshot_is_priced_as_its_model_and_an_unknown_model_has_no_price() -> None:
    assert price_of("gpt-4o-mini-2024-07-18") == PRICES["gpt-4o-mini"]
    assert price_of(" GPT-4o ") == PRICES["gpt-4o"]
    assert price_of("scripted") is None and cost_usd("llama-3-70b", 10, 10) is None


def test_every_listed_price_is_positive_and_cached_input_is_never_dearer_than_input() -> None:
    for price in PRICES.values():
        assert isinstance(price, ModelPrice)
        assert 0 < price.cached_input_per_million <= price.input_per_million and price.output_per_million > 0


def test_each_turn_call_publishes_its_estimated_cost_or_counts_as_unpriced() -> None:
    from promptpipe.flow.conversation import TurnResult
    from promptpipe.usecases.outcome_metrics import outcome_metrics
    from promptpipe.usecases.outcomes import EventOutcome

    calls = [
        {"model": "gpt-4o-mini", "prompt_tokens": 2000, "completion_tokens": 100, "cached_tokens": 0, "latency_ms": 5},
        {"model": "in-house", "prompt_tokens": 10, "completion_tokens": 10, "latency_ms": 5},
    ]
    outcome = EventOutcome(participant_id="p_" + "1" * 32, event_id="e1")
    outcome.turn = TurnResult(module="intake", reply="hi", audit={"llm_calls": calls})
    points = {m.name: m.value for m in outcome_metrics(outcome)}
    assert points["ModelCostUSD"] == pytest.approx((2000 * 0.15 + 100 * 0.60) / 1_000_000)
    assert points["LLMCallsUnpriced"] == 1


def test_the_daily_prompts_generator_call_counts_towards_the_spend_too() -> None:
    from promptpipe.flow.delivery import DeliveryResult
    from promptpipe.usecases.outcome_metrics import outcome_metrics
    from promptpipe.usecases.outcomes import EventOutcome

    call = {"model": "gpt-4o-mini", "prompt_tokens": 1000, "completion_tokens": 50, "latency_ms": 3}
    outcome = EventOutcome(participant_id="p_" + "1" * 32, event_id="e2")
    outcome.delivery = DeliveryResult(True, prompt="Walk after coffee", llm_calls=[call])
    points = [m for m in outcome_metrics(outcome) if m.name == "ModelCostUSD"]
    assert [m.value for m in points] == [pytest.approx((1000 * 0.15 + 50 * 0.60) / 1_000_000)]
