"""After a commit fails with a store error, the session checks once whether the write landed anyway
(``ConversationSession.landed_after_all``): a store still failing, or the participant gone, means the
save failed; a bug while reading is not taken for a failed save."""

from __future__ import annotations

import pytest

from promptpipe.errors import StoreError
from promptpipe.flow.session import ConversationSession
from promptpipe.models.store import LoadedState, StateCommit
from tests.unit.test_session import PID, CountingStore, enrolled, factory, message

READ_TIMEOUT = StoreError("DynamoStateStore.load: ReadTimeoutError", operation="DynamoStateStore.load", code="x")


class FailingAfterTheCommit(CountingStore):
    """Every commit fails with ``commit_error`` (after landing, if ``lands``); every load after the
    session's own opening one raises ``load_error``."""

    def __init__(self, commit_error: Exception, load_error: Exception | None, *, lands: bool = False) -> None:
        super().__init__()
        self.commit_error, self.load_error, self.lands = commit_error, load_error, lands
        self.loads = 0

    def load(self, participant_id: str) -> LoadedState:
        self.loads += 1
        if self.loads > 1 and self.load_error is not None:
            raise self.load_error
        return super().load(participant_id)

    def commit(self, commit: StateCommit) -> None:
        if self.lands:
            super().commit(commit)
        raise self.commit_error


def a_failed_commit(store: FailingAfterTheCommit) -> ConversationSession:
    enrolled(store)
    session = factory(store).open(PID, "SM-save")
    session.apply("reply", lambda op: op.emit(message(op, "hello")))
    with pytest.raises(type(store.commit_error)):
        session.commit()
    return session


def test_a_store_still_failing_means_the_save_failed() -> None:
    store = FailingAfterTheCommit(READ_TIMEOUT, READ_TIMEOUT)
    session = a_failed_commit(store)
    loads = store.loads
    assert session.landed_after_all() is None
    assert store.loads == loads + 1  # one read, no retry loop


def test_a_write_that_landed_counts_although_its_answer_failed() -> None:
    store = FailingAfterTheCommit(READ_TIMEOUT, None, lands=True)
    session = a_failed_commit(store)
    effects = session.landed_after_all()
    assert effects is not None and [m.body for m in effects.messages] == ["hello"]


def test_a_bug_while_checking_is_not_taken_for_a_failed_save() -> None:
    # Given a commit that failed, and a load that then hits a bug (not a store failure)
    store = FailingAfterTheCommit(READ_TIMEOUT, TypeError("cannot store a float in DynamoDB"))
    session = a_failed_commit(store)

    # Then the bug surfaces instead of a silently degraded save
    with pytest.raises(TypeError, match="cannot store a float in DynamoDB"):
        session.landed_after_all()
