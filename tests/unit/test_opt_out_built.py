"""Opt-out and help in any form, any language (rules/opt_out.py), on the built cases
(tests/data/opt_out/built.jsonl: written and committed before the reader was generalised), and honoured
first on both ways in: the webhook (usecases/receive_text.py) and the offline coach (a message that
reaches it by another way)."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.models.events import TurnEvent
from promptpipe.models.messaging import InboundMessage
from promptpipe.models.participant import ParticipantStatus
from promptpipe.rules.message_reading import read_message
from promptpipe.rules.opt_out import (
    DEFAULT_HELP_TEXTS,
    DEFAULT_OPT_IN_TEXTS,
    DEFAULT_OPT_OUT_TEXTS,
    OptKind,
    keyword_lists,
    read_opt_message,
)
from promptpipe.usecases.receive_text import receive_text
from tests.support import memory_harness, turn

BUILT = Path(__file__).resolve().parents[1] / "data" / "opt_out" / "built.jsonl"
ROWS: list[dict[str, Any]] = [json.loads(line) for line in BUILT.read_text(encoding="utf-8").splitlines() if line]
_KIND = {OptKind.OPT_OUT: "opt_out", OptKind.OPT_IN: "opt_in", OptKind.HELP: "help", OptKind.UNCLEAR_STOP: "ambiguous"}


def label_of(text: str) -> tuple[str, str | None]:
    reading = read_opt_message(text, keyword_lists())
    return ("none", None) if reading is None else (_KIND[reading.kind], reading.language or None)


def test_the_built_cases_are_many_labelled_and_in_four_languages() -> None:
    assert len({row["text"] for row in ROWS}) == len(ROWS)
    opt_outs = Counter(row["language"] for row in ROWS if row["label"] == "opt_out")
    assert sum(opt_outs.values()) >= 80 - 12  # with the help forms, at least 80 messages that stop or ask
    assert all(opt_outs[language] >= 10 for language in ("en", "es", "fr", "pt"))
    assert sum(row["label"] == "none" for row in ROWS) >= 25  # the near-misses
    assert {row["language"] for row in ROWS if row["label"] == "help"} == {"en", "es", "fr", "pt"}


@pytest.mark.parametrize("row", ROWS, ids=[row["text"][:40] for row in ROWS])
def test_each_built_case_is_read_as_labelled(row: dict[str, Any]) -> None:
    label, language = label_of(row["text"])
    assert label == row["label"]
    if row["language"] is not None:
        assert language == row["language"]


@pytest.mark.parametrize("row", [row for row in ROWS if row.get("coach")], ids=lambda row: row["text"])
def test_what_is_this_reaches_the_coach_as_a_question(row: dict[str, Any]) -> None:
    """Not the help keyword: the coach answers it from its FAQ and asks its open question again."""
    assert read_message(row["text"]).kind == "question"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a repeated request of the person's own is a request
        ("I told you to stop texting me", OptKind.OPT_OUT),
        ("please remove this number from your list", OptKind.OPT_OUT),
        ("no me vuelvan a escribir", OptKind.OPT_OUT),
        ("arrêtez de me contacter svp", OptKind.OPT_OUT),
        ("chega de mensagens por favor", OptKind.OPT_OUT),
        # taken back by a negation, a subject that is not the person, or a frame
        ("don't you dare stop texting me lol", None),
        ("no quiero que dejen de escribirme", None),
        ("you don't text me enough", None),
        ("my kids won't stop texting me", None),
        ("why did you stop texting me?", None),
        ("no me mandaron el mensaje de hoy", None),
        ("no dejes de mandarme los mensajes", None),
        ("não quero parar de caminhar", None),
        ("I typed the wrong number, I meant 8", None),
        # a slip of the keyboard in the long word, not what was done
        ("unsubscirbe", OptKind.OPT_OUT),
        ("I unsubscribed from the newsletter", None),
        # narrowed: the coach asks
        ("wrong number lol I meant 8", OptKind.UNCLEAR_STOP),
    ],
)
def test_the_reading_follows_the_structure_not_the_sentence(text: str, expected: OptKind | None) -> None:
    reading = read_opt_message(text)
    assert (reading.kind if reading else None) is expected


def test_portuguese_has_its_fixed_texts() -> None:
    for texts in (DEFAULT_OPT_OUT_TEXTS, DEFAULT_OPT_IN_TEXTS, DEFAULT_HELP_TEXTS):
        assert "{study}" in texts["pt"]
    assert "{contact}" in DEFAULT_HELP_TEXTS["pt"]


SAMPLE = [
    ("wrong number stop texting me", "en"),
    ("ya no quiero seguir en el estudio", "es"),
    ("bórrenme de la lista", "es"),
    ("je ne veux plus recevoir de messages", "fr"),
    ("pare de me mandar mensagem", "pt"),
]


@dataclasses.dataclass
class ListQueue:
    events: list[TurnEvent] = dataclasses.field(default_factory=list)

    def enqueue(self, event: TurnEvent) -> None:
        self.events.append(event)


class CountingCoach(OfflineCoach):
    def __init__(self) -> None:
        super().__init__()
        self.requests: list[Any] = []

    def complete(self, request: Any) -> Any:
        self.requests.append(request)
        return super().complete(request)


@pytest.mark.parametrize(("body", "language"), SAMPLE)
def test_the_webhook_honours_it_before_the_queue_or_any_model(body: str, language: str) -> None:
    coach = CountingCoach()
    h = memory_harness(coach)
    queue = ListQueue()
    h.app = dataclasses.replace(h.app, queue=queue)
    participant = h.enroll("+14155550123")
    before = len(h.outbox.messages(participant.id))
    calls = len(coach.requests)

    inbound = InboundMessage(
        provider="twilio", provider_message_id="SM-1", from_phone=participant.phone_number, body=body,
        received_at=h.clock.now(),
    )  # fmt: skip
    decision = receive_text(h.app, inbound)

    stored = h.store.participants[participant.id]
    assert decision.action == "opted_out"
    assert stored.status is ParticipantStatus.PAUSED and stored.opted_out
    assert not [event for event in queue.events if event.message is not None]  # nothing for the worker
    assert len(coach.requests) == calls  # no model read it
    replies = [m.body for m in h.outbox.messages(participant.id)][before:]
    assert len(replies) == 1 and "START" in replies[0]
    assert replies[0].startswith(DEFAULT_OPT_OUT_TEXTS[language].split("{study}")[0])


@pytest.mark.parametrize(("body", "language"), [*SAMPLE, ("quiero darme de baja", "es")])
def test_the_worker_honours_it_before_any_model_when_the_webhook_did_not_read_it(body: str, language: str) -> None:
    """A message the webhook did not read (the worker fed directly): the opt-out reader runs first at
    the worker too, before the safety screen and the coach (docs/safety.md); the participant gets the
    one confirmation, in the language of the request, and no model is called."""
    coach = CountingCoach()
    h = memory_harness(coach)
    participant = h.enroll("+14155550124")  # no language stored: the confirmation is in the request's
    before = len(h.outbox.messages(participant.id))
    calls = len(coach.requests)

    turn(h, participant, body)

    stored = h.store.participants[participant.id]
    assert stored.status is ParticipantStatus.PAUSED and stored.opted_out
    assert len(coach.requests) == calls  # no model read it
    assert h.data(participant.id).get("hold") is None  # not a crisis: nobody held
    replies = [m.body for m in h.outbox.messages(participant.id)][before:]
    assert len(replies) == 1 and "START" in replies[0]
    assert replies[0].startswith(DEFAULT_OPT_OUT_TEXTS[language].split("{study}")[0])
    assert "habit" not in h.data(participant.id).get("motivational_frame", "")


@pytest.mark.parametrize("body", ["don't stop sending these!", "no puedo parar de comer", "para mañana"])
def test_a_near_miss_reaches_the_coach_and_opts_nobody_out(body: str) -> None:
    h = memory_harness(OfflineCoach())
    participant = h.enroll("+14155550125")
    turn(h, participant, body)
    stored = h.store.participants[participant.id]
    assert stored.status is ParticipantStatus.ACTIVE and not stored.opted_out
