"""The part of the day a request for another time avoids, or explains itself by, set apart from the part it
asks for (docs/offline-coach.md, "Feedback as people write it"): "can it be after dinner instead, lunchtime
is crazy at work" asks for after dinner; "mejor temprano en la mañana, de noche ya estoy muerta" asks for the
morning; "plutôt le matin, le soir je suis crevée" the morning. The clause that names a part of the day with
a strain on it ("is crazy", "im wiped", "se me olvida", "no tengo tiempo", "je suis crevée") and no wish
("better", "mejor", "plutôt") is the reason, never the new time: it is taken out before the time is read.

English, Spanish and French, on the shared normal form (``rules/normalise.py``). Pure: ``re``,
``rules/normalise`` and ``rules/lexicon`` only.
"""

from __future__ import annotations

import re

from promptpipe.rules.lexicon import INSTEAD_OF
from promptpipe.rules.normalise import fold_accents, normalise_text

__all__ = ["avoided_half", "when_wanted", "without_a_deadline", "without_avoided_day_part"]

# Where a clause ends: punctuation, or a joint that starts a reason or a contrast.
_CLAUSE_END = re.compile(
    r"[,.;!?]+|\s(?=(?:but|bc|cuz|cause|because|since|pero|porque|que|ya que|pues|mais|car|parce que|"
    rf"{INSTEAD_OF})\s)",
    re.I,
)
_DAY_PART = re.compile(
    r"\b(?:mornings?|first thing|evenings?|nights?|afternoons?|tonight|lunch(?:time|break)?|lunch break|midday|"
    r"noon|after work|after dinner|bed ?time|mananas?|tardes?|noches?|temprano|mediodia|almuerzo|comida|"
    r"matins?|matinee|soirs?|soiree|nuit|apres-midi|midi)\b"
)
# A strain on that part of the day: what makes it the wrong time.
_STRAIN = re.compile(
    r"\b(?:crazy|chaos|chaotic|zoo|hectic|busy|rush\w*|wiped|dead|tired|exhausted|beat|fried|forget\w*|forgot|"
    r"impossible|hard|insane|nuts|slammed|swamped|mess|never|don'?t|doesn'?t|can'?t|won'?t|not|no|too|"
    rf"{INSTEAD_OF}|"  # "at 5:30 instead of in the morning"
    r"bad|terrible|awful|rough|tough|worst|sucks?|brutal|stressful|packed|mal[oa]?s?|fatal|horrible|pesad[oa]s?|"
    r"complicad[oa]s?|mauvais\w*|nul(?:le)?s?|charge\w*|la course|"
    r"muert[oa]s?|cansad[oa]s?|agotad[oa]s?|olvid\w*|a mil|prisa|apurad[oa]s?|presse\w*|ocupad[oa]s?|imposible|"
    r"caos|locura|dificil|nunca|liad[oa]s?|ataread[oa]s?|a tope|estresad[oa]s?|overwhelmed|stressed|"
    r"fatigue\w*|crevee?s?|epuisee?s?|debordee?s?|oubli\w*|pas|jamais|dur|"
    # busy with something else then: "afternoons im at the gym", "en la mañana trabajo", "le matin j'ai cours"
    r"work(?:ing)?|job|gym|class(?:es)?|school|meetings?|commut\w*|trabaj\w*|chamba|oficina|clases?|escuela|"
    r"travail\w*|boulot|bureau|cours|"
    # busy doing something then: "al mediodía estoy comiendo", "mornings im driving", "le soir je suis en train de"
    r"(?:estoy|ando|voy|sigo) \w+(?:ando|iendo)|(?:i'?m|i am|im) \w+ing|en train de)\b"
)
# A wish: what makes a clause the one asked for, whatever else it says ("mornings r better").
_WISH = re.compile(
    r"\b(?:better|best|prefer\w*|rather(?! than)|instead(?! of)|works? for me|would work|mejor|prefier\w*|"
    r"prefiero|mas bien|"
    r"plutot|mieux|prefere\w*)\b"
)

_NOT_A_WISH = re.compile(r"\b(?:never|not|don'?t|doesn'?t|won'?t|no)\s+(?:\w+\s+)?(?:works?|better)\b")


def _plain(text: str) -> str:
    return re.sub(r"\s+", " ", fold_accents(normalise_text(text))).strip()


def _avoids(clause: str) -> bool:
    said = _plain(clause)
    wished = _WISH.search(_NOT_A_WISH.sub("", said))  # "lunch never works for me" wishes nothing
    return bool(_DAY_PART.search(said) and _STRAIN.search(said) and not wished)


def _says_when(clause: str) -> bool:
    said = _plain(clause)
    return bool(re.search(r"\d", said) or _DAY_PART.search(said) or _WISH.search(said))


def without_avoided_day_part(text: str) -> str:
    """``text`` without the clauses that name a part of the day to avoid, when another clause is left to
    say what is wanted ("after dinner would be better, like 8. lunchtime is a zoo" -> "after dinner would be
    better, like 8"); ``text`` itself when none, or nothing else, is said."""
    pieces = _clauses(text)
    kept = [piece for piece in pieces if not _avoids(piece)]
    if len(kept) == len(pieces) or not any(_says_when(piece) for piece in kept):
        return text  # nothing avoided, or nothing left that says when ("forgot today, mornings are crazy")
    return re.sub(r"\s+", " ", "".join(kept)).strip(" ,;")


# The half of the day a part of the day falls in (lunch and noon in neither: no bare hour is read as them).
_MORNING = re.compile(r"\b(?:mornings?|first thing|mananas?|temprano|matins?|matinee)\b")
_EVENING = re.compile(
    r"\b(?:evenings?|nights?|afternoons?|tonight|after work|after dinner|bed ?time|tardes?|noches?|soirs?|soiree|"
    r"nuit|apres-midi)\b"
)


def _clauses(text: str) -> list[str]:
    pieces, start = [], 0
    for end in _CLAUSE_END.finditer(text):
        pieces.append(text[start : end.end()])
        start = end.end()
    pieces.append(text[start:])
    return pieces


def avoided_half(text: str) -> str | None:
    """ "am" or "pm": the half of the day the message sets apart as the one to avoid ("6, mornings are bad for
    me" avoids the morning, so its bare 6 is the evening's), when another clause says what is wanted; else None."""
    if without_avoided_day_part(text) == text:
        return None
    avoided = " ".join(_plain(piece) for piece in _clauses(text) if _avoids(piece))
    morning, evening = bool(_MORNING.search(avoided)), bool(_EVENING.search(avoided))
    return "am" if morning and not evening else "pm" if evening and not morning else None


# A time said as a limit, not as the time wanted: "im out the door by 7", "before 9 pls", "antes de las 8".
_DEADLINE = re.compile(
    r"\b(?:by|before|no later than|not later than|antes de(?: las?)?|avant)\s+(?:the\s+)?"
    r"\d{1,2}(?:[:h.][0-5]\d)?\s*(?:am|pm|a\.m\.|p\.m\.|h)?(?!\s*(?:min|minutes|hours?|hrs?)\b)",
    re.I,
)


def without_a_deadline(text: str) -> str:
    """``text`` without the times said as a limit ("could we do earlier? im out the door by 7" -> no time), when
    it asks for another time: the limit bounds the new time, it is not the new time."""
    return _DEADLINE.sub(" ", text)


def when_wanted(text: str) -> str:
    """What ``text`` says of when it wants, its clauses that avoid a part of the day left out even when nothing
    is left ("¿se puede cambiar la hora? a mediodía estoy muy liada" -> "¿se puede cambiar la hora?"): noon
    is the time to leave, never the time asked for."""
    return re.sub(r"\s+", " ", "".join(piece for piece in _clauses(text) if not _avoids(piece))).strip(" ,;")
