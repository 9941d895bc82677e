"""Play the conversation corpus against a real model: ``make eval-llm`` (``python -m scripts.corpus.eval_llm``).

The command a study team runs before trusting a new model or a new prompt. Every conversation of a
split of ``tests/data/conversations/`` (``--split``: ``built`` by default, ``held_out``, or ``all``) is
played through the real pipeline on the local stack (see ``scripts/corpus/player.py``) with the
project's OpenAI adapter as the model: ``OPENAI_API_KEY``, ``GENAI_MODEL`` (default gpt-4o-mini) and
``OPENAI_BASE_URL`` (any OpenAI-compatible endpoint) as for the deployed functions. Without
``OPENAI_API_KEY`` it says so in one line and exits 0.

Per conversation: completed (it ended as the corpus expects: sub-state, profile fields, schedule,
no hand-off, and the done count, opt-out and later prompts where the corpus gives them), passed
(completed with no turn problem: stranded, forced, unanswered, too many model calls, other replies),
invalid tool arguments (not a JSON object, an unknown tool, or a schema violation of the tool as
offered), model calls, tokens (prompt, of which cached, completion) and cost at the model's own list
price (``promptpipe.rules.model_prices``), or at ``--price-in``/``--price-out`` (USD per 1M tokens);
a model the table does not list and no price given: the cost is not shown, never another model's.

``--repeat K`` plays the split K times and reports pass^k for k = 1..K as tau-bench does (Yao et al.,
2024): the chance that k runs of a conversation all pass, estimated from its c passes in K runs as
C(c, k) / C(K, k) and averaged over conversations. pass^K is the strict figure: a conversation counts
only if all K runs passed. A live model varies from run to run; pass^1 alone hides that.

A live model does not say what the corpus's coach says, so later messages of a conversation may
answer a question the model did not ask: read a failure with its turn lines before blaming the
model. Exit status: 0 when every conversation passed in every run, 1 if not.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import jsonschema

from promptpipe.rules.model_prices import ModelPrice, custom_price, price_of
from scripts.corpus.model import BUILT, SPLITS
from scripts.corpus.player import ConversationOutcome, Observation
from scripts.corpus.standin import Cursor

NO_KEY = (
    "eval-llm: OPENAI_API_KEY is not set, nothing to evaluate "
    "(set it, and GENAI_MODEL / OPENAI_BASE_URL, to play the corpus against that model)"
)
COLUMNS = (
    f"{'conversation':36s} {'pass':>4s} {'done':>4s} {'strand':>6s} {'forced':>6s} {'badarg':>6s} {'calls':>5s} "
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
    cost_usd: float | None  # None: no price known for the model
    passed: bool = False  # completed, and no turn problem


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


def score(outcome: ConversationOutcome, price: ModelPrice | None) -> ConversationScore:
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
        cost_usd=price.cost(prompt, cached, completion) if price is not None else None,
        passed=outcome.passed,
    )


def evaluate(
    *,
    api_key: str,
    model: str,
    base_url: str | None,
    only: Sequence[str] = (),
    price: ModelPrice | None = None,
    cursor: Cursor | None = None,
    split: str = BUILT,
) -> tuple[list[ConversationScore], list[ConversationOutcome]]:
    """Play a split (or its conversations named in ``only``) against ``model`` once; ``split`` may be
    ``all``. ``price``: the model's (``price_of(model)``) unless given."""
    from promptpipe.adapters.openai_llm import OpenAILLM
    from scripts.corpus.model import selected
    from scripts.corpus.player import Player

    splits = SPLITS if split == "all" else (split,)
    conversations = [c for name in splits for c in selected(only, name)]
    unknown = sorted(set(only) - {c.id for c in conversations})
    if unknown:
        raise SystemExit(f"eval-llm: no conversation named {', '.join(unknown)}")
    player = Player(
        lambda _cursor: OpenAILLM(api_key=api_key, base_url=base_url, model=model),
        cursor=cursor,
        settings_overrides={"genai_model": model, "openai_base_url": base_url},
    )
    outcomes = player.play_all(conversations)
    price = price if price is not None else price_of(model)
    return [score(o, price) for o in outcomes], outcomes


def pass_hat(runs: Sequence[Sequence[ConversationScore]]) -> dict[int, float]:
    """pass^k for k = 1..K over K runs of the same conversations (tau-bench): per conversation with c
    passes in K runs, C(c, k) / C(K, k); averaged over conversations. pass^K: all K runs passed."""
    if not runs or not runs[0]:
        return {}
    trials = len(runs)
    passes: dict[str, int] = {}
    for run in runs:
        for s in run:
            passes[s.conversation] = passes.get(s.conversation, 0) + int(s.passed)
    return {
        k: sum(math.comb(c, k) for c in passes.values()) / (math.comb(trials, k) * len(passes))
        for k in range(1, trials + 1)
    }


def _usd(value: float | None) -> str:
    return f"{value:8.4f}" if value is not None else f"{'n/a':>8s}"


def _total_cost(scores: Sequence[ConversationScore]) -> float | None:
    costs = [s.cost_usd for s in scores]
    return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)


def price_line(model: str, price: ModelPrice | None, *, given: bool = False) -> str:
    if price is None:
        return (
            f"price: {model} is not in promptpipe.rules.model_prices; give --price-in/--price-out "
            "(USD per 1M tokens) for its cost"
        )
    return f"price: {model} at {price.line()} ({'given' if given else 'list price'})"


def render(
    model: str,
    scores: Sequence[ConversationScore],
    outcomes: Sequence[ConversationOutcome],
    *,
    price: ModelPrice | None = None,
    price_given: bool = False,
) -> str:
    lines = [f"eval-llm: model {model}, {len(scores)} conversation(s)", price_line(model, price, given=price_given)]
    lines.append(COLUMNS)
    for s in scores:
        lines.append(
            f"{s.conversation:36s} {'yes' if s.passed else 'NO':>4s} {'yes' if s.completed else 'NO':>4s} "
            f"{s.stranded:6d} {s.forced:6d} {s.invalid_arguments:6d} {s.model_calls:5d} {s.prompt_tokens:8d} "
            f"{s.cached_tokens:7d} {s.completion_tokens:6d} {_usd(s.cost_usd)}"
        )
    tokens = sum(s.prompt_tokens + s.completion_tokens for s in scores)
    total = _total_cost(scores)
    lines.append(
        f"total: passed {sum(s.passed for s in scores)}/{len(scores)}, "
        f"completed {sum(s.completed for s in scores)}/{len(scores)}, "
        f"stranded {sum(s.stranded for s in scores)}, forced {sum(s.forced for s in scores)}, "
        f"invalid tool arguments {sum(s.invalid_arguments for s in scores)}, "
        f"model calls {sum(s.model_calls for s in scores)}, tokens {tokens}, "
        f"cost {f'${total:.4f}' if total is not None else 'n/a'}"
    )
    failures = [line for o in outcomes for line in o.failure_lines()]
    if failures:
        lines += ["", "what went wrong:", *(f"  {line}" for line in failures)]
    return "\n".join(lines)


def render_repeated(model: str, runs: Sequence[Sequence[ConversationScore]], price: ModelPrice | None) -> str:
    """The summary of K runs: per conversation its passes out of K, then pass^k and the cost of all runs."""
    trials = len(runs)
    lines = [f"eval-llm: model {model}, {len(runs[0])} conversation(s) x {trials} runs"]
    for index, s in enumerate(runs[0]):
        passes = sum(run[index].passed for run in runs)
        lines.append(f"  {s.conversation:36s} passed {passes}/{trials}{'' if passes == trials else '  <- not pass^K'}")
    hats = pass_hat(runs)
    lines.append("pass^k: " + ", ".join(f"pass^{k} {value:.1%}" for k, value in hats.items()))
    costs = [_total_cost(run) for run in runs]
    if all(c is not None for c in costs):
        spent = sum(c for c in costs if c is not None)
        lines.append(f"cost of the {trials} runs: ${spent:.4f} (${spent / trials:.4f} a run) at {model}'s price")
    else:
        lines.append(price_line(model, price))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.corpus.eval_llm", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", default=[], metavar="ID", help="play only these conversations")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument("--split", choices=(*SPLITS, "all"), default=BUILT, help="which split (default: built)")
    parser.add_argument("--repeat", type=int, default=1, metavar="K", help="play K times; report pass^k (default 1)")
    parser.add_argument(
        "--price-in", "--input-price", dest="price_in", type=float, help="USD per 1M input tokens (default: the table)"
    )
    parser.add_argument(
        "--price-out", "--output-price", dest="price_out", type=float, help="USD per 1M output tokens (default: table)"
    )
    parser.add_argument("--price-cached", type=float, help="USD per 1M cached input tokens (default: half --price-in)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    api_key = os.environ.get("OPENAI_API_KEY", "")
    if not api_key:
        print(NO_KEY)
        return 0
    model = os.environ.get("GENAI_MODEL") or "gpt-4o-mini"
    base_url = os.environ.get("OPENAI_BASE_URL") or None
    price, given = chosen_price(model, args.price_in, args.price_out, args.price_cached)

    from scripts.bench.scenario import prepare_environment

    prepare_environment()  # dummy AWS credentials for moto, quiet logs (it also drops the key: read above)
    runs, outcomes = [], []
    for _ in range(args.repeat):
        scores, played = evaluate(
            api_key=api_key, model=model, base_url=base_url, only=args.only, price=price, split=args.split
        )
        runs.append(scores)
        outcomes.append(played)
    if args.json:
        report = {
            "model": model,
            "price": asdict(price) if price is not None else None,
            "runs": [[asdict(s) for s in run] for run in runs],
            "pass_hat": {str(k): v for k, v in pass_hat(runs).items()},
        }
        print(json.dumps(report, indent=2))
    else:
        for number, (scores, played) in enumerate(zip(runs, outcomes, strict=True), 1):
            if args.repeat > 1:
                print(f"--- run {number} of {args.repeat}")
            print(render(model, scores, played, price=price, price_given=given))
        if args.repeat > 1:
            print(render_repeated(model, runs, price))
    return 0 if all(s.passed for run in runs for s in run) else 1


def chosen_price(
    model: str, price_in: float | None, price_out: float | None, price_cached: float | None = None
) -> tuple[ModelPrice | None, bool]:
    """The price to report at, and whether it was given: ``--price-in``/``--price-out`` (the one not
    given is the table's, or an error when the model is not in it), else the model's list price."""
    listed = price_of(model)
    if price_in is None and price_out is None:
        return listed, False
    if listed is None and (price_in is None or price_out is None):
        raise SystemExit(f"eval-llm: {model} is not in the price table: give both --price-in and --price-out")
    base = listed or custom_price(0.0, 0.0)
    cached = price_cached if price_cached is not None else (price_in / 2 if price_in is not None else None)
    return (
        custom_price(
            price_in if price_in is not None else base.input_per_million,
            price_out if price_out is not None else base.output_per_million,
            cached if cached is not None else base.cached_input_per_million,
        ),
        True,
    )


if __name__ == "__main__":
    sys.exit(main())
