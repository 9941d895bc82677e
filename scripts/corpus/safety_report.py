"""Recall and false alarms of the safety screen on its labelled corpus (docs/safety.md).

Run: ``PYTHONPATH=shared .venv/bin/python -m scripts.corpus.safety_report`` (the built part, the one the
screen was written against) and ``… -m scripts.corpus.safety_report --heldout`` (the held-out part, never
tuned against; run it to report, not to tune). ``--misses`` lists the misread messages of the part
shown. ``tests/unit/test_safety_corpus.py`` gates the built part with the same reading.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from promptpipe.rules.safety_screen import screen

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "data" / "safety"


@dataclass(frozen=True)
class Labelled:
    language: str
    category: str
    text: str
    crisis: bool


def load(part: str) -> list[Labelled]:
    """``part``: ``built`` or ``heldout``; the crisis file and the negatives file of that part."""
    rows: list[Labelled] = []
    for label in ("crisis", "negative"):
        for line in (CORPUS / f"{part}_{label}.tsv").read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            language, category, text = line.split("\t", 2)
            rows.append(Labelled(language, category, text, crisis=label == "crisis"))
    return rows


@dataclass(frozen=True)
class Figures:
    crisis: int
    caught: int
    negatives: int
    false_alarms: int
    misses: tuple[Labelled, ...]
    alarms: tuple[Labelled, ...]

    @property
    def recall(self) -> float:
        return self.caught / self.crisis if self.crisis else 1.0

    @property
    def false_alarm_rate(self) -> float:
        return self.false_alarms / self.negatives if self.negatives else 0.0


def measure(rows: list[Labelled]) -> Figures:
    misses = tuple(r for r in rows if r.crisis and not screen(r.text).flagged)
    alarms = tuple(r for r in rows if not r.crisis and screen(r.text).flagged)
    crisis = sum(r.crisis for r in rows)
    return Figures(
        crisis=crisis,
        caught=crisis - len(misses),
        negatives=len(rows) - crisis,
        false_alarms=len(alarms),
        misses=misses,
        alarms=alarms,
    )


def _line(name: str, figures: Figures) -> str:
    return (
        f"| {name} | {figures.crisis} | {figures.caught} | {figures.recall:.3f} | {figures.negatives} | "
        f"{figures.false_alarms} | {figures.false_alarm_rate:.1%} |"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heldout", action="store_true", help="the held-out part (report only, never tune)")
    parser.add_argument("--misses", action="store_true", help="list the misread messages")
    args = parser.parse_args(argv)
    part = "heldout" if args.heldout else "built"
    rows = load(part)
    print("| part | crisis | caught | recall | negatives | false alarms | rate |")
    print("|---|---|---|---|---|---|---|")
    print(_line(part, measure(rows)))
    for language in ("en", "es"):
        print(_line(f"{part}, {language}", measure([r for r in rows if r.language == language])))
    if args.misses:
        figures = measure(rows)
        for row in figures.misses:
            print(f"missed ({row.language}, {row.category}): {row.text}")
        for row in figures.alarms:
            print(f"false alarm ({row.language}, {row.category}): {row.text}")


if __name__ == "__main__":
    main()
