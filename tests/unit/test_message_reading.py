"""The message reader (rules/message_reading.py): what kind of message a participant sent, read
before anything in it is taken as an answer, in English and Spanish, as people write it."""

from __future__ import annotations

import pytest

from promptpipe.rules.message_reading import MessageReading, read_message


@pytest.mark.parametrize("text", ["heyy", "hi there 👋", "Buenas tardes", "hola!!", "good morning Sam", "HELLO"])
def test_greetings(text: str) -> None:
    assert read_message(text).kind == "greeting"


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("who is this?", "who"),
        ("¿Quién eres?", "who"),
        ("is this a bot?", "bot"),
        ("eres un robot?", "bot"),
        ("how did u get my number", "number"),
        ("y cómo conseguiste mi número??", "number"),
        ("how long does it take?", "how_long"),
        ("what will you send me?", "what_sent"),
        ("can I change the time later?", "change_time_later"),
        ("is it possible to stop the messages at some point?", "stop_later"),
        ("huh what do u mean", "rephrase"),
        ("what?", "rephrase"),
        ("wait does this cost anything?", "other"),
    ],
)
def test_questions_about_the_study_or_the_coach(text: str, topic: str) -> None:
    assert read_message(text) == MessageReading("question", topic=topic)


def test_a_question_that_carries_a_time_is_a_fact_too() -> None:
    assert read_message("8pm for now. can you text me at a different time later on?").kind == "fact"
    assert read_message("can you text me at 7pm every day?").kind == "fact"


@pytest.mark.parametrize(
    "text", ["this is annoying. just pick one", "too many questions", "ugh you pick", "qué fastidio, tú elige"]
)
def test_complaints(text: str) -> None:
    assert read_message(text).kind == "complaint"


@pytest.mark.parametrize(
    "text", ["👌🏼", "👍", "👍🏽👍🏽", "sounds good lol", "va, me parece bien", "dale 👍", "sí porfa", "k"]
)
def test_a_yes_in_any_form(text: str) -> None:
    assert read_message(text).kind == "yes"


@pytest.mark.parametrize("text", ["nah", "no thanks", "no gracias", "Nope."])
def test_a_no(text: str) -> None:
    assert read_message(text).kind == "no"


@pytest.mark.parametrize(
    "text", ["not yet, let me think", "can i think about it and tell u tomorrow?", "déjame pensarlo", "lo pienso"]
)
def test_not_now(text: str) -> None:
    assert read_message(text).kind == "later"


@pytest.mark.parametrize(
    ("text", "wanted", "days"),
    [
        ("pause for a week please", "pause", 7),
        ("can u pause the texts for 3 days? sick in bed 🤒", "pause", 3),
        ("puedes pausar los mensajes una semana? me voy de viaje", "pause", 7),
        ("stop the messages for two weeks", "pause", 14),
        ("pause", "pause", None),
        ("im back! start the texts again pls", "resume", None),
        ("resume my reminders", "resume", None),
        ("can we move it to evenings?", "change_time", None),
        ("6pm is better", "change_time", None),
        ("honestly mornings dont work for me. 6pm is better", "change_time", None),
        ("uff no me da tiempo en la mañana, mejor en la tarde, a las 6", "change_time", None),
        ("stop the reminders", "stop", None),
        ("please stop sending me the daily texts", "stop", None),
        ("I want a new habit", "new_habit", None),
        ("quiero otro hábito", "new_habit", None),
        ("no more texts after 9pm pls", "limit", None),
        ("stop texting me at night pls, it wakes my partner", "limit", None),
    ],
)
def test_requests(text: str, wanted: str, days: int | None) -> None:
    assert read_message(text) == MessageReading("request", request=wanted, days=days)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        "need to stop at the pharmacy first",
        "omw out, need to stop at the pharmacy first. will do it tonight",
        "8:15 with my first coffee",
        "oh ok. um maybe drinking more water",
        "👍 did a short one",
        "Done",
        "walking",
        "",
    ],
)
def test_facts_and_reports(text: str) -> None:
    assert read_message(text).kind == "fact"


def test_a_thumbs_down_is_no_yes() -> None:
    assert read_message("ok 👎").kind != "yes"
    assert read_message("🤷").kind == "fact"
