"""The export's CSV files are safe to open in a spreadsheet: no cell is read as a formula
(docs/export.md, "Safe to open")."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.coordinator.csv_safety import safe_cell
from promptpipe.coordinator.export import write_export
from tests.support.api_fakes import CannedApi, entry, participant

LINK = '=HYPERLINK("http://example.com/x","click")'


@pytest.mark.parametrize(
    ("raw", "written"),
    [
        (LINK, "'" + LINK),
        ("+1+2", "'+1+2"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("Done, 2 km", "Done, 2 km"),
        ("a=b", "a=b"),
        ("", ""),
        (3, 3),
        (-0.5, -0.5),
    ],
)
def test_a_text_cell_that_starts_like_a_formula_is_written_as_text(raw: object, written: object) -> None:
    assert safe_cell(raw) == written


def test_participants_and_prompts_csv_hold_no_formula(tmp_path: Path) -> None:
    # Given a participant whose name and reply are formulas
    person = participant("ab", name=LINK)
    pid = person["id"]
    history = [
        entry(pid, 0, "outbound", "daily_prompt", "-Walk 10 minutes. Did you do it?"),
        entry(pid, 5, "inbound", "message", "@SUM(1+1)"),
    ]
    api = CannedApi([person], {pid: history}, {pid: {"sub_state": "FEEDBACK", "profile": {"prompt_anchor": "+coffee"}}})

    # When exported
    write_export(CoordinatorClient(api), tmp_path)

    # Then no cell of either file starts like a formula, and the text is all there after the quote
    for name in ("participants.csv", "prompts.csv"):
        with (tmp_path / name).open(newline="", encoding="utf-8") as f:
            cells = [cell for row in csv.reader(f) for cell in row]
        assert not [c for c in cells if c.startswith(("=", "+", "-", "@", "\t", "\r"))], name
    with (tmp_path / "participants.csv").open(newline="", encoding="utf-8") as f:
        [row] = list(csv.DictReader(f))
    assert row["name"] == "'" + LINK and row["prompt_anchor"] == "'+coffee"
    assert row["phone_number"] == "'+14165550142"
    with (tmp_path / "prompts.csv").open(newline="", encoding="utf-8") as f:
        [prompt] = list(csv.DictReader(f))
    assert prompt["first_reply"] == "'@SUM(1+1)" and prompt["prompt"].startswith("'-Walk")
    assert prompt["latency_minutes"] == "5.0"
