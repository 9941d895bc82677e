"""Vocabulary and clock grammar written once where it was written two or three times: each folded pattern
matches exactly what the hand-written ones it replaced matched, on every participant message of the built
conversations (``scripts.corpus.model.load_corpus``, as said and in the normal form) and on phrasings
written apart from the corpus."""

from __future__ import annotations

import re
from functools import cache

import pytest

from promptpipe.adapters.offline_coach import times
from promptpipe.rules.feedback_reading import shift_minutes
from promptpipe.rules.feedback_requests import asks_for_another_time
from promptpipe.rules.half_of_day import SAYS_EARLIER, SAYS_LATER, way_asked
from promptpipe.rules.message_reading import plain
from scripts.bench.prefilter import messages

# The patterns as they were written before the fold, verbatim.
_OLD_LATER = re.compile(r"\b(?:later|mas tarde|plus tard)\b")  # rules/half_of_day.py
_OLD_EARLIER = re.compile(r"\b(?:earlier|sooner|mas temprano|plus tot)\b")  # half_of_day.py, feedback_reading.py
_OLD_WAY = re.compile(r"\b(?:later|earlier|sooner|mas tarde|mas temprano|plus tard|plus tot)\b")  # feedback_requests
_OLD_A_LIMIT = re.compile(  # adapters/offline_coach/times.py
    r"\b(?:no|not|never) (?:later|earlier|sooner) than (?:at )?\d{1,2}(?:[:.][0-5]\d)?(?:\s*[ap]\.?m\.?)?|"
    r"\bno m[aá]s tarde de (?:las )?\d{1,2}(?:[:.][0-5]\d)?|\bpas plus tard que \d{1,2}(?:h[0-5]?\d?)?",
    re.I,
)
_OLD_NOT_THIS_TIME = re.compile(r"\bnot (?:at )?\d{1,2}(?:[:.][0-5]\d)?(?:\s*[ap]\.?m\.?)?", re.I)

PHRASINGS = (
    "later pls, like 9",
    "could it be a bit LATER?",
    "un poco más temprano porfa",
    "plus tôt stp",
    "move it 30 min sooner",
    "laterally speaking, earliest is best",  # no whole word
    "mas tardecito",
    "7:30, no later than 8pm tho",
    "no más tarde de las 10",
    "pas plus tard que 21h30",
    "make it 8 not 8:30",
    "not at 7.15 p.m. please",
    "never earlier than 6",
    "NOT 9AM",
)


@cache
def texts() -> tuple[str, ...]:
    said = (*messages(), *PHRASINGS)
    return (*said, *(plain(text) for text in said))


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [match.span() for match in pattern.finditer(text)]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (_OLD_LATER, SAYS_LATER),
        (_OLD_EARLIER, SAYS_EARLIER),
        (_OLD_A_LIMIT, times._A_LIMIT),
        (_OLD_NOT_THIS_TIME, times._NOT_THIS_TIME),
    ],
    ids=["later", "earlier", "a_limit", "not_this_time"],
)
def test_a_folded_pattern_is_the_pattern_it_replaced(old: re.Pattern[str], new: re.Pattern[str]) -> None:
    assert (new.pattern, new.flags) == (old.pattern, old.flags)
    assert [_spans(new, text) for text in texts()] == [_spans(old, text) for text in texts()]


def test_a_way_said_is_read_as_the_one_list_of_both_ways() -> None:
    assert len(texts()) > 4000  # the corpus was read
    for text in texts():
        assert bool(SAYS_LATER.search(text) or SAYS_EARLIER.search(text)) == bool(_OLD_WAY.search(text)), text


@pytest.mark.parametrize(
    ("text", "way"),
    [("a bit later pls", "later"), ("un poco más temprano", "earlier"), ("plus tôt", "earlier"), ("ok", None)],
)
def test_the_way_asked_reads_the_shared_words(text: str, way: str | None) -> None:
    assert way_asked(text) == way


def test_the_readers_of_a_way_read_the_shared_words() -> None:
    assert asks_for_another_time("could it be a bit sooner?")
    assert not asks_for_another_time("could it be a bit soon?")
    assert shift_minutes("push it an hour, actually sooner") == -60
    assert shift_minutes("push it an hour") == 60
