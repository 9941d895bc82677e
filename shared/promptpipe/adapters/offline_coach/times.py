"""Times of day from what people write ("7:30am", "after dinner", "in the evening"), and said back."""

from __future__ import annotations

import re

_RANGE = re.compile(
    r"\b(\d{1,2})(?:[:.]([0-5]\d))?\s*(?:-|–|to)\s*\d{1,2}(?:[:.][0-5]\d)?\s*(a\.?m\.?|p\.?m\.?)(?![a-z])", re.I
)
_AMPM = re.compile(r"\b(\d{1,2})(?:[:.]([0-5]\d))?\s*(a\.?m\.?|p\.?m\.?)(?![a-z])", re.I)
_HHMM = re.compile(r"\b([01]?\d|2[0-3])[:h]([0-5]\d)\b", re.I)
_AT_HOUR = re.compile(
    r"\b(?:at|around|about|by|for)\s+(\d{1,2})(?![\d:.])(?:\s*o'?clock)?\b(?!\s*(?:min|hour|day|time|x\b))", re.I
)
_PM_HINT = re.compile(r"\b(?:evening|night|tonight|afternoon|after work|dinner|pm)\b", re.I)
_AM_HINT = re.compile(r"\b(?:morning|breakfast|am|wake|waking)\b", re.I)
_VAGUE_TIMES: tuple[tuple[str, str], ...] = (
    (r"\bmornings?\b|\bbreakfast\b|\bwak(?:e|ing) up\b", "08:00"),
    (r"\bafter lunch\b", "13:00"),
    (r"\bnoon\b|\bmidday\b|\blunch(?:time)?\b", "12:00"),
    (r"\bafternoons?\b", "15:00"),
    (r"\bevenings?\b|\btonight\b", "19:00"),
    (r"\bafter work\b", "18:00"),
    (r"\bafter dinner\b", "20:00"),
    (r"\bdinner\b", "19:00"),
    (r"\bnights?\b|\bbed ?time\b|\bbefore bed\b|\bbefore sleep\b", "21:00"),
)
# A vague word counts as a time only when phrased like one ("in the morning", "every evening")
# unless we just asked for a time or an anchor.
_TIME_CONTEXT = re.compile(r"\b(?:in the|every|each|at|around|by|this|during the|mid|late|early)\s+$", re.I)


def _hhmm(hour: int, minute: int) -> str:
    return f"{hour % 24:02d}:{minute:02d}"


def parse_clock_time(text: str) -> str | None:
    """An explicit time of day ("8am", "7:30 pm", "19:00", "at 7") as HH:MM (24-hour)."""
    match = _RANGE.search(text) or _AMPM.search(text)  # a range: its start ("8-9am" → 08:00)
    if match:
        hour, minute = int(match[1]), int(match[2] or 0)
        if not 1 <= hour <= 12:
            return None
        is_pm = match[3].lower().startswith("p")
        return _hhmm(hour % 12 + (12 if is_pm else 0), minute)
    match = _HHMM.search(text)
    if match:
        return _hhmm(_guess_half_of_day(int(match[1]), text), int(match[2]))
    match = _AT_HOUR.search(text)
    if match and int(match[1]) <= 23:
        return _hhmm(_guess_half_of_day(int(match[1]), text), 0)
    bare = re.fullmatch(r"\s*(\d{1,2})\s*", text)
    if bare and int(bare[1]) <= 23:
        return _hhmm(_guess_half_of_day(int(bare[1]), text), 0)
    return None


def _guess_half_of_day(hour: int, text: str) -> int:
    """ "at 7" in the evening is 19:00; "at 3" is more likely the afternoon than the night."""
    if hour == 0 or hour >= 12:
        return hour
    if _PM_HINT.search(text):
        return hour + 12
    if _AM_HINT.search(text):
        return hour
    return hour + 12 if hour <= 6 else hour


def parse_vague_time(text: str, *, loose: bool = False) -> str | None:
    """A time-of-day word ("morning" → 08:00, "after lunch" → 13:00, "evening" → 19:00)."""
    for pattern, value in _VAGUE_TIMES:
        for match in re.finditer(pattern, text, re.I):
            before = text[: match.start()]
            if loose or _TIME_CONTEXT.search(before) or match[0].lower().startswith(("after", "before")):
                return value
    return None


def normalise_time(value: str) -> str | None:
    """A stored preferred time as HH:MM, reading legacy forms ("8am", "morning") too."""
    value = value.strip()
    if re.fullmatch(r"([01]?\d|2[0-3]):[0-5]\d", value):
        hours, minutes = value.split(":")
        return _hhmm(int(hours), int(minutes))
    return parse_clock_time(value) or parse_vague_time(value, loose=True)


def friendly_time(hhmm: str) -> str:
    """ "08:00" → "8am", "19:30" → "7:30pm"."""
    try:
        hour, minute = (int(part) for part in hhmm.split(":"))
    except ValueError:
        return hhmm
    suffix = "am" if hour < 12 else "pm"
    hour12 = hour % 12 or 12
    return f"{hour12}{suffix}" if minute == 0 else f"{hour12}:{minute:02d}{suffix}"
