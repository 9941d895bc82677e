"""Model prices: USD per 1M tokens (input, output, cached input), to estimate what calls cost.

The study's daily spend cap (docs/safety.md#budgets) is estimated from each call's token counts at
these prices. They are list prices for OpenAI's standard tier, as published when this table was
written; check them against the provider's page before relying on a cap. A model that is not listed
has no price (``None``): its calls are counted apart (``LLMCallsUnpriced``), never as free.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PER_MILLION = 1_000_000


@dataclass(frozen=True)
class ModelPrice:
    """USD per 1M tokens."""

    input: float
    output: float
    cached_input: float


PRICES: dict[str, ModelPrice] = {
    "gpt-4o-mini": ModelPrice(input=0.15, output=0.60, cached_input=0.075),
    "gpt-4o": ModelPrice(input=2.50, output=10.00, cached_input=1.25),
    "gpt-4.1": ModelPrice(input=2.00, output=8.00, cached_input=0.50),
    "gpt-4.1-mini": ModelPrice(input=0.40, output=1.60, cached_input=0.10),
    "gpt-4.1-nano": ModelPrice(input=0.10, output=0.40, cached_input=0.025),
    "o4-mini": ModelPrice(input=1.10, output=4.40, cached_input=0.275),
    "gpt-5": ModelPrice(input=1.25, output=10.00, cached_input=0.125),
    "gpt-5-mini": ModelPrice(input=0.25, output=2.00, cached_input=0.025),
    "gpt-5-nano": ModelPrice(input=0.05, output=0.40, cached_input=0.005),
}

# A dated snapshot ("gpt-4o-mini-2024-07-18") is priced as its model.
_SNAPSHOT = re.compile(r"-\d{4}-\d{2}-\d{2}$")


def price_for(model: str) -> ModelPrice | None:
    """The model's price, its dated snapshots included; ``None`` when it is not in the table."""
    name = model.strip().lower()
    return PRICES.get(name) or PRICES.get(_SNAPSHOT.sub("", name))


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float | None:
    """The estimated cost of one call; ``prompt_tokens`` includes ``cached_tokens`` (as OpenAI
    reports them), which are charged at the cached-input price. ``None``: no price for the model."""
    price = price_for(model)
    if price is None:
        return None
    cached = min(max(cached_tokens, 0), prompt_tokens)
    return (
        (prompt_tokens - cached) * price.input + cached * price.cached_input + completion_tokens * price.output
    ) / PER_MILLION
