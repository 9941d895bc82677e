"""The requests inside a feedback reply, read as people write them (docs/offline-coach.md, "Feedback in
forms the rules were not built on"): split from ``rules/feedback_reading.py``, which re-exports them.

- ``asks_for_another_time``: a verb of change with the prompt, its time or the texts as its object ("move
  it to 9", "cámbialo a las 9", "tu peux le décaler à 21h ?"), a preference beside a time ("a las 7
  mejor"), or a way asked for ("later pls, like 9"); ``runs_an_errand``: a verb of going with a place
  after it ("pasar a la farmacia", "stop by the gym"), which asks for nothing;
- ``limits_the_hours`` / ``limits_the_days``: when messages may come ("nothing after 9pm", "not on
  weekends"), which moves nothing;
- ``not_yet``: "not yet, will do it tonight", "later today", "al rato", no miss;
- ``asks_when``: a question about when the daily prompt comes.

English, Spanish and French, on the shared normal form (``message_reading.plain``). Pure: ``re`` and the
rules it names only.
"""

from __future__ import annotations

import re

from promptpipe.rules.change_of_when import asks_to_change_when
from promptpipe.rules.half_of_day import SAYS_EARLIER, SAYS_LATER, judged_time
from promptpipe.rules.lexicon import PLEASE
from promptpipe.rules.message_reading import plain
from promptpipe.rules.outcome import read_outcome

__all__ = [
    "asks_for_another_time",
    "asks_when",
    "limits_the_days",
    "limits_the_hours",
    "not_yet",
    "runs_an_errand",
]

# --- a limit on when messages come ----------------------------------------------------------------
# "nothing after 9pm", "not before 8 please", "nada después de las 10", "rien après 21h": when, not whether.
_LIMIT_HOUR = re.compile(
    r"\b(?:nothing|no|not|never|nada|ni|rien|pas|jamais|no more)\b[^.?!]*?"
    r"\b(?:after|before|past|later than|earlier than|despues de|antes de|apres|avant)\s+(?:las?\s+|the\s+)?\d"
)
# Habitually on some days: "not on weekends", "los fines de semana no", "pas le week-end" (not "this weekend").
_DAYS_OFF = re.compile(
    r"\b(?:not|no|never|pas|nada|don'?t|do not|ni)\b[^.?!]*?\b(?:on |los |les |le )(?:weekends|fines de semana|"
    r"week-?ends?|saturdays|sundays|sabados|domingos|samedis|dimanches)\b|"
    r"\b(?:on |los |les |le )?(?:weekends|fines de semana|week-?ends)\b[^.?!]*?\b(?:no|not|pas|nada)\b"
)


# "stop texting me at night", "arrête de m'envoyer des messages le soir", "no me mandes en la noche".
_LIMIT_PART = re.compile(
    r"\b(?:stop|no|not|never|don'?t|arret\w*|ne|pas|deja de|nada)\b[^.?!]*?"
    r"\b(?:texts?|texting|messages?|messaging|mensajes|mandes|envies|escribas|m'envoyer|m'ecrire|envoie\w*)\b[^.?!]*?"
    r"\b(?:at night|in the (?:morning|evening)|late at night|le soir|la nuit|le matin|en la noche|por la noche|"
    r"en la manana|por la manana|de noche|tard le soir)\b"
)


def limits_the_hours(text: str) -> bool:
    """ "nothing after 9pm", "no mensajes después de las 10", "stop texting me at night": a limit on the
    hour, which moves nothing."""
    said = plain(text)
    return bool(_LIMIT_HOUR.search(said) or _LIMIT_PART.search(said))


def limits_the_days(text: str) -> bool:
    """ "not on weekends", "los fines de semana no me mandes": a limit on the days, which the daily
    schedule cannot keep: explained, never a deletion ("no texts this weekend" is a pause)."""
    said = plain(text)
    return bool(_DAYS_OFF.search(said)) and not re.search(
        r"\b(?:this|este|ce|next|proximo)\s+(?:weekend|fin|week)", said
    )


# --- not yet, and a plan for later -----------------------------------------------------------------
# Not done, and the day not over: "not yet", "todavía no", "pas encore".
_NOT_DONE_YET = r"not yet|not done yet|haven'?t yet|todavia no|aun no|pas encore|still not|nope not yet"
# A plan for later the same day: "later today", "will do it tonight", "al rato", "ce soir".
_LATER_TODAY = (
    r"later (?:today|tonight|on)|(?:i'?ll|will|gonna) do it (?:later|tonight)|mas tarde (?:hoy|lo hago)|al rato|"
    r"lo hago (?:mas tarde|al rato|luego|en la noche)|luego lo hago|plus tard (?:ce soir|aujourd'?hui|dans la journee)|"
    r"je (?:le )?fais (?:ca )?(?:plus tard|ce soir)"
)
_NOT_YET = re.compile(rf"\b(?:{_NOT_DONE_YET}|{_LATER_TODAY})\b")
_A_MISS = re.compile(r"\b(?:forg\w*|olvid\w*|oubli\w*|couldn'?t|can'?t|won'?t|no pude|pas pu|missed|skipped)\b")


def not_yet(text: str) -> bool:
    """ "not yet, will do it tonight", "todavía no, al rato", "pas encore": the day is not over; no miss."""
    said = plain(text)
    return bool(_NOT_YET.search(said)) and not _A_MISS.search(said)


# --- another time asked for: a verb of change with the schedule as its object -----------------------
# A request to move the prompt is a verb of change whose object is the prompt, its time or the texts
# ("move it to 7", "can you send them at 6 from now on", "cámbialo a las 9", "¿lo puedes pasar a las 6?",
# "tu peux le décaler à 21h ?"), or a preference beside a time ("a las 7 mejor", "21h plutôt", "better at
# 7"). A verb whose object is a place or an errand ("tengo que pasar a la farmacia", "stop at the
# pharmacy", "passer à la pharmacie") asks for nothing.
_CHANGE_VERB = (
    r"(?:change|move|switch|shift|push|bump|reschedule|resched|set|make|send|put|text|bring|"
    r"cambi\w*|muev\w*|mover\w*|pas[ae]\w*|pon\w*|manda\w*|envia\w*|recorr\w*|programa\w*|"
    r"chang\w*|decal\w*|deplac\w*|mets|mettre|mettez|pass\w*|envoi\w*|envoy\w*|programm\w*)"
)
_OBJECT_AFTER = (
    r"(?:it|them|that|this|(?:the|my|your|our|these|those) (?:daily )?(?:time|texts?|messages?|prompts?|"
    r"reminders?|schedule|check-?ins?)|(?:el|la|los|las|mi|mis|tu|tus) (?:hora|horario|mensajes?|"
    r"recordatorios?|avisos?)|(?:l'|le |la |les |mon |mes |ton |tes )(?:heure|horaire|messages?|rappels?))"
)
# Spanish clitics on the verb ("cámbialo", "pásamelo") and pronouns before it ("lo puedes pasar",
# "tu peux le décaler", "me los mandas").
_OBJECT_BEFORE = r"\b(?:lo|la|los|las|le|les|l')\s*(?:(?:puedes|podrias|pueden|peux|pourrais|pouvez|pourriez)\s+)?"
_TARGET = (
    r"(?:to|at|for|around|til|a las?|para las?|a eso de|como a las?|a (?=\\d)|vers|pour|plus tard|plus tot|"
    r"earlier|later|back|forward|mas temprano|mas tarde|antes|despues|"
    r"(?:au|aux|a la|al|pour le) (?:soir|matin|apres-midi|nuit|tarde|noche|manana)|"  # "passer au soir"
    r"(?:a |al |at |to )?(?:mediodia|noon|midday|midi|lunch(?:time)?))\b"  # "¿se puede poner a mediodía?"
)
_CHANGE_REQUEST = re.compile(
    rf"\b{_CHANGE_VERB}\s+(?:\w+\s+)?{_OBJECT_AFTER}\b|"
    rf"\b{_CHANGE_VERB}(?:\s+me)?\s+(?:it|them|that)?\s*{_TARGET}|"
    rf"\b(?:{_CHANGE_VERB[3:-1]})(?:lo|la|los|las|melo|mela|melos|melas|selo)\b|"
    # "le pongo una alarma": a thing of their own as the verb's object, not the prompt
    rf"{_OBJECT_BEFORE}(?:me\s+)?{_CHANGE_VERB}\b(?!\s+(?:un|una|unos|unas|une|des)\b)"
)
# A verb of going with a place after it: "pasar a la farmacia", "stop by the gym", "passer à la pharmacie"
# (a time after it, "pásalo a las 7", is no place).
_ERRAND = re.compile(
    r"\b(?:pas[ae]\w*|pass\w*|stop\w*|drop\w*|swing\w*|run\w*|ir|voy|go|going|arret\w*|m'arret\w*|"
    r"par(?:ar|o|e)|deten\w*|detuv\w*)\s+"
    r"(?:by|por|al|at|to the|to my|chez|au|aux|a (?:la|el|mi|casa|ver)|en (?:el|la|casa))\s+(?!\d)"
    r"(?!(?:soir|matin|apres-midi|nuit|evening|morning|afternoon|night|tarde|noche|manana)\b)\w+"  # "passer au soir"
)
# A way asked for: a question ("could it be later?"), a softener ("a bit", "un poco"), or the way said alone
# ("later pls", "un peu plus tôt").
_WAY_ALONE = r"(?:later|earlier|mas tarde|mas temprano|plus tard|plus tot)"
_ASKING = re.compile(
    r"\b(?:could|can|would|should) (?:it|you|we|they)\b|\b(?:a bit|a little|slightly|un poco|un peu|un pelin|"
    r"puedes|podrias|se puede|se podria|peux|pourrais|pourriez|possible)\b|^(?:a bit |slightly |un poco |un peu )?"
    rf"{_WAY_ALONE}(?: (?:{PLEASE}))?$"
)
# A preference, or a change from now on, said beside a time ("a las 7 mejor", "21h plutôt", "from now on").
_PREFER_EN = r"better|rather|prefer\w*|instead|from now on|going forward"
_PREFER_ES = r"mejor|prefier\w*|prefiero|mas bien|de ahora en adelante|desde ahora"
_PREFER_FR = r"plutot|prefere\w*|mieux|desormais|dorenavant|a partir de maintenant"
_PREFER_TIME = re.compile(rf"\b(?:{_PREFER_EN}|{_PREFER_ES}|{_PREFER_FR})\b")


_A_PLAN = re.compile(r"\b(?:i'?ll|i will|gonna|going to|voy a|lo hare|je vais)\b")


def runs_an_errand(text: str) -> bool:
    """ "tengo que pasar a la farmacia primero", "need to stop by the store": a place to go, no request."""
    return bool(_ERRAND.search(plain(text)))


def asks_for_another_time(text: str) -> bool:
    """The message asks to move the daily prompt (a verb of change with the prompt, its time or the texts
    as its object; a preference said beside a time), not to run an errand. The time itself, if any, is
    read by the caller."""
    said = plain(text)
    if runs_an_errand(said) and not re.search(r"\b(?:time|hora|heure|texts?|messages?|mensajes?)\b", said):
        return False
    # "didn't make it", "barely made it": whether they got there, no change asked for
    if _CHANGE_REQUEST.search(
        re.sub(r"\b(?:didn'?t|did not|couldn'?t|could not|can'?t|won'?t|barely) make it\b", "", said)
    ):
        return True
    judged = judged_time(said)  # "6 is too soon … 7:15?", "21h c'est trop tard. 8h30 ?": another time than this
    if judged and re.search(r"\d", said[: judged.start] + said[judged.end :]):
        return True
    # a time, or the meal said for when ("can we do lunchtime instead"; not "I'll do it at lunch instead")
    meal = re.search(r"\b(?:lunch(?:time)?|la comida|el almuerzo)\b", said) is not None and not _A_PLAN.search(said)
    timed = meal or re.search(r"\d|\b(?:noon|mediodia|midi)\b", said) is not None
    if read_outcome(text, asked=False) == "done":
        return False  # "did it at 7pm instead" reports; only a verb of change on the prompt asks too
    if _PREFER_TIME.search(said) and timed:
        return True
    # "later pls, like 9", "could it be a bit later?", "un poco más temprano": the way, asked for
    way = SAYS_LATER.search(said) or SAYS_EARLIER.search(said)
    return bool(way and (timed or _ASKING.search(said)) and not _NOT_YET.search(said))


# "what time will it come?", "¿a qué hora llega?", "quand est-ce que tu m'écris ?": the listed time.
_ASKS_WHEN = re.compile(
    r"\b(?:what time|when|a que hora|cuando|a quelle heure|quand)\b.*\b(?:come|comes|arrive\w*|text\w*|send\w*|"
    r"get (?:it|them|my)|message\w*|llega\w*|manda\w*|envia\w*|recib\w*|envoi\w*|ecri\w*|recoi\w*|recevoir)\b"
)


def asks_when(text: str) -> bool:
    """A question about when the daily prompt comes."""
    said = plain(text)
    if asks_to_change_when(said):
        return False  # "is there a way to change when the msgs come?" asks for another time, not this one
    return ("?" in said and bool(_ASKS_WHEN.search(said))) or bool(re.match(r"^(?:when|cuando|quand)\b", said))
