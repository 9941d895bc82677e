"""A time refused, and another given (docs/offline-coach.md, "Intakes with a detour"): "no thats when im
driving lol do 9:15", "uy no, a esa hora voy manejando, mejor a las 9", "non c'est quand je dépose les
enfants, plutôt 9h15". The clause that says why the time offered does not suit ("that's when I'm driving",
"es cuando salgo", "c'est l'heure où je conduis", "too early") speaks of that time, not of the routine the
prompt should follow: it is dropped before the message is read for facts, so the new time is read and the
routine already given stays."""

from __future__ import annotations

import re

from promptpipe.adapters.offline_coach.times import parse_clock_time
from promptpipe.rules.message_reading import plain

# A clause about the time offered: "that's/it's when …", "es cuando …", "c'est quand …", "a esa hora …",
# "then i'm …", "at that time i …", up to the end of its clause or a word that moves on to the new time.
_THAT_IS = r"that'?s|thats|that is|it'?s|its|that'?ll be|eso es|es|esa es|es la hora|c'?est|c'est l'heure"
_WHEN = r"when|while|cuando|mientras|quand|o[uù]|l'heure o[uù]"
_AT_THAT_TIME = r"at that time|by then|then i'?m|a esa hora|a esas horas|para esa hora|[àa] cette heure(?:-l[àa])?"
_ABOUT_THE_OFFER = re.compile(rf"\b(?:{_THAT_IS})\s+(?:{_WHEN})\b|\b(?:{_AT_THAT_TIME})\b")
# Where the clause about the offer ends: a stop, laughter, or the words that move on to the other time.
_LAUGH = r"lol|haha\w*|jaja\w*"
_MOVING_ON = (
    r"so|do(?= \d)|make it|how about|what about|maybe|instead|better|mejor|mejor a|mas bien|plutot|mieux|disons|"
    r"try|can we|could we|let'?s"
)
_NEXT = re.compile(rf"[,;.!?]|\b(?:{_LAUGH}|{_MOVING_ON})\b")


def past_the_refusal(text: str) -> str:
    """``text`` without the clause that says why the offered time does not suit, when a clock time is said
    beside it ("no thats when im driving lol do 9:15" → "no lol do 9:15"); else ``text`` unchanged."""
    said = plain(text)
    about = _ABOUT_THE_OFFER.search(said)
    if about is None or parse_clock_time(text) is None or len(said) != len(text):
        return text  # no such clause, no other time, or a text whose plain form does not line up with it
    end = _NEXT.search(said, about.end())
    cut = end.start() if end else len(said)
    rest = f"{text[: about.start()]} {text[cut:]}".strip()
    return rest if parse_clock_time(rest) is not None else text
