"""The in-memory store (the unit tests' and the simulator's backend) keeps the port's contract: copies
out, not-found and already-enrolled errors, paging, deletion with or without the transcript."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.errors import ParticipantAlreadyEnrolled, ParticipantNotFound, StateConflict, ValidationFailed
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import FlowState
from promptpipe.models.store import Direction, StateCommit, TranscriptEntry

START = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def person(index: int) -> ConversationParticipant:
    at = START + timedelta(minutes=index)
    return ConversationParticipant(
        id=f"p_{index:032x}", phone_number=f"+1416555{index:04d}", enrolled_at=at, created_at=at, updated_at=at
    )


def store_with(count: int) -> InMemoryStore:
    store = InMemoryStore()
    for index in range(count):
        store.create(person(index), FlowState(participant_id=person(index).id))
    return store


def test_create_refuses_a_phone_already_enrolled_and_get_returns_a_copy() -> None:
    store = store_with(1)
    with pytest.raises(ParticipantAlreadyEnrolled):
        store.create(person(0).model_copy(update={"id": "p_" + "f" * 32}), FlowState(participant_id="p_" + "f" * 32))
    got = store.get(person(0).id)
    got.name = "changed"
    assert store.get(person(0).id).name == ""
    assert store.find_id_by_phone("+14165550000") == person(0).id
    assert store.find_id_by_phone("+14165559999") is None
    with pytest.raises(ParticipantNotFound):
        store.get("p_" + "0" * 31 + "9")


def test_list_pages_newest_first() -> None:
    store = store_with(5)
    first, token = store.list(limit=2, next_token=None)
    assert [p.id for p in first] == [person(4).id, person(3).id]
    assert token == "2"
    second, token = store.list(limit=2, next_token=token)
    assert [p.id for p in second] == [person(2).id, person(1).id]
    last, token = store.list(limit=2, next_token=token)
    assert [p.id for p in last] == [person(0).id]
    assert token is None
    with pytest.raises(ValidationFailed, match="invalid next_token"):
        store.list(limit=2, next_token="abc")


def test_update_and_delete_need_an_existing_participant() -> None:
    store = store_with(1)
    with pytest.raises(ParticipantNotFound):
        store.update(person(1))
    store.update(person(0).model_copy(update={"name": "Ada"}))
    assert store.get(person(0).id).name == "Ada"
    with pytest.raises(ParticipantNotFound):
        store.delete(person(1).id, keep_transcript=False)


def _commit(store: InMemoryStore, pid: str, expected: int, *entries: TranscriptEntry) -> None:
    store.commit(
        StateCommit(
            participant_id=pid,
            expected_version=expected,
            flow=FlowState(participant_id=pid, version=expected + 1),
            participant=None,
            recent_events=[],
            transcript=list(entries),
            request_token=f"t{expected}",
        )
    )


def _entry(pid: str, minute: int) -> TranscriptEntry:
    return TranscriptEntry(
        participant_id=pid,
        at=START + timedelta(minutes=minute),
        seq=f"e{minute}#0",
        direction=Direction.INBOUND,
        kind="message",
        content=f"m{minute}",
    )


def test_commit_checks_the_version_and_the_participant() -> None:
    store = store_with(1)
    pid = person(0).id
    _commit(store, pid, 0, _entry(pid, 1))
    with pytest.raises(StateConflict, match=r"expected version 0, found 1$"):
        _commit(store, pid, 0)
    with pytest.raises(ParticipantNotFound):
        _commit(store, person(1).id, 0)
    with pytest.raises(ParticipantNotFound):
        store.load(person(1).id)
    assert store.load(pid).flow.version == 1


def test_transcript_pages_in_time_order_and_survives_deletion_only_when_kept() -> None:
    store = store_with(2)
    for index in range(2):
        pid = person(index).id
        _commit(store, pid, 0, _entry(pid, 3), _entry(pid, 1), _entry(pid, 2))
    pid = person(0).id
    page, token = store.list_transcript(pid, limit=2, next_token=None)
    assert [e.content for e in page] == ["m1", "m2"]
    page, token = store.list_transcript(pid, limit=2, next_token=token)
    assert ([e.content for e in page], token) == (["m3"], None)
    store.delete(pid, keep_transcript=True)
    assert [e.content for e in store.list_transcript(pid, limit=10, next_token=None)[0]] == ["m1", "m2", "m3"]
    assert store.find_id_by_phone(person(0).phone_number) is None
    other = person(1).id
    store.delete(other, keep_transcript=False)
    assert store.list_transcript(other, limit=10, next_token=None) == ([], None)
