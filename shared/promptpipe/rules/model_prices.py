"""What a chat model's tokens cost: list prices per model, and the cost of a call's usage.

Pure data and arithmetic (no I/O, no settings), so that ``make eval-llm`` and ``scripts/bench/cost_model.py``
price tokens at the model's own price, and the study's daily spend cap (docs/safety.md#budgets)
estimates each call's cost from it: one table for all three. Prices are USD
per 1M tokens, the providers' published list prices as of 2025 (standard tier, no batch discount):
check them before relying on a figure, and add a model here rather than pricing it as another.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

PER_MILLION = 1_000_000
# A dated snapshot of a listed model ("gpt-4o-mini-2024-07-18") costs what the model costs.
_SNAPSHOT_SUFFIX = re.compile(r"^-\d{4}-\d{2}-\d{2}$|^-\d{4}$")


@dataclass(frozen=True)
class ModelPrice:
    """USD per 1M tokens: prompt tokens not served from the cache, cached prompt tokens, completion."""

    input_per_million: float
    cached_input_per_million: float
    output_per_million: float

    def __post_init__(self) -> None:
        if min(self.input_per_million, self.cached_input_per_million, self.output_per_million) < 0:
            raise ValueError("a price cannot be negative")

    def cost(self, prompt_tokens: int, cached_tokens: int, completion_tokens: int) -> float:
        """USD for one usage: ``cached_tokens`` are the part of ``prompt_tokens`` read from the cache."""
        cached = min(max(cached_tokens, 0), prompt_tokens)
        usd = (
            (prompt_tokens - cached) * self.input_per_million
            + cached * self.cached_input_per_million
            + completion_tokens * self.output_per_million
        )
        return usd / PER_MILLION

    def line(self) -> str:
        return (
            f"${self.input_per_million:g} in, ${self.cached_input_per_million:g} cached in, "
            f"${self.output_per_million:g} out per 1M tokens"
        )


def _price(input_: float, cached: float, output: float) -> ModelPrice:
    return ModelPrice(input_per_million=input_, cached_input_per_million=cached, output_per_million=output)


PRICES: Mapping[str, ModelPrice] = MappingProxyType(
    {
        "gpt-4o-mini": _price(0.15, 0.075, 0.60),
        "gpt-4o": _price(2.50, 1.25, 10.00),
        "gpt-4.1": _price(2.00, 0.50, 8.00),
        "gpt-4.1-mini": _price(0.40, 0.10, 1.60),
        "gpt-4.1-nano": _price(0.10, 0.025, 0.40),
        "o4-mini": _price(1.10, 0.275, 4.40),
        "gpt-5": _price(1.25, 0.125, 10.00),
        "gpt-5-mini": _price(0.25, 0.025, 2.00),
        "gpt-5-nano": _price(0.05, 0.005, 0.40),
    }
)
DEFAULT_MODEL = "gpt-4o-mini"  # the project's default GENAI_MODEL


def price_of(model: str, prices: Mapping[str, ModelPrice] = PRICES) -> ModelPrice | None:
    """The list price of ``model``: its own entry, or that of the model a dated snapshot belongs to
    (``gpt-4o-mini-2024-07-18``), after an ``openai/`` style provider prefix; ``None`` when unknown
    (never another model's price)."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    if name in prices:
        return prices[name]
    for listed in sorted(prices, key=len, reverse=True):
        if name.startswith(listed) and _SNAPSHOT_SUFFIX.match(name[len(listed) :]):
            return prices[listed]
    return None


def custom_price(
    input_per_million: float, output_per_million: float, cached_per_million: float | None = None
) -> ModelPrice:
    """A price given on the command line; cached input at half the input price unless given."""
    cached = input_per_million / 2 if cached_per_million is None else cached_per_million
    return _price(input_per_million, cached, output_per_million)


def cost_usd(
    model: str,
    prompt_tokens: int,
    completion_tokens: int,
    cached_tokens: int = 0,
    prices: Mapping[str, ModelPrice] = PRICES,
) -> float | None:
    """The estimated cost of one call at ``model``'s price in ``prices`` (the list prices, or a
    study's over them; ``prompt_tokens`` includes ``cached_tokens``, as OpenAI reports them);
    ``None`` when the model has no price, never free."""
    price = price_of(model, prices)
    return None if price is None else price.cost(prompt_tokens, cached_tokens, completion_tokens)
