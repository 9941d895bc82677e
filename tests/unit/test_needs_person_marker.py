"""The needs-a-person marker (docs/console.md, "Nobody missed"): what a committed state puts in the
queue, and how the commit and the stores write it, without I/O."""

from __future__ import annotations

from datetime import UTC, datetime

from promptpipe.adapters.dynamodb_commit import commit_actions
from promptpipe.adapters.dynamodb_items import (
    GSI_PK,
    GSI_SK,
    NEEDS_PERSON_SK,
    needs_person_from_item,
    needs_person_item,
)
from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.controller.runtime import Hold, Mode, RuntimeState
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.participant_rows import needs_person_of
from promptpipe.models.safety import ConversationHold, HoldReason, NeedsPerson
from promptpipe.models.state import FlowState, StateData
from promptpipe.models.store import StateCommit

AT = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)
PID = "p_" + "a" * 32


def _participant(status: ParticipantStatus = ParticipantStatus.ACTIVE) -> ConversationParticipant:
    return ConversationParticipant(
        id=PID, phone_number="+14155550101", name="Rosa", status=status, enrolled_at=AT, created_at=AT, updated_at=AT
    )


def _held(reason: HoldReason = HoldReason.ASKED) -> StateData:
    data = StateData({})
    data.set_hold(ConversationHold(reason=reason, since=AT, set_by="x", detail="why"))
    return data


def test_a_hold_a_controller_hold_and_nothing() -> None:
    assert needs_person_of(_participant(), _held()) == NeedsPerson(
        participant_id=PID, name="Rosa", reason=HoldReason.ASKED, since=AT, detail="why"
    )
    paused = _participant(ParticipantStatus.PAUSED)  # an opt-out pauses: a person still looks
    assert needs_person_of(paused, _held(HoldReason.SAFETY)) is not None
    assert needs_person_of(_participant(ParticipantStatus.WITHDRAWN), _held()) is None
    controller = StateData({})
    runtime = RuntimeState.start("intake", 1).model_copy(
        update={"hold": Hold(kind=Mode.HANDOFF, reason="no answer", turn_index=2)}
    )
    controller.set_controller_state(runtime)
    assert needs_person_of(_participant(), controller) == NeedsPerson(
        participant_id=PID, name="Rosa", reason=HoldReason.HANDOFF
    )
    assert needs_person_of(_participant(), StateData({})) is None


def test_the_marker_item_sorts_by_the_holds_start_an_unknown_start_last() -> None:
    dated = needs_person_item(NeedsPerson(participant_id=PID, name="Rosa", reason=HoldReason.STAFF, since=AT))
    unknown = needs_person_item(NeedsPerson(participant_id=PID, reason=HoldReason.HANDOFF))
    assert dated["sk"]["S"] == NEEDS_PERSON_SK and dated[GSI_PK]["S"] == "NEEDS_PERSON"
    assert dated[GSI_SK]["S"] == f"2026-03-02T13:00:00.000000Z#{PID}" < unknown[GSI_SK]["S"] == f"~#{PID}"
    assert needs_person_from_item(dated) == NeedsPerson(
        participant_id=PID, name="Rosa", reason=HoldReason.STAFF, since=AT
    )
    assert needs_person_from_item(unknown) == NeedsPerson(participant_id=PID, reason=HoldReason.HANDOFF)
    assert needs_person_from_item(None) is None


def _commit(entry: NeedsPerson | None, *, changed: bool) -> StateCommit:
    return StateCommit(
        participant_id=PID,
        expected_version=0,
        flow=FlowState(participant_id=PID, version=1),
        needs_person=entry,
        needs_person_changed=changed,
    )


def test_the_commit_writes_the_marker_only_when_it_changed() -> None:
    entry = NeedsPerson(participant_id=PID, name="Rosa", reason=HoldReason.ASKED, since=AT)
    assert len(commit_actions("t", _commit(entry, changed=False))) == 2  # the state and META only
    *_, put = commit_actions("t", _commit(entry, changed=True))
    assert put["Put"]["Item"]["sk"]["S"] == NEEDS_PERSON_SK and "ConditionExpression" not in put["Put"]
    *_, delete = commit_actions("t", _commit(None, changed=True))
    assert delete["Delete"]["Key"]["sk"]["S"] == NEEDS_PERSON_SK


def test_the_memory_store_keeps_the_markers_the_longest_wait_first() -> None:
    store = InMemoryStore()
    later = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)
    store.needs_person = {
        "p_b": NeedsPerson(participant_id="p_b", reason=HoldReason.HANDOFF),
        "p_c": NeedsPerson(participant_id="p_c", reason=HoldReason.ASKED, since=later),
        "p_a": NeedsPerson(participant_id="p_a", reason=HoldReason.SAFETY, since=AT),
    }
    assert [e.participant_id for e in store.needs_person_queue(10)] == ["p_a", "p_c", "p_b"]
    assert [e.participant_id for e in store.needs_person_queue(1)] == ["p_a"]


def test_the_memory_store_writes_the_marker_with_the_hold_and_drops_it_with_the_participant() -> None:
    from tests.support import memory_harness, turn

    h = memory_harness()
    rosa = h.enroll(name="Rosa")
    turn(h, rosa, "can i talk to a real person please")
    [entry] = h.store.needs_person_queue(10)
    assert (entry.participant_id, entry.name, entry.reason) == (rosa.id, "Rosa", HoldReason.ASKED)
    assert h.store.load(rosa.id).needs_person == entry  # the commit sees it with the state
    h.store.delete(rosa.id, keep_transcript=True)
    assert h.store.needs_person_queue(10) == []


def test_the_alert_is_pending_for_the_event_that_placed_an_announced_hold_and_stays_as_stored() -> None:
    data = StateData({})
    data.set_hold(ConversationHold(reason=HoldReason.ASKED, since=AT, set_by="x", event_id="SM1"))
    placed = needs_person_of(_participant(), data, event_id="SM1")
    assert placed is not None and placed.alert_pending
    assert needs_person_of(_participant(), data, event_id="SM2").alert_pending is False  # type: ignore[union-attr]
    published = placed.model_copy(update={"alert_pending": False})
    later = needs_person_of(_participant(), data, stored=published, event_id="SM1")
    assert later == published  # the same hold: as stored, so the commit writes nothing
    staff = StateData({})
    staff.set_hold(ConversationHold(reason=HoldReason.STAFF, since=AT, set_by="x", event_id="SM1"))
    assert needs_person_of(_participant(), staff, stored=placed, event_id="SM1").alert_pending is False  # type: ignore[union-attr]
