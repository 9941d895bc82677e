"""A feedback reply read: done or not, how hard it felt, what helped or got in the way, a new time
or a new habit."""

from __future__ import annotations

import re

from promptpipe.adapters.offline_coach.text import _clean, _substantive, _words
from promptpipe.rules.intent_patterns import CHANGE_TIME, PREFER

_DONE_CANON = re.compile(r"\bq:\s*did you do it\?\s*a:\s*(done|next time)\b", re.I)
_INTENSITY_CANON = re.compile(
    r"\bq:\s*how's the intensity\?\s*a:\s*(decrease|keep current|increase|low|normal|high)", re.I
)
_NEGATIVE = re.compile(
    r"\b(?:didn'?t|did not|couldn'?t|could not|haven'?t|have not|wasn'?t able|not yet|next time|no time|"
    r"forgot|forget|too busy|too tired|skipped|missed|not today|nope|no)\b",
    re.I,
)
_POSITIVE = re.compile(
    r"\b(?:done|did it|i did|completed|finished|yes|yep|yeah|nailed it|managed|went well|it was (?:great|good))\b",
    re.I,
)
_HELPED = re.compile(
    r"\b(?:because|since|thanks to|it helped that|what helped was|helped by)\s+(?P<m>[^.;!?]+)"
    r"|(?P<m2>[^.;!?,]+?)\s+(?:really )?helped\b",
    re.I,
)
_BARRIER_CAUSE = re.compile(r"\b(?:because|since|as)\s+(?P<b>[^.;!?]+)", re.I)
# A feedback reply that gives a time corrects the schedule when it asks for a change (the request's
# words, promptpipe.rules.intent_patterns) or words it as a correction ("make it 8", "actually 7", "not at 6").
_CORRECTION = re.compile(
    r"\b(?:change|move|switch|reschedule|shift|update|push)\b.*\b(?:time|reminder|prompt|schedule|message|it)\b"
    r"|\bmake it\b|\bactually\b|\bnot (?:at )?\d|\bcambi\w*|\bmuev\w*",
    re.I,
)


def asks_for_a_new_time(text: str) -> bool:
    return bool(CHANGE_TIME.search(text) or PREFER.search(text) or _CORRECTION.search(text))


def classify_barrier(text: str) -> tuple[str, str]:
    """(barrier, tweak) for a "not this time" reply."""
    if _DONE_CANON.search(text):
        return "not specified", "make it even smaller — just 30 seconds right after your usual routine"
    lowered = text.lower()
    if "forg" in lowered:
        return "forgot", "leave a visible cue right where your routine happens, or set a phone reminder"
    if re.search(r"\b(?:time|busy|rushed|hectic|late)\b", lowered):
        return "not enough time", "shrink it to a 30-second version you can do anywhere"
    if re.search(r"\b(?:tired|exhausted|sleepy|sick|ill|energy)\b", lowered):
        return "too tired", "do the easiest possible version, even just 30 seconds"
    cause = _BARRIER_CAUSE.search(text)
    if cause and _substantive(cause["b"]):
        return _words(_clean(cause["b"]), 15), "make it even smaller so it fits on a busy day"
    cleaned = _clean(_NEGATIVE.sub("", text))
    if _substantive(cleaned):
        return _words(_clean(text), 15), "make it even smaller so it fits on a busy day"
    return "not specified", "make it even smaller — just 30 seconds right after your usual routine"
