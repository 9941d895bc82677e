"""A question or request about changing *when* the daily prompt comes, said without the word "time"
(docs/offline-coach.md, "Feedback as people write it"): "is there a way to change when the msgs come?",
"could I get them at a different hour?", "¿se puede cambiar cuándo me llegan?", "on peut changer l'heure ?".

"When" here is the object of a verb of change, so the message asks for another time, not for the time
the prompt comes now ("when do you text me?"). English, Spanish and French, on the shared normal form
(``rules/normalise.py``: case, width and accents folded). Pure: ``re`` and ``rules/normalise`` only, so that
``rules/message_reading`` may read it too.
"""

from __future__ import annotations

import re

from promptpipe.rules.normalise import fold_accents, normalise_text

__all__ = ["asks_for_an_unnamed_time", "asks_to_change_when"]

# A verb of change, then (within a few words) what it changes: when, the hour, the schedule.
_CHANGE_OF_WHEN = re.compile(
    r"\b(?:change|changing|move|moving|switch|adjust|cambiar|cambio|cambia|mover|modificar|changer|modifier|"
    r"deplacer|decaler)\b(?:\s+[\w']+){0,3}?\s+(?:when|what time|(?:the|my) (?:hour|schedule|timing)|cuando|"
    r"a que hora|(?:la|mi) hora|(?:el|mi) horario|quand|a quelle heure|l'heure|(?:l'|mon )horaire)\b"
    r"|\b(?:at|on) (?:a|another|some) (?:different|other|new) hour\b|\b(?:another|a different|a new) hour\b"
    r"|\b(?:a|en) otr[oa] (?:hora|horario)\b|\b(?:a|[aà]) une autre heure\b"
    # "¿puedo elegir otra hora?", "can I pick a different time?", "je peux choisir une autre heure ?"
    r"|\b(?:elegir|escoger|choose|pick|select|choisir) (?:a |une )?(?:otr[oa]|another|different|other|new|autre) "
    r"(?:hora|horario|time|hour|heure)\b"
)


def asks_to_change_when(text: str) -> bool:
    """ "is there a way to change when the msgs come?", "a otra hora?": another time is wanted (which
    one may come in this message or the next)."""
    return bool(_CHANGE_OF_WHEN.search(re.sub(r"\s+", " ", fold_accents(normalise_text(text)))))


# A verb of change whose object is the time itself: "can we change the time?", "can i switch the reminder time",
# "could you move my message time?", "¿se puede cambiar la hora?", "on peut changer l'heure ?".
_CHANGE_OF_TIME = re.compile(
    r"\b(?:change|changing|move|moving|switch(?:ing)?|adjust(?:ing)?|shift(?:ing)?|cambi[aeo]\w*|muev\w*|mover\w*|"
    r"modific\w*|pasar\w*|changer|change[rsz]?|modifi\w*|deplac\w*|decal\w*)\b(?:\s+[\w']+){0,3}?\s+(?:(?:the|my|its?|their|that)\s+(?:[\w']+\s+)?times?|"
    r"(?:la|mi|su) hora|(?:el|mi) horario|l'heure|(?:l'|mon )horaire|(?:a|to) (?:a )?(?:different|another|new|later|"
    r"earlier) time)\b"
)
# A change refused, not asked for: "don't change the time", "no cambies la hora", "ne change pas l'heure".
_REFUSED = re.compile(r"\b(?:don'?t|do not|never|no (?:quiero )?cambi\w*|ne (?:change|modifie|deplace)\w*)\b")


def asks_for_an_unnamed_time(text: str) -> bool:
    """ "can we change the time?", "¿se puede cambiar la hora?", "is there a way to change when they come?":
    another time is wanted and none is named in the message (so which one is to be asked)."""
    said = re.sub(r"\s+", " ", fold_accents(normalise_text(text)))
    if re.search(r"\d", said) or _REFUSED.search(said):
        return False
    return bool(_CHANGE_OF_TIME.search(said) or asks_to_change_when(said))
