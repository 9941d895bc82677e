"""The export's counts as the system records them: hand-offs from the flow controller's audit and
state (docs/controller.md), imported history from the import's record."""

from __future__ import annotations

import csv
from pathlib import Path

from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.coordinator.export import write_export
from tests.support.api_fakes import CannedApi, entry, participant


def exported(tmp_path: Path, api: CannedApi) -> dict[str, dict[str, str]]:
    write_export(CoordinatorClient(api), tmp_path)
    with (tmp_path / "participants.csv").open(newline="", encoding="utf-8") as f:
        return {row["participant_id"]: row for row in csv.DictReader(f)}


def test_handoffs_count_the_controllers_new_holds_not_the_turns_waiting_on_them(tmp_path: Path) -> None:
    # Given a participant handed to a person, released, then deadlocked (each turn's audit as the
    # pipeline records it), and one on hold whose turn is not in the transcript
    a, b = participant("a1"), participant("b2", phone_number="+14165550143")
    history = [
        entry(a["id"], 0, "outbound", "reply", "Let me find someone", controller={"status": "OK", "mode": "HANDOFF"}),
        entry(a["id"], 5, "outbound", "reply", "Someone will reply", controller={"status": "PAUSED", "mode": None}),
        entry(a["id"], 9, "outbound", "reply", "Sure", controller={"status": "OK", "mode": "EXECUTE"}),
        entry(a["id"], 20, "outbound", "reply", "Let me find someone", controller={"status": "DEADLOCK", "mode": None}),
    ]
    on_hold = {"sub_state": "INTAKE", "controller": {"needs_person": True, "hold": {"kind": "HANDOFF"}}}
    api = CannedApi([a, b], {a["id"]: history, b["id"]: []}, {a["id"]: {"sub_state": "INTAKE"}, b["id"]: on_hold})

    rows = exported(tmp_path, api)

    assert rows[a["id"]]["handoffs"] == "2"
    assert rows[b["id"]]["handoffs"] == "1"


def test_imported_counts_add_to_the_prompts_and_done(tmp_path: Path) -> None:
    p = participant("c3")
    history = [
        entry(p["id"], 0, "inbound", "imported", "I walked", imported=True, role="user"),
        entry(p["id"], 1, "system", "import", "Imported …", imported=True, messages=1, prompts=7, done=4),
        entry(p["id"], 60, "outbound", "daily_prompt", "Walk. Did you do it?"),
        entry(p["id"], 65, "inbound", "message", "Done", parsed_answer="Q: Did you do it? A: Done"),
    ]
    rows = exported(tmp_path, CannedApi([p], {p["id"]: history}, {p["id"]: {"sub_state": "FEEDBACK"}}))

    row = rows[p["id"]]
    assert (row["prompts_sent"], row["answered"], row["done"], row["done_rate"]) == ("8", "5", "5", "0.625")
    with (tmp_path / "prompts.csv").open(newline="", encoding="utf-8") as f:
        assert [r["answer"] for r in csv.DictReader(f)] == ["Done"]  # imported history is not a prompt row
