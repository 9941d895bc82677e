"""A provider's delivered / read report updates the message's own outcome, only forward and never
over a failure (``usecases/delivery_reports.py``), on the in-memory harness."""

from __future__ import annotations

from datetime import timedelta

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.models.messaging import DeliveryStatus
from promptpipe.usecases.delivery_reports import record_delivery
from tests.support import MemoryHarness, memory_harness, turn


def replied() -> tuple[MemoryHarness, str, str]:
    """A participant and the provider id of the reply they got."""
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("Nice!")]))
    participant = h.enroll()
    turn(h, participant, "I walked", msg_id="SM-in")
    [reply] = [e for e in h.store.transcripts[participant.id] if e.kind == "reply"]
    assert reply.delivery is not None and reply.delivery.provider_id
    return h, participant.id, reply.delivery.provider_id


def report(h: MemoryHarness, provider_id: str, status: str, minutes: int = 1, **more: str) -> str:
    decision = record_delivery(
        h.app,
        DeliveryStatus(
            provider="twilio",
            provider_message_id=provider_id,
            status=status,
            recipient="+14155550101",
            at=h.clock.now() + timedelta(minutes=minutes),
            **more,
        ),
    )
    return decision.action


def outcome_of_reply(h: MemoryHarness, pid: str) -> tuple[str, str | None]:
    [reply] = [e for e in h.store.transcripts[pid] if e.kind == "reply"]
    assert reply.delivery is not None
    return reply.delivery.final, reply.delivery.receipt


def test_delivered_then_read_and_a_late_delivered_leaves_it_read() -> None:
    h, pid, provider_id = replied()
    assert report(h, provider_id, "delivered") == "delivery_delivered"
    assert outcome_of_reply(h, pid) == ("delivered", "delivered")
    assert report(h, provider_id, "read", 2) == "delivery_read"
    assert report(h, provider_id, "delivered", 3) == "delivery_delivered"
    assert outcome_of_reply(h, pid) == ("read", "read")


def test_a_receipt_after_a_failure_report_leaves_it_failed() -> None:
    h, pid, provider_id = replied()
    assert report(h, provider_id, "undelivered", error_code="30003") == "delivery_failed"
    report(h, provider_id, "delivered", 2)
    assert outcome_of_reply(h, pid) == ("failed", None)


def test_other_reports_and_unknown_ids_change_nothing() -> None:
    h, pid, provider_id = replied()
    assert report(h, provider_id, "sent") == "status_ignored"
    assert report(h, "SM-not-ours", "delivered") == "status_ignored"
    no_phone = DeliveryStatus(provider="meta", provider_message_id=provider_id, status="read", at=h.clock.now())
    assert record_delivery(h.app, no_phone).action == "status_ignored"
    assert outcome_of_reply(h, pid) == ("sent", None)
