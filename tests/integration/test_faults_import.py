"""Fault suite: ``promptpipe import`` on the databases an attacker or an accident makes
(docs/reliability.md, docs/cli.md): deeply nested JSON, a path with ``#`` in it, one row too large
for the table, a schedule registry of 200 entries, and a second run that reads the numbers in another
``--region``. Each is one line per participant in the report, and the run goes on; nothing ends in a
traceback.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import boto3
import pytest

from promptpipe import wiring
from promptpipe.cli.commands import EXIT_OK, main
from promptpipe.models.state import DataKey
from promptpipe.usecases.import_participants import imported_id
from tests.support import ORIGINAL_SQLITE_SCHEMA

GO_TIME = "2026-02-20 09:15:00-05:00"
ZONE = "America/Toronto"


def build(path: Path, rows: list[tuple[str, str, dict[str, Any] | str | None]]) -> Path:
    """An original's database: (id, phone, state_data as a dict, raw text, or None for no state)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.executescript(ORIGINAL_SQLITE_SCHEMA)
    for pid, phone, state in rows:
        db.execute(
            "INSERT INTO conversation_participants (id, phone_number, name, gender, ethnicity, background, status, "
            "enrolled_at, created_at, updated_at) VALUES (?, ?, ?, '', '', '', 'active', ?, ?, ?)",
            (pid, phone, pid, GO_TIME, GO_TIME, GO_TIME),
        )
        if state is not None:
            db.execute(
                "INSERT INTO flow_states (participant_id, flow_type, current_state, state_data) "
                "VALUES (?, 'conversation', 'CONVERSATION_ACTIVE', ?)",
                (pid, state if isinstance(state, str) else json.dumps(state)),
            )
    db.commit()
    db.close()
    return path


@pytest.fixture
def env(local_env_factory: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    environment = local_env_factory()
    monkeypatch.setattr(wiring, "build_app", lambda: environment.app)
    return environment


def run_import(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["import", *argv, "--default-timezone", ZONE])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def report_line(out: str, original_id: str) -> str:
    [line] = [line for line in out.splitlines() if line.strip().startswith(f"{original_id} -> ")]
    return line


def schedule_names(env: Any) -> list[str]:
    scheduler = boto3.client("scheduler", region_name="us-east-1")
    paginator = scheduler.get_paginator("list_schedules")
    return sorted(
        s["Name"] for page in paginator.paginate(GroupName=env.settings.schedule_group_name) for s in page["Schedules"]
    )


def registry(count: int) -> list[dict[str, str]]:
    """``count`` fixed daily schedules, listed latest first (the import keeps the earliest)."""
    return [
        {
            "id": f"s{n:03d}",
            "type": "fixed",
            "fixed_time": f"{n // 60 % 24:02d}:{n % 60:02d}",
            "timezone": ZONE,
            "created_at": "2026-02-20T14:20:00Z",
        }
        for n in reversed(range(count))
    ]


def test_deeply_nested_json_is_bounded_and_the_run_goes_on(env: Any, tmp_path: Path, capsys) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    path = build(
        tmp_path / "original.db",
        [
            ("deep-state", "+14165550101", deep),  # the whole state_data
            ("deep-profile", "+14165550102", {DataKey.USER_PROFILE.value: deep}),
            ("deep-registry", "+14165550103", {DataKey.SCHEDULE_REGISTRY.value: deep}),
            ("fine", "+14165550104", {DataKey.SCHEDULE_REGISTRY.value: json.dumps(registry(1))}),
        ],
    )
    code, out, _ = run_import(capsys, "--sqlite", str(path))
    assert code == EXIT_OK
    assert out.startswith("4 participants read; imported 4,")
    assert "nested deeper than" in out
    for original_id in ("deep-state", "deep-profile", "deep-registry", "fine"):
        assert env.app.repo.get(imported_id(original_id)).phone_number.startswith("+1416555010")
    assert schedule_names(env) == [f"{imported_id('fine')}-s000"]


def test_a_sqlite_path_is_taken_literally(env: Any, tmp_path: Path, capsys) -> None:
    # Given a database at "dir/study#1.db" (and "dir/study", which a URI reading would open, absent)
    path = build(tmp_path / "dir" / "study#1.db", [("one", "+14165550101", None)])
    code, out, _ = run_import(capsys, "--sqlite", str(path))
    assert code == EXIT_OK and out.startswith("1 participants read; imported 1,")
    assert not (tmp_path / "dir" / "study").exists()
    # and "?" in a name too
    other = build(tmp_path / "dir" / "what?mode=rw.db", [("two", "+14165550102", None)])
    code, out, _ = run_import(capsys, "--sqlite", str(other))
    assert code == EXIT_OK and out.startswith("1 participants read; imported 1,")


def test_one_oversized_row_is_reported_by_participant_and_skipped(env: Any, tmp_path: Path, capsys) -> None:
    huge = {DataKey.USER_PROFILE.value: json.dumps({"prompt_anchor": "x" * 450_000})}
    path = build(
        tmp_path / "original.db",
        [("before", "+14165550101", None), ("huge-one", "+14165550102", huge), ("after", "+14165550103", None)],
    )
    code, out, _ = run_import(capsys, "--sqlite", str(path))
    assert code == EXIT_OK
    assert out.startswith("3 participants read; imported 2, already imported 0, skipped 1")
    line = report_line(out, "huge-one")
    assert "skipped" in line and "too large" in line
    assert env.app.repo.get(imported_id("after")).phone_number == "+14165550103"
    assert env.app.repo.find_id_by_phone("+14165550102") is None


def test_a_200_entry_registry_makes_at_most_3_live_daily_schedules(env: Any, tmp_path: Path, capsys) -> None:
    state = {DataKey.SCHEDULE_REGISTRY.value: json.dumps(registry(200))}
    path = build(tmp_path / "original.db", [("many", "+14165550101", state)])
    code, out, _ = run_import(capsys, "--sqlite", str(path))
    assert code == EXIT_OK
    pid = imported_id("many")
    # the first three by time of day, and the 197 others named in the report
    assert schedule_names(env) == [f"{pid}-s000", f"{pid}-s001", f"{pid}-s002"]
    assert "(3 schedules)" in report_line(out, "many")
    assert "197 daily schedules over the limit of 3 not imported" in out and "s003, s004" in out and "187 more" in out
    stored = env.app.store.load(pid).flow.state_data[DataKey.SCHEDULE_REGISTRY.value]
    assert [s["id"] for s in json.loads(stored)] == ["s002", "s001", "s000"]  # the registry's order


def test_reimport_with_another_region_is_a_clear_conflict(env: Any, tmp_path: Path, capsys) -> None:
    path = build(tmp_path / "original.db", [("local", "4165550101", None), ("other", "+14165550109", None)])
    code, out, _ = run_import(capsys, "--sqlite", str(path), "--region", "US")
    assert code == EXIT_OK and "imported 2" in out
    # When the same database is imported again, its national numbers read as German ones (previewed first)
    code, out, err = run_import(capsys, "--sqlite", str(path), "--region", "DE", "--dry-run")
    assert code == EXIT_OK and "already imported" in report_line(out, "local") and "--region DE" in out
    code, out, err = run_import(capsys, "--sqlite", str(path), "--region", "DE")
    assert code == EXIT_OK, err
    line = report_line(out, "local")
    assert "skipped" in line and "already imported" in line and "--region" in line
    assert "other" in out and "already_imported" in report_line(out, "other")
    # and nothing changed: the participant keeps the number of the first run, none was claimed twice
    assert env.app.repo.get(imported_id("local")).phone_number == "+14165550101"
    assert env.app.repo.find_id_by_phone("+494165550101") is None
