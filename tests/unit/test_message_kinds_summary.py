"""What each non-text transcript entry reads as (coordinator/kinds.py), and which entries answer a
daily prompt: only the participant's words, never a reaction, an edit, a deletion or a photo."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from promptpipe.coordinator.summary import chat_lines, summarize
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.store import DeliveryOutcome, Direction, TranscriptEntry
from tests.support import START

PARTICIPANT = ConversationParticipant(
    id="p_" + "3" * 32, phone_number="+14155550101", enrolled_at=START, created_at=START, updated_at=START
)


def entry(minutes: int, direction: Direction, kind: str, content: str = "", **metadata: Any) -> TranscriptEntry:
    return TranscriptEntry(
        participant_id=PARTICIPANT.id,
        at=START + timedelta(minutes=minutes),
        seq=f"{minutes:010d}#000",
        direction=direction,
        kind=kind,
        content=content,
        metadata=metadata,
        delivery=DeliveryOutcome(status="sent", provider_id="wamid.P1") if direction is Direction.OUTBOUND else None,
    )


def test_a_reaction_an_edit_a_deletion_or_a_photo_is_not_an_answer() -> None:
    entries = [
        entry(0, Direction.OUTBOUND, "daily_prompt", "Walk 10 minutes. Did you do it?"),
        entry(1, Direction.INBOUND, "reaction", "👍", refers_to="wamid.P1"),
        entry(2, Direction.INBOUND, "media", attachments=[{"type": "image"}]),
        entry(3, Direction.INBOUND, "revoke", refers_to="wamid.X"),
    ]
    summary = summarize(PARTICIPANT, entries, None)
    assert (summary.prompts_sent, summary.answered) == (1, 0)

    answered = summarize(PARTICIPANT, [*entries, entry(5, Direction.INBOUND, "message", "did it")], None)
    assert answered.answered == 1 and answered.prompts[0].first_reply == "did it"
    assert answered.prompts[0].latency_minutes == 5


def test_each_kind_reads_as_what_it_was() -> None:
    entries = [
        entry(0, Direction.OUTBOUND, "daily_prompt", "Walk 10 minutes. Did you do it?"),
        entry(1, Direction.INBOUND, "message", "walked " * 20, provider_message_id="wamid.T1"),
        entry(2, Direction.INBOUND, "edit", "ran", provider_message_id="wamid.E1", refers_to="wamid.T1"),
        entry(3, Direction.INBOUND, "reaction", "", refers_to="wamid.P1"),
        entry(4, Direction.INBOUND, "media", attachments=[{"type": "image"}, {"type": "hologram"}]),
        entry(5, Direction.INBOUND, "revoke", refers_to="wamid.GONE"),
        entry(6, Direction.SYSTEM, "delivery_failed", provider_message_id="wamid.P1", status="undelivered"),
    ]
    lines = [(line.mark, line.text) for line in chat_lines(entries, ZoneInfo("UTC"))]
    quoted = ("walked " * 9).strip()[:59] + "…"
    assert lines[2] == ("edit", f'Edited their message "{quoted}" to: ran')
    assert lines[3] == (
        "reaction removed",
        'Removed their reaction to the coach\'s message "Walk 10 minutes. Did you do it?"',
    )
    assert lines[4] == ("media", "Sent a photo, an attachment (hologram)")
    assert lines[5] == ("deleted", "Deleted an earlier message")
    assert lines[6] == (
        "delivery failed",
        'The provider reported the coach\'s message "Walk 10 minutes. Did you do it?" undelivered (code none)',
    )
