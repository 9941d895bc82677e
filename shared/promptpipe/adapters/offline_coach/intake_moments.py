"""The usual moment of a routine (docs/offline-coach.md, "Intake answers in every form"): a routine said
when the time was asked ("en rentrant du boulot", "saliendo del trabajo", "as soon as the kids are at
school") is the anchor, and the moment it usually happens is a time to propose, which the participant
confirms or corrects. The routine is read by its structure (``intake_routines.parse_anchor``); the words of
the day it names (waking, meals, the end of work, bed) only place it in the day."""

from __future__ import annotations

import re

from promptpipe.adapters.offline_coach.intake_routines import _EVENING_ROUTINE, _MORNING_ROUTINE, parse_anchor
from promptpipe.adapters.offline_coach.times import parse_clock_time, propose_time
from promptpipe.adapters.offline_coach.vocabulary import MEALS_FR
from promptpipe.rules.word_patterns import any_word

# The moments of an ordinary day, earliest first, with the time to propose for each (the middle of the
# usual window, as ``times.propose_time`` does for day-parts).
_MOMENTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"\b(?:wak(?:e|es|ing)|get(?:ting)? up|out of bed|alarm|levant\w*|levanto|despiert\w*|despert\w*|"
            r"r[ée]veil\w*|l[eè]ve|lever)\b",
            re.I,
        ),
        "07:00",
    ),
    (
        re.compile(
            r"\b(?:before (?:work|school|class|the office|my shift)|antes del? (?:trabajo|escuela|oficina|clase)|"
            r"avant (?:le travail|le boulot|le bureau|l'[ée]cole))\b",
            re.I,
        ),
        "07:30",
    ),
    (re.compile(r"\b(?:breakfast|desayun\w*|petit[- ]d[ée]j\w*)\b", re.I), "08:00"),
    (
        re.compile(
            r"\b(?:drop\w*|school run|commute to|way to work|on the way in|get(?:ting)? to work|"
            r"llegar al trabajo|llego al trabajo|arrive at work|en arrivant au (?:bureau|travail|boulot))\b",
            re.I,
        ),
        "08:30",
    ),
    (re.compile(r"\b(?:lunch\w*|almuerz\w*|almorz\w*|comida|comer|d[ée]jeuner|d[ée]j)\b", re.I), "12:30"),
    (re.compile(r"\b(?:dinner|supper|cen(?:a|ar|o)|d[îi]ner)\b", re.I), "20:00"),
    (
        re.compile(r"\b(?:bed\w*|sleep\w*|asleep|dormir|duerm\w*|acuest\w*|acost\w*|couch\w*|dodo|lights out)\b", re.I),
        "21:30",
    ),
)
_HOME = re.compile(r"\b(?:get(?:ting)? home|come home|casa|maison|rentr\w+)\b", re.I)


def routine_moment(text: str) -> str:
    """A time to propose for a routine said instead of a time ("en rentrant du boulot" → 18:00, "cuando me
    levanto" → 07:00), or "" when the message names no routine, gives a clock time, or places it nowhere."""
    if parse_clock_time(text) is not None:
        return ""
    routine, _ = parse_anchor(text, soft=True)
    if not routine:
        return ""
    said = propose_time(routine)
    if said:
        return said
    if _MORNING_ROUTINE.search(routine):
        return "07:30"
    if _EVENING_ROUTINE.search(routine):
        return "18:00"
    moment = next((time for pattern, time in _MOMENTS if pattern.search(routine)), "")
    if moment:
        return moment
    return "18:00" if _HOME.search(routine) else ""


# A moment of the day named by its meal or its start rather than by a connective ("at lunchtime", "on my
# lunch break", "first thing in the morning", "a la hora de la comida", "à l'heure du déjeuner", "à la
# première heure"): said for the time, it is also the routine the prompt can follow.
_MEAL_OR_BREAK = (
    r"lunch ?time|lunch(?: ?break)?|breakfast(?: ?time)?|dinner ?time|supper ?time|(?:coffee|tea) break|"
    r"(?:work )?break(?: at work)?"
)
_MOMENT_PHRASE = any_word(
    r"first thing(?: in the morning)?",
    rf"(?:at|during|on|around) (?:my |the )?(?:{_MEAL_OR_BREAK})",
    r"(?:en|durante) (?:mi|el) (?:descanso|receso|break)(?: del trabajo)?",
    r"a primera hora(?: de la ma[ñn]ana)?",
    # a part of the day said for the time ("in the morning", "en la mañana", "le soir"): the moment too
    r"(?:in|during) the (?:morning|afternoon|evening)",
    r"(?:en|por|durante) la (?:ma[ñn]ana|tarde|noche)",
    r"le (?:matin|soir)",
    r"(?:a|en) la hora de(?:l| la)? (?:comida|almuerzo|cena|desayuno|comer|almorzar|cenar|desayunar)",
    r"(?:[àa] )?la premi[eè]re heure",
    rf"[àa] l'heure du (?:{MEALS_FR})",
    r"pendant (?:ma|la) pause d[ée]jeuner",
)


def moment_said(text: str) -> str:
    """The moment of the day a message names by its meal or its start, as said ("at lunchtime"), or ""."""
    match = _MOMENT_PHRASE.search(text)
    return match[0] if match else ""
