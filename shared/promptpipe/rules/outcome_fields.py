"""What a done carries beside it in the feedback week (docs/offline-coach.md, "Outcome fields in the
feedback week"), read by structure in English, Spanish and French:

- ``in_the_way_beside``: what got in the way, said after a contrast beside the report ("done but the
  kids were up sick all night", "lo hice, aunque con el viaje no fue fácil", "fait, mais avec la
  pluie"): the clause after "but", "though", "aunque", "pero", "mais" (or closed by "tho": "walked to
  work, my feet hurt tho") when it names something that gets in the way of a day. Such a clause is never
  what helped.
- ``opens_with_contrast``: a clause that opens with such a contrast.
- ``thanks_on_a_hard_day``: a thanks with the day judged hard beside it ("thanks! hard with the travel
  though", "gracias, aunque ha estado difícil con el viaje"): in answer to the daily prompt, a done said
  as thanks, with what got in the way (docs/offline-coach.md).

The obstacle words are a hint on top of the structure (a contrast beside a done), never the reading on
their own. Pure: ``re`` and the shared normal form only.
"""

from __future__ import annotations

import re

from promptpipe.rules.message_reading import plain
from promptpipe.rules.report_details import hard_going

__all__ = ["in_the_way_beside", "opens_with_contrast", "thanks_on_a_hard_day"]

_CONTRAST_WORDS = (
    r"but|though|tho|although|altho|even though|even tho|except|pero|aunque|aun asi|solo que|mais|m[eê]me si|sauf que|"
    # a concession: "got it done even w the rain", "a pesar del calor", "malgré la pluie"
    r"even with|even w|even in|despite|in spite of|a pesar de(?:l)?|pese a|malgr[eé]|m[eê]me avec"
)
_CONTRAST = re.compile(rf"^(?:{_CONTRAST_WORDS})\b[\s,]*")
_CLOSING_CONTRAST = re.compile(r"[\s,]+(?:tho|though|por cierto|quand meme)$")
# A message cut where a sentence or a comma ends, and before a contrast word that does not close it.
_CLAUSES = re.compile(rf"(?<=[.!?;…])\s+|,\s*|\s+(?=(?:{_CONTRAST_WORDS})\b(?!\W*$))|\n+")
# What gets in the way of a day, in the three languages (a hint inside the contrast, see the docstring).
_OBSTACLES_EN = (
    r"overtime|tired|exhausted|wiped|drained|busy|sick|rain\w*|storm|snow\w*|overslept|"
    r"travel\w*|trip|flight|airport|jet ?lag|kids?|baby|toddler|work|shift|meetings?|deadlines?|pain|sore|"
    r"hurt\w*|headache|migraine|cold|flu|heat|hot|stress\w*|chaos|chaotic|hectic|rushed|crazy day|long day|no sleep"
)
_OBSTACLES_ES = (
    r"cansad\w*|agotad\w*|llovi\w*|lluvia|enferm\w*|ocupad\w*|viaje|vuelo|aeropuerto|trabajo|chamba|"
    r"junta|reunion|dolor|duele|dolia|calor|frio|ninos|nenes|bebe|estres|prisa|desvelad\w*|gripa|gripe|resfriad\w*"
)
_OBSTACLES_FR = r"fatigu\w*|crev\w*|malade|pluie|voyage|boulot|travail|enfants|mal au|mal a la|rhume|presse\w*"
_OBSTACLE = re.compile(rf"\b(?:{_OBSTACLES_EN}|{_OBSTACLES_ES}|{_OBSTACLES_FR})\b")


def opens_with_contrast(clause: str) -> bool:
    """ "but the kids were sick", "aunque con el viaje…", "mais avec la pluie": a clause that opens with
    a contrast (beside a done, it says what made it harder, never what helped)."""
    return _CONTRAST.match(plain(clause).strip(" ,.!…")) is not None


def in_the_way_beside(text: str) -> str:
    """What got in the way, said after a contrast beside the report, in the participant's words ("done
    but barely lol the kids were up sick all night" → "barely lol the kids were up sick all night";
    "hecho, aunque con el viaje a Monterrey estuvo complicado" → "con el viaje a Monterrey estuvo
    complicado"); "" when no contrast names an obstacle ("did it, but tomorrow I can't?": a question)."""
    clauses = [c.strip(" ,.!…") for c in _CLAUSES.split(text.strip()) if c and c.strip(" ,.!…")]
    for clause in clauses[1:]:
        said = plain(clause)
        opening, closing = _CONTRAST.match(said), _CLOSING_CONTRAST.search(said)  # "…, my feet hurt tho"
        if (opening is None and closing is None) or "?" in clause or "¿" in clause:
            continue
        start, end = (opening.end(), len(said)) if opening is not None else (0, closing.start() if closing else 0)
        if _OBSTACLE.search(said[start:end]):  # in their own letters (accents kept) when the two line up
            return (clause[start:end] if len(clause) == len(said) else said[start:end]).strip()
    return ""


_THANKS_OPEN = re.compile(
    r"^\W*(?:thanks?|thank (?:you|u)|thx|ty|tysm|cheers|(?:muchas |mil )?gracias|merci(?: beaucoup)?)\b"
)


def thanks_on_a_hard_day(text: str) -> bool:
    """ "thanks! hard with the travel though", "gracias!! aunque estuvo pesado", "merci, c'était dur avec
    la pluie": a thanks that opens the message and a day judged hard beside it (not a question: "thanks,
    is it hard to change the time?")."""
    if "?" in text or "¿" in text or _THANKS_OPEN.match(plain(text)) is None:
        return False
    return bool(hard_going(text))
