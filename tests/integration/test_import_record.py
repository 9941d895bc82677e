"""``promptpipe import`` keeps what the original knew: each participant's zone (from the schedule
registry, the original's participants table having no zone column), national numbers read in
``--region``, and the conversation history with the counts it implies, visible in the transcript,
the export and the console's data. The database is built here with the original's own schema
(``internal/store/migrations_sqlite.sql``: no ``timezone`` column)."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from promptpipe import wiring
from promptpipe.cli.commands import main
from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.coordinator.export import write_export
from promptpipe.coordinator.summary import summarize, transcript_text, zone_of
from promptpipe.local.api_transport import InProcessTransport
from promptpipe.models.state import DataKey
from promptpipe.usecases.import_participants import imported_id
from tests.support import ORIGINAL_SQLITE_SCHEMA

GO_TIME = "2026-02-20 09:15:00.123456789-05:00"
HISTORY = [
    {
        "role": "assistant",
        "content": "Your habit for today: a 10-minute walk. Did you do it?",
        "timestamp": "2026-02-24T13:00:00Z",
    },
    {"role": "user", "content": "Done, walked to the park", "timestamp": "2026-02-24T14:05:00Z"},
    {"role": "assistant", "content": "Great work!", "timestamp": "2026-02-24T14:05:30Z"},
]
NEW_YORK_STATE = {
    DataKey.CONVERSATION_STATE.value: "FEEDBACK",
    DataKey.CONVERSATION_HISTORY.value: json.dumps({"messages": HISTORY}),
    DataKey.USER_PROFILE.value: json.dumps({"habit_domain": "walking", "total_prompts": 7, "success_count": 4}),
    DataKey.SCHEDULE_REGISTRY.value: json.dumps(
        [
            {
                "id": "sched_a",
                "type": "fixed",
                "fixed_time": "08:00",
                "timezone": "America/New_York",
                "timer_id": "t1",
                "created_at": "2026-02-20T14:20:00Z",
            }
        ]
    ),
}


def build_original(path: Path) -> Path:
    db = sqlite3.connect(path)
    db.executescript(ORIGINAL_SQLITE_SCHEMA)
    for pid, phone, state in (
        ("legacy-ny-1", "5164845567", NEW_YORK_STATE),  # a national number: the original kept what was typed
        ("legacy-uk-2", "447400123456", {DataKey.CONVERSATION_STATE.value: "INTAKE"}),  # no registry, no zone
    ):
        db.execute(
            "INSERT INTO conversation_participants (id, phone_number, name, status, enrolled_at) "
            "VALUES (?, ?, ?, 'active', ?)",
            (pid, phone, pid, GO_TIME),
        )
        db.execute(
            "INSERT INTO flow_states (participant_id, flow_type, current_state, state_data) "
            "VALUES (?, 'conversation', 'CONVERSATION_ACTIVE', ?)",
            (pid, json.dumps(state)),
        )
    db.commit()
    db.close()
    return path


def run_cli(env: Any, argv: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(wiring, "build_app", lambda: env.app)
    return main(argv)


def test_without_a_zone_for_everyone_the_import_asks_for_a_default_and_writes_nothing(
    tmp_path: Path, local_env_factory: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env = local_env_factory()
    path = build_original(tmp_path / "original.db")

    assert run_cli(env, ["import", "--sqlite", str(path), "--region", "US"], monkeypatch) == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "legacy-uk-2" in err and "--default-timezone" in err
    assert "legacy-ny-1" not in err  # its zone is in its schedule registry
    assert env.app.repo.find_id_by_phone("+15164845567") is None


def test_import_keeps_zones_national_numbers_and_history(
    tmp_path: Path, local_env_factory: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env = local_env_factory()
    path = build_original(tmp_path / "original.db")
    argv = ["import", "--sqlite", str(path), "--region", "US", "--default-timezone", "Europe/London"]

    # The dry run and the run report the same counts
    assert run_cli(env, [*argv, "--dry-run"], monkeypatch) == 0
    dry = capsys.readouterr().out
    assert run_cli(env, argv, monkeypatch) == 0
    real = capsys.readouterr().out
    assert dry.startswith("DRY RUN (nothing written): ")
    assert dry.removeprefix("DRY RUN (nothing written): ").replace("would_import", "imported") == real
    assert real.splitlines()[0] == (
        "2 participants read; imported 2, already imported 0, skipped 0; schedules created 1; history messages 3"
    )
    # The report names the country found and where each zone came from
    assert "+*******5567 (US) imported" in real and "+********3456 (GB) imported" in real
    assert "zone America/New_York (from scheduleRegistry)" in real
    assert "zone Europe/London (from --default-timezone)" in real
    assert "history: 3 messages, 7 prompts, 4 done" in real

    # A national number read in --region, not as +51 (Peru); each participant keeps their zone
    new_york, london = imported_id("legacy-ny-1"), imported_id("legacy-uk-2")
    assert env.app.repo.find_id_by_phone("+15164845567") == new_york
    assert env.app.repo.get(new_york).timezone == "America/New_York"
    assert env.app.repo.get(london).timezone == "Europe/London"

    # The history is in the transcript the API serves, marked as imported
    client = CoordinatorClient(InProcessTransport(env))
    entries = list(client.iter_history(new_york))
    imported = [e for e in entries if e.kind == "imported"]
    assert [(e.direction.value, e.content) for e in imported] == [
        ("outbound", HISTORY[0]["content"]),
        ("inbound", HISTORY[1]["content"]),
        ("outbound", HISTORY[2]["content"]),
    ]
    assert all(e.metadata["imported"] is True for e in imported)
    participant = client.participant(new_york)
    text = transcript_text(participant, entries, zone_of(participant))
    assert "times in America/New_York" in text
    assert "09:05 participant ›  [imported] Done, walked to the park" in text  # 14:05Z in New York

    # … with the prompt and answer counts it implies, in the summary and the export
    summary = summarize(participant, entries, client.state(new_york))
    assert (summary.prompts_sent, summary.done) == (7, 4)
    counts = write_export(client, tmp_path / "export")
    rows = {r["participant_id"]: r for r in csv.DictReader((tmp_path / "export" / "participants.csv").open())}
    assert rows[new_york]["prompts_sent"] == "7" and rows[new_york]["done"] == "4"
    assert rows[new_york]["timezone"] == "America/New_York"
    assert counts.messages == len(entries) + len(list(client.iter_history(london)))
    messages = [json.loads(line) for line in (tmp_path / "export" / "messages.jsonl").open()]
    assert sum(1 for m in messages if m["kind"] == "imported") == 3

    # Run again: nothing new
    assert run_cli(env, argv, monkeypatch) == 0
    assert "already imported 2" in capsys.readouterr().out
    assert len(list(client.iter_history(new_york))) == len(entries)
