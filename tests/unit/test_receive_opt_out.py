"""Opt-out, opt-in and HELP at the webhook (``usecases/receive_text``, docs/compliance.md), against the
in-memory store: the participant's status and flag, the one reply, no model call, the transcript."""

from __future__ import annotations

import dataclasses

import pytest

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.flow.lifecycle import OPT_OUT_CONFIRMATION
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.models.messaging import InboundMessage, OutboundKind
from promptpipe.models.participant import ParticipantStatus
from promptpipe.models.store import Direction
from promptpipe.settings import Settings
from promptpipe.usecases.receive_text import receive_text
from tests.support import MemoryHarness, memory_harness

PHONE = "+14155550101"


class ListQueue:
    def __init__(self) -> None:
        self.events: list[TurnEvent] = []

    def enqueue(self, event: TurnEvent) -> None:
        self.events.append(event)

    @property
    def turns(self) -> list[TurnEvent]:
        """The message turns handed to the worker (not the greeting, not deferred schedule changes)."""
        return [event for event in self.events if event.kind is TurnKind.MESSAGE]


def harness(**settings: object) -> tuple[MemoryHarness, ListQueue]:
    h = memory_harness(ScriptedLLM(), settings=Settings(**settings))  # type: ignore[arg-type]
    queue = ListQueue()
    h.app = dataclasses.replace(h.app, queue=queue)
    return h, queue


def text(
    h: MemoryHarness, body: str, msg_id: str, *, provider: str = "twilio", keyword: str | None = None
) -> InboundMessage:
    return InboundMessage(
        provider=provider,
        provider_message_id=msg_id,
        from_phone=PHONE,
        body=body,
        received_at=h.clock.now(),
        provider_keyword=keyword,
    )


def sent(h: MemoryHarness, pid: str) -> list[str]:
    return [m.body for m in h.outbox.messages(pid)]


def rows(h: MemoryHarness, pid: str, msg_id: str) -> list[tuple[Direction, str]]:
    return [(e.direction, e.content) for e in h.store.transcripts.get(pid, []) if e.event_id == msg_id]


@pytest.mark.parametrize(
    "body",
    ["Stop.", "STOP!", "ＳＴＯＰ", "ST\u200bOP", " stop 🛑", "Revoke", "opt out", "OPT-OUT", "unsubscribe pls",
     "can you stop sending me these", "I don't want these texts anymore"],
)  # fmt: skip
def test_an_opt_out_in_any_form_pauses_confirms_once_and_calls_no_model(body: str) -> None:
    h, queue = harness()
    participant = h.enroll(PHONE)
    before = sent(h, participant.id)

    decision = receive_text(h.app, text(h, body, "SM-1"))

    stored = h.store.participants[participant.id]
    assert decision.action == "opted_out"
    assert stored.status is ParticipantStatus.PAUSED and stored.opted_out
    assert sent(h, participant.id)[len(before) :] == [OPT_OUT_CONFIRMATION]
    assert "START" in OPT_OUT_CONFIRMATION
    assert h.scripted.calls == 0 and queue.turns == []
    assert rows(h, participant.id, "SM-1")[0] == (Direction.INBOUND, body.strip())
    assert (Direction.OUTBOUND, OPT_OUT_CONFIRMATION) in rows(h, participant.id, "SM-1")


@pytest.mark.parametrize(
    "body", ["I'll stop by the gym after work", "trying to stop snacking at night", "stop texting me at night"]
)
def test_a_sentence_with_the_word_or_an_unclear_request_goes_to_the_coach_and_changes_nothing(body: str) -> None:
    h, queue = harness()
    participant = h.enroll(PHONE)
    before = sent(h, participant.id)

    decision = receive_text(h.app, text(h, body, "SM-2"))

    stored = h.store.participants[participant.id]
    assert decision.action == "enqueued" and [e.event_id for e in queue.turns] == ["SM-2"]
    assert stored.status is ParticipantStatus.ACTIVE and not stored.opted_out
    assert sent(h, participant.id) == before
    assert rows(h, participant.id, "SM-2") == []  # the worker records it with its turn


def test_help_gets_the_fixed_reply_recorded_and_sent_once_on_redelivery() -> None:
    h, queue = harness(study_name="Walk Study", study_contact="walk@example.edu")
    participant = h.enroll(PHONE)
    before = sent(h, participant.id)

    decision = receive_text(h.app, text(h, "Help?", "SM-h"))
    again = receive_text(h.app, text(h, "Help?", "SM-h"))  # the provider redelivers

    replies = sent(h, participant.id)[len(before) :]
    assert decision.action == again.action == "help"
    assert len(replies) == 1
    assert replies[0].startswith("Walk Study:") and "walk@example.edu" in replies[0] and "STOP" in replies[0]
    assert rows(h, participant.id, "SM-h") == [(Direction.INBOUND, "Help?"), (Direction.OUTBOUND, replies[0])]
    assert [m.kind for m in h.outbox.messages(participant.id)][-1] is OutboundKind.NOTICE
    stored = h.store.participants[participant.id]
    assert stored.status is ParticipantStatus.ACTIVE and not stored.opted_out
    assert h.scripted.calls == 0 and queue.turns == []


def test_help_is_answered_after_an_opt_out_too() -> None:
    h, _ = harness()
    participant = h.enroll(PHONE)
    receive_text(h.app, text(h, "STOP", "SM-s"))
    before = sent(h, participant.id)

    receive_text(h.app, text(h, "INFO", "SM-i"))

    assert len(sent(h, participant.id)) == len(before) + 1
    assert h.store.participants[participant.id].opted_out


def test_a_spanish_word_answers_in_spanish_and_stores_the_language() -> None:
    h, _ = harness()
    participant = h.enroll(PHONE)

    receive_text(h.app, text(h, "BAJA", "SM-b"))

    stored = h.store.participants[participant.id]
    assert stored.language == "es" and stored.opted_out
    assert sent(h, participant.id)[-1].startswith("Te diste de baja")


def test_the_enrolled_language_wins_over_the_words_language() -> None:
    h, _ = harness()
    participant = h.enroll(PHONE, language="es-MX")
    assert h.store.participants[participant.id].language == "es"

    receive_text(h.app, text(h, "STOP", "SM-s"))
    receive_text(h.app, text(h, "Start.", "SM-r"))

    assert sent(h, participant.id)[-2].startswith("Te diste de baja")
    assert sent(h, participant.id)[-1].startswith("¡Hola de nuevo!")
    assert h.store.participants[participant.id].status is ParticipantStatus.ACTIVE


def test_a_language_without_texts_falls_back_to_english() -> None:
    h, _ = harness()
    participant = h.enroll(PHONE, language="de")  # French has its own texts now

    receive_text(h.app, text(h, "stop", "SM-s"))

    assert sent(h, participant.id)[-1] == OPT_OUT_CONFIRMATION


def test_a_french_opt_out_in_plain_words_is_honoured_and_confirmed_in_french() -> None:
    h, _ = harness()
    participant = h.enroll(PHONE, language="fr")

    receive_text(h.app, text(h, "Arrêtez de m'envoyer des messages svp", "SM-s"))

    assert sent(h, participant.id)[-1].startswith("Vous êtes désabonné")
    assert h.store.participants[participant.id].status is not ParticipantStatus.ACTIVE


def test_a_normalised_opt_in_word_resumes_after_a_stop() -> None:
    h, _ = harness()
    participant = h.enroll(PHONE)
    receive_text(h.app, text(h, "ＳＴＯＰ", "SM-s"))

    decision = receive_text(h.app, text(h, " start! ", "SM-r"))

    stored = h.store.participants[participant.id]
    assert decision.action == "opted_in" and stored.status is ParticipantStatus.ACTIVE and not stored.opted_out


def test_the_studys_own_texts_are_sent() -> None:
    h, _ = harness(opt_out_texts={"en": "{study}: unsubscribed. Text START to come back."}, study_name="Walk Study")
    participant = h.enroll(PHONE)

    receive_text(h.app, text(h, "stop", "SM-s"))

    assert sent(h, participant.id)[-1] == "Walk Study: unsubscribed. Text START to come back."


# --- the provider's own handling -------------------------------------------------------------------
@pytest.mark.parametrize(("body", "keyword"), [("STOP", None), ("stop", None), ("BAJA", "STOP"), ("Revoke", None)])
def test_when_the_provider_confirms_the_project_records_the_opt_out_and_sends_nothing(
    body: str, keyword: str | None
) -> None:
    h, _ = harness(keyword_replies_by="provider")
    participant = h.enroll(PHONE)
    before = sent(h, participant.id)

    decision = receive_text(h.app, text(h, body, "SM-p", keyword=keyword))

    stored = h.store.participants[participant.id]
    assert decision.action == "opted_out" and stored.status is ParticipantStatus.PAUSED and stored.opted_out
    assert sent(h, participant.id) == before
    inbound = next(e for e in h.store.transcripts[participant.id] if e.event_id == "SM-p")
    assert inbound.metadata.get("answered_by") == "provider"
    assert all(
        e.direction is not Direction.OUTBOUND for e in h.store.transcripts[participant.id] if e.event_id == "SM-p"
    )


@pytest.mark.parametrize("body", ["Stop.", "ＳＴＯＰ", "please stop texting me"])
def test_when_the_provider_confirms_what_it_does_not_read_is_confirmed_by_the_project(body: str) -> None:
    h, _ = harness(keyword_replies_by="provider")
    participant = h.enroll(PHONE)
    before = sent(h, participant.id)

    receive_text(h.app, text(h, body, "SM-p"))

    assert sent(h, participant.id)[len(before) :] == [OPT_OUT_CONFIRMATION]


def test_when_the_provider_confirms_help_is_recorded_and_not_answered_twice() -> None:
    h, _ = harness(keyword_replies_by="provider")
    participant = h.enroll(PHONE)
    before = sent(h, participant.id)

    assert receive_text(h.app, text(h, "HELP", "SM-h")).action == "help"

    assert sent(h, participant.id) == before
    assert rows(h, participant.id, "SM-h") == [(Direction.INBOUND, "HELP")]


def test_whatsapp_cloud_never_confirms_so_the_project_does() -> None:
    h, _ = harness(keyword_replies_by="provider")
    participant = h.enroll(PHONE)

    receive_text(h.app, text(h, "STOP", "wamid.1", provider="whatsapp_cloud"))

    assert sent(h, participant.id)[-1] == OPT_OUT_CONFIRMATION


def test_help_or_stop_from_an_unknown_number_enrols_nobody() -> None:
    h, queue = harness(auto_enroll_new_users=True)
    for index, body in enumerate(["HELP", "Stop.", "no quiero recibir más mensajes"]):
        assert receive_text(h.app, text(h, body, f"SM-{index}")).action == "unknown_sender"
    assert h.store.participants == {} and queue.turns == []


def test_a_message_the_provider_posted_as_its_keyword_is_followed_whatever_its_words() -> None:
    h, queue = harness(keyword_replies_by="provider")
    participant = h.enroll(PHONE)
    receive_text(h.app, text(h, "STOP", "SM-s"))
    before = sent(h, participant.id)

    decision = receive_text(h.app, text(h, "yes", "SM-y", keyword="START"))  # Twilio's opt-in YES

    stored = h.store.participants[participant.id]
    assert decision.action == "opted_in" and stored.status is ParticipantStatus.ACTIVE and not stored.opted_out
    assert sent(h, participant.id) == before  # Twilio confirmed it
    assert queue.turns == []


def test_a_spanish_opt_in_word_from_an_active_participant_changes_nothing() -> None:
    h, queue = harness()
    participant = h.enroll(PHONE)
    before = sent(h, participant.id)

    assert receive_text(h.app, text(h, "Alta", "SM-a")).action == "opted_in"

    assert h.store.participants[participant.id].status is ParticipantStatus.ACTIVE
    assert sent(h, participant.id) == before and queue.turns == []
