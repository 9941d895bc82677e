"""Which half of the day a time means when its words leave it open (docs/offline-coach.md, "Times as
people write them"): the current time judged too early or too late ("6 is too soon", "a las 7 es muy
temprano", "21h c'est trop tard"), the way a change goes ("later", "más temprano", "plus tôt"), the
nearest hour that way from the current one, and plausibility (nobody sets a habit nudge for 2am).

English, Spanish and French, on the shared normal form (``message_reading.plain``). Pure: ``re`` and
the rules it names only. The clock's own forms are read by the offline coach's ``times.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from promptpipe.rules.message_reading import plain
from promptpipe.rules.word_patterns import any_word

__all__ = [
    "SAYS_EARLIER",
    "SAYS_LATER",
    "Judged",
    "asked_half_of_day",
    "in_half_of_day",
    "judged_time",
    "plausible",
    "toward",
    "way_asked",
]

Way = Literal["later", "earlier"]
Half = Literal["am", "pm"]

# A time said with a verdict on it: "6 is too soon", "6:30pm is way too early", "a las 7 es muy temprano",
# "21h c'est trop tard", "8 est trop tôt" — the time refused, and the way the new one goes from it.
_JUDGED = re.compile(
    r"(?:\b(?:at|a las|a la|a|vers)\s+)?\b(?P<time>\d{1,2}(?:[:h.][0-5]\d|h)?(?:\s*[ap]\.?m\.?)?)\s*"
    r"(?:is|'s|es|est|c'est|c est|ca fait)\s+(?:(?:way|a bit|a little|kinda|kind of|too|so|really|muy|"
    r"demasiado|bastante|un poco|un peu|trop|vraiment|bien|super)\s+)*"
    r"(?P<way>early|soon|late|temprano|pronto|tarde|tot|tard)\b"
)
# The way a change goes, said in words on the normal form: the one list every reader of a way asks
# ("later pls, like 9", "un poco más temprano", "30 min earlier").
SAYS_LATER = any_word("later", "mas tarde", "plus tard", flags=re.NOFLAG)
SAYS_EARLIER = any_word("earlier", "sooner", "mas temprano", "plus tot", flags=re.NOFLAG)
_TOO_EARLY = {"early", "soon", "temprano", "pronto", "tot"}


@dataclass(frozen=True)
class Judged:
    """A time refused as too early or too late: where it stands in the normal form, and the way to go."""

    start: int
    end: int
    way: Way


def judged_time(text: str) -> Judged | None:
    """The time the message refuses as too early ("6 is too soon") or too late ("21h c'est trop tard")."""
    match = _JUDGED.search(plain(text))
    if match is None:
        return None
    return Judged(match.start(), match.end(), "later" if match["way"] in _TOO_EARLY else "earlier")


def way_asked(text: str) -> Way | None:
    """The way a change goes from the current time: a time refused, else "later" / "earlier" said."""
    judged = judged_time(text)
    if judged is not None:
        return judged.way
    said = plain(text)
    later, earlier = bool(SAYS_LATER.search(said)), bool(SAYS_EARLIER.search(said))
    return "later" if later and not earlier else "earlier" if earlier and not later else None


def _minutes(hhmm: str) -> int:
    hour, minute = (int(part) for part in hhmm.split(":"))
    return hour * 60 + minute


def toward(new: str, current: str, way: Way) -> str:
    """``new`` in whichever half of the day lies nearest ``current`` going ``way``: "7:15" after a 6pm
    judged too soon is 19:15; "8" before a 9pm judged too late is 20:00."""
    hour, minute = (int(part) for part in new.split(":"))
    candidates = {f"{hour % 12:02d}:{minute:02d}", f"{hour % 12 + 12:02d}:{minute:02d}"}
    now = _minutes(current)

    def distance(hhmm: str) -> int:
        gap = (_minutes(hhmm) - now) % (24 * 60) if way == "later" else (now - _minutes(hhmm)) % (24 * 60)
        return gap or 24 * 60

    return min(sorted(candidates), key=distance)


def plausible(hhmm: str) -> str:
    """A time a habit nudge is set for: 1 to 4 in the night is read as the afternoon."""
    hour, minute = (int(part) for part in hhmm.split(":"))
    return f"{hour + 12:02d}:{minute:02d}" if 1 <= hour <= 4 else hhmm


# The day-part a request moves to, after a word that names a destination or a preference: "move it to the
# evening", "switch to mornings", "para la tarde", "a la noche", "passer au soir", "plutôt le matin", "mejor
# por la mañana"; not a day-part said of now ("mornings are too rushed", "en la noche ya estoy muerta").
_ASKED_PART = re.compile(
    r"\b(?:to|into|for|para|pa|pour|au|aux|a(?= (?:l'|las? ))|al|plutot|mejor|rather|prefer(?:ably)?|instead)\s+"
    r"(?:(?:the|la|las|le|les|el|por la|en la|de la|in the|du)\s+|l')?"
    r"(?P<part>mornings?|evenings?|nights?|afternoons?|mananas?|tardes?|noches?|matin|matinee|soir|soiree|nuit|"
    r"apres-midi|apres midi)\b"
)
_MORNING_PARTS = {"morning", "mornings", "manana", "mananas", "matin", "matinee"}


def asked_half_of_day(text: str) -> Half | None:
    """The half of the day a request moves the time to, from the last day-part it names as where to go
    ("mornings are too rushed, move it to the evening" is the evening)."""
    found = list(_ASKED_PART.finditer(plain(text)))
    if not found:
        return None
    return "am" if found[-1]["part"] in _MORNING_PARTS else "pm"


def in_half_of_day(hhmm: str, half: Half) -> str:
    """``hhmm`` moved into ``half``: "08:00" in the "pm" is 20:00; "19:30" in the "am" is 07:30."""
    hour, minute = (int(part) for part in hhmm.split(":"))
    return f"{hour % 12 + (12 if half == 'pm' else 0):02d}:{minute:02d}"
