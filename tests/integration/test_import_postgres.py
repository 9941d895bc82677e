"""``promptpipe import --postgres``: the same import from a Postgres database laid out as the
original's (``state_data`` JSONB, ``TIMESTAMP`` columns). Needs the optional ``psycopg`` package and
the PostgreSQL server binaries (``initdb``, ``pg_ctl``); skipped where either is missing."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

psycopg = pytest.importorskip("psycopg")

from promptpipe.adapters.original_db import read_postgres  # noqa: E402
from promptpipe.models.state import DataKey  # noqa: E402
from promptpipe.usecases.import_participants import import_participants  # noqa: E402

ORIGINAL_TABLES = """
CREATE TABLE flow_states (
    id SERIAL PRIMARY KEY, participant_id TEXT NOT NULL, flow_type TEXT NOT NULL,
    current_state TEXT NOT NULL, state_data JSONB,
    created_at TIMESTAMP NOT NULL DEFAULT NOW(), updated_at TIMESTAMP NOT NULL DEFAULT NOW(),
    UNIQUE(participant_id, flow_type)
);
CREATE TABLE conversation_participants (
    id TEXT PRIMARY KEY, phone_number TEXT NOT NULL UNIQUE, name TEXT, gender TEXT, ethnicity TEXT,
    background TEXT, timezone TEXT, status TEXT NOT NULL, enrolled_at TIMESTAMP NOT NULL,
    created_at TIMESTAMP NOT NULL DEFAULT NOW(), updated_at TIMESTAMP NOT NULL DEFAULT NOW()
);
"""
REGISTRY = [
    {
        "id": "sched_pg01",
        "type": "fixed",
        "fixed_time": "09:30",
        "timezone": "Europe/Berlin",
        "created_at": "2026-02-20T08:00:00Z",
        "timer_id": "timer_pg",
    },
]


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for base in Path("/usr/lib/postgresql").glob("*/bin"):
        if (base / name).exists():
            return str(base / name)
    return None


@pytest.fixture
def postgres_dsn() -> Iterator[str]:
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL server binaries not installed")
    as_user: list[str] = []
    if os.geteuid() == 0:  # the server refuses to run as root
        if not shutil.which("runuser"):
            pytest.skip("running as root without runuser")
        as_user = ["runuser", "-u", "postgres", "--"]
    root = Path(tempfile.mkdtemp(prefix="pp-pg-"))
    data, sockets = root / "data", root / "sock"
    sockets.mkdir()
    if as_user:
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    subprocess.run(
        [*as_user, initdb, "-D", str(data), "-U", "postgres", "--auth=trust"], check=True, capture_output=True
    )
    options = f"-k {sockets} -p {port} -c listen_addresses=''"
    subprocess.run(
        [*as_user, pg_ctl, "-D", str(data), "-o", options, "-w", "start", "-l", str(root / "log")],
        check=True,
        capture_output=True,
    )
    try:
        yield f"host={sockets} port={port} user=postgres dbname=postgres"
    finally:
        subprocess.run([*as_user, pg_ctl, "-D", str(data), "-m", "immediate", "stop"], check=False, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def test_import_from_postgres(postgres_dsn: str, local_env_factory: Any) -> None:
    state = {
        DataKey.CONVERSATION_STATE.value: "FEEDBACK",
        DataKey.SCHEDULE_REGISTRY.value: json.dumps(REGISTRY),
        DataKey.USER_PROFILE.value: json.dumps({"habit_domain": "reading", "intensity": "low"}),
    }
    with psycopg.connect(postgres_dsn, autocommit=True) as db:
        db.execute(ORIGINAL_TABLES)
        db.execute(
            "INSERT INTO conversation_participants (id, phone_number, name, timezone, status, enrolled_at) "
            "VALUES ('pg-1', '+49 151 23456789', 'Mia', 'Europe/Berlin', 'active', '2026-02-20 08:00:00'), "
            "('pg-2', 'not a number', 'X', '', 'active', '2026-02-20 08:00:00')"
        )
        db.execute(
            "INSERT INTO flow_states (participant_id, flow_type, current_state, state_data) "
            "VALUES ('pg-1', 'conversation', 'CONVERSATION_ACTIVE', %s)",
            (json.dumps(state),),
        )
    originals = read_postgres(postgres_dsn)
    assert [o.id for o in originals] == ["pg-1", "pg-2"]
    assert originals[0].state_data == state and originals[0].enrolled_at is not None

    env = local_env_factory()
    report = import_participants(env.app, originals)
    assert [(line.outcome, line.schedules) for line in report.lines] == [("imported", 1), ("skipped", 0)]
    pid = env.app.repo.find_id_by_phone("+4915123456789")
    assert pid == report.lines[0].participant_id
    stored = env.app.store.load(pid).flow.state_data
    assert stored[DataKey.USER_PROFILE.value] == state[DataKey.USER_PROFILE.value]
    assert import_participants(env.app, originals).count("already_imported") == 1
