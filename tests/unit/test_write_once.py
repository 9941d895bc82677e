"""The write-once runner (``usecases/write_once.run_once``): every event that changes a participant's
state opens, replays or works, and commits through it, so a failed or conflicting commit is handled one
way everywhere (docs/reliability.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from promptpipe import usecases
from promptpipe.errors import StoreError
from promptpipe.flow.lifecycle import OPT_OUT_CONFIRMATION
from promptpipe.models.messaging import InboundKind, InboundMessage
from promptpipe.models.store import StateCommit
from promptpipe.usecases.receive_inbound import MEDIA_NOTICE, receive_inbound
from tests.support import MemoryHarness, memory_harness

USECASES = Path(usecases.__file__).parent
# Operator changes through the API (a made-up id, never redelivered, no event record) open their own.
API_CHANGES = {"participants.py"}
LOST_ANSWER = StoreError("commit answer lost", operation="DynamoStateStore.commit", code="RequestTimeout")


def fail_next_commit(h: MemoryHarness, *, lands: bool) -> None:
    """The store's next commit raises ``LOST_ANSWER`` (after landing, if ``lands``)."""
    commit = h.store.commit

    def failing(request: StateCommit) -> None:
        h.store.commit = commit  # type: ignore[method-assign]
        if lands:
            commit(request)
        raise LOST_ANSWER

    h.store.commit = failing  # type: ignore[method-assign]


def inbound(h: MemoryHarness, phone: str, msg_id: str, *, body: str = "", kind: InboundKind) -> InboundMessage:
    return InboundMessage(
        provider="local", provider_message_id=msg_id, from_phone=phone, body=body, kind=kind, received_at=h.clock.now()
    )


def sent_bodies(h: MemoryHarness) -> list[str]:
    return [m.body for m in h.outbox.messages()]


def test_only_the_runner_opens_a_session_for_an_event() -> None:
    """No hand copy of open → replay → work → commit is left among the use cases."""
    openers: set[str] = set()
    for path in USECASES.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "open" and ast.unparse(node.value).endswith("sessions"):
                openers.add(path.name)
    assert openers - API_CHANGES == {"write_once.py"}


def test_a_webhook_event_whose_commit_landed_though_its_answer_was_lost_applies_its_effects() -> None:
    # Given an active participant, and a store whose next commit lands but answers with an error
    h = memory_harness()
    participant = h.enroll()
    before = sent_bodies(h)
    fail_next_commit(h, lands=True)

    # When a photo without text arrives
    decision = receive_inbound(h.app, inbound(h, participant.phone_number, "wamid.photo", kind=InboundKind.MEDIA))

    # Then the commit counts (the runner checks whether it landed) and the notice goes out at once,
    # instead of the webhook failing and the provider retrying
    assert decision.action == "media_notice"
    assert sent_bodies(h)[len(before) :] == [MEDIA_NOTICE]
    assert [e.kind for e in h.store.transcripts[participant.id] if e.event_id == "wamid.photo"][:1] == ["media"]


def test_a_stop_whose_save_failed_raises_and_confirms_nothing() -> None:
    # Given an active participant, and a store whose next commit fails for good
    h = memory_harness()
    participant = h.enroll()
    before = sent_bodies(h)
    fail_next_commit(h, lands=False)

    # When they text STOP, the failure reaches the webhook (the provider retries) ...
    with pytest.raises(StoreError):
        receive_inbound(h.app, inbound(h, participant.phone_number, "SM-stop", body="STOP", kind=InboundKind.TEXT))

    # ... and no confirmation claims an opt-out that did not land; the retry then commits and confirms it
    assert sent_bodies(h) == before
    assert h.store.participants[participant.id].status.value == "active"
    decision = receive_inbound(
        h.app, inbound(h, participant.phone_number, "SM-stop", body="STOP", kind=InboundKind.TEXT)
    )
    assert decision.action == "opted_out"
    assert sent_bodies(h)[len(before) :] == [OPT_OUT_CONFIRMATION]
