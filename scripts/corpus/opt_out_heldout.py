"""Score the opt-out / HELP reader on the held-out messages (tests/data/opt_out/heldout.jsonl).

    .venv/bin/python scripts/corpus/opt_out_heldout.py [--verbose]

Prints the share read as labelled, overall and per label, and every miss with --verbose. Reported,
not gated: the messages were committed before the reader and are never tuned against.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from promptpipe.rules.opt_out import OptKind, keyword_lists, read_opt_message

HELDOUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "opt_out" / "heldout.jsonl"
_LABELS = {
    OptKind.OPT_OUT: "opt_out",
    OptKind.OPT_IN: "opt_in",
    OptKind.HELP: "help",
    OptKind.UNCLEAR_STOP: "ambiguous",
}


def label_of(text: str) -> tuple[str, str | None]:
    """The reader's label for ``text`` in the held-out file's terms, and the language it read."""
    reading = read_opt_message(text, keyword_lists())
    if reading is None:
        return "none", None
    return _LABELS[reading.kind], reading.language or None


def score(path: Path = HELDOUT) -> tuple[int, int, Counter[str], Counter[str], list[tuple[dict[str, str], str]]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    right, per_label, per_label_right, misses = 0, Counter[str](), Counter[str](), []
    for row in rows:
        label, language = label_of(row["text"])
        per_label[row["label"]] += 1
        ok = label == row["label"] and (row["language"] is None or language == row["language"])
        if ok:
            right += 1
            per_label_right[row["label"]] += 1
        else:
            misses.append((row, f"{label}/{language}"))
    return right, len(rows), per_label, per_label_right, misses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="print every miss")
    args = parser.parse_args(argv)
    right, total, per_label, per_label_right, misses = score()
    print(f"held-out opt-out/HELP messages: {right}/{total} read as labelled ({100 * right / total:.1f} %)")
    for label in sorted(per_label):
        print(f"  {label:<10} {per_label_right[label]}/{per_label[label]}")
    if args.verbose:
        for row, got in misses:
            print(f"  miss: {row['text']!r}: labelled {row['label']}/{row['language']}, read {got}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
