"""Every reply of the offline coach in the participant's language (docs/offline-coach.md, "Languages"):
a Spanish and a French intake and the start of their week played through the offline coach, each
reply read by the language check of ``rules/language.py``: none is in English."""

from __future__ import annotations

from datetime import timedelta

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.adapters.offline_coach.habit_prompt import build_habit_prompt
from promptpipe.rules.language import detect_language
from tests.support import memory_harness, turn

CONVERSATIONS = {
    "es": [
        "quiero caminar más",
        "para tener más energía",
        "qué fastidio, cuántas preguntas",  # a complaint: a time is suggested ("¿Qué tal a las 8:00?")
        "sí",
        "después de comer",
        "👍",  # the offer of the daily prompt, with no language of its own
        "2",
        "no me mandes mensajes en la noche",  # an unclear stop: asked which
        "cuándo me escribes?",
        "quiero un nuevo hábito",
    ],
    "fr": [
        "je veux marcher un peu",
        "pour être moins stressée",
        "je ne sais pas encore",
        "19h",
        "après le dîner",
        "ok",
        "2",
        "arrêtez les messages le soir",
        "pause une semaine",
        "je veux une nouvelle habitude",
    ],
}


def _replies(language: str) -> list[tuple[str, str]]:
    h = memory_harness(OfflineCoach())
    participant = h.enroll("+14155550199")
    said: list[tuple[str, str]] = []
    for text in CONVERSATIONS[language]:
        h.clock.advance(timedelta(minutes=20))  # as people text: the engine's burst budget is not the point here
        before = len(h.outbox.messages(participant.id))
        turn(h, participant, text)
        said += [(text, m.body) for m in h.outbox.messages(participant.id)[before:]]
    return said


@pytest.mark.parametrize("language", ["es", "fr"])
def test_no_reply_is_in_english(language: str) -> None:
    replies = _replies(language)
    assert len(replies) >= len(CONVERSATIONS[language])
    english = [(text, reply) for text, reply in replies if detect_language(reply) == "en"]
    assert not english, english
    assert sum(detect_language(reply) == language for _, reply in replies) >= len(replies) - 1
    if language == "es":  # the suggestion, and its acceptance saved
        assert any("¿Qué tal a las 8:00?" in reply for _, reply in replies)
        assert any("A las 8:00, perfecto." in reply for _, reply in replies)


@pytest.mark.parametrize(
    ("profile", "language"),
    [
        (
            "Habit domain: leer un poco cada dia\nMotivation: quiero desconectar del celular\n"
            "Anchor routine: tomo cafe",
            "es",
        ),
        ("Habit domain: méditer\nMotivation: être moins stressée\nAnchor routine: après le dîner", "fr"),
    ],
)
def test_the_habit_prompt_is_written_in_the_profiles_language(profile: str, language: str) -> None:
    prompt = build_habit_prompt(profile, "Intensity: low")
    assert detect_language(prompt) == language, prompt
    assert prompt.endswith("?") and len(prompt.split()) < 30
    short = build_habit_prompt(profile + "\nIt is sent by SMS: at most 60 characters", "Intensity: high")
    assert len(short) <= 60 or short.count(".") == 1
