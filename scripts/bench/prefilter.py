"""How often an ordinary message trips the literal prefilters (``rules/literal_prefilter.py``), so how
often a function's first event pays a pattern's compile, and the time a message with and without them.

Run: ``PYTHONPATH=shared:. python -m scripts.bench.prefilter`` (``--repeat N``: timing rounds, best of).

The messages are what participants say in the built conversation corpus
(tests/data/conversations/built/; never the held-out part). For each message, read on fresh, uncompiled
patterns, the table counts the messages whose reading compiles a pattern: the webhook reads every
text for an opt-out (``read_request``), the worker screens it (``screen``) and reads it for the tool-intent
hints (``rules/intent_patterns.py``, ``flow/intent_rules.py``): every pattern searched (the most a turn
could read), and a turn's rules (``decide``) in an intake and in a feedback context. A compile is observed by wrapping
``rules/literal_prefilter``'s compile function while the message is read. The pattern characters
compiled stand for the cost (``re`` parses and compiles in Python, about 12,500 instructions a
character: docs/benchmarks.md, section 2). Timing, the mean a message of ``read_request``, ``screen``
and the intent patterns, the best of ``--repeat`` rounds (on a loaded machine a rough figure): the
compiled patterns searched directly (as before the prefilter); the prefilter alone, nothing compiled, on the messages
that compile nothing (a cold function's ordinary texts); and after a compile (the pattern alone).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from promptpipe.flow import intent_rules
from promptpipe.rules import intent_patterns, literal_prefilter, safety_screen
from promptpipe.rules import opt_out_requests as requests
from promptpipe.rules.literal_prefilter import Prefiltered
from scripts.corpus.model import load_corpus

BUILT = Path(__file__).resolve().parents[2] / "tests" / "data" / "conversations" / "built"


def messages() -> list[str]:
    """Every participant message of the built conversations (never the held-out ones)."""
    return [turn.say for conversation in load_corpus() for turn in conversation.turns]


# The tool-intent hints' patterns (each case-insensitive, behind its prefilter), by name, and the
# module attributes that hold them.
_INTENT_ATTRIBUTES = {
    "stop": "STOP",
    "change time": "CHANGE_TIME",
    "prefer": "PREFER",
    "new habit": "NEW_HABIT",
    "capability": "_CAPABILITY",
    "later": "_LATER",
    "question start": "_QUESTION_START",
    "daypart": "_DAYPART",
    "list schedule": "_LIST_SCHEDULE",
    "prompt now": "_PROMPT_NOW",
}
INTENT_PATTERNS: dict[str, Prefiltered] = {
    name: getattr(intent_patterns, attribute, None) or getattr(intent_rules, attribute)
    for name, attribute in _INTENT_ATTRIBUTES.items()
}
# What the intent readers below read with: fresh copies (as at a cold start), or compiled patterns.
_intents: dict[str, Any] = {}


def _install() -> None:
    """``_intents`` where the rules read them (``flow/intent_rules`` holds some of ``rules/intent_patterns``')."""
    for name, attribute in _INTENT_ATTRIBUTES.items():
        for module in (intent_patterns, intent_rules):
            if hasattr(module, attribute):
                setattr(module, attribute, _intents[name])


def _fresh() -> None:
    """Uncompiled patterns, as at a cold start."""
    requests._requests.cache_clear()
    safety_screen._EN = safety_screen._by_category(safety_screen._EN_PATTERNS, safety_screen._EN_TRIGGERS)
    safety_screen._ES = safety_screen._by_category(safety_screen._ES_PATTERNS, safety_screen._ES_TRIGGERS)
    _intents.update({name: Prefiltered(p.pattern, p.triggers, p.flags) for name, p in INTENT_PATTERNS.items()})
    _install()


@contextlib.contextmanager
def _compiles() -> Iterator[list[str]]:
    """The patterns ``rules/literal_prefilter`` compiles meanwhile (its compile function wrapped)."""
    seen: list[str] = []
    compile_pattern = literal_prefilter._compile

    def observed(pattern: str, flags: int) -> re.Pattern[str]:
        seen.append(pattern)
        return compile_pattern(pattern, flags)

    literal_prefilter._compile = observed  # type: ignore[assignment]
    try:
        yield seen
    finally:
        literal_prefilter._compile = compile_pattern


def _read_intents(text: str) -> None:
    for pattern in _intents.values():
        pattern.match(text) if pattern.pattern.startswith("^") else pattern.search(text)


def _decide_in_intake(text: str) -> None:
    """A turn's rules on an intake answer, two profile fields still missing (the day-part patterns read)."""
    intent_rules.decide(intent_rules.TurnContext(module="intake", text=text, missing_required=_MISSING))


def _decide_in_feedback(text: str) -> None:
    """A turn's rules on a reply to the daily check-in, a schedule live."""
    context = intent_rules.TurnContext(module="feedback", text=text, has_schedule=True, last_reply="Did you do it?")
    intent_rules.decide(context)


_MISSING = ("preferred_time", "prompt_anchor")


def _request_patterns() -> list[tuple[str, Prefiltered]]:
    return [
        (f"request {language} {kind}", pattern)
        for language, anchored, floating in requests._requests()
        for kind, pattern in (("anchored", anchored), ("floating", floating))
    ]


def _screen_patterns() -> list[tuple[str, Prefiltered]]:
    return [
        (f"screen {language} {category}", pattern)
        for language, table in (("en", safety_screen._EN), ("es", safety_screen._ES))
        for category, pattern in table
    ]


def _intent_patterns() -> list[tuple[str, Prefiltered]]:
    return [(f"intent {name}", pattern) for name, pattern in _intents.items()]


def selectivity(texts: list[str]) -> dict[str, Any]:
    """Per function (its reader) and per pattern, the messages whose reading compiles it; and the
    messages that compile nothing, per function."""
    per_pattern: dict[str, int] = {}
    per_function = {function: 0 for function, _, _ in READERS}
    characters = dict.fromkeys(per_function, 0)
    ordinary: dict[str, list[str]] = {function: [] for function in per_function}
    _fresh()
    owner: dict[str, str] = {}  # a pattern's count is its first reader's (the intent readers share theirs)
    for function, _, patterns in READERS:
        for name, _ in patterns():
            owner.setdefault(name, function)
    for text in texts:
        for function, read, patterns in READERS:
            _fresh()
            with _compiles() as seen:
                read(text)
            compiled = [(name, pattern) for name, pattern in patterns() if pattern.pattern in seen]
            per_function[function] += bool(compiled)
            characters[function] += sum(len(pattern.pattern) for _, pattern in compiled)
            for name, _ in compiled:
                if owner[name] == function:
                    per_pattern[name] = per_pattern.get(name, 0) + 1
            if not compiled:
                ordinary[function].append(text)
    _fresh()
    return {
        "messages": len(texts),
        "functions": per_function,
        "characters": characters,
        "patterns": per_pattern,
        "ordinary": ordinary,
    }


READERS: tuple[tuple[str, Callable[[str], object], Callable[[], list[tuple[str, Prefiltered]]]], ...] = (
    ("webhook (read_request)", requests.read_request, _request_patterns),
    ("worker (screen)", safety_screen.screen, _screen_patterns),
    ("worker (intent hints, every pattern)", _read_intents, _intent_patterns),
    ("worker (intent hints, a turn's rules in intake)", _decide_in_intake, _intent_patterns),
    ("worker (intent hints, a turn's rules in feedback)", _decide_in_feedback, _intent_patterns),
)


def _timed(read: Callable[[str], object], texts: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for text in texts:
            read(text)
        best = min(best, time.perf_counter() - start)
    return best / len(texts) * 1e6


def timings(texts: list[str], ordinary: dict[str, list[str]], repeat: int) -> dict[str, tuple[float, float, float]]:
    """Microseconds a message: the compiled patterns alone (as before), every message; the prefilter
    before any compile, on the messages that compile nothing; after a compile (the pattern alone)."""
    result: dict[str, tuple[float, float, float]] = {}
    for function, read, patterns in READERS:
        _fresh()
        with _compiles() as seen:
            cold = _timed(read, ordinary[function], repeat)
        assert not seen
        for _, pattern in patterns():
            pattern.compiled  # noqa: B018  (compile them all: the warm state)
        warm = _timed(read, texts, repeat)
        original = requests._requests, safety_screen._EN, safety_screen._ES, dict(_intents)
        try:  # as before the prefilter: the compiled patterns searched directly
            compiled_requests = tuple((language, a.compiled, f.compiled) for language, a, f in original[0]())
            requests._requests = functools.partial(tuple, compiled_requests)  # type: ignore[assignment]
            safety_screen._EN = tuple((category, p.compiled) for category, p in original[1])  # type: ignore[assignment]
            safety_screen._ES = tuple((category, p.compiled) for category, p in original[2])  # type: ignore[assignment]
            _intents.update({name: p.compiled for name, p in original[3].items()})
            _install()
            before = _timed(read, texts, repeat)
        finally:
            requests._requests, safety_screen._EN, safety_screen._ES = original[:3]
            _intents.update(original[3])
            _install()
        result[function] = (before, cold, warm)
    _fresh()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    texts = messages()
    found = selectivity(texts)
    total = found["messages"]
    print(f"{total} participant messages of the built conversation corpus\n")
    print("| function (reader) | messages that compile a pattern | pattern characters compiled, mean a message |")
    print("|---|---:|---:|")
    for function, count in found["functions"].items():
        mean = found["characters"][function] / total
        print(f"| {function} | {count} ({count / total:.1%}) | {mean:,.0f} |")
    print("\n| pattern | characters | messages that compile it (its first reader above) |")
    print("|---|---:|---:|")
    for name, pattern in (*_request_patterns(), *_screen_patterns(), *_intent_patterns()):
        count = found["patterns"].get(name, 0)
        print(f"| {name} | {len(pattern.pattern):,} | {count} ({count / total:.1%}) |")
    print(
        "\n| function (reader) | µs a message, compiled patterns alone (before) "
        "| prefilter, nothing compiled (ordinary messages) | after a compile |"
    )
    print("|---|---:|---:|---:|")
    for function, (before, cold, warm) in timings(texts, found["ordinary"], args.repeat).items():
        print(f"| {function} | {before:.1f} | {cold:.1f} | {warm:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
