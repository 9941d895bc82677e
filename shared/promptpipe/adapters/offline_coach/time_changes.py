"""The new time a request to move the daily prompt asks for ("6 is too soon … 7:15?", "a las 9 mejor" at 8pm,
"mejor a la hora del desayuno, como a las 8:15"), read from what it says, the time the prompt comes at now
and the part of the day it avoids; the reading of times themselves is ``times.py``."""

from __future__ import annotations

import re

from promptpipe.adapters.offline_coach.time_forms import CORRECTION
from promptpipe.adapters.offline_coach.time_forms import spoken_times as _spoken
from promptpipe.adapters.offline_coach.times import (
    _DAY_PART_WORD,
    _HOUR_WITH_DAY_PART,
    _MERIDIEM_SAID,
    _TIME_PHRASE,
    _hhmm,
    _noon_set_aside,
    _parse_clock,
    _says_half_of_day,
    parse_asked_time,
    parse_clock_time,
    same_half_of_day,
)
from promptpipe.rules.half_of_day import asked_half_of_day, in_half_of_day, judged_time, plausible, toward, way_asked
from promptpipe.rules.message_reading import plain

# An hour left alone at the end of a request ("… half asleep. 8?", "can we do 2 instead").
_CLOSING_HOUR = re.compile(
    r"(?:^|[.,;!?]\s*|\b(?:do|try|with|for)\s+)(\d{1,2})\s*"
    # at the end of the message or of its clause ("can we do 4 instead, pickup runs late")
    r"(?:instead|then|maybe|pls|please|plz|porfa|stp|svp|mejor|plutot|tho)?\s*(?:[?!.]*\s*$|[,;](?!\s*\d))",
    re.I,
)


_TAKEN_BACK = re.compile(rf"\b(?:no|{CORRECTION})\b", re.I)


def requested_time(text: str, current: str | None = None) -> str | None:
    """The time a request asks for, apart from the one it refuses ("6 is too soon … 7:15?", "9 is too
    late … 8?") and from the ``current`` one ("6:30 is brutal lol can we do 7:45", "mejor a las 6, que a
    las 7 ya hace calor"), in the half of the day its words give, else as ``parse_clock_time`` guesses."""
    said = _noon_set_aside(plain(text))
    judged = judged_time(said)
    rest = _spoken(said if judged is None else f"{said[: judged.start]} , {said[judged.end :]}")
    said_times = list(_TIME_PHRASE.finditer(rest))
    if current is not None and len(said_times) > 1:  # the current time beside another is not the one asked for
        now = current.split(":")
        for match, after in reversed(list(zip(said_times, [*said_times[1:], None], strict=True))):
            one = (_parse_clock(match[0]) or _parse_clock(f"at {match[0].strip()}") or "").split(":")
            # a time taken back for the next one ("a las 9 de la noche, me equivoqué, 9 y media") is the first
            # try at the new time, its half of the day kept by the correction: never the current one
            taken_back = after is not None and _TAKEN_BACK.search(rest, match.end(), after.start())
            if len(one) == 2 and int(one[0]) % 12 == int(now[0]) % 12 and one[1] == now[1] and not taken_back:
                rest = f"{rest[: match.start()]} , {rest[match.end() :]}"
    closing = _CLOSING_HOUR.search(rest)
    found = parse_clock_time(rest) or (_parse_clock(f"at {closing[1]} {rest}") if closing else None)
    return found or parse_asked_time(rest)  # "7 works better"


# A meal named with the new time, which says its half of the day.
_MEAL_HALF = re.compile(
    r"\b(?:(?P<am>breakfast|desayun\w*|petit[- ]d[ée]jeuner)|dinner|supper|cena|cenar|d[îi]ner)\b", re.I
)


def time_for_change(text: str, current: str) -> str | None:
    """The new time a feedback request asks for, the daily prompt being at ``current`` (HH:MM): the half
    of the day its words say ("to the evening, like 8"); else the way it goes from the current time ("6
    is too soon", "un poco más tarde", "trop tard": the nearest that way); else the current time's half
    of the day ("a las 9 mejor" at 8pm), never the small hours. A day-part alone gives none: it is
    proposed first."""
    new = requested_time(text, current)
    if new is None:
        return None
    said = plain(text)
    judged = judged_time(said)
    rest = _spoken(said if judged is None else f"{said[: judged.start]} , {said[judged.end :]}")
    asked = asked_half_of_day(rest)  # "mornings are too rushed, move it to the evening, like 8"
    if asked is not None and not _MERIDIEM_SAID.search(rest) and not _HOUR_WITH_DAY_PART.search(rest):
        return in_half_of_day(new, asked)
    if _MERIDIEM_SAID.search(rest) or _DAY_PART_WORD.search(rest):  # not a routine: "antes del trabajo"
        return new
    meal = _MEAL_HALF.search(rest)  # "a la hora del desayuno, como a las 8:15": the meal says the morning
    if meal is not None and not re.search(r"\b(?:1[3-9]|2[0-3])[:h]", rest):
        return in_half_of_day(new, "am" if meal["am"] else "pm")
    way = way_asked(said)
    if way is not None:
        return toward(new, current, way)
    return plausible(same_half_of_day(new, current, rest) or new)


def away_from(time: str, avoided: str | None, said: str) -> str:
    """``time`` out of the ``avoided`` half of the day ("am"/"pm"), when ``said`` (what is wanted) leaves its
    half open: "6, mornings are bad for me" is 6pm, "a las 7, en la noche no puedo" 7am."""
    hour, minute = (int(part) for part in time.split(":"))
    if avoided is None or _says_half_of_day(_spoken(said)) or hour in (0, 12):
        return time
    if avoided == "am" and hour < 12:
        return _hhmm(hour + 12, minute)
    return _hhmm(hour - 12, minute) if avoided == "pm" and hour > 12 else time
