"""The held-out opt-out / HELP messages (tests/data/opt_out/heldout.jsonl): their shape is checked, their
score reported (``scripts/corpus/opt_out_heldout.py``), not gated — they are never tuned against."""

from __future__ import annotations

import json

import pytest

from scripts.corpus.opt_out_heldout import HELDOUT, main, score

LABELS = {"opt_out", "opt_in", "help", "ambiguous", "none"}


def test_the_heldout_set_is_large_labelled_and_has_each_kind() -> None:
    rows = [json.loads(line) for line in HELDOUT.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) >= 60
    assert {row["label"] for row in rows} == LABELS
    assert len({row["text"] for row in rows}) == len(rows)
    for row in rows:
        assert (row["language"] is None) == (row["label"] in ("ambiguous", "none")), row


def test_the_score_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    right, total, per_label, per_label_right, misses = score()
    assert total == sum(per_label.values()) and right == sum(per_label_right.values())
    assert len(misses) == total - right
    assert main([]) == 0
    assert f"{right}/{total} read as labelled" in capsys.readouterr().out
