"""How often an ordinary message trips the literal prefilters (``rules/literal_prefilter.py``), so how
often a function's first event pays a pattern's compile, and the time a message with and without them.

Run: ``PYTHONPATH=shared:. python -m scripts.bench.prefilter`` (``--repeat N``: timing rounds, best of).

The messages are what participants say in the built conversation corpus
(tests/data/conversations/built/; never the held-out part). For each message, read on fresh, uncompiled
patterns, the table counts the messages whose reading compiles a pattern: the webhook reads every
text for an opt-out (``read_request``), the worker screens it (``screen``). The pattern characters
compiled stand for the cost (``re`` parses and compiles in Python, about 12,500 instructions a
character: docs/benchmarks.md, section 2). Timing, the mean a message of ``read_request`` and
``screen``, the best of ``--repeat`` rounds (on a loaded machine a rough figure): the compiled patterns
searched directly (as before the prefilter); the prefilter alone, nothing compiled, on the messages
that compile nothing (a cold function's ordinary texts); and after a compile (the pattern alone).
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from promptpipe.rules import opt_out_requests as requests
from promptpipe.rules import safety_screen
from promptpipe.rules.literal_prefilter import Prefiltered
from scripts.corpus.model import load_corpus

BUILT = Path(__file__).resolve().parents[2] / "tests" / "data" / "conversations" / "built"


def messages() -> list[str]:
    """Every participant message of the built conversations (never the held-out ones)."""
    return [turn.say for conversation in load_corpus() for turn in conversation.turns]


def _fresh() -> None:
    """Uncompiled patterns, as at a cold start."""
    requests._requests.cache_clear()
    safety_screen._EN = safety_screen._by_category(safety_screen._EN_PATTERNS, safety_screen._EN_TRIGGERS)
    safety_screen._ES = safety_screen._by_category(safety_screen._ES_PATTERNS, safety_screen._ES_TRIGGERS)


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


def selectivity(texts: list[str]) -> dict[str, Any]:
    """Per function (its reader) and per pattern, the messages whose reading compiles it; and the
    messages that compile nothing, per function."""
    per_pattern: dict[str, int] = {}
    per_function = {READERS[0][0]: 0, READERS[1][0]: 0}
    characters = dict.fromkeys(per_function, 0)
    ordinary: dict[str, list[str]] = {function: [] for function in per_function}
    for text in texts:
        for function, read, patterns in READERS:
            _fresh()
            read(text)
            compiled = [(name, pattern) for name, pattern in patterns() if pattern.is_compiled]
            per_function[function] += bool(compiled)
            characters[function] += sum(len(pattern.pattern) for _, pattern in compiled)
            for name, _ in compiled:
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
        cold = _timed(read, ordinary[function], repeat)
        assert not any(pattern.is_compiled for _, pattern in patterns())
        for _, pattern in patterns():
            pattern.compiled  # noqa: B018  (compile them all: the warm state)
        warm = _timed(read, texts, repeat)
        original = requests._requests, safety_screen._EN, safety_screen._ES
        try:  # as before the prefilter: the compiled patterns searched directly
            compiled_requests = tuple((language, a.compiled, f.compiled) for language, a, f in original[0]())
            requests._requests = functools.partial(tuple, compiled_requests)  # type: ignore[assignment]
            safety_screen._EN = tuple((category, p.compiled) for category, p in original[1])  # type: ignore[assignment]
            safety_screen._ES = tuple((category, p.compiled) for category, p in original[2])  # type: ignore[assignment]
            before = _timed(read, texts, repeat)
        finally:
            requests._requests, safety_screen._EN, safety_screen._ES = original
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
    print("\n| pattern | characters | messages that compile it |")
    print("|---|---:|---:|")
    for name, pattern in (*_request_patterns(), *_screen_patterns()):
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
