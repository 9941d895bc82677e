"""A list row from the participant's record and flow state (usecases/participant_rows.py), and the
paging and filters of the rows over the in-memory store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.errors import ValidationFailed
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.events import TimerKind, TimerPayload
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.participant_rows import ListedParticipant
from promptpipe.models.state import ConversationMessage, DataKey, FlowState, StateData, SubState, new_state_data
from promptpipe.usecases.participant_rows import participant_rows, row_of

T0 = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)


def _participant(n: int, **fields: object) -> ConversationParticipant:
    at = T0 + timedelta(minutes=n)
    values = {"name": f"P{n:03d}", "timezone": "America/Toronto", **fields}
    return ConversationParticipant(
        id=f"p_{n:032x}", phone_number=f"+1416555{n:04d}", enrolled_at=at, created_at=at, updated_at=at, **values
    )


def _timer(name: str, kind: TimerKind, at: datetime) -> ScheduleSpec:
    payload = TimerPayload(participant_id="p_" + "0" * 32, kind=kind, timer_id=name)
    return ScheduleSpec(name=name, kind="timer", at=at, timer=payload)


def test_a_row_reads_sub_state_counts_last_reply_and_the_timer_due_first() -> None:
    data = StateData(new_state_data())
    data.set(DataKey.CONVERSATION_STATE, SubState.FEEDBACK.value)
    profile = data.profile()
    profile.total_prompts, profile.success_count = 9, 4
    data.set_profile(profile)
    data.append_history(
        ConversationMessage(role="user", content="Done", timestamp=T0 + timedelta(hours=1)),
        ConversationMessage(role="assistant", content="Great!", timestamp=T0 + timedelta(hours=2)),
    )
    later, sooner = T0 + timedelta(hours=5), T0 + timedelta(minutes=5)
    data.set_pending_timers(
        {
            "r": _timer("r", TimerKind.DAILY_PROMPT_REMINDER, later),
            "a": _timer("a", TimerKind.AUTO_FEEDBACK, sooner),
        }
    )
    listed = ListedParticipant.model_validate(_participant(1).model_dump())

    row = row_of(listed, data.raw)

    assert (row.sub_state, row.prompts_sent, row.done, row.done_rate) == ("FEEDBACK", 9, 4, 0.444)
    assert row.last_reply_at == T0 + timedelta(hours=1)  # the participant's, not the coach's
    assert row.next_timer is not None and (row.next_timer.kind, row.next_timer.due_at) == ("auto_feedback", sooner)
    assert row.needs_person is False
    empty = row_of(listed, None)  # no flow state: nothing invented
    assert (empty.sub_state, empty.prompts_sent, empty.last_reply_at, empty.next_timer) == ("", 0, None, None)


def test_rows_page_by_cursor_and_filter_by_status_and_search() -> None:
    store = InMemoryStore()
    words = ["Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf"]
    for n, word in enumerate(words):
        status = ParticipantStatus.PAUSED if n % 3 == 0 else ParticipantStatus.ACTIVE
        participant = _participant(n, name=word, status=status)
        store.create(participant, FlowState(participant_id=participant.id, state_data=new_state_data()))

    first = participant_rows(store, limit=3)
    second = participant_rows(store, limit=3, next_token=first.next_token)
    third = participant_rows(store, limit=3, next_token=second.next_token)

    names = [r.participant.name for page in (first, second, third) for r in page.rows]
    assert names == words[::-1] and third.next_token is None  # newest first, each once
    assert first.total == second.total == third.total == 7
    paused = participant_rows(store, status="paused")
    assert [r.participant.name for r in paused.rows] == ["Golf", "Delta", "Alpha"] and paused.total == 3
    found = participant_rows(store, search="hARL")  # any case
    assert [r.participant.name for r in found.rows] == ["Charlie"] and found.total == 1
    by_phone = participant_rows(store, search="(416) 555-0004")  # the phone's digits
    assert [r.participant.name for r in by_phone.rows] == ["Echo"]
    with pytest.raises(ValidationFailed):
        participant_rows(store, limit=101)
    with pytest.raises(ValidationFailed):
        participant_rows(store, search="name", next_token="x")
