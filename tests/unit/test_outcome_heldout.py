"""The held-out typed outcomes (tests/data/typed_outcomes_heldout.yaml): written and committed before
the reader (``rules/outcome.py``), never tuned against. Their score is reported, not gated: a miss is
fixed by a general change, never by a word taken from the file (docs/pipeline.md, "The day's outcome").

Run ``python -m tests.unit.test_outcome_heldout`` for the score and the misses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from promptpipe.rules.outcome import read_outcome

HELD_OUT = Path(__file__).parent.parent / "data" / "typed_outcomes_heldout.yaml"
# The coach's open question in each context: whether they did it (the poll, the daily prompt), or
# whether a plan feels doable. Fixed before the first score.
ASKED = {"poll": True, "prompt": True, "doable": False}


def cases() -> list[dict[str, Any]]:
    return list(yaml.safe_load(HELD_OUT.read_text(encoding="utf-8")))


def score() -> tuple[int, int, int, list[str]]:
    """(counted right, read right, total, misses): *counted right* = done exactly when it says done
    (what the study counts); *read right* = the three readings."""
    counted = read = 0
    misses: list[str] = []
    for case in cases():
        got = read_outcome(case["text"], asked=ASKED[case["context"]])
        counted += (got == "done") == (case["expected"] == "done")
        read += got == case["expected"]
        if got != case["expected"]:
            misses.append(f"{case['text']!r} ({case['context']}): {got}, expected {case['expected']}")
    return counted, read, len(cases()), misses


def test_the_held_out_list_is_as_people_type_and_a_quarter_not_english() -> None:
    all_cases = cases()
    assert len(all_cases) >= 40
    assert sum(c["lang"] != "en" for c in all_cases) * 4 >= len(all_cases)
    assert {c["expected"] for c in all_cases} == {"done", "not_done", "no_report"}
    assert {c["context"] for c in all_cases} <= set(ASKED)


def test_the_held_out_score_is_computed() -> None:
    counted, read, total, misses = score()
    print(f"held-out typed outcomes: counted right {counted}/{total}, read right {read}/{total}")
    for miss in misses:
        print("  miss:", miss)
    assert 0 <= read <= counted <= total  # reported, not gated


if __name__ == "__main__":
    counted, read, total, misses = score()
    print(f"held-out typed outcomes: counted right {counted}/{total}, read right {read}/{total}")
    print("\n".join(f"  miss: {m}" for m in misses))
