"""Reading a study from the original PromptPipe's database (SQLite or Postgres).

The original (Go) keeps conversation participants in ``conversation_participants`` (id, phone_number,
name, gender, ethnicity, background, timezone, status, enrolled_at, created_at, updated_at; the
``timezone`` column was added later, so older databases lack it) and their state in ``flow_states``
(participant_id, flow_type, current_state, state_data: a JSON object of ``DataKey`` string to string
— TEXT in SQLite, JSONB in Postgres). Nothing here writes to the original.

Postgres needs the optional ``psycopg`` package (``pip install 'promptpipe-serverless[import-postgres]'``).
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from promptpipe.errors import ConfigurationError, ResourceUnavailable
from promptpipe.models.original import OriginalParticipant
from promptpipe.rules.http_body import MAX_JSON_DEPTH, MalformedBody, check_json_depth, read_json_text

CONVERSATION_FLOW = "conversation"
_PARTICIPANT_COLUMNS = (
    "id",
    "phone_number",
    "name",
    "gender",
    "ethnicity",
    "background",
    "timezone",
    "status",
    "enrolled_at",
    "created_at",
    "updated_at",
)
# What the import cannot do without; the other participant columns are read when present.
_REQUIRED_COLUMNS = {
    "conversation_participants": ("id", "phone_number"),
    "flow_states": ("participant_id", "flow_type", "current_state", "state_data"),
}


def sqlite_read_only_uri(path: str) -> str:
    """The read-only URI of the file at ``path``, taken literally: ``#``, ``?`` and ``%`` in a name
    are escaped (``file:dir/study#1.db`` would open ``dir/study``)."""
    return Path(path).resolve().as_uri() + "?mode=ro"


def read_sqlite(path: str) -> list[OriginalParticipant]:
    try:
        connection = sqlite3.connect(sqlite_read_only_uri(path), uri=True)
    except sqlite3.Error as exc:
        raise ConfigurationError(f"cannot open the SQLite database {path!r}: {exc}") from exc
    with closing(connection):
        try:
            columns = {
                table: {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
                for table in _REQUIRED_COLUMNS
            }
            if not columns["conversation_participants"]:
                raise ConfigurationError(f"{path!r} has no conversation_participants table")
            _check_columns(columns)
            return list(_read(connection, columns["conversation_participants"], "?"))
        except sqlite3.DatabaseError as exc:  # not a database, or not the original's schema
            raise ConfigurationError(f"cannot read the SQLite database {path!r}: {exc}") from exc


def read_postgres(dsn: str) -> list[OriginalParticipant]:
    try:
        import psycopg
    except ImportError as exc:
        raise ConfigurationError(
            "reading Postgres needs psycopg: pip install 'promptpipe-serverless[import-postgres]'"
        ) from exc
    try:
        connection = psycopg.connect(dsn)
    except psycopg.OperationalError as exc:
        raise ResourceUnavailable(f"cannot connect to the Postgres database: {exc}") from exc
    except psycopg.Error as exc:  # e.g. a malformed DSN
        raise ConfigurationError(f"cannot use the Postgres DSN: {exc}") from exc
    with connection:
        columns = {
            table: {
                row[0]
                for row in connection.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = %s", (table,)
                ).fetchall()
            }
            for table in _REQUIRED_COLUMNS
        }
        if not columns["conversation_participants"]:
            raise ConfigurationError("the database has no conversation_participants table")
        _check_columns(columns)
        return list(_read(connection, columns["conversation_participants"], "%s"))


def _check_columns(columns: dict[str, set[str]]) -> None:
    """Name every required column the tables lack, in one line (instead of the SQL error a query
    over them would give)."""
    missing = [
        f"{table} ({', '.join(c for c in required if c not in columns[table])})"
        if columns[table]
        else f"{table} (no such table)"
        for table, required in _REQUIRED_COLUMNS.items()
        if not columns[table] or any(c not in columns[table] for c in required)
    ]
    if missing:
        raise ConfigurationError("not the original PromptPipe's tables: missing columns in " + "; ".join(missing))


def _read(connection: Any, columns: set[str], placeholder: str) -> Iterator[OriginalParticipant]:
    selected = [c for c in _PARTICIPANT_COLUMNS if c in columns]
    cursor = connection.execute(f"SELECT {', '.join(selected)} FROM conversation_participants ORDER BY id")
    participants = [dict(zip(selected, row, strict=True)) for row in cursor.fetchall()]
    for row in participants:
        state = connection.execute(
            f"SELECT current_state, state_data FROM flow_states WHERE participant_id = {placeholder} "
            f"AND flow_type = {placeholder}",
            (row["id"], CONVERSATION_FLOW),
        ).fetchone()
        participant = OriginalParticipant(
            id=str(row["id"]),
            phone_number=str(row.get("phone_number") or ""),
            name=str(row.get("name") or ""),
            gender=str(row.get("gender") or ""),
            ethnicity=str(row.get("ethnicity") or ""),
            background=str(row.get("background") or ""),
            timezone=str(row.get("timezone") or ""),
            status=str(row.get("status") or ""),
            enrolled_at=parse_time(row.get("enrolled_at")),
            created_at=parse_time(row.get("created_at")),
            updated_at=parse_time(row.get("updated_at")),
        )
        if state is not None:
            participant.current_state = str(state[0] or "")
            participant.state_data, participant.state_error = _state_data(state[1])
            participant.state_data, participant.state_warnings = _bounded(participant.state_data)
        yield participant


def _state_data(raw: Any) -> tuple[dict[str, str], str]:
    """The stored map; values that are not strings (never written so by the original) as JSON.
    Nesting is bounded (``MAX_JSON_DEPTH``): Python's JSON reader and writer recurse, and a deep
    enough value would end the whole import in a ``RecursionError``."""
    if raw is None or raw == "":
        return {}, ""
    data = raw
    if isinstance(raw, str | bytes):
        try:
            data, _ = read_json_text(raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw)
        except MalformedBody as exc:
            return {}, f"state_data is not JSON ({exc})"
    if not isinstance(data, dict):
        return {}, "state_data is not a JSON object"
    values: dict[str, str] = {}
    for key, value in data.items():
        try:
            values[str(key)] = value if isinstance(value, str) else json.dumps(value)
        except (RecursionError, ValueError):  # JSONB from Postgres, nested past the writer's recursion
            values[str(key)] = "[" * (MAX_JSON_DEPTH + 1)  # dropped, with a warning, by ``_bounded``
    return values, ""


def _bounded(state: dict[str, str] | None) -> tuple[dict[str, str] | None, list[str]]:
    """The state without the values whose JSON nests deeper than ``MAX_JSON_DEPTH`` (none of the
    original's does past a few levels), and a warning naming each one dropped."""
    if not state:
        return state, []
    kept: dict[str, str] = {}
    warnings: list[str] = []
    for key, value in state.items():
        try:
            if value.lstrip()[:1] in ("[", "{"):
                check_json_depth(value)
        except MalformedBody as exc:
            warnings.append(f"state_data.{key}: {exc}; dropped")
            continue
        kept[key] = value
    return kept, warnings


def parse_time(value: Any) -> datetime | None:
    """Go's SQLite driver writes ``2006-01-02 15:04:05.999999999-07:00`` (sometimes with a monotonic
    ``m=+…`` suffix); Postgres gives a ``datetime``; RFC 3339 is accepted too. Naive means UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    text = str(value).strip().split(" m=")[0]
    for suffix in (" UTC", " +0000 UTC"):
        text = text.removesuffix(suffix)
    text = text.replace("Z", "+00:00")
    if "." in text:  # Python parses at most 6 fractional digits
        head, _, rest = text.partition(".")
        digits = "".join(itertools.takewhile(str.isdigit, rest))
        zone = rest[len(digits) :]
        text = f"{head}.{digits[:6]}{zone}"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
