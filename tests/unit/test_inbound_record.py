"""Every inbound message in the record once (docs/reliability.md, "The record under faults"): the
use cases of ``usecases/inbound_record.py`` and ``usecases/redrive.py`` on the in-memory adapters."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.errors import LLMError, StoreError
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.models.participant import ParticipantStatus
from promptpipe.models.store import InboundState
from promptpipe.usecases.events import process_turn
from promptpipe.usecases.inbound_record import MODEL_UNAVAILABLE_REPLY
from promptpipe.usecases.redrive import redrive_unanswered
from promptpipe.usecases.sending import apply_effects
from tests.support import MemoryHarness, memory_harness


def turn_event(h: MemoryHarness, pid: str, text: str, msg_id: str) -> TurnEvent:
    participant = h.app.repo.get(pid)
    message = h.message(participant, text, msg_id=msg_id)
    return TurnEvent(
        kind=TurnKind.MESSAGE, participant_id=pid, event_id=msg_id, message=message, enqueued_at=h.clock.now()
    )


def inbound(h: MemoryHarness, pid: str) -> list[tuple[str, str]]:
    return [(e.content, e.state) for e in h.store.transcripts[pid] if e.direction.value == "inbound"]


def test_a_turn_replaces_its_accepted_message_with_its_own_entry() -> None:
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("Hi there")]))
    pid = h.enroll().id
    apply_effects(h.app, process_turn(h.app, turn_event(h, pid, "hello", "m1")))
    assert inbound(h, pid) == [("hello", "")]


def test_a_model_outage_tells_the_participant_once() -> None:
    # Given the model down for two receives of the same turn
    h = memory_harness(ScriptedLLM([LLMError("down"), LLMError("down")]))
    pid = h.enroll().id
    event = turn_event(h, pid, "are you there?", "m-down")
    for _ in range(2):
        with pytest.raises(LLMError):
            process_turn(h.app, event)
    assert [m.body for m in h.outbox.messages(pid)] == [MODEL_UNAVAILABLE_REPLY]
    assert inbound(h, pid) == [("are you there?", InboundState.MODEL_UNAVAILABLE)]
    [notice] = [e for e in h.store.transcripts[pid] if e.kind == "notice"]
    assert notice.delivery is not None and notice.delivery.status == "sent"


def test_the_model_unavailable_reply_follows_the_send_rule() -> None:
    # Given a participant paused by an operator while the model call was failing
    h = memory_harness()
    pid = h.enroll().id

    def pause_then_fail(_request: object) -> None:
        h.store.update(h.app.repo.get(pid).model_copy(update={"status": ParticipantStatus.PAUSED}))
        raise LLMError("down")

    h.app = replace(h.app, deps=replace(h.app.deps, llm=ScriptedLLM([pause_then_fail])))
    with pytest.raises(LLMError):
        process_turn(h.app, turn_event(h, pid, "hello?", "m-p"))
    # Then nothing is sent, and the record says so
    assert h.outbox.messages(pid) == []
    [notice] = [e for e in h.store.transcripts[pid] if e.kind == "notice"]
    assert notice.delivery is not None and notice.delivery.status == "skipped"


def test_a_failed_model_unavailable_reply_is_recorded_failed() -> None:
    h = memory_harness(ScriptedLLM([LLMError("down")]))
    pid = h.enroll().id
    h.outbox.fail_next(1)
    with pytest.raises(LLMError):
        process_turn(h.app, turn_event(h, pid, "hello?", "m-x"))
    [notice] = [e for e in h.store.transcripts[pid] if e.kind == "notice"]
    assert notice.delivery is not None and notice.delivery.status == "failed"


def test_a_late_copy_of_an_answered_message_leaves_no_second_entry() -> None:
    # Given a turn answered, then its id claimed and its record pushed out of the window
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("Hi"), ScriptedLLM.text("discarded")]))
    pid = h.enroll().id
    apply_effects(h.app, process_turn(h.app, turn_event(h, pid, "hello", "m-late")))
    h.store.events[pid] = []  # the state item's window no longer holds its record
    # When a copy comes back later (another receipt time: another accepted key)
    h.clock.advance(timedelta(days=2))
    outcome = process_turn(h.app, turn_event(h, pid, "hello", "m-late"))
    # Then nothing is sent and the copy's entry is gone: the message is in the record once
    assert outcome.replayed and outcome.outbound == []
    assert inbound(h, pid) == [("hello", "")]


class FailingInbound:
    """An ``InboundLog`` whose store is down after the message was accepted."""

    def __init__(self, inner: object) -> None:
        self.inner = inner

    def accept(self, entry: object) -> bool:
        return self.inner.accept(entry)  # type: ignore[attr-defined,no-any-return]

    def mark(self, *args: object, **kwargs: object) -> bool:
        raise StoreError("down", operation="mark", code="Throttled")

    def write_unsaved(self, entries: object) -> None:
        raise StoreError("down", operation="write_unsaved", code="Throttled")

    def discard(self, *args: object) -> None:
        raise StoreError("down", operation="discard", code="Throttled")


@pytest.mark.logs_errors  # the store failing is the case
def test_store_failures_after_the_accept_leave_the_message_awaiting_reply() -> None:
    h = memory_harness(ScriptedLLM([LLMError("down"), ScriptedLLM.text("Hi"), ScriptedLLM.text("x")]))
    h.app = replace(h.app, inbound=FailingInbound(h.store))
    pid = h.enroll().id
    with pytest.raises(LLMError):
        process_turn(h.app, turn_event(h, pid, "one", "m-a"))
    assert inbound(h, pid) == [("one", InboundState.AWAITING_REPLY)]  # the gap is marked
    assert h.outbox.messages(pid) == []
    # a late copy whose entry cannot be removed: logged, the turn still ends as answered before
    apply_effects(h.app, process_turn(h.app, turn_event(h, pid, "two", "m-b")))
    h.store.events[pid] = []
    h.clock.advance(timedelta(days=2))
    assert process_turn(h.app, turn_event(h, pid, "two", "m-b")).replayed


class DeadLetters:
    def __init__(self, waiting: int) -> None:
        self.count, self.moved = waiting, 0

    def waiting(self) -> int:
        return self.count

    def redrive(self, limit: int) -> int:
        self.moved = min(limit, self.count)
        return self.moved


def test_the_sweep_asks_the_model_only_when_turns_wait() -> None:
    h = memory_harness(ScriptedLLM([LLMError("down"), ScriptedLLM.text("OK")]))
    assert redrive_unanswered(h.app, 10).model_answers is None  # no dead-letter queue configured
    idle = DeadLetters(0)
    h.app = replace(h.app, dead_letters=idle)
    assert redrive_unanswered(h.app, 10).model_answers is None and h.scripted.calls == 0
    waiting = DeadLetters(3)
    h.app = replace(h.app, dead_letters=waiting)
    assert redrive_unanswered(h.app, 10).model_answers is False and waiting.moved == 0
    result = redrive_unanswered(h.app, 2)
    assert (result.model_answers, result.redriven, waiting.moved) == (True, 2, 2)
