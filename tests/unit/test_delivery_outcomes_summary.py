"""What a coordinator reads counts only delivered messages (docs/architecture.md, "Delivery outcomes")."""

from __future__ import annotations

from datetime import timedelta

from promptpipe.coordinator.export import participant_row
from promptpipe.coordinator.summary import chat_lines, summarize, zone_of
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.store import DeliveryOutcome, Direction, TranscriptEntry
from tests.support import START

PARTICIPANT = ConversationParticipant(
    id="p_" + "2" * 32, phone_number="+14155550101", enrolled_at=START, created_at=START, updated_at=START
)


def entry(minutes: int, direction: Direction, kind: str, content: str, delivery: DeliveryOutcome | None = None):
    return TranscriptEntry(
        participant_id=PARTICIPANT.id,
        at=START + timedelta(minutes=minutes),
        seq=f"{minutes:010d}#000",
        direction=direction,
        kind=kind,
        content=content,
        delivery=delivery,
    )


def test_prompts_failed_skipped_or_unconfirmed_are_not_counted_and_are_marked() -> None:
    entries = [
        entry(0, Direction.OUTBOUND, "daily_prompt", "legacy prompt"),  # before outcomes: counts as sent
        entry(1, Direction.INBOUND, "message", "done"),
        entry(10, Direction.OUTBOUND, "daily_prompt", "sent", DeliveryOutcome(status="sent", provider_id="SM1")),
        entry(20, Direction.OUTBOUND, "daily_prompt", "crash window", DeliveryOutcome()),
        entry(21, Direction.INBOUND, "message", "answer after an unsent prompt"),
        entry(30, Direction.OUTBOUND, "daily_prompt", "refused", DeliveryOutcome(status="failed", code="131047")),
        entry(40, Direction.OUTBOUND, "reminder", "opted out", DeliveryOutcome(status="skipped", reason="x")),
    ]

    summary = summarize(PARTICIPANT, entries, {"status": "active"})

    assert summary.prompts_sent == 2 and [p.prompt for p in summary.prompts] == ["legacy prompt", "sent"]
    # the reply after the unconfirmed prompt answers the last delivered one
    assert summary.prompts[1].first_reply == "answer after an unsent prompt"
    assert summary.reminders == 0 and summary.undelivered == 3
    assert participant_row(summary)["undelivered"] == 3
    marks = [line.mark for line in chat_lines(entries, zone_of(PARTICIPANT)) if line.who == "coach"]
    assert marks == [
        "daily prompt",
        "daily prompt",
        "daily prompt; not confirmed sent",
        "daily prompt; failed (provider code 131047)",
        "reminder; not sent: x",
    ]


def test_counts_and_the_prompt_rows_read_each_prompts_final_outcome() -> None:
    read = DeliveryOutcome(status="sent", provider_id="SM1", receipt="read", receipt_at=START)
    delivered = DeliveryOutcome(status="sent", provider_id="SM2", receipt="delivered")
    failed_after_delivered = DeliveryOutcome(status="failed", provider_id="SM3", code="30005", receipt="delivered")
    entries = [
        entry(0, Direction.OUTBOUND, "daily_prompt", "legacy prompt"),
        entry(10, Direction.OUTBOUND, "daily_prompt", "read", read),
        entry(20, Direction.OUTBOUND, "daily_prompt", "delivered", delivered),
        entry(30, Direction.OUTBOUND, "daily_prompt", "failed after delivered", failed_after_delivered),
    ]

    summary = summarize(PARTICIPANT, entries, {"status": "active"})

    # a receipt refines sent; nothing brings a failed message back
    assert [(p.prompt, p.delivery) for p in summary.prompts] == [
        ("legacy prompt", "sent"),
        ("read", "read"),
        ("delivered", "delivered"),
    ]
    assert summary.prompts_sent == 3 and summary.undelivered == 1
    assert failed_after_delivered.final == "failed" and DeliveryOutcome().final == "pending"
