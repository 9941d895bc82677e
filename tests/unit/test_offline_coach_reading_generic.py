"""Generic reading in the intake (docs/offline-coach.md, "Generic reading in the intake"): a reason keeps
its words and loses the hedge, laugh or emoji around it; a short message that tells no language ("ya",
"k", "si", "ok") does not switch the conversation's language; a later start said with the habit keeps the
habit and is made as a pause once set up. The phrasings here are deliberately not the corpus's
(built/28_intake_reading_bugs.yaml)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.adapters.offline_coach.intake_answers import parse_intake_message
from promptpipe.adapters.offline_coach.spoken import as_words
from promptpipe.models.profile import UserProfile
from promptpipe.rules.intake_requests import before_the_later_start, later_start, starts_later
from promptpipe.rules.language import detect_language, tells_no_language
from promptpipe.rules.reason_filler import reason_without_filler
from tests.support import memory_harness, turn
from tests.support.offline_coach_requests import ASK_MOTIVATION, OFFER, READY, calls, intake, then
from tests.unit.test_offline_coach_intake_detours import ASK_HABIT, with_history

DOMAIN, MOTIVATION, TIME, ANCHOR = "habit_domain", "motivational_frame", "preferred_time", "prompt_anchor"
FIELDS = (DOMAIN, MOTIVATION, TIME, ANCHOR)
PAUSED = (
    "Daily prompts paused for 14 day(s): none is sent until Monday 23 March (2026-03-23 08:20 America/Toronto), "
    "when they resume by themselves at their usual time."
)
HABIT_ONLY = UserProfile(habit_domain="walking")


# -- a reason without its filler -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "reason"),
    [
        ("dunno, to have more energy for my kids haha", "to have more energy for my kids"),
        ("tbh my knees have been killing me 😩😩", "my knees have been killing me"),
        ("so my blood pressure goes down i suppose 🤷🏽‍♂️", "so my blood pressure goes down"),
        ("my wife made me lmao", "my wife made me"),
        ("para no estresarme tanto jajaja", "para no estresarme tanto"),
        ("la verdad, por mi salud 🙏🏻", "por mi salud"),
        ("ni idea, verme mejor supongo", "verme mejor"),
        ("bah pour avoir moins mal au dos mdr", "pour avoir moins mal au dos"),
        ("je sais pas, être plus calme quoi", "être plus calme"),
        ("to sleep better :)", "to sleep better"),
        # a hedge inside the reason, or a word that only looks like one, is kept
        ("i think more clearly after a run", "i think more clearly after a run"),
        ("well rested mornings", "well rested mornings"),
        ("este año quiero bajar de peso", "este año quiero bajar de peso"),
        # nothing but filler: left as it was
        ("lol", "lol"),
        ("😅", "😅"),
    ],
)
def test_a_reason_loses_the_filler_at_its_edges(said: str, reason: str) -> None:
    assert reason_without_filler(said) == reason


@pytest.mark.parametrize(
    ("said", "frame"),
    [
        ("honestly cuz my knees ache 😩", "my knees ache"),
        ("para dormir más tranquila creo 🙏🏽", "dormir más tranquila"),
    ],
)
def test_the_intake_saves_the_reason_without_its_filler(said: str, frame: str) -> None:
    step = OfflineCoach().complete(intake(said, HABIT_ONLY, ASK_MOTIVATION))
    saved = [args for name, args in calls(step) if name == "save_user_profile"]
    assert saved, step.content
    assert saved[0][MOTIVATION] == frame


# -- the conversation's language -------------------------------------------------------------------


@pytest.mark.parametrize("said", ["ya", "k", "np", "ok", "si", "dale", "vale", "👍", "sure"])
def test_a_short_message_tells_no_language(said: str) -> None:
    assert tells_no_language(said)


@pytest.mark.parametrize("said", ["sí, claro que sí", "ya lo hice hoy", "yes i did it", "quiero caminar"])
def test_a_message_that_tells_its_language_is_not_short_and_unclear(said: str) -> None:
    assert not tells_no_language(said)


def _replies(messages: list[str]) -> list[tuple[str, str]]:
    h = memory_harness(OfflineCoach())
    participant = h.enroll("+14155550123")
    said: list[tuple[str, str]] = []
    for text in messages:
        h.clock.advance(timedelta(minutes=20))
        before = len(h.outbox.messages(participant.id))
        turn(h, participant, text)
        said += [(text, m.body) for m in h.outbox.messages(participant.id)[before:]]
    return said


def test_a_short_yes_of_another_language_keeps_an_english_conversation_in_english() -> None:
    replies = _replies(
        ["i want to do some pushups", "to get stronger arms", "6pm after work", "si", "dale", "ya", "vale"]
    )
    late = [(text, reply) for text, reply in replies if text in ("si", "dale", "ya", "vale")]
    assert late
    assert [r for r in late if detect_language(r[1]) == "es"] == []


def test_a_short_ok_keeps_a_spanish_conversation_in_spanish() -> None:
    replies = _replies(["quiero hacer sentadillas", "para tener piernas más fuertes", "a las 7 de la tarde", "ok", "k"])
    late = [(text, reply) for text, reply in replies if text in ("ok", "k")]
    assert late
    assert [r for r in late if detect_language(r[1]) == "en"] == []


# -- a later start said with the habit ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "before", "days"),
    [
        ("flossing, but can we kick it off in 3 days", "flossing", 3),
        ("yoga tho i'd rather begin next week", "yoga", 7),
        ("hacer abdominales pero comienzo en dos semanas", "hacer abdominales", 14),
        ("leer, aunque empiezo la otra semana", "leer", 7),
        ("marcher mais on démarre dans 5 jours", "marcher", 5),
        # the later start first, or none: nothing before it
        ("could we begin in 10 days? my exams", "", 10),
        ("i'd like to start swimming next week", "", None),
        # a start put off to a day named: no length, the fact before it still kept
        ("pilates, but starting next thursday", "pilates", None),
        ("quiero correr pero arranco el martes", "quiero correr", None),
        ("méditer mais je commence demain", "méditer", None),
        ("i'd like to start swimming tomorrow", "", None),
    ],
)
def test_what_is_said_before_a_later_start(said: str, before: str, days: int | None) -> None:
    assert before_the_later_start(said) == before
    assert later_start(said) == days


@pytest.mark.parametrize(
    ("said", "habit", "promised"),
    [
        ("journal every night but let's begin in 2 weeks", "journaling", "I'll pause it for 14 days."),
        ("quiero hacer yoga pero empiezo dentro de 3 días", "yoga", "lo pongo en pausa 3 días."),
    ],
)
def test_a_habit_said_with_a_later_start_is_saved_and_the_pause_promised(said: str, habit: str, promised: str) -> None:
    coach, request = OfflineCoach(), intake(said, UserProfile(), ASK_HABIT)
    step = coach.complete(request)
    saved = [args for name, args in calls(step) if name == "save_user_profile"]
    assert saved and saved[0][DOMAIN] == habit
    reply = coach.complete(then(request, step, '{"status": "ok"}')).content or ""
    assert promised in reply
    assert reply.rstrip().endswith("?")  # the next question


@pytest.mark.parametrize(
    ("said", "habit"),
    [("yoga tho i can only start on friday", "yoga"), ("quiero nadar pero empiezo el viernes", "nadar")],
)
def test_a_habit_said_with_a_start_on_a_day_named_is_saved_alone(said: str, habit: str) -> None:
    assert starts_later(said)
    step = OfflineCoach().complete(intake(said, UserProfile(), ASK_HABIT))
    saved = [args for name, args in calls(step) if name == "save_user_profile"]
    assert saved and saved[0][DOMAIN] == habit
    assert MOTIVATION not in saved[0]


def test_the_later_start_said_with_the_habit_is_made_as_a_pause_at_the_set_up() -> None:
    coach = OfflineCoach()
    turns = [(ASK_HABIT, "walking but can we begin in 2 weeks")]
    request = with_history("sure", READY, turns, OFFER)
    step = coach.complete(request)
    assert calls(step) == [("scheduler", {"action": "create", "type": "fixed", "fixed_time": "08:30"})]
    request = then(request, step, "Daily habit prompt scheduled: every day at 08:20. The first one arrives tomorrow.")
    step = coach.complete(request)
    assert calls(step) == [("scheduler", {"action": "pause", "days": 14})]


# -- an amount or a duration belongs to the habit ------------------------------------------------------


@pytest.mark.parametrize(
    "said",
    [
        "read like 3 chapters every evening",
        "do 10 pushups a day",
        "jog for a couple minutes",
        "drink two glasses of water each morning",
    ],
)
def test_an_amount_with_the_habit_is_no_reason(said: str) -> None:
    learned = parse_intake_message(said, dict.fromkeys(FIELDS, ""), DOMAIN)
    assert learned.get(DOMAIN)
    assert MOTIVATION not in learned


def test_a_reason_beside_the_habit_and_its_amount_is_still_read() -> None:
    learned = parse_intake_message("read a few pages cuz i doomscroll", dict.fromkeys(FIELDS, ""), DOMAIN)
    assert learned[DOMAIN] == "reading"
    assert "doomscroll" in learned[MOTIVATION]


# -- a time spoken into a run-on ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("meditate around 9 15", "meditate around 9:15"),
        ("at like 6 45 pm after work", "at like 6:45 pm after work"),
        ("by 11 30, in bed", "by 11:30, in bed"),
        # a number and its unit stay as they are
        ("around 10 20 pushups", "around 10 20 pushups"),
        ("walk 10 30 minutes", "walk 10 30 minutes"),
    ],
)
def test_an_hour_and_its_minutes_spoken_apart_are_one_time(said: str, written: str) -> None:
    assert as_words(said) == written


def test_a_run_on_with_habit_routine_and_a_spoken_time_saves_all_three() -> None:
    learned = parse_intake_message(
        "so i wanna stretch a bit every morning right after i get up at around 6 45", dict.fromkeys(FIELDS, ""), DOMAIN
    )
    assert learned[DOMAIN] == "stretching"
    assert learned[TIME] == "06:45"
    assert "get up" in learned[ANCHOR]
    assert MOTIVATION not in learned
