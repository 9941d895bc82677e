"""The words named once in rules/lexicon.py reach every reader built from them: each word of a set is
read the same way by each reader that places the set in its pattern."""

from __future__ import annotations

import pytest

from promptpipe.rules import lexicon
from promptpipe.rules.feedback_reading import PauseRequest, pause_request, time_preference
from promptpipe.rules.feedback_report import poll_number, report_parts
from promptpipe.rules.intake_requests import asks_for_a_send_time, starts_later
from promptpipe.rules.message_reading import read_message

WEEKDAYS = list(zip(lexicon.WEEKDAYS_EN, lexicon.WEEKDAYS_ES, lexicon.WEEKDAYS_FR, strict=True))


def _words(alternation: str) -> list[str]:
    """The plain words of a set (those with no regex syntax in them)."""
    return [word for word in alternation.split("|") if word.replace(" ", "").isalpha()]


@pytest.mark.parametrize("word", _words(lexicon.THANKS))
def test_thanks_go_with_a_poll_number_and_beside_a_report_say_nothing_more(word: str) -> None:
    assert poll_number(f"1 {word}") == "done"
    assert poll_number(f"2 {word}") == "not_done"
    parts = report_parts(f"did it, {word}", asked=True)
    assert parts is not None and parts.outcome == "done" and parts.facts == ()


@pytest.mark.parametrize("word", [*_words(lexicon.LAUGHS), "hahaaa", "jajaaa"])
def test_a_laugh_goes_along_with_a_yes(word: str) -> None:
    assert read_message(f"ok {word}").kind == "yes"


@pytest.mark.parametrize("word", _words(lexicon.PLEASE))
def test_please_makes_a_day_part_an_ask(word: str) -> None:
    preference = time_preference(f"evenings {word}")
    assert preference is not None and preference.wanted == "evening"


@pytest.mark.parametrize("word", ["text", "texts", "message", "messages", "reminder", "reminders", "prompt"])
def test_the_messages_named_are_what_a_send_time_is_for(word: str) -> None:
    assert asks_for_a_send_time(f"can you send the {word} at 7")
    assert read_message(f"pause the {word} for 3 days").request == "pause"


@pytest.mark.parametrize(("index", "names"), list(enumerate(WEEKDAYS)))
def test_each_weekday_ends_a_pause_and_puts_a_start_off(index: int, names: tuple[str, str, str]) -> None:
    for name in names:
        assert pause_request(f"pause until {name}") == PauseRequest(weekday=index)
        assert starts_later(f"journaling, but starting next {name}")
