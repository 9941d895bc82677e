"""Play the conversation corpus against a real model: ``make eval-llm`` (``python -m scripts.eval_llm``).

The command a study team runs before trusting a new model or a new prompt. Every conversation of
``tests/data/conversations/`` is played through the real pipeline on the local stack (see
``scripts/corpus_player.py``) with the project's OpenAI adapter as the model: ``OPENAI_API_KEY``,
``GENAI_MODEL`` (default gpt-4o-mini) and ``OPENAI_BASE_URL`` (any OpenAI-compatible endpoint) as
for the deployed functions. Without ``OPENAI_API_KEY`` it says so in one line and exits 0.

Per conversation: completed (it ended as the corpus expects: sub-state, profile fields, schedule,
no hand-off), stranded and forced turns (as for the stand-in gate), invalid tool arguments (not a
JSON object, an unknown tool, or a schema violation of the tool as offered), model calls, tokens
(prompt, of which cached, completion) and cost at the price table of ``scripts/bench_tokens.py``
(gpt-4o-mini list prices unless ``--input-price``/``--output-price`` say otherwise).

A live model does not say what the corpus's coach says, so later messages of a conversation may
answer a question the model did not ask: read a failure with its turn lines before blaming the
model. Exit status: 0 when every conversation completed without stranded or forced turns, 1 if not.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import jsonschema

from scripts.bench_tokens import LLM_CACHED_INPUT_TOKEN, LLM_INPUT_TOKEN, LLM_OUTPUT_TOKEN
from scripts.corpus_player import ConversationOutcome, Observation
from scripts.corpus_standin import Cursor

NO_KEY = (
    "eval-llm: OPENAI_API_KEY is not set, nothing to evaluate "
    "(set it, and GENAI_MODEL / OPENAI_BASE_URL, to play the corpus against that model)"
)
COLUMNS = (
    f"{'conversation':32s} {'done':>4s} {'strand':>6s} {'forced':>6s} {'badarg':>6s} {'calls':>5s} "
    f"{'prompt':>8s} {'cached':>7s} {'compl':>6s} {'USD':>8s}"
)


@dataclass
class ConversationScore:
    conversation: str
    completed: bool
    stranded: int
    forced: int
    invalid_arguments: int
    model_calls: int
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    cost_usd: float


@dataclass(frozen=True)
class Prices:
    """USD per token."""

    input: float = LLM_INPUT_TOKEN
    cached_input: float = LLM_CACHED_INPUT_TOKEN
    output: float = LLM_OUTPUT_TOKEN


def invalid_arguments(observation: Observation) -> int:
    """Tool calls of one response that the tool could not take as given."""
    if observation.response is None:
        return 0
    schemas = {tool.name: tool.parameters for tool in observation.request.tools}
    count = 0
    for call in observation.response.tool_calls:
        try:
            arguments = call.parsed_arguments()
        except ValueError:
            count += 1
            continue
        schema = schemas.get(call.name)
        if schema is None:
            count += 1  # a tool this request did not offer (or none that exists)
            continue
        try:
            jsonschema.validate(arguments, schema)
        except jsonschema.ValidationError:
            count += 1
    return count


def score(outcome: ConversationOutcome, prices: Prices) -> ConversationScore:
    responses = [o.response for o in outcome.observations if o.response is not None]
    prompt = sum(r.usage.prompt_tokens for r in responses)
    cached = sum(r.usage.cached_tokens for r in responses)
    completion = sum(r.usage.completion_tokens for r in responses)
    return ConversationScore(
        conversation=outcome.conversation.id,
        completed=outcome.completed,
        stranded=outcome.stranded,
        forced=outcome.forced,
        invalid_arguments=sum(invalid_arguments(o) for o in outcome.observations),
        model_calls=len(outcome.observations),
        prompt_tokens=prompt,
        cached_tokens=cached,
        completion_tokens=completion,
        cost_usd=(prompt - cached) * prices.input + cached * prices.cached_input + completion * prices.output,
    )


def evaluate(
    *,
    api_key: str,
    model: str,
    base_url: str | None,
    only: Sequence[str] = (),
    prices: Prices = Prices(),
    cursor: Cursor | None = None,
) -> tuple[list[ConversationScore], list[ConversationOutcome]]:
    """Play the corpus (or the conversations named in ``only``) against ``model``."""
    from promptpipe.adapters.openai_llm import OpenAILLM
    from scripts.corpus_model import selected
    from scripts.corpus_player import Player

    conversations = selected(only)
    unknown = sorted(set(only) - {c.id for c in conversations})
    if unknown:
        raise SystemExit(f"eval-llm: no conversation named {', '.join(unknown)}")
    player = Player(
        lambda _cursor: OpenAILLM(api_key=api_key, base_url=base_url, model=model),
        cursor=cursor,
        settings_overrides={"genai_model": model, "openai_base_url": base_url},
    )
    outcomes = player.play_all(conversations)
    return [score(o, prices) for o in outcomes], outcomes


def render(model: str, scores: Sequence[ConversationScore], outcomes: Sequence[ConversationOutcome]) -> str:
    lines = [f"eval-llm: model {model}, {len(scores)} conversation(s)", COLUMNS]
    for s in scores:
        lines.append(
            f"{s.conversation:32s} {'yes' if s.completed else 'NO':>4s} {s.stranded:6d} {s.forced:6d} "
            f"{s.invalid_arguments:6d} {s.model_calls:5d} {s.prompt_tokens:8d} {s.cached_tokens:7d} "
            f"{s.completion_tokens:6d} {s.cost_usd:8.4f}"
        )
    tokens = sum(s.prompt_tokens + s.completion_tokens for s in scores)
    lines.append(
        f"total: completed {sum(s.completed for s in scores)}/{len(scores)}, "
        f"stranded {sum(s.stranded for s in scores)}, forced {sum(s.forced for s in scores)}, "
        f"invalid tool arguments {sum(s.invalid_arguments for s in scores)}, "
        f"model calls {sum(s.model_calls for s in scores)}, tokens {tokens}, "
        f"cost ${sum(s.cost_usd for s in scores):.4f}"
    )
    failures = [line for o in outcomes for line in o.failure_lines()]
    if failures:
        lines += ["", "what went wrong:", *(f"  {line}" for line in failures)]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.eval_llm", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", default=[], metavar="ID", help="play only these conversations")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument("--input-price", type=float, help="USD per million input tokens (default: gpt-4o-mini)")
    parser.add_argument("--output-price", type=float, help="USD per million output tokens (default: gpt-4o-mini)")
    args = parser.parse_args(argv)
    api_key = os.environ.get("OPENAI_API_KEY", "")
    if not api_key:
        print(NO_KEY)
        return 0
    model = os.environ.get("GENAI_MODEL") or "gpt-4o-mini"
    base_url = os.environ.get("OPENAI_BASE_URL") or None
    prices = Prices()
    if args.input_price is not None:
        prices = Prices(input=args.input_price / 1e6, cached_input=args.input_price / 2e6, output=prices.output)
    if args.output_price is not None:
        prices = Prices(input=prices.input, cached_input=prices.cached_input, output=args.output_price / 1e6)

    from scripts.scenario import prepare_environment

    prepare_environment()  # dummy AWS credentials for moto, quiet logs (it also drops the key: read above)
    scores, outcomes = evaluate(api_key=api_key, model=model, base_url=base_url, only=args.only, prices=prices)
    if args.json:
        print(json.dumps({"model": model, "conversations": [asdict(s) for s in scores]}, indent=2))
    else:
        print(render(model, scores, outcomes))
    passed = all(s.completed and not s.stranded and not s.forced for s in scores)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
