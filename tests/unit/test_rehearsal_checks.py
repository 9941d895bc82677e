"""The rehearsal's Done-when checks (``local/rehearsal_checks.py``) on hand-made exports: each passes
on a good one and fails on one with the fault it looks for."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from promptpipe.coordinator.deidentified_export import DECISION_COLUMNS
from promptpipe.local.rehearsal_checks import (
    Expected,
    arms_hash,
    check_dictionary,
    check_effects,
    check_identifiers,
    check_rows,
    check_same_arms,
    check_shares,
    read_decisions,
)
from promptpipe.models.study import StudyDefinition
from promptpipe.usecases.studies import parse_study

EXAMPLE = Path(__file__).resolve().parents[2] / "prompts" / "studies" / "example-mrt.json"
ARMS = {"no_prompt": 0.3, "framing_a": 0.35, "framing_b": 0.35}
# 20 available decisions in the declared proportions: 6 / 7 / 7
CYCLE = ["no_prompt"] * 6 + ["framing_a"] * 7 + ["framing_b"] * 7


def _row(participant: str, day: int, arm: str | None, outcome: str = "none") -> dict[str, str]:
    cells: dict[str, object] = {
        "participant": participant,
        "decision_point": "daily_prompt",
        "decided_at": f"{day} 08:30",
        "available": "true" if arm else "false",
        "unavailable_reason": "" if arm else "paused",
        "arm": arm or "",
        "probability": ARMS[arm] if arm else "",
        "intended_send_at": "",
        "sent_at": "",
        "delivery": "not_sent",
        "outcome": outcome if arm else "",
        **{f"p_{name}": p for name, p in ARMS.items()},
    }
    return {column: str(value) for column, value in cells.items()}


def _write(export: Path, rows: list[dict[str, str]], extra_file: tuple[str, str] | None = None) -> Path:
    export.mkdir(parents=True, exist_ok=True)
    columns = list(rows[0])
    with (export / "decisions.csv").open("w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    fields = [{"name": name} for name in [*DECISION_COLUMNS, *(f"p_{arm}" for arm in ARMS)]]
    package = {"resources": [{"name": "decisions", "path": "decisions.csv", "schema": {"fields": fields}}]}
    (export / "data_dictionary.json").write_text(json.dumps(package), encoding="utf-8")
    if extra_file:
        (export / extra_file[0]).write_text(extra_file[1], encoding="utf-8")
    return export


def _good_rows() -> list[dict[str, str]]:
    """Two participants, 20 study days each, every arm in its proportion."""
    return [_row(f"ps_{p}0000000000000000000", day, CYCLE[day - 1]) for p in "ab" for day in range(1, 21)]


EXPECTED = Expected(participants=2, days_lived=19, duration_days=20, effects={})


def test_one_row_per_participant_day_and_probabilities_summing_to_one(tmp_path: Path) -> None:
    rows = _good_rows()
    assert all(check.passed for check in check_rows(rows, EXPECTED)), [c.line() for c in check_rows(rows, EXPECTED)]
    # a day twice (a redelivery that made a second row), a day missing, a row whose p_ do not sum to 1
    twice = [*rows, rows[3]]
    assert not check_rows(twice, EXPECTED)[0].passed
    missing = rows[:5] + rows[6:]
    assert not check_rows(missing, EXPECTED)[0].passed
    assert not check_rows(rows[:20], EXPECTED)[0].passed  # a participant without rows
    off = [dict(row) for row in rows]
    off[7]["p_framing_b"] = "0.3"
    rows_check, sums = check_rows(off, EXPECTED)
    assert rows_check.passed and not sums.passed and "39 of 40 rows" in sums.detail


def test_arm_shares_within_the_tolerance_of_the_probabilities() -> None:
    rows = [*_good_rows(), _row("ps_c0000000000000000000", 1, None)]  # an unavailable day counts for nothing
    assert check_shares(rows).passed
    skewed = [_row("ps_a0000000000000000000", day, "framing_a" if day <= 8 else CYCLE[day - 1]) for day in range(1, 21)]
    check = check_shares(skewed)
    assert not check.passed and "framing_a 65.0 % (p 35.0 %, +30.0 pp)" in check.detail


def test_identifiers_are_found_in_any_file_but_a_pseudonyms_digits_are_not(tmp_path: Path) -> None:
    expected = Expected(2, 19, 20, {}, phones=("+14165550123",), names=("Amara Okonkwo",))
    digits_in_pseudonym = [_row("ps_4165550123416555012a", day, CYCLE[day - 1]) for day in range(1, 21)]
    assert check_identifiers(_write(tmp_path / "clean", digits_in_pseudonym), expected).passed
    leaks = {
        "phone": "participant,note\nps_a,call (416) 555-0123\n",
        "email": '{"text": "write to amara@example.org"}\n',
        "name": "participant,first\nps_a,AMARA OKONKWO\n",
    }
    for kind, text in leaks.items():
        check = check_identifiers(_write(tmp_path / kind, _good_rows(), ("leak.csv", text)), expected)
        assert not check.passed and f"leak.csv: {kind}" in check.detail, (kind, check.detail)


def test_every_column_must_be_in_the_dictionary(tmp_path: Path) -> None:
    assert check_dictionary(_write(tmp_path / "good", _good_rows())).passed
    extra = [{**row, "phone_hint": ""} for row in _good_rows()]
    check = check_dictionary(_write(tmp_path / "extra", extra))
    assert not check.passed and "decisions.csv:phone_hint" in check.detail
    jsonl = check_dictionary(_write(tmp_path / "jsonl", _good_rows(), ("messages.jsonl", '{"at": "1 08:00"}\n')))
    assert not jsonl.passed and "messages.jsonl:at" in jsonl.detail


def _study() -> StudyDefinition:
    return parse_study(EXAMPLE.read_text())


@pytest.mark.parametrize(("planted", "passes"), [(0.5, True), (0.45, True), (0.0, False)])
def test_a_planted_effect_within_two_standard_errors(planted: float, passes: bool) -> None:
    # done: framing_a on 3 days in 4 (one participant 2 in 4), framing_b and no prompt on 1 in 4
    quarters = {"no_prompt": 1, "framing_a": 3, "framing_b": 1}
    rows: list[dict[str, str]] = []
    for index, participant in enumerate("abcdef"):
        for day in range(1, 49):
            arm = ["no_prompt", "framing_a", "framing_b"][day % 3]
            done = (day // 3) % 4 < quarters[arm] - (index == 0 and arm == "framing_a")
            rows.append(_row(f"ps_{participant}0000000000000000000", day, arm, "done" if done else "none"))
    checks = check_effects(rows, _study(), Expected(6, 47, 48, {"framing_a": planted}))
    assert [check.passed for check in checks if "framing_b" in check.name] == [True]  # 0 planted, 0 found
    framing_a = next(check for check in checks if "framing_a" in check.name)
    assert framing_a.passed is passes, framing_a.detail
    # an arm never drawn: no estimate, which fails the check
    missing = check_effects([row for row in rows if row["arm"] != "framing_b"], _study(), Expected(6, 47, 48, {}))
    assert [(check.passed, check.detail.startswith("no estimate")) for check in missing] == [(False, True)]


def test_the_same_arms_hash_the_same(tmp_path: Path) -> None:
    first = arms_hash(_write(tmp_path / "one", _good_rows()))
    assert first == arms_hash(_write(tmp_path / "two", _good_rows()))
    assert check_same_arms(first, first).passed
    changed = _good_rows()
    changed[0]["arm"] = "framing_b"
    other = arms_hash(_write(tmp_path / "three", changed))
    assert not check_same_arms(first, other).passed
    assert len(read_decisions(tmp_path / "one")) == 40
