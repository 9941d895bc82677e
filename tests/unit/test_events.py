"""Events at the edges, through the use cases: a turn for a participant who is gone, a message turn
without its message, and the idempotency key of a scheduler firing when the scheduler's context
placeholders were not filled in (a local or hand-made invocation)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.errors import ValidationFailed
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.usecases.events import process_turn
from promptpipe.usecases.outcomes import event_id_for_schedule
from promptpipe.usecases.participants import delete_participant
from promptpipe.usecases.sending import apply_effects
from tests.support import memory_harness

FIRED = datetime(2026, 3, 2, 12, 20, tzinfo=UTC)


@pytest.mark.parametrize(
    ("execution_id", "scheduled_time", "expected"),
    [
        ("4f1c-exec", "2026-03-02T12:20:00Z", "pp-daily:4f1c-exec"),  # the execution id is the key
        ("<aws.scheduler.execution-id>", "2026-03-02T12:20:00Z", "pp-daily:2026-03-02T12:20:00Z"),
        (None, "2026-03-02T12:20:00Z", "pp-daily:2026-03-02T12:20:00Z"),
        ("<aws.scheduler.execution-id>", "<aws.scheduler.scheduled-time>", "pp-daily:2026-03-02T12:20:00+00:00"),
        (None, None, "pp-daily:2026-03-02T12:20:00+00:00"),
    ],
)
def test_the_key_of_a_firing_falls_back_to_its_time(
    execution_id: str | None, scheduled_time: str | None, expected: str
) -> None:
    assert event_id_for_schedule("pp-daily", execution_id, scheduled_time, FIRED) == expected


@pytest.mark.parametrize("kind", [TurnKind.GREETING, TurnKind.MESSAGE])
def test_a_turn_for_a_participant_who_is_gone_does_nothing(kind: TurnKind) -> None:
    # Given a participant deleted while their turn waited in the queue
    h = memory_harness(ScriptedLLM())
    p = h.enroll()
    delete_participant(h.app, p.id)
    sent, cancelled = len(h.outbox.messages()), list(h.timers.cancelled)
    message = h.message(p, "hello?") if kind is TurnKind.MESSAGE else None
    # When the turn runs
    outcome = process_turn(
        h.app,
        TurnEvent(kind=kind, participant_id=p.id, event_id="evt-gone", message=message, enqueued_at=h.clock.now()),
    )
    apply_effects(h.app, outcome)
    # Then nothing is sent, no model is asked, no schedule is touched
    assert outcome.outbound == [] and not outcome.schedules
    assert h.scripted.requests == []
    assert len(h.outbox.messages()) == sent and h.timers.cancelled == cancelled


def test_a_message_turn_without_its_message_is_refused() -> None:
    h = memory_harness(ScriptedLLM())
    p = h.enroll()
    event = TurnEvent(kind=TurnKind.MESSAGE, participant_id=p.id, event_id="evt-empty", enqueued_at=h.clock.now())
    with pytest.raises(ValidationFailed, match=r"^message turn without a message$"):
        process_turn(h.app, event)
    assert h.scripted.requests == []
