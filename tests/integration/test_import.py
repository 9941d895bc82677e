"""``promptpipe import`` against a SQLite database laid out as the original PromptPipe's
(``conversation_participants`` and ``flow_states`` with the columns of its published migrations,
``internal/store/migrations_sqlite.sql``), with representative rows, into the local stack (moto
DynamoDB and EventBridge Scheduler)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import boto3
import pytest

from promptpipe.adapters.original_db import parse_time, read_sqlite
from promptpipe.cli.commands import main
from promptpipe.models.state import DataKey
from promptpipe.usecases.import_participants import import_participants, imported_id
from tests.support import ORIGINAL_SQLITE_SCHEMA

# The two tables the import reads, with the original's column names and types (its migrations have
# no timezone column; a later database of this system's own kind may add one).
ORIGINAL_TABLES = ORIGINAL_SQLITE_SCHEMA + "ALTER TABLE conversation_participants ADD COLUMN timezone TEXT;\n"

ACTIVE_ID = "p_" + "a1" * 16  # already in this system's id form
GO_TIME = "2026-02-20 09:15:00.123456789-05:00"  # as Go's SQLite driver writes a time.Time

REGISTRY = [
    {
        "id": "sched_fixed01",
        "type": "fixed",
        "fixed_time": "08:00",
        "timezone": "America/Toronto",
        "created_at": "2026-02-20T14:20:00Z",
        "timer_id": "timer_1708438800_abc",
    },
    {
        "id": "sched_random01",
        "type": "random",
        "random_start_time": "18:00",
        "random_end_time": "20:00",
        "timezone": "",
        "created_at": "2026-02-21T14:20:00Z",
        "timer_id": "timer_1708525200_def",
    },
]
PROFILE = {
    "habit_domain": "physical activity",
    "motivational_frame": "feel energetic",
    "preferred_time": "08:00",
    "prompt_anchor": "after coffee",
    "intensity": "normal",
    "success_count": 3,
    "total_prompts": 5,
}


def active_state() -> dict[str, str]:
    return {
        DataKey.CONVERSATION_STATE.value: "FEEDBACK",
        DataKey.CONVERSATION_HISTORY.value: json.dumps(
            {"messages": [{"role": "user", "content": "I walked", "timestamp": "2026-02-24T14:00:00Z"}]}
        ),
        DataKey.USER_PROFILE.value: json.dumps(PROFILE),
        DataKey.SCHEDULE_REGISTRY.value: json.dumps(REGISTRY),
        DataKey.LAST_PROMPT_SENT_AT.value: "2026-02-25T12:50:00Z",
        DataKey.DAILY_PROMPT_PENDING.value: json.dumps(
            {"sent_at": "2026-02-25T12:50:00Z", "to": "+14165550101", "reminder_due_at": "2026-02-25T17:50:00Z"}
        ),
        DataKey.DAILY_PROMPT_REMINDER_TIMER_ID.value: "timer_1708879800_rem",
        DataKey.FEEDBACK_STATE.value: "waiting_initial",
    }


ROWS: list[tuple[Any, ...]] = [
    # id, phone, name, status, timezone, current_state, state_data
    (ACTIVE_ID, "+1 416 555 0101", "Sam", "active", "America/Toronto", "CONVERSATION_ACTIVE", active_state()),
    (
        "legacy-paused-7",
        "(416) 555-0102",
        "Kim",
        "paused",
        "America/Toronto",
        "CONVERSATION_ACTIVE",
        {DataKey.CONVERSATION_STATE.value: "INTAKE", DataKey.SCHEDULE_REGISTRY.value: json.dumps(REGISTRY[:1])},
    ),
    (
        "legacy-corrupt-8",
        "447911123456",  # the original's stored form: digits with the country code, no "+"
        "Ana",
        "active",
        "Europe/London",
        "CONVERSATION_ACTIVE",
        {DataKey.CONVERSATION_STATE.value: "FEEDBACK", DataKey.USER_PROFILE.value: '{"habit_domain": "walk", oops'},
    ),
    ("legacy-badphone-9", "12345", "Lee", "active", "UTC", "CONVERSATION_ACTIVE", {}),
    # The same person under another spelling of Sam's number: a duplicate here
    ("legacy-dup-10", "416-555-0101", "Sam again", "active", "America/Toronto", "CONVERSATION_ACTIVE", {}),
    ("legacy-nostate-11", "+14165550103", "Jo", "active", "", None, None),
]


def build_original(path: Path) -> Path:
    db = sqlite3.connect(path)
    db.executescript(ORIGINAL_TABLES)
    for pid, phone, name, status, zone, current, state in ROWS:
        db.execute(
            "INSERT INTO conversation_participants (id, phone_number, name, gender, ethnicity, background, status, "
            "enrolled_at, created_at, updated_at, timezone) VALUES (?, ?, ?, '', '', '', ?, ?, ?, ?, ?)",
            (pid, phone, name, status, GO_TIME, GO_TIME, GO_TIME, zone),
        )
        if current is not None:
            db.execute(
                "INSERT INTO flow_states (participant_id, flow_type, current_state, state_data, created_at, "
                "updated_at) VALUES (?, 'conversation', ?, ?, ?, ?)",
                (pid, current, json.dumps(state) if state else "", GO_TIME, GO_TIME),
            )
    db.commit()
    db.close()
    return path


def table_items(env: Any) -> list[dict[str, Any]]:
    client = boto3.client("dynamodb", region_name="us-east-1")
    items = client.scan(TableName=env.settings.table_name)["Items"]
    return sorted(items, key=lambda i: (i["pk"]["S"], i["sk"]["S"]))


def schedule_names(env: Any) -> list[str]:
    scheduler = boto3.client("scheduler", region_name="us-east-1")
    return sorted(s["Name"] for s in scheduler.list_schedules(GroupName=env.settings.schedule_group_name)["Schedules"])


def test_read_sqlite_keeps_keys_and_parses_go_times(tmp_path: Path) -> None:
    originals = {o.id: o for o in read_sqlite(str(build_original(tmp_path / "original.db")))}
    assert set(originals) == {row[0] for row in ROWS}
    active = originals[ACTIVE_ID]
    assert active.state_data == active_state()
    assert active.timezone == "America/Toronto" and active.current_state == "CONVERSATION_ACTIVE"
    assert active.enrolled_at is not None and active.enrolled_at.isoformat() == "2026-02-20T09:15:00.123456-05:00"
    assert originals["legacy-nostate-11"].state_data is None
    assert parse_time("2026-02-20 14:15:00 +0000 UTC") is not None and parse_time("garbage") is None


def test_import_dry_run_then_import_then_again_changes_nothing(tmp_path: Path, local_env_factory: Any) -> None:
    env = local_env_factory()
    originals = read_sqlite(str(build_original(tmp_path / "original.db")))
    before = table_items(env)

    # Dry run: a report, nothing written
    dry = import_participants(env.app, originals, dry_run=True, default_timezone="America/Toronto")
    assert table_items(env) == before and schedule_names(env) == []
    assert dry.count("would_import") == 4 and dry.count("skipped") == 2

    # Import
    report = import_participants(env.app, originals, default_timezone="America/Toronto")
    outcome = {line.original_id: (line.outcome, line.reason) for line in report.lines}
    assert outcome[ACTIVE_ID] == ("imported", "")
    assert outcome["legacy-paused-7"][0] == outcome["legacy-corrupt-8"][0] == "imported"
    assert outcome["legacy-nostate-11"][0] == "imported"
    assert outcome["legacy-badphone-9"][0] == "skipped" and "canonicalised" in outcome["legacy-badphone-9"][1]
    assert outcome["legacy-dup-10"] == ("skipped", f"same phone number as {ACTIVE_ID} in the original")
    assert report.schedules_created == 2  # the active participant's fixed and random schedules only

    # The active participant: same id, canonical phone claim, DataKey strings unchanged
    assert env.app.repo.find_id_by_phone("+14165550101") == ACTIVE_ID
    loaded = env.app.store.load(ACTIVE_ID)
    data = loaded.flow.state_data
    original = active_state()
    for key in (
        DataKey.CONVERSATION_STATE,
        DataKey.CONVERSATION_HISTORY,
        DataKey.USER_PROFILE,
        DataKey.DAILY_PROMPT_PENDING,
    ):
        assert data[key.value] == original[key.value]
    assert data.get(DataKey.DAILY_PROMPT_REMINDER_TIMER_ID.value, "") == ""  # the original's in-process timer
    registry = json.loads(data[DataKey.SCHEDULE_REGISTRY.value])
    assert [s["id"] for s in registry] == ["sched_fixed01", "sched_random01"]
    assert [s["timer_id"] for s in registry] == [f"{ACTIVE_ID}-sched_fixed01", f"{ACTIVE_ID}-sched_random01"]
    assert registry[1]["timezone"] == "America/Toronto"  # an empty zone takes the participant's
    assert schedule_names(env) == sorted(s["timer_id"] for s in registry)
    scheduler = boto3.client("scheduler", region_name="us-east-1")
    fixed = scheduler.get_schedule(Name=registry[0]["timer_id"], GroupName=env.settings.schedule_group_name)
    assert fixed["ScheduleExpression"] == "cron(50 7 * * ? *)"  # 08:00 less the 10-minute preparation time
    assert fixed["ScheduleExpressionTimezone"] == "America/Toronto"

    # Other ids are replaced by stable ones; the paused participant gets no live schedule
    paused = imported_id("legacy-paused-7")
    assert env.app.repo.get(paused).status.value == "paused"
    assert not [n for n in schedule_names(env) if paused in n]
    corrupt = next(line for line in report.lines if line.original_id == "legacy-corrupt-8")
    assert any("userProfile is unreadable" in w for w in corrupt.warnings)
    # The original's digits are read as international first: a UK number, not a US one
    assert env.app.repo.find_id_by_phone("+447911123456") == corrupt.participant_id
    assert env.app.store.load(corrupt.participant_id).flow.state_data[DataKey.USER_PROFILE.value].endswith("oops")

    # A second run changes nothing
    after_first, schedules_first = table_items(env), schedule_names(env)
    again = import_participants(env.app, originals, default_timezone="America/Toronto")
    assert again.count("already_imported") == 4 and again.count("imported") == 0
    assert again.schedules_created == 0
    assert table_items(env) == after_first and schedule_names(env) == schedules_first


def test_cli_import_prints_the_report(
    tmp_path: Path, local_env_factory: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    env = local_env_factory()
    path = build_original(tmp_path / "original.db")
    from promptpipe import wiring

    built: list[Any] = []

    def build_app() -> Any:
        built.append(env.app)
        return env.app

    original_build = wiring.build_app
    wiring.build_app = build_app  # type: ignore[assignment]
    try:
        assert main(["import", "--sqlite", str(path), "--dry-run", "--default-timezone", "America/Toronto"]) == 0
    finally:
        wiring.build_app = original_build  # type: ignore[assignment]
    out = capsys.readouterr().out
    assert out.startswith("DRY RUN (nothing written): 6 participants read; imported 4, already imported 0, skipped 2")
    assert "legacy-badphone-9 -> - " in out and "+1******0101" not in out.split("\n")[0]
    assert built and schedule_names(env) == []


def test_a_profile_with_an_unreadable_value_keeps_its_other_fields(tmp_path: Path, local_env_factory: Any) -> None:
    # Given an original participant whose profile has one value this system does not know, one count
    # that is not a number and one tone tag that is not text
    profile = {
        **PROFILE,
        "success_count": "three",
        "tone": {"tone_tags": ["warm", 7], "tone_update_source": "sometimes", "tone_version": 2},
    }
    path = tmp_path / "original.db"
    db = sqlite3.connect(path)
    db.executescript(ORIGINAL_TABLES)
    db.execute(
        "INSERT INTO conversation_participants (id, phone_number, name, status, enrolled_at, timezone) "
        "VALUES (?, '+14165550104', 'Ray', 'paused', ?, 'America/Toronto')",
        ("legacy-tone-12", GO_TIME),
    )
    state = {DataKey.CONVERSATION_STATE.value: "INTAKE", DataKey.USER_PROFILE.value: json.dumps(profile)}
    db.execute(
        "INSERT INTO flow_states (participant_id, flow_type, current_state, state_data) "
        "VALUES ('legacy-tone-12', 'conversation', 'CONVERSATION_ACTIVE', ?)",
        (json.dumps(state),),
    )
    db.commit()
    db.close()
    env = local_env_factory()

    # When it is imported
    [line] = import_participants(env.app, read_sqlite(str(path))).lines

    # Then it is imported with one warning per dropped field, naming the field (never the value) …
    assert line.outcome == "imported"
    assert sorted(w.split(":")[0] for w in line.warnings) == [
        "userProfile.success_count",
        "userProfile.tone.tone_tags",
        "userProfile.tone.tone_update_source",
    ]
    assert all(w.endswith("; dropped") and "sometimes" not in w and "three" not in w for w in line.warnings)
    assert not any("unreadable" in w for w in line.warnings)
    # … and everything else of the profile is there and readable
    stored = json.loads(env.app.store.load(line.participant_id).flow.state_data[DataKey.USER_PROFILE.value])
    assert "success_count" not in stored and stored["tone"] == {"tone_version": 2}
    assert {k: v for k, v in stored.items() if k not in ("success_count", "tone")} == {
        k: v for k, v in PROFILE.items() if k != "success_count"
    }
    state_view = env.api("GET", f"/conversation/participants/{line.participant_id}/state").body["result"]
    assert state_view["profile"]["habit_domain"] == "physical activity"
    assert state_view["profile"]["prompt_anchor"] == "after coffee" and state_view["profile"]["total_prompts"] == 5


@pytest.mark.parametrize(
    ("schema", "missing"),
    [
        (
            "CREATE TABLE conversation_participants (participant_key TEXT, mobile TEXT, name TEXT);"
            "CREATE TABLE flow_states (participant_id TEXT, flow_type TEXT, current_state TEXT, state_data TEXT);",
            "conversation_participants (id, phone_number)",
        ),
        (
            "CREATE TABLE conversation_participants (id TEXT, phone_number TEXT);"
            "CREATE TABLE flow_states (participant_id TEXT, flow_type TEXT, state TEXT);",
            "flow_states (current_state, state_data)",
        ),
        ("CREATE TABLE conversation_participants (id TEXT, phone_number TEXT);", "flow_states (no such table)"),
    ],
)
def test_tables_without_the_expected_columns_are_named_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], schema: str, missing: str
) -> None:
    # Given a database whose tables lack columns the import needs
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.executescript(schema)
    db.close()
    # When it is imported / Then one line names what is missing, exit 3 (docs/cli.md), no SQL error
    assert main(["import", "--sqlite", str(path), "--dry-run"]) == 3
    err = capsys.readouterr().err
    assert err == f"promptpipe import: not the original PromptPipe's tables: missing columns in {missing}\n"
