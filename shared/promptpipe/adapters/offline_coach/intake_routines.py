"""The routine a habit hangs on (the anchor), read from a message as people write it, in English, Spanish
and French: a clause of its own ("after X", "when I X", "al salir del trabajo", "en rentrant"), a weaker
cue ("with my coffee"), a short answer to "what do you already do?" ("dinner" → "after dinner"), or the
routine said beside a clock time ("on my lunch break at work around 12:30")."""

from __future__ import annotations

import re

from promptpipe.adapters.offline_coach.text import _clean, _substantive, _words
from promptpipe.adapters.offline_coach.times import without_times
from promptpipe.adapters.offline_coach.vocabulary import DAILY, DAY_PARTS, LAUGH, MAYBE, OPINION
from promptpipe.rules.language import detect_language
from promptpipe.rules.word_patterns import MEALS, any_word

# A routine as a clause of its own, in English, Spanish or French: "after X", "before X", "when I X",
# "después de X", "al salir del trabajo", "après le café", "avant de dormir", "en arrivant au bureau".
_ANCHOR = re.compile(
    r"\b(?P<a>(?:right |just )?(?:after|before)\s+(?!\d|noon\b|midnight\b|that\b|then\b)[^,.;!?]+"
    r"|(?:right |just )?(?:when|as soon as|while)\s+(?!\d|ever\b|possible\b)[^,.;!?]+"
    r"|whenever\s+(?=(?:i|i'm|im|we|my|the|our|they|it)\b)[^,.;!?]+"
    r"|once\s+(?!a\b|an\b|more\b|again\b|or\b|in\b|per\b|every\b|daily\b|\d)[^,.;!?]+"
    r"|(?:justo |nada mas )?(?:despu[eé]s|antes|luego)\s+de(?:l)?\s+[^,.;!?]+|tras\s+(?:de\s+)?[^,.;!?\d]+"
    # a Spanish gerund of coming, going or finishing opens the routine: "saliendo del trabajo", "llegando a casa"
    r"|(?:sal|lleg|volv|regres|termin|acab|entr|levant|despert|baj)(?:ando|iendo)(?:me|te|se|nos)?\s+[^,.;!?]+"
    r"|on (?:my|the) way (?:to|home|back|out)\b[^,.;!?]*"
    # "ya que cenamos": "ya que" before a routine's verb is once it is done (before any other verb, because)
    r"|ya que\s+(?:(?:me|nos|se)\s+)?(?:cen|com[eio]|desayun|almorz|almuerz|lleg|sal[gi]|acost|acuest|bañ|termin|acab|"
    r"regres|volv|vuelv)\w*\b[^,.;!?\d]*"
    # "une fois couché", "una vez acostada": once + a past participle
    r"|une fois\s+\w+(?:[ée]e?s?|ie?s?|ue?s?)\b[^,.;!?\d]*|una vez\s+\w+(?:ad|id)[oa]s?\b[^,.;!?\d]*"
    r"|(?:cuando|mientras|en cuanto|apenas|una vez que)\s+[^,.;!?]+"
    r"|al\s+\w+(?:ar|er|ir)(?:me|te|se|nos)?\b[^,.;!?]*"
    r"|nada m[aá]s\s+\w+(?:ar|er|ir)(?:me|te|se|nos)?\b[^,.;!?]*"
    # "ya en la cama", "ya acostada", "estando en pijama": once in that state, a moment of the day
    r"|(?:ya|estando)\s+(?:en (?:la )?cama|acostad[oa]s?|en pijama|en piyama|bañad[oa]s?)\b[^,.;!?\d]*"
    r"|(?:juste )?(?:apr[eè]s|avant)\s+(?!\d)[^,.;!?]+"
    r"|(?:quand|lorsque|d[eè]s que|une fois(?: que)?(?!\s+(?:par|de|\d)\b))\s+[^,.;!?]+"
    r"|(?:pendant|durant)\s+(?:ma|mon|mes|la|le|les)\s+[^,.;!?]+|en\s+\w+ant\b[^,.;!?]*"
    # a French moment of the day said as "au/à la" and its routine: "au réveil", "au petit déj", "à la sortie du boulot"
    r"|(?:au|[àa] la|[àa] l')\s*(?:petit[- ]d[ée]j\w*|r[ée]veil|lever|coucher|d[ée]jeuner|d[îi]ner|go[ûu]ter|"
    r"sortie d\w*|retour d\w*)[^,.;!?\d]*)",
    re.I,
)

# "wait no", "i mean", "o sea", "enfin non": what follows replaces what was said before it.
_SELF_CORRECTION = any_word(
    "wait,? no",
    "no wait",
    "i mean",
    "or rather",
    "actually no",
    "sorry,? i mean",  # English
    "mejor dicho",
    "o sea",
    "bueno no",  # Spanish
    "enfin non",
    "non attends",
    "plut[oô]t",  # French
)

# Weaker cues ("with my coffee"): only while no anchor is known, as they also appear in other talk.
_SOFT_ANCHOR = re.compile(
    r"\b(?P<a>(?:with|w/|w|during|con|durante|avec) (?:my |the |mi |el |la |mon |ma |le )?[^,.;!?]+)", re.I
)

# Where a routine said as a clause stops: a time after "at"/"by" ("after dinner at 7"), a word that moves on
# to something else (a time near, a reason, how often, an aside), or a number.
_AT_A_TIME = r"\s+(?:at|by)(?=\s+(?:\d|noon|midnight|night|lunch|around|about|like|[~@]))\b.*$"
_MOVES_ON = "|".join(
    (
        "around|about",  # a time near
        "because|so|since|and i|and then|and it|to feel",  # a reason, or what comes next
        r"every ?day|each day|daily",  # how often
        rf"i think|i guess|{LAUGH}|lmao|tbh|obviously|obvs|{MAYBE}|please|like|ish|or so",  # an aside
        "vers|sobre|hacia|a las|a eso de|tipo",  # a time near, in French and Spanish
        "porque|parce que|pour",  # a reason, in Spanish and French
    )
)
_ANCHOR_TAIL = re.compile(
    rf"{_AT_A_TIME}|\s+(?:{_MOVES_ON})\b.*$"
    r"|\s+como (?=a las|las|\d)\b.*$"  # "como a las 7": about seven
    r"|\s+[~@]?\d.*$",
    re.I,
)

_ROUTINE_WORDS = any_word(
    *MEALS,
    "coffee",
    "tea",
    "shower",
    "brush\\w*",
    "teeth",
    "wake",
    "waking",
    "work",
    "commute",
    "school",
    "bed",
    "meal",
    "dog",
    "kids",
    "gym",
    "class",
    "alarm",
    "get home",
    "getting home",
    "get up",
    "getting up",
    "kettle",
    "shave",
    "dishes",
    "laundry",
    "bath",
    "walk",
    "run",
    "cat",
    "pets?",
    "emails?",
    "meeting",
    "standup",
    "stand-up",
    "desk",
    "office",
    "train",
    "bus",
    "car",
    "drive",
    "prayers?",
    "nap",
    "break",
    # Spanish and French routines
    "comida",
    "almuerzo",
    "desayuno",
    "cena",
    "caf[eé](?:cito|sito)?",  # the diminutive is the same cup: "con el cafecito"
    "trabajo",
    "oficina",
    "escuela",
    "ducha",
    "cama",
    "perro",
    "ni[nñ]os",
    "pausa",
    "descanso",
    "receso",
    "d[îi]ner",
    "d[ée]jeuner",
    "bureau",
    "travail",
    "[ée]cole",
    "douche",
    "lit",
    "chien",
    "enfants",
    "pause",
    "casa",
    "r[ée]veil",
    "lever",
    "coucher",
    "maison",
)

_SPANISH = re.compile(
    r"\b(?:despu[eé]s|antes|cuando|del?|la|el|los|las|me|mi|tomo|llego|salgo|para|porque|al)\b|[áéíóúñ]", re.I
)

_MEALS = re.compile(r"^(?:breakfast|lunch|dinner|supper|brunch|work|school|class|church|the gym|gym)$", re.I)

_ARTICLE_START = re.compile(r"^(?:my|the|a|an|i|i'm|we|our|his|her|their|every|each)\b", re.I)

_DAYPART_ONLY = re.compile(rf"^(?:in the )?(?:{DAY_PARTS}|tonight|noon|midday)$", re.I)


def _as_anchor(answer: str) -> str:
    """A short answer to "what do you already do every day?" as an anchor: "dinner" → "after
    dinner", "feed the cat" → "when I feed the cat", "brushing my teeth" → "after brushing my teeth",
    "despues del desayuno" as said. A bare time of day ("morning") is not a routine."""
    answer = re.sub(rf"\s+(?:{LAUGH}|lmao|obviously|tbh|{OPINION})$", "", answer, flags=re.I).strip()
    if not _substantive(answer) or _DAYPART_ONLY.match(answer) or len(answer.split()) > 12:
        return ""
    if re.match(r"(?:after|before|when|once|while|with|during|right after|as soon as|on|at|in)\b", answer, re.I):
        return _words(answer, 10)  # "on the bus home", "at my desk": as said
    if len(answer.split()) == 2 and re.search(r"\bbreak$", answer, re.I):
        return f"on my {answer.lower()}"  # "lunch break" → "on my lunch break"
    if detect_language(answer) in ("es", "fr") or (
        _SPANISH.search(answer) and not re.search(r"\b(?:the|my|i|and)\b", answer, re.I)
    ):  # "después del desayuno", "après le café", "je bois mon café": as said
        return _words(answer, 10)
    first = answer.split()[0].lower()
    if _MEALS.match(answer) or first.endswith("ing") or _ARTICLE_START.match(answer):
        return "after " + _words(answer, 9)
    if len(answer.split()) == 1:  # a routine named by one noun: "coffee", "shower" (not "purple")
        return f"after my {answer.lower()}" if _ROUTINE_WORDS.search(answer) else ""
    return "when I " + _words(answer, 9)


def parse_anchor(text: str, *, soft: bool = False) -> tuple[str, re.Match[str] | None]:
    start, end = 0, len(text)
    corrections = list(_SELF_CORRECTION.finditer(text))
    if corrections:  # "after i walk the dog wait no after i make coffee": the routine said last
        later = _ANCHOR.search(text, corrections[-1].end())
        start, end = (later.start(), end) if later is not None else (0, corrections[-1].start())
    match = _ANCHOR.search(text, start, end)
    if match is None:  # "i get off the train at 5:40 so right after that": the routine "that" points back to
        pointed = _routine_pointed_back_to(text)
        if pointed[0]:
            return pointed
    if match is None:  # "1:30 because that's my lunch break", "7:45. thats when i sit down on the train"
        named = _THATS_THE_MOMENT.search(text, corrections[-1].end() if corrections else 0)
        if named is not None and len(named["a"].split()) >= 3:
            moment = named["a"] if named["a"].lower().startswith("when") else f"at {named['a']}"
            return _words(_clean(moment), 10), named
    if match is None and soft:
        match = _SOFT_ANCHOR.search(text, start, end)
        if match is not None and not re.match(r"(?:with|during) my\b", match["a"], re.I):
            match = match if _ROUTINE_WORDS.search(match["a"]) else None  # "with breakfast", not "with you"
    if match is None:
        return "", None
    anchor = _clean(_EMOJI_TAIL.sub("", _ANCHOR_TAIL.sub("", match["a"])))
    if len([w for w in anchor.split() if re.search(r"[^\W\d_]", w)]) < 2:
        return "", None  # "idc when 🙄": a connective and an emoji name no routine
    return _words(anchor, 10), match


# The moment a time was chosen for, named beside it: "that's my lunch break", "thats when i sit down on the train".
_THATS_THE_MOMENT = re.compile(r"\b(?:that'?s|thats|that is)\s+(?P<a>(?:when\s+i|my)\b[^,.;!?]+)", re.I)

# Emoji closing a routine ("en mi descanso 🚶‍♀️") are no words of it: the prompt quotes the routine.
_EMOJI_TAIL = re.compile(r"[\s\u200d\ufe0f\u2600-\u27bf\U0001f000-\U0001faff]+$")

_CLAUSE = re.compile(r"[^,.;!?]+")

# "ya en la cama", "already in bed", "déjà au lit": the routine's place, reached by then.
_ALREADY = r"ya|already|d[ée]j[àa]"
_AT_THE_PLACE = r"on|at|during|in|en|durante|pendant|[àa] la hora de|a la hora del?|au|aux|[àa] la|al|con"
_PLACE_LEAD = re.compile(rf"^(?:(?:{_ALREADY})\s+)?(?:{_AT_THE_PLACE})\s+\S", re.I)

_MEAL_LEAD = re.compile(r"^(?:breakfast|lunch|dinner|supper|coffee|tea)\b", re.I)

# What stands beside a routine said with a time and is no part of it: an opening word ("ok", "probably",
# "y") and a closing one ("every day", "please", "works", "por favor", "tous les jours").
_OPENING_FILLER = rf"ok(?:ay)?|so|um+|well|probably|maybe|usually|{DAILY}|i guess|like|y|et|and|pues"
_CLOSING_FILLER = (
    rf"{DAILY}|{OPINION}|please|pls|works|is fine|"
    r"por favor|s'il vous pla[iî]t|cada d[ií]a|tous les jours"
)
_BESIDE_FILLER = re.compile(rf"^(?:{_OPENING_FILLER})\s+|\s+(?:{_CLOSING_FILLER})$", re.I)


def _routine_beside_time(text: str) -> str:
    """The routine said in the same sentence as a clock time, when no "after/before/when" clause
    names it: "on my lunch break at work", "dinner time" → "at dinner time", "en la comida"."""
    for clause in _CLAUSE.findall(without_times(text)):
        phrase = _clean(_EMOJI_TAIL.sub("", clause))
        while _BESIDE_FILLER.search(phrase):
            phrase = _clean(_BESIDE_FILLER.sub("", phrase))
        if len(phrase.split()) < 2 or len(phrase.split()) > 10 or not _ROUTINE_WORDS.search(phrase):
            continue
        if _PLACE_LEAD.match(phrase):
            return _words(phrase, 10)
        if _MEAL_LEAD.match(phrase):
            return "at " + _words(phrase, 9)
    return ""


# Routines of the morning the clock reader does not know by name: "my first cup of coffee", "the alarm",
# "I drop the kids at school", "el primer café", "suena el despertador", "mon premier café", "au réveil".
_SCHOOL_RUN = r"drop(?:ping)? (?:off )?(?:the |my )?(?:kids?|son|daughter|children)|school run"
_MORNING_ROUTINE = re.compile(
    rf"\b(?:first (?:cup|coffee|tea|thing)|alarm|{_SCHOOL_RUN}|primer caf[eé]|(?:la )?alarma|despertador|"
    r"premier caf[eé]|r[ée]veil)",
    re.I,
)


# "… so right after that", "y después de eso", "et juste après ça": a connective whose object points back to
# the activity said before it in the same message.
_THEN = r"so|and|then|y|e|et|donc|alors|entonces|pues"  # words that lead on: "so", "y", "donc"
_RIGHT = "right |just |justo |juste "
_AFTER_OR_BEFORE = r"after|before|despu[eé]s de|antes de|luego de|apr[eè]s|avant"
_THAT = r"that|this|it|eso|esto|[çc]a|cela"
_POINTS_BACK = re.compile(
    rf"[\s,]*(?:(?:{_THEN})\s+)*(?P<c>(?:{_RIGHT})?(?:{_AFTER_OR_BEFORE}))\s+(?:{_THAT})\b\W*$",
    re.I,
)
# "I always heat up my lunch at work so maybe then", "entonces a esa hora": the moment itself pointed back to.
_POINTS_BACK_TO_WHEN = re.compile(
    r"[\s,]*(?:so|and|y|entonces)\s+(?:maybe\s+|probably\s+|just\s+|quizas\s+)?(?P<c>)"
    r"(?:then|right then|at that (?:time|point)|around then|ahi|en ese momento|a esa hora)\W*$",
    re.I,
)
_HABITUAL = re.compile(
    r"\b(?:usually|normally|always|generally|typically|often|suelo|siempre|normalmente|d'habitude)\s+", re.I
)
_SUBJECT = re.compile(r"^(?:i|i'm|im|we|my|je|j'|yo|me|mi)\b", re.I)


def _routine_pointed_back_to(text: str) -> tuple[str, re.Match[str] | None]:
    """ "i usually brush my teeth around 10pm so after that" → "after I brush my teeth": the activity said
    first (its subject a person, its times and habitual words left out), joined to the connective."""
    back = _POINTS_BACK.search(text) or _POINTS_BACK_TO_WHEN.search(text)
    if back is None:
        return "", None
    said = _clean(_HABITUAL.sub("", without_times(text[: back.start()])))
    said = re.split(r"[,.;!?]", said)[-1].strip() if said else ""
    if not _SUBJECT.match(said) or not 2 <= len(said.split()) <= 10 or not _substantive(said):
        return "", None
    connective = re.sub(r"\s+", " ", back["c"].lower()) if back["c"] else "when"
    said = re.sub(r"^i\b", "I", said)
    anchor = f"{connective} que {said}" if connective.endswith(" de") else f"{connective} {said}"
    clause_start = max(text.rfind(mark, 0, back.start()) for mark in ",.;!?") + 1
    return _words(anchor, 12), re.compile(r"[\s\S]+").search(text, clause_start)


# Routines that end the working day, which the clock reader does not know by name: "al llegar del trabajo",
# "after i clock out", "home from work", "à la sortie du boulot", "dès que je rentre".
_FROM_WORK_ES = (
    r"(?:lleg|volv|vuelv|regres|sal)\w*\s+(?:del|de la|de)\s+(?:trabajo|oficina|chamba|jale|uni\w*|facultad|escuela)"
)
_FROM_WORK_EN = r"clock(?:ing|ed)? out|off (?:the )?clock|home from work"
_FROM_WORK_FR = r"(?:sortie|retour|sortant|rentrant|rentre) du (?:boulot|travail|bureau)|d[eè]s que je rentre"
_EVENING_ROUTINE = re.compile(rf"\b(?:{_FROM_WORK_ES}|{_FROM_WORK_EN}|{_FROM_WORK_FR})", re.I)
