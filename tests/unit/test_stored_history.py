"""The stored conversation history is what the model can be shown, compressed (docs/behaviour.md#B-HIST-1).

``StateData`` keeps the last ``stored_history_messages(CHAT_HISTORY_LIMIT)`` messages, so the model's
window (``history_window``) over the stored history is the window over the whole record; a state
written by an earlier version (the original's plain JSON, 50 messages) still loads and is brought to
the stored form by its session's next commit.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import pytest

from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.channels.context import last_inbound_at
from promptpipe.flow.context import history_window
from promptpipe.flow.session import SessionFactory
from promptpipe.models.history import (
    COMPRESSED_HISTORY_PREFIX,
    DEFAULT_LLM_HISTORY,
    MAX_LLM_HISTORY,
    decode_history,
    encode_history,
    model_history_window,
    stored_history_messages,
)
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import ConversationMessage, DataKey, FlowState, StateData
from promptpipe.rules.clock import ManualClock

START = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
PID = "p_" + "b" * 32
LIMITS = (-1, 0, 1, 10, 29, 30, 31, 40, 50, 51, 500)


def exchange(count: int) -> list[ConversationMessage]:
    """``count`` turns: a user message and the coach's reply, five minutes apart."""
    messages = []
    for i in range(count):
        at = START + timedelta(minutes=5 * i)
        messages.append(ConversationMessage(role="user", content=f"u{i} " + "x" * (i % 7), timestamp=at))
        messages.append(ConversationMessage(role="assistant", content=f"r{i} ✓ " + "y" * (i % 11), timestamp=at))
    return messages


def legacy_history(messages: list[ConversationMessage]) -> str:
    """The previous version's (and the original's) form: plain JSON."""
    return json.dumps({"messages": [m.to_json_dict() for m in messages]}, ensure_ascii=False)


@pytest.mark.parametrize("limit", LIMITS)
def test_the_stored_history_is_what_the_model_can_be_shown(limit: int) -> None:
    # Given CHAT_HISTORY_LIMIT and a state that receives 60 turns, two messages at a time (as turns do)
    record = exchange(60)
    data = StateData({}, history_messages=stored_history_messages(limit))
    for i in range(0, len(record), 2):
        data.append_history(*record[i : i + 2])
    stored = data.history()
    # Then it keeps exactly the latest messages the setting implies, never fewer than the window
    assert len(stored) == stored_history_messages(limit)
    assert stored == record[-len(stored) :]
    assert model_history_window(limit) <= len(stored) <= MAX_LLM_HISTORY
    # And the model is shown the same messages from it as from the whole record
    assert history_window(stored, limit) == history_window(record, limit)


def test_changing_the_window_changes_the_stored_bound_with_it() -> None:
    # The default window (30) is what is stored; a wider one stores as much; 50 is the most of both
    assert stored_history_messages(-1) == model_history_window(-1) == DEFAULT_LLM_HISTORY == 30
    assert stored_history_messages(40) == model_history_window(40) == 40
    assert stored_history_messages(80) == model_history_window(80) == MAX_LLM_HISTORY == 50
    # A narrower window (or none) keeps the default's 30 for the readers beyond the model's window
    assert stored_history_messages(0) == stored_history_messages(10) == 30
    assert model_history_window(0) == 0 and model_history_window(10) == 10


@pytest.mark.parametrize("bound", [0, -1, MAX_LLM_HISTORY + 1])
def test_a_bound_the_window_cannot_use_is_refused(bound: int) -> None:
    with pytest.raises(ValueError, match=f"history_messages must be 1..{MAX_LLM_HISTORY}"):
        StateData({}, history_messages=bound)


def test_the_history_is_stored_compressed_and_reads_back_exactly() -> None:
    record = exchange(15)
    data = StateData({})
    data.set_history(record)
    stored = data.raw[DataKey.CONVERSATION_HISTORY.value]
    assert stored.startswith(COMPRESSED_HISTORY_PREFIX)
    assert len(stored) < len(legacy_history(record)) / 2
    assert data.history() == record
    assert json.loads(decode_history(stored)) == json.loads(legacy_history(record))


def test_a_plain_json_history_reads_as_it_always_did() -> None:
    record = exchange(25)
    data = StateData({DataKey.CONVERSATION_HISTORY.value: legacy_history(record)})
    assert data.history() == record  # all 50: reading never trims


@pytest.mark.parametrize(
    "stored",
    [
        COMPRESSED_HISTORY_PREFIX + "not base64!",
        COMPRESSED_HISTORY_PREFIX + "aGVsbG8=",  # base64 of something that is not DEFLATE
        encode_history(legacy_history(exchange(3)))[:-8],  # truncated
        encode_history(json.dumps({"messages": [{"role": "user", "content": "x" * 300_000}]})),  # too large
    ],
)
def test_an_unreadable_compressed_history_reads_as_empty(stored: str) -> None:
    data = StateData({DataKey.CONVERSATION_HISTORY.value: stored})
    assert data.history() == []
    assert data.unreadable_keys == {DataKey.CONVERSATION_HISTORY.value}
    assert data.bound_history() is False and data.raw[DataKey.CONVERSATION_HISTORY.value] == stored


def test_bound_history_brings_a_previous_versions_history_to_the_stored_form() -> None:
    record = exchange(25)
    data = StateData({DataKey.CONVERSATION_HISTORY.value: legacy_history(record)})
    assert data.bound_history() is True
    assert data.raw[DataKey.CONVERSATION_HISTORY.value].startswith(COMPRESSED_HISTORY_PREFIX)
    assert data.history() == record[-30:]
    assert data.bound_history() is False  # already in form: left as it is


def test_the_readers_beyond_the_window_read_the_same_from_the_bounded_history() -> None:
    # The intent rules read the coach's last reply; WhatsApp's window the participant's last message
    record = exchange(40)
    whole = StateData({DataKey.CONVERSATION_HISTORY.value: legacy_history(record)})
    bounded = StateData({})
    bounded.set_history(record)
    assert [m for m in bounded.history() if m.role == "assistant"][-1] == record[-1]
    assert last_inbound_at(bounded) == last_inbound_at(whole) == record[-2].timestamp


def _store_with(state_data: dict[str, str]) -> InMemoryStore:
    store = InMemoryStore()
    participant = ConversationParticipant(
        id=PID, phone_number="+14155550123", enrolled_at=START, created_at=START, updated_at=START
    )
    store.create(participant, FlowState(participant_id=PID, state_data=state_data))
    return store


@pytest.mark.parametrize(("limit", "kept"), [(-1, 30), (40, 40), (50, 50)])
def test_a_previous_versions_state_loads_and_is_trimmed_on_its_next_commit(limit: int, kept: int) -> None:
    # Given a state item written by the previous version: 50 messages of plain JSON
    record = exchange(25)
    store = _store_with({DataKey.CONVERSATION_HISTORY.value: legacy_history(record)})
    sessions = SessionFactory(
        store, ManualClock(START), rng=random.Random(1), history_messages=stored_history_messages(limit)
    )
    # When it loads, all 50 messages read back
    session = sessions.open(PID, "evt-1")
    assert session.data.history() == record
    # And a commit that does not touch the history (a timer's bookkeeping) lands
    session.apply("mark", lambda op: op.data.set(DataKey.LAST_INTENSITY_PROMPT_DATE, "2026-03-02"))
    session.commit()
    # Then the stored history is the latest messages the window implies, compressed
    stored = store.load(PID).flow.state_data
    assert stored[DataKey.CONVERSATION_HISTORY.value].startswith(COMPRESSED_HISTORY_PREFIX)
    assert StateData(dict(stored)).history() == record[-kept:]
    assert stored[DataKey.LAST_INTENSITY_PROMPT_DATE.value] == "2026-03-02"


def test_a_turn_appends_to_the_bounded_history() -> None:
    # Given the previous version's 50 messages, a session that appends a turn keeps the last 30
    record = exchange(25)
    store = _store_with({DataKey.CONVERSATION_HISTORY.value: legacy_history(record)})
    session = SessionFactory(store, ManualClock(START), rng=random.Random(1)).open(PID, "evt-2")
    turn = exchange(26)[-2:]
    session.apply("store_reply", lambda op: op.data.append_history(*turn))
    session.commit()
    assert StateData(dict(store.load(PID).flow.state_data)).history() == [*record, *turn][-30:]
