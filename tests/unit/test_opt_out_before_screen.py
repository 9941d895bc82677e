"""People first (docs/safety.md, "Where it runs"): an opt-out in any form is honoured before anything
else reads the message, at the webhook and at the worker alike; a crisis read in it as well still
reaches a person; a crisis that is no opt-out holds the participant for one.

The cases are ``tests/data/safety/opt_out_overlap.tsv`` (written before the rule): each is read by
the two readers, then sent through the webhook's use case (``usecases/receive_text.py``) and through
the worker's (``usecases/events.process_turn``, a turn the webhook did not read), on the memory
ports; the test asserts the rows written (status, flag, hold), the messages sent and the alerts
published."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.flow.hold import SAFETY_REPLY
from promptpipe.models.alerts import HoldAlert, SafetyAlert
from promptpipe.models.events import TurnEvent
from promptpipe.models.messaging import InboundMessage
from promptpipe.models.participant import ParticipantStatus
from promptpipe.rules.opt_out import DEFAULT_OPT_OUT_TEXTS, OptKind, read_opt_message
from promptpipe.rules.safety_screen import screen
from promptpipe.usecases.events import process_turn
from promptpipe.usecases.receive_text import receive_text
from promptpipe.usecases.sending import apply_effects
from tests.support import MemoryHarness, memory_harness, turn

CASES = Path(__file__).resolve().parents[1] / "data" / "safety" / "opt_out_overlap.tsv"


def _cases() -> list[tuple[str, str, str]]:
    rows = [line.split("\t") for line in CASES.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    return [(language, expected, text) for language, expected, text in rows]


CASE_IDS = [f"{expected}:{text[:40]}" for _, expected, text in _cases()]


@dataclasses.dataclass
class RecordingAlerts:
    flags: list[SafetyAlert] = dataclasses.field(default_factory=list)
    holds: list[HoldAlert] = dataclasses.field(default_factory=list)

    def safety_flag(self, alert: SafetyAlert) -> None:
        self.flags.append(alert)

    def hold_placed(self, alert: HoldAlert) -> None:
        self.holds.append(alert)


@dataclasses.dataclass
class ListQueue:
    events: list[TurnEvent] = dataclasses.field(default_factory=list)

    def enqueue(self, event: TurnEvent) -> None:
        self.events.append(event)


class Counting:
    """The scripted model, counting its calls (no call may read an opt-out or a crisis)."""

    def __init__(self, llm: object) -> None:
        self.llm, self.calls = llm, 0

    def complete(self, request: object) -> object:
        self.calls += 1
        return self.llm.complete(request)  # type: ignore[attr-defined]


def _harness() -> tuple[MemoryHarness, RecordingAlerts, ListQueue]:
    h = memory_harness()
    alerts, queue = RecordingAlerts(), ListQueue()
    h.app = dataclasses.replace(h.app, alerts=alerts, queue=queue)
    return h, alerts, queue


def _hold(h: MemoryHarness, participant_id: str) -> dict[str, str] | None:
    raw = h.data(participant_id).get("hold")
    return json.loads(raw) if raw else None


def _assert_outcome(
    h: MemoryHarness, alerts: RecordingAlerts, participant_id: str, before: int, *, language: str, expected: str
) -> None:
    stored = h.store.participants[participant_id]
    replies = [m.body for m in h.outbox.messages(participant_id)][before:]
    hold = _hold(h, participant_id)
    if expected.startswith("opt_out"):
        assert stored.status is ParticipantStatus.PAUSED and stored.opted_out
        # the one confirmation, in the request's language; no safety reply after an opt-out
        assert len(replies) == 1, replies
        assert replies[0].startswith(DEFAULT_OPT_OUT_TEXTS[language].split("{study}")[0])
    else:
        assert stored.status is ParticipantStatus.ACTIVE and not stored.opted_out
        [reply] = replies
        assert reply.startswith(SAFETY_REPLY[language].split("{resources}")[0])
    if expected == "opt_out":
        assert hold is None and alerts.flags == [] and alerts.holds == []
        return
    # a crisis always reaches a person: held (the console lists them), the team alerted
    assert hold is not None and hold["reason"] == "safety" and hold["detail"] == "suicide"
    [flag] = alerts.flags
    assert (flag.participant_id, flag.category, flag.language) == (participant_id, "suicide", language)
    assert flag.opted_out is (expected == "opt_out+crisis")
    assert [alert.reason.value for alert in alerts.holds] == ["safety"]


@pytest.mark.parametrize(("language", "expected", "text"), _cases(), ids=CASE_IDS)
def test_the_two_readers_agree_on_each_case(language: str, expected: str, text: str) -> None:
    opt = read_opt_message(text)
    reading = screen(text)
    assert (opt is not None and opt.kind is OptKind.OPT_OUT) is expected.startswith("opt_out")
    assert reading.flagged is expected.endswith("crisis")
    if opt is not None and expected.startswith("opt_out"):
        assert opt.language == language


@pytest.mark.parametrize(("language", "expected", "text"), _cases(), ids=CASE_IDS)
def test_the_worker_honours_an_opt_out_first_and_a_crisis_still_reaches_a_person(
    language: str, expected: str, text: str
) -> None:
    h, alerts, _ = _harness()
    model = Counting(h.llm)
    h.app = dataclasses.replace(h.app, deps=dataclasses.replace(h.app.deps, llm=model))
    participant = h.enroll("+14155550131")
    before = len(h.outbox.messages(participant.id))

    turn(h, participant, text)  # the worker's turn: the webhook did not read it

    _assert_outcome(h, alerts, participant.id, before, language=language, expected=expected)
    assert model.calls == 0  # nothing for the coach: an opt-out or a crisis is answered by a rule


@pytest.mark.parametrize(("language", "expected", "text"), _cases(), ids=CASE_IDS)
def test_the_webhook_and_then_the_worker_do_the_same(language: str, expected: str, text: str) -> None:
    h, alerts, queue = _harness()
    participant = h.enroll("+14155550132")
    before = len(h.outbox.messages(participant.id))
    inbound = InboundMessage(
        provider="twilio", provider_message_id="SM-overlap", from_phone=participant.phone_number, body=text,
        received_at=h.clock.now(),
    )  # fmt: skip

    decision = receive_text(h.app, inbound)
    turns = [event for event in queue.events if event.message is not None]
    if expected.startswith("opt_out"):
        assert decision.action == "opted_out" and turns == []  # honoured at the webhook, nothing queued
    else:
        [event] = turns  # a crisis that is no opt-out: the worker screens it
        apply_effects(h.app, process_turn(h.app, event))

    _assert_outcome(h, alerts, participant.id, before, language=language, expected=expected)


def test_an_opt_out_at_the_worker_reaches_a_held_participant_before_the_hold() -> None:
    """Held (asked for a person), then an opt-out: honoured and confirmed; the hold stays for the team."""
    h, alerts, _ = _harness()
    participant = h.enroll("+14155550133")
    turn(h, participant, "can I talk to a real person please")
    before = len(h.outbox.messages(participant.id))

    turn(h, participant, "ya no quiero seguir en el estudio")

    stored = h.store.participants[participant.id]
    assert stored.status is ParticipantStatus.PAUSED and stored.opted_out
    [confirmation] = [m.body for m in h.outbox.messages(participant.id)][before:]
    assert "START" in confirmation
    hold = _hold(h, participant.id)
    assert hold is not None and hold["reason"] == "asked"
    assert alerts.flags == []


def test_an_opt_out_of_a_participant_already_paused_sends_nothing_and_a_crisis_in_it_still_alerts() -> None:
    h, alerts, _ = _harness()
    participant = h.enroll("+14155550134")
    turn(h, participant, "STOP please")
    before = len(h.outbox.messages(participant.id))

    turn(h, participant, "STOP. i want to end it all")

    assert [m.body for m in h.outbox.messages(participant.id)][before:] == []
    hold = _hold(h, participant.id)
    assert hold is not None and hold["reason"] == "safety"
    [flag] = alerts.flags
    assert flag.opted_out and flag.category == "suicide"


def test_with_the_screen_off_an_opt_out_at_the_worker_is_still_honoured() -> None:
    h, alerts, _ = _harness()
    config = dataclasses.replace(h.app.deps.config, safety_screen_enabled=False)
    h.app = dataclasses.replace(h.app, deps=dataclasses.replace(h.app.deps, config=config))
    participant = h.enroll("+14155550135")

    turn(h, participant, "ya no quiero seguir")

    stored = h.store.participants[participant.id]
    assert stored.status is ParticipantStatus.PAUSED and stored.opted_out
    assert _hold(h, participant.id) is None and alerts.flags == []


def test_the_webhook_marks_what_it_read_and_the_worker_reads_only_unmarked_texts() -> None:
    """Read once: a text the webhook queued carries its mark, and the worker does not read it again
    (its ordinary first event never loads the reader); the same words unmarked are read and honoured."""
    h, alerts, queue = _harness()
    participant = h.enroll("+14155550136")
    inbound = InboundMessage(
        provider="twilio", provider_message_id="SM-read-once", from_phone=participant.phone_number,
        body="walked after lunch", received_at=h.clock.now(),
    )  # fmt: skip
    receive_text(h.app, inbound)
    [queued] = [event for event in queue.events if event.message is not None]
    assert queued.message is not None and queued.message.opt_out_read

    # Marked, the worker goes on to the coach even with words the reader would take as an opt-out
    # (what a keyword list added after the webhook read it would do): the webhook's reading stands.
    marked = queued.message.model_copy(update={"body": "stop texting me"})
    h.llm.add(ScriptedLLM.text("What would you like instead?"))  # type: ignore[attr-defined]
    apply_effects(h.app, process_turn(h.app, queued.model_copy(update={"message": marked})))
    assert not h.store.participants[participant.id].opted_out
    assert h.llm.calls == 1  # type: ignore[attr-defined]  # the coach read it, not the opt-out reader

    unmarked = marked.model_copy(update={"opt_out_read": False, "provider_message_id": "SM-unmarked"})
    apply_effects(
        h.app, process_turn(h.app, queued.model_copy(update={"message": unmarked, "event_id": "SM-unmarked"}))
    )
    stored = h.store.participants[participant.id]
    assert stored.opted_out and stored.status is ParticipantStatus.PAUSED
    assert alerts.flags == []
