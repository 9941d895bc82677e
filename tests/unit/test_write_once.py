"""The write-once runner (``usecases/write_once.run_once``): every event that changes a participant's
state opens, replays or works, and commits through it, so a failed or conflicting commit is handled one
way everywhere (docs/reliability.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from promptpipe import usecases
from promptpipe.errors import ParticipantNotFound, StoreError
from promptpipe.flow.lifecycle import OPT_OUT_CONFIRMATION
from promptpipe.models.api import ParticipantUpdate, StateOverride
from promptpipe.models.messaging import InboundKind, InboundMessage
from promptpipe.models.store import StateCommit
from promptpipe.usecases.participants import apply_participant_update, override_state
from promptpipe.usecases.receive_inbound import MEDIA_NOTICE, receive_inbound
from promptpipe.usecases.write_once import run_once
from tests.support import MemoryHarness, memory_harness

USECASES = Path(usecases.__file__).parent
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
    assert openers == {"write_once.py"}


def test_only_the_runner_commits_a_session() -> None:
    """The operator's writes (an update, an override) commit through ``run_once`` too (``replay=False``)."""
    committers: set[str] = set()
    for path in USECASES.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "commit" and ast.unparse(node.value) == "session":
                committers.add(path.name)
    assert committers == {"write_once.py"}


def test_two_operator_writes_in_the_same_instant_both_land_and_claim_no_event() -> None:
    # Given an enrolled participant and a clock that does not move
    h = memory_harness()
    participant = h.enroll()
    claims = dict(h.store.claims)

    # When the operator updates them twice and overrides their state twice, all at the same instant
    # (the same ``update-<time>`` and ``override-<time>`` ids)
    apply_participant_update(h.app, participant.id, ParticipantUpdate(name="Ana"))
    apply_participant_update(h.app, participant.id, ParticipantUpdate(name="Bea"))
    override_state(h.app, participant.id, StateOverride(debug_mode=True, reason="first"))
    override_state(h.app, participant.id, StateOverride(debug_mode=False, reason="second"))

    # Then each write landed (none is taken for a replay of the one before), none claimed its id,
    # and the updates left their event record while the overrides left none
    assert h.store.participants[participant.id].name == "Bea"
    assert h.store.participants[participant.id].debug_mode is False
    overrides = [e.content for e in h.store.transcripts[participant.id] if e.kind == "override"]
    assert [text.rsplit(": ", 1)[1] for text in overrides] == ["first", "second"]
    assert h.store.claims == claims
    recorded = [r.event_id for r in h.store.load(participant.id).recent_events]
    assert [i for i in recorded if i.startswith("update-")] == [f"update-{h.clock.now().isoformat()}"] * 2
    assert not [i for i in recorded if i.startswith("override-")]


def test_an_operator_write_for_a_participant_who_is_not_there_is_not_found() -> None:
    # Given no such participant
    h = memory_harness()

    # When an operator's write runs for them, Then the caller is told (the API's 404), nothing is committed
    with pytest.raises(ParticipantNotFound):
        run_once(h.app, "p_missing", "update-now", lambda session, outcome: None, replay=False)
    with pytest.raises(ParticipantNotFound):
        apply_participant_update(h.app, "p_missing", ParticipantUpdate(name="Ana"))
    assert h.store.commits == 0


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
