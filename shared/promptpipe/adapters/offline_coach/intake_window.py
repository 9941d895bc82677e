"""A daily prompt at a random moment of a window (docs/offline-coach.md, "Intake answers in every form"):
when the participant asked for the time to vary ("could it be a different time each day?", "surprise me",
"a una hora distinta", "au hasard") or took the coach's offer of one, a window they give ("between 6 and
9pm then", "entre las 6 y las 9 de la noche", "entre 18h et 21h") is the window of a ``random`` schedule,
its start the preferred time. Without that wish a window is read as its start (``times.parse_clock_time``).
Read from the conversation the request carries, so the coach stays stateless."""

from __future__ import annotations

import re

from promptpipe.adapters.offline_coach.phrases import clock
from promptpipe.adapters.offline_coach.times import parse_clock_time
from promptpipe.models.llm import ChatMessage

# "between 6 and 9pm", "from 6 to 9 pm", "anytime 6-9pm", "entre las 6 y las 9 de la noche", "de 18h à 21h".
_HOUR = r"\d{1,2}(?:[:h.][0-5]\d)?h?(?:\s*[ap]\.?m\.?)?"
# A window said in words opens with "between", "from", "entre", "de" and joins its ends with "and", "y", "à".
_FROM = "between|from|anytime|any time|entre|de|desde"
_TO = "and|to|till|until|-|–|y|a|hasta|et|[àa]"
_SAID_IN_WORDS = (
    rf"\b(?:{_FROM})\s+(?:las\s+)?(?P<a>{_HOUR})\s*(?:{_TO})\s+(?:las\s+)?(?P<b>{_HOUR})(?P<tail>[^,.;!?]*)"
)
_DASHED = r"\b(?P<a2>\d{1,2})\s*[-–]\s*(?P<b2>\d{1,2}\s*[ap]\.?m\.?)(?P<tail2>[^,.;!?]*)"  # "6-9pm"
_WINDOW = re.compile(f"{_SAID_IN_WORDS}|{_DASHED}", re.I)
_MERIDIEM = re.compile(r"[ap]\.?m|\d{1,2}h|\b(?:1[3-9]|2[0-3])\b", re.I)
# The wish for a prompt that comes at another moment each day, in the participant's words or the coach's offer.
_VARIES_EN = (
    r"random\w*|different time|another time each day|var(?:y|ies|ied)|surprise me|mix it up|not (?:at )?the same time"
)
_VARIES_ES = r"al azar|aleatori\w*|horas? (?:distint|diferent)\w*|(?:distint|diferent)\w* horas?"
_VARIES_FR = r"au hasard|al[ée]atoire\w*|pas (?:toujours )?[àa] la m[êe]me heure|heures? diff[ée]rentes?"
_VARIES = re.compile(rf"\b(?:{_VARIES_EN}|{_VARIES_ES}|{_VARIES_FR})\b", re.I)


def _minutes(hhmm: str) -> int:
    hour, minute = (int(part) for part in hhmm.split(":"))
    return hour * 60 + minute


def read_window(text: str) -> tuple[str, str] | None:
    """The window a message gives, as (start, end) HH:MM: "between 6 and 9pm" → 18:00–21:00 (an open
    start takes the half of the day that puts it before the end)."""
    match = _WINDOW.search(text)
    if match is None:
        return None
    first, last, tail = (match["a"], match["b"], match["tail"]) if match["a"] else (match["a2"], match["b2"], "")
    tail = tail or match["tail2"] or ""
    end = parse_clock_time(f"at {last}{tail}") or parse_clock_time(last)
    start = parse_clock_time(f"at {first}") or parse_clock_time(first)
    if start is None or end is None:
        return None
    if not _MERIDIEM.search(first) and _minutes(end) >= 12 * 60 and _minutes(start) + 12 * 60 < _minutes(end):
        start = f"{int(start[:2]) % 12 + 12:02d}{start[2:]}"
    if _minutes(end) <= _minutes(start):
        return None
    return start, end


def random_window(history: list[ChatMessage], user: str) -> tuple[str, str] | None:
    """The window of a random daily prompt, when the conversation asked for one: the latest window the
    participant gave, after (or with) their wish for a time that varies or the coach's offer of it."""
    wished = False
    window = None
    for message in [*history, ChatMessage(role="user", content=user)]:
        said = message.content or ""
        if _VARIES.search(said):
            wished = True
        if message.role == "user" and wished:
            window = read_window(said) or window
    return window


_OFFER = {
    "en": "Shall I send you one like it every day at a random time between {start} and {end}?",
    "es": "¿Te envío uno así cada día a una hora al azar entre las {start} y las {end}?",
    "fr": "Je vous en envoie un comme ça chaque jour à une heure au hasard entre {start} et {end} ?",
}
_DONE = {
    "en": "Done! Your daily prompt will come at a random time between {start} and {end}, every day.",
    "es": "¡Listo! Te escribiré cada día a una hora al azar entre las {start} y las {end}.",
    "fr": "C'est fait ! Votre message quotidien viendra chaque jour à une heure au hasard entre {start} et {end}.",
}


def window_offer(window: tuple[str, str], language: str) -> str:
    return _OFFER.get(language, _OFFER["en"]).format(start=clock(window[0], language), end=clock(window[1], language))


def window_done(window: tuple[str, str], language: str) -> str:
    return _DONE.get(language, _DONE["en"]).format(start=clock(window[0], language), end=clock(window[1], language))
