"""A feedback reply read as people write it (docs/offline-coach.md, "Feedback as people write it"):
the parts of a message that ``rules/message_reading.py`` (what kind of message) and ``rules/outcome.py``
(done or not) leave to the reader of feedback.

- ``reason_clause``: the why inside a report, after "because", "bc", "cuz", "thanks to", "porque",
  "gracias a", "parce que", "grâce à" ("did it bc my sister joined" → "my sister joined");
- ``is_partial``: part of it, or an unclear "kinda" ("half of it", "kind of", "la mitad", "à moitié");
- ``pause_request``: a pause and its length in days ("pause 2 jours", "une semaine") or the weekday it
  lasts until ("pause till monday", "hasta el lunes", "jusqu'à lundi");
- ``resumes``: "reprendre les messages", "start them again" (the English and Spanish forms are read by
  ``message_reading``);
- ``time_preference``: a day-part asked for ("mornings might be better", "mejor en la tarde", "plutôt le
  soir") or refused ("mornings don't work for me", "pas le matin"), which the coach turns into a
  proposal to confirm, or a question;
- ``language``: the language to reply in (``en``, ``es``, ``fr``), from the words people use.

English, Spanish and French, on the shared normal form (``message_reading.plain``: case, width,
accents). Pure: ``re`` and the rules it names only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from promptpipe.rules.feedback_requests import (
    asks_for_another_time,
    asks_when,
    limits_the_days,
    limits_the_hours,
    not_yet,
    runs_an_errand,
)
from promptpipe.rules.half_of_day import SAYS_EARLIER
from promptpipe.rules.lexicon import INSTEAD_OF, PLEASE, THE_MESSAGES, WEEKDAYS_EN, WEEKDAYS_ES, WEEKDAYS_FR
from promptpipe.rules.message_reading import plain, without_breaks_of_the_day

Language = Literal["en", "es", "fr"]
DayPart = Literal["morning", "afternoon", "evening", "night"]

__all__ = [
    "DayPart",
    "Language",
    "PauseRequest",
    "TimePreference",
    "asks_for_another_time",
    "asks_when",
    "away_for",
    "is_partial",
    "language",
    "limits_the_days",
    "limits_the_hours",
    "new_habit",
    "not_yet",
    "pause_request",
    "reason_clause",
    "resumes",
    "runs_an_errand",
    "shift_minutes",
    "time_preference",
]

# --- why: a clause that gives the reason ---------------------------------------------------------
_BECAUSE = re.compile(
    # "because" typed in a hurry too: two letters swapped or one dropped ("becasue", "becuase", "bcause")
    r"(?:^|\b)(?:because(?: of)?|be(?:acuse|cuase|casue|caues|caus|cuse)|bcause|becuz|bcuz|bc|b/c|cuz|cause|coz|"
    r"since|thanks to|"
    r"porque|por que|ya que|gracias a|parce que|parce qu'|car|grace a)\s+(?P<why>[^.;!?]+)"
)
_TRAILING = re.compile(r"\s*(?:,|\band\b|\by\b|\bet\b)\s*(?:i|he|she|they|yo|je|now|ahora)?\s*$")


def reason_clause(text: str) -> str:
    """The reason given inside ``text`` ("did it bc my sister joined, she wants to too" → "my sister
    joined"), in the participant's words (accents kept); "" when none is given."""
    said = plain(text)
    match = _BECAUSE.search(said)
    if match is None:
        return ""
    start, end = match.span("why")
    clause = text.strip()[start:end] if len(text.strip()) == len(said) else match["why"]
    clause = re.split(r"\s*,\s*", clause, maxsplit=1)[0]
    clause = _TRAILING.sub("", clause).strip(" ,.")
    return clause if len(clause.split()) >= 2 else ""


# --- part of it ----------------------------------------------------------------------------------
# Part of it, or an unclear "kinda": "half of it", "kind of", "la mitad", "à moitié".
_PART_OF_IT = (
    # (not a measure: "half an hour", "wrote half a page", "walked half a mile")
    r"half(?! an? (?:hour|mile|km|kilometer|page|chapter|lap)s?\b)|halfway|partly|partially|some of it|"
    r"a bit of it|a little|"
    r"started but|almost|not fully|not all of it|la mitad|a medias|mas o menos|un poco|casi|"
    r"a moitie|un peu|presque|en partie|moyen"
)
# Tried, then stopped: "tried but gave up", "lo intenté pero", "j'ai essayé mais".
_TRIED_THEN_STOPPED = r"tried but|gave up|intente pero|empece pero|me rendi|j'ai essaye mais|commence mais|abandonne"
# "kinda" of the doing ("kinda", "did it kinda", "sort of did it"), not of how they feel ("kinda addicted now")
_KIND_OF = r"(?:kinda|kind of|sort of|sorta)(?=\s*(?:$|[,.!?]|did|done|got|managed|made|finished|yes|yeah|lol|haha))"
_PARTIAL = re.compile(rf"\b(?:{_PART_OF_IT}|{_KIND_OF}|{_TRIED_THEN_STOPPED})\b")


# "2 of 3 glasses", "3 out of 5 sets", "2 de 3 vasos", "2 sur 3": a count short of the whole.
_SOME_OF = re.compile(r"\b(?P<n>\d{1,2}) (?:of|out of|de|sur) (?:the |los |las |les )?(?P<of>\d{1,2})\b")


def is_partial(text: str) -> bool:
    """ "half of it", "kinda", "started but my kid woke up", "la mitad", "à moitié", "2 of 3 glasses"."""
    said = plain(text)
    some = _SOME_OF.search(said)
    return bool(_PARTIAL.search(said)) or (some is not None and 0 < int(some["n"]) < int(some["of"]))


# --- pause, and until when -------------------------------------------------------------------------
# Each weekday's names, Monday first: English with its short forms ("tue", "tues"), Spanish, French.
_SHORT_WEEKDAYS = (("mon",), ("tue", "tues"), ("wed",), ("thu", "thurs"), ("fri",), ("sat",), ("sun",))
_WEEKDAYS = tuple(
    (english, *short, spanish, french)
    for english, short, spanish, french in zip(WEEKDAYS_EN, _SHORT_WEEKDAYS, WEEKDAYS_ES, WEEKDAYS_FR, strict=True)
)
_WEEKDAY_NAMES = "|".join(name for names in _WEEKDAYS for name in names)
_UNTIL = re.compile(
    rf"\b(?:till|til|until|untill|through|thru|to|hasta(?: el)?|jusqu'?(?:a|au)|jusqu a)\s+(?:next |el |le )?"
    rf"(?P<day>{_WEEKDAY_NAMES})\b"
)
_PAUSE_WORD = re.compile(
    r"\b(?:pause|paus\w*|hold off|take a break|break from|skip|mettre en pause|en pause|arrete\w*|"
    r"suspend\w*|descans\w*|deten\w*|(?:give me|need|want|could use|like) a break)\b"
)
_COUNT = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10,
    "un": 1, "una": 1, "une": 1, "dos": 2, "deux": 2, "tres": 3, "trois": 3, "cuatro": 4, "quatre": 4,
    "cinco": 5, "cinq": 5, "couple of": 2, "few": 3, "quelques": 3, "unos": 3, "unos cuantos": 3,
    "algunos": 3, "several": 3, "plusieurs": 3,
}  # fmt: skip
_AMOUNT = r"(?P<n>\d{1,2}|" + "|".join(sorted(map(re.escape, _COUNT), key=len, reverse=True)) + r")"
_FOR = re.compile(
    rf"\b(?:{_AMOUNT}\s+)?(?P<unit>days?|dias?|jours?|weeks?|semaines?|semanas?|weekend|week-end|fin de semana)\b"
)
_UNIT_DAYS = {"day": 1, "dia": 1, "jour": 1, "week": 7, "semaine": 7, "semana": 7}


@dataclass(frozen=True)
class PauseRequest:
    days: int | None = None  # the length, when said in days or weeks
    weekday: int | None = None  # 0 = Monday: the pause lasts until that day


# Words that ask for a pause only with a length or an end: "no texts for a week", "sin mensajes hasta el lunes".
_AWAY = re.compile(
    rf"\b(?:no (?:more )?(?:{THE_MESSAGES})|stop (?:the |my )?(?:texts?|messages?|reminders?)|"
    r"sin mensajes|no me (?:mandes|envies) (?:mensajes|nada)|pas de messages?|plus de messages?|"
    # "puedes parar los mensajes unos días?", "deja de mandarme mensajes por 3 días": with a length, a pause
    r"par(?:ar|a|en|e) (?:los |mis |tus )?(?:mensajes|recordatorios)|dej(?:a|ar|en) de (?:mandar|enviar|escribir)\w*|"
    rf"hold (?:the |my )?(?:{THE_MESSAGES}))\b"
)


# "tomorrow" as the length of a pause ("skip tomorrow"), not "la mañana" (the morning).
_TOMORROW = re.compile(r"\b(?:tomorrow|tmrw|tmr|demain)\b|(?<!la )(?<!las )(?<!de )\bmanana\b")


def pause_request(text: str) -> PauseRequest | None:
    """A pause asked for, with its length or the weekday it lasts until; ``None``: no pause asked for."""
    said = without_breaks_of_the_day(plain(text))  # "ahí tengo mi descanso": a moment of the day
    if runs_an_errand(said):  # "je m'arrête à la boulangerie": a place on the way, no pause
        return None
    until = _UNTIL.search(said)
    if not _PAUSE_WORD.search(said) and not (
        _AWAY.search(said) and (until or _FOR.search(said) or _TOMORROW.search(said))
    ):
        return None
    if until is not None:
        day = until["day"]
        return PauseRequest(weekday=next(i for i, names in enumerate(_WEEKDAYS) if day in names))
    length = _FOR.search(said)
    if length is None:
        return PauseRequest(days=1) if _TOMORROW.search(said) else PauseRequest()
    unit = length["unit"].rstrip("s")
    per = 2 if unit in ("weekend", "week-end", "fin de semana") else _UNIT_DAYS.get(unit, 1)
    amount = length["n"]
    count = int(amount) if amount and amount.isdigit() else _COUNT.get(amount or "", 1)
    return PauseRequest(days=max(1, min(count * per, 60)))


# Being away, said as news ("I'm away this weekend", "estoy de viaje toda la semana", "je pars en vacances
# 10 jours"): the coach offers a pause for that long; it pauses nothing unasked.
_AWAY_FROM_HOME = re.compile(
    r"\b(?:away|traveling|travelling|on (?:a )?(?:trip|vacation|holiday)|out of town|visiting|camping|"
    r"de viaje|de vacaciones|fuera de la ciudad|me voy|salgo de viaje|"
    r"en vacances|en voyage|en deplacement|je pars|absent\w*)\b"
)
_WHOLE = re.compile(
    r"\b(?:toda la|all|the whole|this|next|este|esta|cette|ce|la semaine prochaine)\s+(?P<unit>week|semana|semaine)\b"
)


def away_for(text: str) -> PauseRequest | None:
    """How long the participant says they will be away ("this weekend", "until Monday", "10 jours",
    "toda la semana"); ``None`` when they say they are away for no length, or not away at all."""
    said = plain(text)
    if not _AWAY_FROM_HOME.search(said):
        return None
    until = _UNTIL.search(said)
    if until is not None:
        return PauseRequest(weekday=next(i for i, names in enumerate(_WEEKDAYS) if until["day"] in names))
    if _WHOLE.search(said):
        return PauseRequest(days=7)
    length = _FOR.search(said)
    if length is None:
        return PauseRequest(days=1) if _TOMORROW.search(said) else None
    unit = length["unit"].rstrip("s")
    per = 2 if unit in ("weekend", "week-end", "fin de semana") else _UNIT_DAYS.get(unit, 1)
    amount = length["n"]
    count = int(amount) if amount and amount.isdigit() else _COUNT.get(amount or "", 1)
    return PauseRequest(days=max(1, min(count * per, 60)))


def days_until(weekday: int, today: int) -> int:
    """Days from ``today`` to the next ``weekday`` (0 = Monday); a week when it is today's."""
    return (weekday - today) % 7 or 7


_RESUME = re.compile(
    r"\b(?:reprend\w*|recommenc\w*|relanc\w*|redemarr\w*|start (?:them|it|again)|turn (?:them|it) (?:back )?on|"
    r"send (?:them|the \w+|me the \w+) again|i'?m back|de retour|reanud\w*|"
    r"(?:mensajes|manda\w*|envia\w*|escrib\w*) otra vez|otra vez (?:los |tus )?mensajes|"
    # "you can text me again", "puedes volver a mandarme", "ya regresé", "estoy de vuelta", "à nouveau"
    r"(?:text|message|write|send|ping)(?: me| them)? again|back (?:home|in town)|volver a (?:mandar|enviar|escrib)\w*|"
    r"vuelve\w* a (?:mandar|enviar|escrib)\w*|ya regrese|ya volvi|ya llegue|estoy de (?:vuelta|regreso)|"
    r"(?:m'ecrire|m'envoyer|envoyer) (?:a|de) nouveau|je suis rentre\w*)\b"
)


def resumes(text: str) -> bool:
    """ "reprendre les messages", "je suis de retour", "start them again"."""
    said = plain(text)
    return bool(_RESUME.search(said)) and not _PAUSE_WORD.search(said)


# --- another time of day ---------------------------------------------------------------------------
_DAYPARTS: tuple[tuple[DayPart, str], ...] = (
    (
        "morning",
        r"mornings?|first thing|(?:la |las |por la |en la )?mananas?|(?:le |les )?matins?|matinee|"
        # the start of the day said as waking: "right when i wake up", "nada más levantarme", "au réveil"
        r"(?:when|as soon as|once) i (?:wake|get) up|waking up|(?:al|nada mas|recien) (?:levantarme|despertarme)|"
        r"(?:cuando|apenas|ni bien) me (?:levanto|despierto)|au reveil|(?:des que|quand) je me (?:leve|reveille)",
    ),
    ("afternoon", r"afternoons?|(?:la |las |por la |en la )?tardes?|apres-midi|apres midi|aprem"),
    ("evening", r"evenings?|tonight|(?:le |les )?soirs?|soiree"),
    ("night", r"nights?|(?:la |las |por la |en la )?noches?|(?:la )?nuit"),
)
_DAYPART = re.compile("|".join(rf"(?P<{part}>\b(?:{words})\b)" for part, words in _DAYPARTS))
# Asking for it: a preference, a comparison, a change.
_PREFER = re.compile(
    r"\b(?:better|prefer\w*|rather|instead|switch|move|change|do it in|can we do|could we do|mejor|prefier\w*|"
    r"cambi\w*|pasa\w*|mueve\w*|plutot|prefere\w*|changer|decaler|deplacer|mieux|"
    rf"{PLEASE})\b"  # "evenings pls, mornings are chaos": asked for
)
# Refusing it: "mornings don't work for me", "not in the evening", "en la mañana no puedo", "pas le soir".
_REFUSE = re.compile(
    r"(?:don'?t|doesn'?t|do not|does not|never|won'?t|can'?t|no longer|not|aren'?t|isn'?t|ain'?t)\s+(?:\w+\s+){0,2}?"
    r"(?:work(?:s|ing)?|good|great|possible|do|doing it)\b|"
    # "far too hot in the afternoons", "too hectic": the day-part judged unfit
    r"\btoo (?:hot|early|late|busy|hectic|crazy|much|tired|rushed|loud)\b|\b(?:muy|demasiado) (?:temprano|tarde)\b|"
    r"\bnot (?:in )?(?:the )?$|\bno (?:me )?(?:da tiempo|funciona|puedo|sirve)\b|\bno puedo\b|"
    r"\bpas (?:le|la|les|en)?\s*$|\bca (?:ne )?marche pas\b|\bje ne peux pas\b|\bimpossible\b|\bhard\b|\bchaos\b|"
    r"\brush\w*\b|\bbusy\b|\bno$|"
    # the day-part to leave: "at 5:30 instead of in the morning", "en vez de en la mañana"
    rf"\b(?:{INSTEAD_OF})\s+"
    r"(?:(?:in|en|por|a|au|le|la|las|el|the)\s+)*$"
)


_ONE_DAY = re.compile(r"\b(?:tomorrow|tmrw|demain|this|ce|esta|manana (?:en|por) la)\s*$")


@dataclass(frozen=True)
class TimePreference:
    wanted: DayPart | None  # the day-part asked for; ``None``: only one refused
    refused: DayPart | None = None


def time_preference(text: str) -> TimePreference | None:
    """The day-part a message asks to move to, or refuses; ``None`` when it asks for neither."""
    said = plain(text)
    parts = [(match.lastgroup, match.start(), match.end()) for match in _DAYPART.finditer(said)]
    if not parts:
        return None
    wanted: DayPart | None = None
    refused: DayPart | None = None
    for part, start, end in parts:
        clause_start = max(said.rfind(mark, 0, start) for mark in ",.?!;") + 1
        ends = [i for i in (said.find(mark, end) for mark in ",.?!;") if i >= 0]
        before, after = said[clause_start:start], said[end : min(ends, default=len(said))]
        if _ONE_DAY.search(before):  # "do it tomorrow morning instead": a plan for a day, not the prompt's time
            continue
        if _REFUSE.search(before) or _REFUSE.search(after):
            refused = refused or part  # type: ignore[assignment]
        elif wanted is None and (_PREFER.search(before) or _PREFER.search(after)):
            wanted = part  # type: ignore[assignment]
    if wanted is None and refused is None:
        return None
    return TimePreference(wanted=wanted, refused=refused)


# --- a shift of the time, and a new habit ----------------------------------------------------------
_SHIFT = re.compile(
    r"\b(?P<n>an?|one|1|2|two|half an?|una|media|une|\d{1,3})\s*"
    r"(?P<unit>hours?|hrs?|h|minutes?|mins?|horas?|heures?)\s+"
    r"(?P<way>earlier|later|sooner|before|after|mas temprano|antes|mas tarde|despues|plus tot|plus tard|avant|apres)\b"
)
_LATER_WAYS = ("later", "after", "mas tarde", "despues", "plus tard", "apres")
# The verb says which way when no "earlier"/"later" follows: "push it (back) an hour", "bump it 30 min",
# "move it up an hour", "bring it forward half an hour", "atrásalo una hora", "adelántalo media hora",
# "repousse-le d'une heure", "avance-le de 30 minutes", "décale d'une heure" (later unless said).
_SHIFT_VERB = re.compile(
    r"\b(?P<verb>push\w*|bump\w*|move\w*|bring\w*|atras\w*|retras\w*|recorr\w*|adelant\w*|"
    r"repouss\w*|retard\w*|avanc\w*|decal\w*)(?:[- ](?:it|them|that|le|la|les|lo))?(?: (?P<dir>up|forward|back|ahead))?"
    r"(?: (?:by|de|d'|d|por|like|about|around))?\s*"
    r"(?P<n>an?|one|1|2|two|half an?|una|media|une|\d{1,3})\s*(?P<unit>hours?|hrs?|h|minutes?|mins?|horas?|heures?)\b"
)
_EARLIER_VERBS = ("adelant", "avanc")


def _minutes(amount: str, unit: str) -> int:
    count = int(amount) if amount.isdigit() else 2 if amount in ("2", "two") else 1
    minutes = count * 60 if unit.startswith("h") else count
    return 30 if amount.startswith(("half", "media")) else minutes


def shift_minutes(text: str) -> int | None:
    """ "an hour later" → 60, "30 min earlier" → -30, "una hora más tarde" → 60, "push it an hour" → 60,
    "adelántalo media hora" → -30; ``None``: no shift."""
    said = plain(text)
    match = _SHIFT.search(said)
    if match is not None:
        minutes = _minutes(match["n"], match["unit"])
        return minutes if match["way"] in _LATER_WAYS else -minutes
    verb = _SHIFT_VERB.search(said)
    if verb is None or (verb["verb"].startswith(("move", "bring")) and verb["dir"] is None):
        return None  # "move it 2 hours" says no way; "moved 2 hours of boxes" no shift at all
    minutes = _minutes(verb["n"], verb["unit"])
    earlier = verb["verb"].startswith(_EARLIER_VERBS) or verb["dir"] in ("up", "forward", "ahead")
    if SAYS_EARLIER.search(said):
        earlier = True
    return -minutes if earlier else minutes


_NEW_HABIT = re.compile(
    r"\b(?:nouvelle habitude|autre habitude|changer d'?habitude|something else|a different one|"
    r"otra cosa|algo diferente|otro habito|nuevo habito)\b"
)


# Another activity in place of this one: "I want to do yoga instead", "mejor quiero leer en vez de
# caminar", "je préfère faire du yoga à la place" (not "do it at 7 instead", which is a time).
_INSTEAD = re.compile(r"\b(?:instead|en vez de|en lugar de|a la place|plutot que)\b")
_WANT_TO_DO = re.compile(
    r"\b(?:want|wanna|like|rather|prefer|quiero|quisiera|prefiero|mejor|veux|voudrais|prefere)\s+(?:to\s+)?"
    r"(?:do|try|start|switch to|hacer|probar|empezar|faire|essayer|commencer)?\s*"
    r"(?!it\b|that\b|this\b|lo\b|le\b|ca\b)\w+"
)


def new_habit(text: str) -> bool:
    """ "je veux une nouvelle habitude", "I want to try something else", "I want to do yoga instead": back
    to the intake."""
    said = plain(text)
    if _NEW_HABIT.search(said):
        return True
    timed = re.search(r"\d|\b(?:time|hora|heure|morning|evening|night|manana|tarde|noche|matin|soir)\b", said)
    return bool(_INSTEAD.search(said) and _WANT_TO_DO.search(said) and not timed)


# --- the language to reply in ---------------------------------------------------------------------
# Words that mark a message as Spanish or as French (common in replies, rare in the other languages).
_MARKER_WORDS: dict[Language, str] = {
    "es": (
        r"hoy|ya|lo|la|el|los|las|que|porque|pude|hice|mejor|mensajes|pausa\w*|semana|dias?|gracias|porfa|"
        r"por favor|manana|tarde|noche|quiero|puedes|no me|estoy|tengo|muy|pero|vale|dale|listo|hecho|si|otra vez"
    ),
    "fr": (
        r"c'?est|je|j'ai|tu|pas|fait|plutot|soir|matin|jours?|semaine|merci|stp|svp|oui|ouais|aujourd'?hui|"
        r"trop|fatigue\w*|messages|reprendre|le|les|une|un|est|mais|avec|pour|ma|mon"
    ),
}
_MARKERS = {language: re.compile(rf"\b(?:{words})\b") for language, words in _MARKER_WORDS.items()}


def language(text: str) -> Language:
    """ "es" or "fr" when the message reads as Spanish or French (two of its words, or one in a short
    message, and more than of the other), else "en"."""
    said = plain(text)
    if re.search(r"[¿¡ñ]", text.lower()):
        return "es"
    spanish, french = len(_MARKERS["es"].findall(said)), len(_MARKERS["fr"].findall(said))
    english = len(re.findall(r"\b(?:the|i|it|to|my|you|me|is|did|can|please|pls|for|and|a)\b", said))
    short = len(said.split()) <= 3
    if spanish > french and spanish > english and (spanish >= 2 or short):
        return "es"
    if french > spanish and french > english and (french >= 2 or short):
        return "fr"
    return "en"
