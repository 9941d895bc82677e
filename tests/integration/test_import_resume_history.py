"""An import interrupted before the history landed completes it from the original, whatever the
stored state became in between: every commit bounds the state's history to the model's window
(docs/behaviour.md#B-HIST-1), so the stored state no longer holds the original's 50 messages."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from promptpipe.models.original import OriginalParticipant
from promptpipe.models.state import DataKey, StateData
from promptpipe.models.store import IMPORTED_KIND
from promptpipe.usecases import import_participants as importer
from promptpipe.usecases.import_participants import import_participants, imported_id

START = datetime(2026, 2, 1, 12, 0, tzinfo=UTC)


def original_with_history(messages: int) -> OriginalParticipant:
    history = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"message {i}",
            "timestamp": (START + timedelta(minutes=i)).isoformat().replace("+00:00", "Z"),
        }
        for i in range(messages)
    ]
    return OriginalParticipant(
        id="legacy-history-1",
        phone_number="+14165550188",
        status="paused",  # no schedules to rebuild: the history is what this test is about
        timezone="America/Toronto",
        current_state="CONVERSATION_ACTIVE",
        state_data={DataKey.CONVERSATION_HISTORY.value: json.dumps({"messages": history})},
    )


def test_an_interrupted_import_completes_the_history_after_a_commit_trimmed_the_state(
    local_env_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = local_env_factory()
    original = original_with_history(50)
    pid = imported_id(original.id)

    # Given an import interrupted after the participant was created, before its history landed
    def interrupted(*_args: Any, **_kwargs: Any) -> int:
        raise RuntimeError("interrupted")

    monkeypatch.setattr(importer, "write_history", interrupted)
    with pytest.raises(RuntimeError, match="interrupted"):
        import_participants(env.app, [original])
    monkeypatch.undo()
    # And a commit in between, which keeps the latest 30 messages in the state
    session = env.app.sessions.open(pid, "evt-between")
    session.apply("mark", lambda op: op.data.set(DataKey.LAST_INTENSITY_PROMPT_DATE, "2026-02-02"))
    session.commit()
    assert len(StateData(dict(env.app.store.load(pid).flow.state_data)).history()) == 30

    # When the import runs again
    report = import_participants(env.app, [original])

    # Then the transcript holds the original's 50 messages, in order, and the import's record
    assert report.count("already_imported") == 1
    entries, _ = env.app.store.list_transcript(pid, limit=500, next_token=None)
    imported = [e.content for e in entries if e.kind == IMPORTED_KIND]
    assert imported == [f"message {i}" for i in range(50)]
    assert any(e.seq == "import-done" and e.metadata["messages"] == 50 for e in entries)
