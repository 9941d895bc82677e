"""The price table (``promptpipe.rules.model_prices``): a model is priced at its own list price, a dated
snapshot at its model's, an unknown model at none (never silently at gpt-4o-mini's); and the cost of a
usage splits cached from uncached prompt tokens."""

from __future__ import annotations

import pytest

from promptpipe.rules.model_prices import DEFAULT_MODEL, PRICES, ModelPrice, custom_price, price_of
from scripts.bench.cost_model import llm_month
from scripts.bench.tokens import LLM_CACHED_INPUT_TOKEN, LLM_INPUT_TOKEN, LLM_OUTPUT_TOKEN, Measured, SimulationLLM


@pytest.mark.parametrize(
    ("model", "listed"),
    [
        ("gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o", "gpt-4o"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),  # a snapshot: not gpt-4o's price, the longer name wins
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("openai/gpt-4.1-mini", "gpt-4.1-mini"),
        (" GPT-5-Nano ", "gpt-5-nano"),
    ],
)
def test_a_model_is_priced_at_its_own_list_price(model: str, listed: str) -> None:
    assert price_of(model) is PRICES[listed]


@pytest.mark.parametrize("model", ["llama-3.1-8b", "gpt-4o-minimal", "gpt-4o-mini-fast", ""])
def test_an_unknown_model_has_no_price(model: str) -> None:
    assert price_of(model) is None


def test_the_default_model_matches_the_token_benchmark() -> None:
    # scripts/bench/tokens.py prices its budget figures at gpt-4o-mini: one price for both
    default = PRICES[DEFAULT_MODEL]
    assert default.cost(1_000_000, 0, 0) == pytest.approx(LLM_INPUT_TOKEN * 1e6)
    assert default.cost(1_000_000, 1_000_000, 0) == pytest.approx(LLM_CACHED_INPUT_TOKEN * 1e6)
    assert default.cost(0, 0, 1_000_000) == pytest.approx(LLM_OUTPUT_TOKEN * 1e6)


def test_the_cost_of_a_usage() -> None:
    price = ModelPrice(input_per_million=2.0, cached_input_per_million=0.5, output_per_million=8.0)
    # 1,000 prompt tokens of which 400 cached, 100 completion tokens
    assert price.cost(1000, 400, 100) == pytest.approx((600 * 2.0 + 400 * 0.5 + 100 * 8.0) / 1e6)
    assert price.cost(100, 500, 0) == pytest.approx(100 * 0.5 / 1e6)  # cached never exceeds the prompt
    assert price.cost(100, -3, 0) == pytest.approx(100 * 2.0 / 1e6)
    assert price.line() == "$2 in, $0.5 cached in, $8 out per 1M tokens"
    with pytest.raises(ValueError, match="negative"):
        ModelPrice(input_per_million=-1, cached_input_per_million=0, output_per_million=0)


def test_a_price_given_on_the_command_line() -> None:
    assert custom_price(1.0, 4.0) == ModelPrice(1.0, 0.5, 4.0)
    assert custom_price(1.0, 4.0, 0.1) == ModelPrice(1.0, 0.1, 4.0)


def test_the_cost_model_prices_the_simulation_at_the_models_price() -> None:
    # The same rows, priced by the table at gpt-4o-mini, cost what scripts.bench.tokens' own arithmetic says
    record = SimulationLLM(
        rows=[
            (True, Measured("intake", [], 1200, 800, 60)),
            (False, Measured("feedback", [], 900, 500, 40)),
            (False, Measured("prompt_generator", [], 300, 0, 30)),
        ]
    )
    assert llm_month(record, 20, 3, PRICES["gpt-4o-mini"]) == pytest.approx(record.cost(20, 3))
    dearer = llm_month(record, 20, 3, PRICES["gpt-4o"])
    assert dearer > 10 * record.cost(20, 3)
