"""Requests during the intake, and hesitation (docs/offline-coach.md, "Requests during the intake, and
hesitation"), read by their structure in English, Spanish and French.

- **A later start** ("can we start next week", "empezamos en 10 días", "on commence dans 3 jours ?"): a
  verb of starting, at most the thing started ("it", "the texts", "los mensajes"), then a time ahead with
  a length. It is a pause of that length, made once the schedule exists. "i want to start running next
  week" names a habit, not a later start (the verb has another object).
- **When the messages come** ("can you text me at 6:30 instead", "mándame los mensajes a las 8",
  "envoie-moi les messages à 19h"): a verb of sending or the messages named, and a clock time said with
  its preposition. It gives the time; the request's own words are neither the habit nor the reason, and a
  fact said in a clause of its own beside it ("flossing, text me at 9") is read as the answer it is.
- **Hesitation by what is promised** ("i'll let you know tomorrow", "need to talk to my wife first",
  "te aviso mañana", "lo consulto con mi jefe", "je vous redis demain"): the answer is to come, after a
  while or after asking someone. Every clause of the message defers or is filler, and no number is said:
  "walking, i'll tell you the time later" answers with the habit.
"""

from __future__ import annotations

import re

from promptpipe.rules.lexicon import THE_MESSAGES, WEEKDAYS_EN, WEEKDAYS_ES, WEEKDAYS_FR
from promptpipe.rules.message_reading import plain

# -- a later start -----------------------------------------------------------------------------------
_START = (
    # Spanish stems change in the present ("empiezo", "comienzan"): every form of the verb starts too
    r"(?:start\w*|begin\w*|kick (?:it |this |things )?off|empe[zc]\w*|empie[zc]\w*|comen[zc]\w*|comien[zc]\w*|"
    r"arranc\w*|inici\w*|"
    r"commenc\w*|d[ée]marr\w*)"
)
# What may be started: the coaching itself, never another activity ("start running").
_STARTED = (
    r"(?:(?:it|this|that|them|things|the (?:texts|messages|prompts|reminders)|lo|esto|eso|los mensajes|"
    r"los recordatorios|ca|cela|les messages|les rappels)\s+)?"
)
_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "un": 1,
    "una": 1,
    "une": 1,
    "two": 2,
    "dos": 2,
    "deux": 2,
    "couple of": 2,
    "three": 3,
    "tres": 3,
    "trois": 3,
    "few": 3,
    "four": 4,
    "cuatro": 4,
    "quatre": 4,
    "five": 5,
    "cinco": 5,
    "cinq": 5,
}
_AHEAD = re.compile(
    r"(?P<next>next week|(?:la |esta )?(?:semana (?:que viene|proxima|entrante)|proxima semana|otra semana)|"
    r"la semaine (?:prochaine|d'apres))"
    r"|(?:in|en|dans|within|after|dentro de|despues de|apres)\s+(?:a |an |the )?"
    r"(?P<n>\d{1,2}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")\s+"
    r"(?P<unit>days?|weeks?|dias?|semanas?|jours?|semaines?)"
)
_LATER_START = re.compile(rf"\b{_START}\s+{_STARTED}(?:(?:from|on|desde|a partir de|a partir d')\s+)?")
_DAYS_PER = {"day": 1, "dia": 1, "jour": 1, "week": 7, "semana": 7, "semaine": 7}


def later_start(text: str) -> int | None:
    """The days a start asked for later lies ahead ("can we start next week?" → 7, "empezamos en 10 días"
    → 10, "on commence dans 3 jours" → 3); ``None`` when no later start is asked for with a length."""
    said = plain(text)
    for start in _LATER_START.finditer(said):
        ahead = _AHEAD.match(said, start.end())
        if ahead is None:
            continue
        if ahead["next"]:
            return 7
        amount = ahead["n"]
        count = int(amount) if amount.isdigit() else _NUMBER_WORDS[amount]
        unit = ahead["unit"].rstrip("s")
        return max(1, min(count * _DAYS_PER[unit], 60))
    return None


# A clause ends at its punctuation, or where "but" turns to what comes next ("journaling but i start next week").
_CLAUSE_BREAK = re.compile(r"\s*[,;.!?]+\s*|\s+(?:but|tho|though|pero|aunque|mais)\s+", re.I)


# A start put off to a day named, with no length: "starting next monday", "empiezo el lunes", "dès demain".
_WEEKDAY = "|".join((*WEEKDAYS_EN, *WEEKDAYS_ES, *WEEKDAYS_FR))
_DAY_AHEAD = re.compile(
    rf"(?:on |this |next |el |este |le |ce |a partir del? )?(?:{_WEEKDAY})\b"
    r"|(?:tomorrow|manana|demain|next month|el mes que viene|el proximo mes|le mois prochain)\b"
)


def _starts_later(clause: str) -> bool:
    """A clause that puts the start off, with a length or to a day named ("start next week", "empiezo el
    lunes"); never another activity started ("start running tomorrow")."""
    said = plain(clause)
    return any(_AHEAD.match(said, m.end()) or _DAY_AHEAD.match(said, m.end()) for m in _LATER_START.finditer(said))


def starts_later(text: str) -> bool:
    """Whether a clause of ``text`` puts the start off ("journaling, but starting next monday")."""
    return any(_starts_later(clause) for clause in _CLAUSE_BREAK.split(text))


def before_the_later_start(text: str) -> str:
    """What a message says before the clause that asks to start later, as written: "journaling, but can
    we start next week" -> "journaling", "tomar agua pero empiezo la otra semana" -> "tomar agua"; "" when
    the later start comes first or there is none. The habit said with a later start is kept (a fact), and
    the start made as a pause once set up."""
    clauses = [c.strip() for c in _CLAUSE_BREAK.split(text)]
    for index, clause in enumerate(clauses):
        if _starts_later(clause):
            return ", ".join(c for c in clauses[:index] if c)
    return ""


# -- when the messages come ----------------------------------------------------------------------------
# A verb of sending whose receiver is the participant: "text me", "escríbeme", "me puedes mandar", "envoie-moi".
_SENT_TO_ME = (
    r"\b(?:text|message|send|remind|ping|write|email|msg)\s+(?:me|it|them)\b"
    r"|\b(?:escrib|mand|envi|recuerd|record)\w*?(?:me|melo|mela)\b"
    r"|\bme\s+(?:(?:puedes|podrias|pueden|podrian|podes)\s+)?(?:escrib|mand|envi|recuerd|record)\w*"
    r"|\b(?:envoie|envoyez|ecris|ecrivez|rappelle|rappelez)[- ]moi\b|\bm'(?:ecri|envoy|envoi)\w*"
)
# Or the messages themselves: "the texts", "los mensajes", "les messages".
_THE_MESSAGES_NAMED = (
    r"\b(?:the|my|your|those|these|los|las|mis|tus|les|mes|vos|tes) (?:daily )?"
    rf"(?:{THE_MESSAGES}|notifications?|mensajes|recordatorios|rappels)\b"
)
_SENDING = re.compile(rf"{_SENT_TO_ME}|{_THE_MESSAGES_NAMED}")
_AT_A_CLOCK_TIME = re.compile(r"\b(?:at|around|by|a las|a la|sobre las|tipo|[àa]|vers)\s*\d")


def asks_for_a_send_time(text: str) -> bool:
    """ "can you text me at 6:30 instead", "me puedes escribir a las 9?", "envoie-moi les messages à 19h":
    when the messages come, said with a clock time."""
    said = plain(text)
    return bool(_SENDING.search(said) and _AT_A_CLOCK_TIME.search(said))


_CLAUSE = re.compile(r"[^,.;!?¿¡]+")
# a clock time in a clause: with its preposition, its minutes or its half of the day ("5 min" is none)
_A_TIME = re.compile(rf"{_AT_A_CLOCK_TIME.pattern}|\d(?::[0-5]\d|\s*[ap]\.?m\b|h\b)")


def beside_the_send_request(text: str) -> str:
    """What a message that asks for its send time says in clauses of its own ("flossing, text me at 9"):
    the clauses that neither ask for the messages nor give a time, as written; "" when there are none."""
    beside = (c.strip() for c in _CLAUSE.findall(text))
    return ", ".join(c for c in beside if c and not _SENDING.search(plain(c)) and not _A_TIME.search(plain(c)))


# -- hesitation by what is promised ----------------------------------------------------------------------
_DEFERS = re.compile(
    # the answer is promised for later: "i'll let you know", "will get back to u", "te aviso", "je vous redis"
    r"\b(?:i'?ll|i will|will|gonna|going to|let me|lemme)\s+(?:\w+\s+){0,2}?(?:let (?:you|u) know|get back|"
    r"tell (?:you|u)|text (?:you|u)|confirm|answer|reply)\b"
    r"|\b(?:get back to (?:you|u)|let (?:you|u) know)\b"
    r"|\b(?:answer|reply|respond|decide)\s+(?:that |this |it )?(?:later|tomorrow|tonight|after)\b"
    r"|\b(?:give me|gimme)\s+(?:a|some|one)\s+(?:\w+\s+)?(?:day|days|minute|min|sec|second|moment|bit|time|while)\b"
    r"|\b(?:te|le|les|os)\s+(?:aviso|digo|confirmo|escribo|contesto|respondo|cuento)\b"
    r"|\b(?:dame|deme|dejame)\s+(?:un |una |unos |el |la )?(?:chance|tiempo|momento|dia|rato|oportunidad|pensarlo)\b"
    r"|\b(?:je|j')\s*(?:te |vous )?(?:redis|redirai|confirme|confirmerai|reponds|repondrai|reviens)\b"
    # an answer that waits for someone: "need to talk to my wife", "lo consulto con mi jefe", "je dois en parler"
    r"|\b(?:need|have|gotta|got|must|should|let me|lemme)\s+(?:to\s+)?(?:ask|(?:talk|speak|check|chat)\s+(?:to|with))\b"
    r"|\b(?:consult\w*|preguntarle|hablarlo|platicarlo|comentarlo)\b"
    r"|\b(?:tengo que|voy a|necesito|debo|dejame)\s+(?:\w+\s+)?(?:platic|habl|pregunt|coment)ar\w*\s+(?:con|a)\b"
    r"|\b(?:en parler|en parle|lui demander|leur demander|demander [àa])\b"
)
_ONLY_FILLER = re.compile(
    r"^(?:hmm+|h?mm+|um+|uh+|ok(?:ay)?|so|well|idk|i don'?t know|dunno|not sure(?: yet)?|no idea(?: yet)?|tbh|lol|"
    r"first|tomorrow|later|tonight|yet|uy|ay|pues|bueno|no se|todavia no se|aun no se|ni idea|manana|luego|"
    r"primero|despues|euh|bon|je sais pas|je ne sais pas|pas encore|demain|plus tard|d'abord|\W)*$"
)


def defers(text: str) -> bool:
    """ "i'll let you know tomorrow", "need to talk to my wife first", "te confirmo luego", "je vous redis":
    no answer yet, one is promised. Every clause defers or is filler, and no number is said."""
    said = plain(text)
    if re.search(r"\d", said) or not _DEFERS.search(said):
        return False
    clauses = [c.strip() for c in re.split(r"[,.;!?]+|\s(?:and|but|y|pero|et|mais)\s", said) if c.strip()]
    return all(_DEFERS.search(c) or _ONLY_FILLER.match(c) for c in clauses)
