"""Intake answers in a message: the habit domain, the motivation, the anchor and the time, asked
for or volunteered.

Longer than 500 lines because the four fields are read from one message together (a time takes its
words away from the anchor, a reason's clause from the habit), in three languages."""

from __future__ import annotations

import re

from promptpipe.adapters.offline_coach.reading import accepts
from promptpipe.adapters.offline_coach.text import (
    _FILLER,
    ANCHOR,
    DOMAIN,
    INTAKE_ORDER,
    MOTIVATION,
    TIME,
    _clean,
    _is_hint,
    _substantive,
    _words,
)
from promptpipe.adapters.offline_coach.times import (
    parse_asked_time,
    parse_clock_time,
    parse_vague_time,
    spoken_form,
    without_times,
)
from promptpipe.rules.language import detect_language
from promptpipe.rules.word_patterns import DAYPARTS, MEALS, any_word

_MOTIVATION = re.compile(
    r"\b(?:because|'?cause|so that|so i can|so i|in order to|i want to (?=feel\b)|i'd like to (?=feel\b)|(?=to feel\b)"
    r"|(?=to (?:have|be(?! honest)|reduce|lower|improve|boost|lose|stay|keep|get more|get better)\b)"
    r"|(?=to get (?:my|in|fit|fitter|healthier|stronger|rid)\b)"
    r"|porque|para (?=(?:que|no|poder|estar|sentirme|tener|bajar|mejorar|dormir)\b)"
    r"|para (?=\w+(?:ar|er|ir)(?:me|te|se|nos|lo|la)?\b)"  # "para desconectarme": para + an infinitive
    r"|parce que|parce qu'|car|afin de|pour (?=(?:[eê]tre|avoir|moins|mieux|plus|me|perdre|dormir|r[ée]duire)\b)"
    r"|motivat\w*(?:\s+(?:by|is|because))?|my reason is|the reason is|it helps me|helps me)\s*"
    r"(?P<rest>[^.;!?,]+)",
    re.I,
)
# A routine as a clause of its own, in English, Spanish or French: "after X", "before X", "when I X",
# "después de X", "al salir del trabajo", "après le café", "avant de dormir", "en arrivant au bureau".
_ANCHOR = re.compile(
    r"\b(?P<a>(?:right |just )?(?:after|before)\s+(?!\d|noon\b|midnight\b|that\b|then\b)[^,.;!?]+"
    r"|(?:when|as soon as|while)\s+(?!\d|ever\b|possible\b)[^,.;!?]+"
    r"|once\s+(?!a\b|an\b|more\b|again\b|or\b|in\b|per\b|every\b|daily\b|\d)[^,.;!?]+"
    r"|(?:justo |nada mas )?(?:despu[eé]s|antes)\s+de(?:l)?\s+[^,.;!?]+"
    r"|(?:cuando|mientras|en cuanto|apenas|una vez que)\s+[^,.;!?]+"
    r"|al\s+\w+(?:ar|er|ir)\b[^,.;!?]*"
    r"|(?:juste )?(?:apr[eè]s|avant)\s+(?!\d)[^,.;!?]+|(?:quand|lorsque|d[eè]s que|une fois que)\s+[^,.;!?]+"
    r"|(?:pendant|durant)\s+(?:ma|mon|mes|la|le|les)\s+[^,.;!?]+|en\s+\w+ant\b[^,.;!?]*)",
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
_ANCHOR_TAIL = re.compile(
    r"\s+(?:at|around|about|by|because|so|since|and i|and then|and it|to feel|every ?day|each day|daily|"
    r"i think|maybe|probably|please|like|ish|or so|vers|sobre|hacia|a las|a eso de|tipo|porque|parce que|pour)\b.*$"
    r"|\s+como (?=a las|las|\d)\b.*$"
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
    "caf[eé]",
    "trabajo",
    "oficina",
    "escuela",
    "ducha",
    "cama",
    "perro",
    "ni[nñ]os",
    "pausa",
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
_DAYPART_ONLY = re.compile(r"^(?:in the )?(?:mornings?|evenings?|afternoons?|nights?|tonight|noon|midday)$", re.I)


def _as_anchor(answer: str) -> str:
    """A short answer to "what do you already do every day?" as an anchor: "dinner" → "after
    dinner", "feed the cat" → "when I feed the cat", "brushing my teeth" → "after brushing my teeth",
    "despues del desayuno" as said. A bare time of day ("morning") is not a routine."""
    answer = re.sub(r"\s+(?:lol|haha+|lmao|obviously|tbh|i guess|i think)$", "", answer, flags=re.I).strip()
    if not _substantive(answer) or _DAYPART_ONLY.match(answer) or len(answer.split()) > 12:
        return ""
    if re.match(r"(?:after|before|when|once|while|with|during|right after|as soon as)\b", answer, re.I):
        return _words(answer, 10)
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


def _as_motivation(text: str) -> str:
    """The whole reply to "why does it matter?", past a leading "ah ok." or "hmm,"."""
    sentences = [part.strip() for part in re.split(r"(?<=[.!;])\s+", text) if part.strip()]
    while sentences and not _substantive(_FILLER.sub("", _clean(sentences[0]))):
        sentences.pop(0)
    reason = _clean(_FILLER.sub("", _clean(" ".join(sentences))))
    timeish = parse_vague_time(reason, loose=True) or parse_clock_time(reason)
    if not _substantive(reason) or (timeish and len(reason.split()) <= 3):
        return ""
    return _words(re.sub(r"^(?:to|because|para|porque)\s+", "", reason, flags=re.I), 15)


_DOMAINS: tuple[tuple[str, str], ...] = (
    (r"\bwalk(?:s|ing)?\b", "walking"),
    (r"\bstretch\w*", "stretching"),
    (r"\byoga\b", "yoga"),
    (r"\b(?:run|running|jog\w*)\b", "running"),
    (r"\b(?:exercis\w*|work ?outs?|working out|fitness|gym|strength)\b", "exercise"),
    (r"\b(?:move more|movement|moving|active|activity|physical)\b", "physical activity"),
    (r"\bsleep\w*", "sleep"),
    (r"\b(?:water|hydrat\w*)\b", "hydration"),
    (r"\bread(?:ing)?\b|\bbooks?\b", "reading"),
    (r"\b(?:meditat\w*|mindful\w*|breath\w*)\b", "mindfulness"),
    (r"\b(?:journal\w*|gratitude)\b", "journaling"),
    (r"\b(?:diet|eat\w*|nutrition|veg\w*|fruits?|snack\w*|food)\b", "healthy eating"),
    (r"\b(?:stud(?:y|ying|ies)|learn\w*|homework|revision)\b", "studying"),
    (r"\b(?:focus\w*|productiv\w*|procrastinat\w*)\b", "focus"),
    (r"\b(?:stress\w*|anxi\w*|relax\w*|calm\w*)\b", "stress relief"),
    (r"\b(?:screen time|social media|doomscroll\w*)\b", "less screen time"),
)
_WANT = re.compile(
    r"\b(?:i want to|i'd like to|i would like to|i wanna|i'm trying to|i am trying to|i need to|i should|"
    r"help me|my goal is to|hoping to|i'd love to|habit of|get better at|quiero|quisiera|me gustar[ií]a|"
    r"je veux|je voudrais|j'aimerais|j'aimerai)\s+(?P<x>[^,.;!?]+)",
    re.I,
)
_DOMAIN_TAIL = re.compile(
    r"\s+(?:at|around|after|before|because|so|every|each|daily|when|with|in the|todas las|todos los|cada|a las|"
    r"porque|tous les|chaque|parce que)\b.*$",
    re.I,
)
# "start to", "empezar a", "commencer à": the habit is what follows.
_START_TO = re.compile(r"^(?:start(?:ing)? to|begin to|empezar a|comenzar a|commencer [àa]|to)\s+", re.I)


_SLEEP = re.compile(r"\b(?:sleep\w*|bed\w*|wind(?:ing)? down|dormir|sue[nñ]o)\b", re.I)


def _late_for_sleep(time: str | None, text: str, domain: str) -> str | None:
    """A sleep habit at "10:30" with nothing saying morning is at night (9 to 11 only: 7:15 may be
    either)."""
    if time is None or not _SLEEP.search(domain) or re.search(r"[ap]\.?m\b|morning|ma[nñ]ana|\b0\d:", text, re.I):
        return time
    hour, minute = (int(part) for part in time.split(":"))
    return f"{hour + 12:02d}:{minute:02d}" if 9 <= hour <= 11 else time


# A bare hour that opens the message, followed by the routine it belongs to.
_HOUR_THEN_ROUTINE = re.compile(
    r"^\W*(?:ok(?:ay)?,?\s+|maybe\s+|probably\s+)?(\d{1,2})\s+(?=(?:right |just )?(?:after|before|when|once|while|"
    r"as soon as|despu[eé]s|antes|cuando|apenas|en cuanto|apr[eè]s|avant|quand|d[eè]s que)\b)",
    re.I,
)
_OPENS_WITH_TIME = re.compile(r"^\W*\d{1,2}(?:[:.h][0-5]\d|\s*[ap]\.?m\b)", re.I)
# A clock time that closes the message on its own ("my dentist yelled at me 10pm", "clear my head 5:45ish"),
# not the end of a reason ("I crash by 11", "I scroll til 1am"): an answer to when.
_CLOCK = r"\d{1,2}(?:[:.h][0-5]\d\s*(?:[ap]\.?m?\b|ish)?|\s*(?:[ap]\.?m?\b|ish\b))"
_CLOSES_WITH_TIME = re.compile(
    rf"(?<!\bby )(?<!\buntil )(?<!\btil )(?<!\btill )(?<!\bsince )(?<!\bpast )(?<!\bfrom )(?<!\bto )"
    rf"(?<!\bhasta )(?<!\bdesde )(?<!\bjusqu'[àa] )\b{_CLOCK}\W*$",
    re.I,
)
_TIME_IN_A_REASON = re.compile(r"\b(?:by|until|til|till|since|hasta|desde|jusqu'[àa])\s+\d", re.I)
# A clock time right before its routine ("7:15ish after my shower", "10pm when I get into bed").
_TIME_BESIDE_ROUTINE = re.compile(
    rf"\b{_CLOCK}\s+(?:right |just )?(?:after|before|when|once|while|as soon as|despu[eé]s|antes|cuando|"
    r"apr[eè]s|avant|quand)\b",
    re.I,
)
# A clock time said with its preposition ("at 6", "a las 6 y media", "à 9:00"): an answer to when.
_AT_CLOCK = re.compile(r"\b(?:at|around|about|@|[àa]|vers)\s*\d", re.I)
_CHANGE_OF_MIND = re.compile(r"\b(?:rather|instead|actually|switch|change|new habit|different habit)\b", re.I)


def _span_removed(text: str, match: re.Match[str] | None) -> str:
    if match is None:
        return text
    return text[: match.start()] + " , " + text[match.end() :]


# Where a reason that goes on to say when ends: a time with its preposition, or the routine's clause.
_WHEN_STARTS = re.compile(
    r"\s(?:at|around|about|like|a las|a eso de las|como a las|vers|[àa])\s+(?:\d|(?:noon|midday|midnight|una|dos|tres|"
    r"cuatro|cinco|seis|siete|ocho|nueve|diez|once|doce|une|deux|trois|quatre|cinq|six|sept|huit|neuf|dix|onze|douze|midi)\b)",
    re.I,
)


def parse_motivation(text: str) -> tuple[str, re.Match[str] | None]:
    match = _MOTIVATION.search(text)
    if match is None:
        return "", None
    reason = match["rest"]
    if parse_clock_time(reason) is not None:
        # "para estar más tranquila a las 10 de la noche antes de dormir": the reason ends where the
        # time or its routine begins, and those are read as the time and the routine.
        ends = [m.start() for m in (_WHEN_STARTS.search(reason), _ANCHOR.search(reason)) if m is not None]
        if ends and min(ends) > 0:
            cut = match.start("rest") + min(ends)
            match = re.compile(re.escape(text[match.start() : cut])).search(text, match.start()) or match
            reason = reason[: min(ends)]
    return _words(re.sub(r"^to\s+", "", _clean(reason), flags=re.I), 15), match


def parse_anchor(text: str, *, soft: bool = False) -> tuple[str, re.Match[str] | None]:
    start, end = 0, len(text)
    corrections = list(_SELF_CORRECTION.finditer(text))
    if corrections:  # "after i walk the dog wait no after i make coffee": the routine said last
        later = _ANCHOR.search(text, corrections[-1].end())
        start, end = (later.start(), end) if later is not None else (0, corrections[-1].start())
    match = _ANCHOR.search(text, start, end)
    if match is None and soft:
        match = _SOFT_ANCHOR.search(text, start, end)
        if match is not None and not re.match(r"(?:with|during) my\b", match["a"], re.I):
            match = match if _ROUTINE_WORDS.search(match["a"]) else None  # "with breakfast", not "with you"
    if match is None:
        return "", None
    anchor = _clean(_ANCHOR_TAIL.sub("", match["a"]))
    if len(anchor.split()) < 2:
        return "", None
    return _words(anchor, 10), match


_HEDGED = re.compile(
    r"^\W*(?:(?:um+|uh+|hmm+|i guess|i think|maybe|probably|like|so|quiz[aá]s?|tal vez|creo que|pues|"
    r"peut-[eê]tre|je pense)\b[\s,]*)*",
    re.I,
)


def names_a_fact(text: str) -> bool:
    """ "um i guess meditation?", "yoga?", "after dinner?": a short answer said with a rising voice — a
    known habit, a time or a routine in a few words past a hedge — rather than a question."""
    rest = _HEDGED.sub("", text).strip(" ?¿!.")
    if not rest or len(rest.split()) > 4:
        return False
    return bool(parse_domain(rest) or parse_clock_time(rest) or parse_vague_time(rest) or parse_anchor(rest)[0])


def parse_domain(text: str) -> str:
    """A known domain keyword (earliest wins), else the thing after "I want to …"."""
    hits = [(m.start(), label) for pattern, label in _DOMAINS for m in [re.search(pattern, text, re.I)] if m]
    if hits:
        return min(hits)[1]
    want = _WANT.search(text)
    if want:
        phrase = _clean(_START_TO.sub("", _DOMAIN_TAIL.sub("", want["x"])))
        if _substantive(phrase):
            return _words(phrase, 6).lower()
    return ""


def parse_intake_message(text: str, known: dict[str, str], expected: str | None) -> dict[str, str]:
    """The profile fields a message states; ``expected`` is the field we last asked for, so a
    bare answer ("my morning coffee", "more energy") can be read as that field."""
    if _is_hint(text) or not text.strip():
        return {}
    learned: dict[str, str] = {}
    new_habit = _habit_changed(text, known)
    if new_habit:  # "actually I'd rather do yoga, running hurts my knees": the habit, and a reason if given
        reason, _ = _reason_after_the_habit(text) if not known.get(MOTIVATION) else ("", None)
        return {DOMAIN: new_habit, **({MOTIVATION: reason} if reason else {})}
    text = _FILLER.sub(lambda m: " " * len(m[0]), text)  # "ok so i want to…": no "so i" reason
    motivation, m_match = _read_motivation(text, known, expected)
    rest = _span_removed(text, m_match)
    anchor, a_match = parse_anchor(rest, soft=not known.get(ANCHOR))
    # What is known of the moment tells 10:30 at night from the morning ("sleep", "before bed").
    hint = " ".join(v for v in (known.get(ANCHOR), anchor) if v)
    time = _late_for_sleep(parse_clock_time(rest, hint), rest, known.get(DOMAIN, ""))
    if time is None and expected == TIME:
        time = parse_asked_time(rest)  # "morning 7"
    opening_hour = _HOUR_THEN_ROUTINE.match(rest)
    if time is None and opening_hour:  # "8 when I get off work", "9 once everyone is in bed": the hour, then when
        time = _late_for_sleep(parse_clock_time(f"at {opening_hour[1]} {rest[opening_hour.end() :]}", hint), rest, "")
    # "I crash by 11", "on my phone until 1am every night" answer why, not when; a message that
    # opens with a time ("8:15 with my first coffee") gives one, whatever was asked.
    telling_why = (
        expected in (DOMAIN, MOTIVATION)
        and len(text.split()) > 3
        and not _AT_CLOCK.search(spoken_form(rest))
        and not _OPENS_WITH_TIME.match(text.strip())
        and not _time_said_apart(rest)
        and not _CLOSES_WITH_TIME.search(rest)
        and not _TIME_BESIDE_ROUTINE.search(rest)
    )
    if telling_why:
        time = None
    elif time is None and not known.get(TIME):
        time = parse_vague_time(rest, loose=expected in (TIME, ANCHOR))
    if time and not anchor and not known.get(ANCHOR) and parse_clock_time(rest, hint):
        # "on my lunch break at work around 12:30", "dinner time around 6:30": the routine beside the time
        anchor = _routine_beside_time(rest)
    domain_text = _span_removed(rest, a_match)
    # A known domain changes only on an explicit change of mind, not on a passing keyword ("my
    # doctor says I need to move more" answers why).
    changes = _WANT.search(domain_text) and (expected == DOMAIN or _CHANGE_OF_MIND.search(domain_text))
    domain = parse_domain(domain_text) if not known.get(DOMAIN) or changes else ""
    for name, value in ((DOMAIN, domain), (MOTIVATION, motivation), (TIME, time or ""), (ANCHOR, anchor)):
        if value and value != known.get(name):
            learned[name] = value
    # Only a reply that said nothing else (bar a passing time-of-day word) is read as the answer.
    incidental = (
        not learned
        or (set(learned) == {TIME} and parse_clock_time(rest) is None)
        or telling_why
        or (set(learned) == {MOTIVATION} and expected == DOMAIN)  # the habit before its reason
    )
    if expected and incidental and expected not in learned and not known.get(expected) and _substantive(text):
        guess = _answer_for(expected, text, domain_text)
        if guess:
            learned[expected] = guess
    elif learned:
        learned.update(_read_the_rest(text, rest, a_match, known=known, learned=learned, expected=expected))
    return learned


# What is left of a message once its facts are taken out, that says nothing more ("is fine", "like").
_LEFT_FILLER = re.compile(
    r"\b(?:is fine|works(?: for me)?|sounds good|that works|ok(?:ay)?|cool|good|fine|then|obvs|lol|haha+|jaja+|"
    r"tbh|i guess|i think|probably|maybe|please|pls|early|late|like|around|about|ish|tonight|o'clock|mostly|"
    r"honestly|really|just|"
    r"in the (?:morning|evening|afternoon)|every ?day|daily|vale|dale|va|pues|bueno)\b",
    re.I,
)


def _left_over(text: str, *spans: re.Match[str] | None) -> str:
    """``text`` without the given spans, its times and its filler: what it says beside the facts read."""
    for span in sorted((m for m in spans if m is not None), key=lambda m: m.start(), reverse=True):
        text = text[: span.start()] + " , " + text[span.end() :]
    left = _LEFT_FILLER.sub(" ", without_times(text))
    left = re.sub(r"\s*,(?:\s*,)+", ",", re.sub(r"\s+", " ", left))
    return _clean(_FILLER.sub("", _clean(left)))


def _read_the_rest(
    text: str,
    rest: str,
    a_match: re.Match[str] | None,
    *,
    known: dict[str, str],
    learned: dict[str, str],
    expected: str | None,
) -> dict[str, str]:
    """A message that answers AND gives more ("flexibility 7am" to "why?", "noon lunch" to "what time?"):
    what is left beside the facts read is the answer to the question asked, when that is still open,
    or else a routine while none is known ("lunch", "I let the dog out", "feed the cat")."""
    if learned.get(DOMAIN):  # what follows a habit is read by the habit's own rules
        return {}
    if set(learned) == {TIME} and (parse_clock_time(rest) is None or _TIME_IN_A_REASON.search(rest)):
        return {}  # "I crash by 11": the time is part of what they said, so nothing is left over
    left = _left_over(rest, a_match)
    if not _substantive(left) or accepts(left) or "?" in text:
        return {}
    open_ = [expected] if expected and expected not in learned and not known.get(expected) else []
    for name in open_:
        if name == MOTIVATION and known.get(DOMAIN):
            reason = _as_motivation(left)
            if reason:
                return {MOTIVATION: reason}
    # A routine is read in the time's own clause only ("6:45am I let the dog out", not "at 8am, I run late").
    beside = next((c for c in _CLAUSE.findall(rest) if parse_clock_time(c) or parse_asked_time(c)), "")
    left = _left_over(beside) if learned.get(TIME) and beside else ""
    if left and not accepts(left) and not known.get(ANCHOR) and ANCHOR not in learned and len(left.split()) <= 8:
        routine = _as_anchor(left)
        first = left.split()[0].lower()
        if routine and (_ROUTINE_WORDS.search(left) or first.endswith("ing")):
            return {ANCHOR: routine}
    return {}


def _read_motivation(text: str, known: dict[str, str], expected: str | None) -> tuple[str, re.Match[str] | None]:
    """Why it matters, said with a cue ("because", "para"), as a leading "to …", in answer to "why?", or
    beside the habit ("stretch, my back hurts", "meditation stress mostly")."""
    motivation, m_match = parse_motivation(text)
    if not motivation and not known.get(MOTIVATION) and _REASON_LEAD.match(text):
        motivation, m_match = _leading_clause_as_motivation(text)  # "to process my day", whatever was asked
    if not motivation and expected == MOTIVATION:
        motivation, m_match = _leading_clause_as_motivation(text)
    if not motivation and expected == DOMAIN and not known.get(MOTIVATION):
        motivation, m_match = _reason_after_the_habit(text)
    if not motivation and not known.get(MOTIVATION) and not known.get(DOMAIN):
        motivation, m_match = _reason_beside_the_habit(text)  # "meditation stress mostly"
    if not motivation and expected == DOMAIN and not known.get(MOTIVATION) and not known.get(DOMAIN):
        motivation, m_match = _habit_then_why(text)  # "beber más agua me duele la cabeza"
    return motivation, m_match


# A second clause with its own subject after a habit said in a few words: "… i scroll til 1am", "… me duele
# la cabeza", "… j'ai mal au dos". Only pronouns and verbs that start a statement, not an object ("mon lit").
_STATEMENT_STARTS = re.compile(
    r"\s(?:i|i'm|im|i've|ive|me|estoy|tengo|siempre|j'ai|je|j'|c'est|"
    r"(?:my|mi|mon|ma|el|le|la) (?:doctor|dr|doc|m[ée]dico|m[ée]decin|therapist|terapeuta|dentist|dentista))(?=\s|$)",
    re.I,
)
# Words after which a pronoun starts no new statement: an object, or a clause of when or of thinking.
_BEFORE_AN_OBJECT = re.compile(
    r"\b(?:to|with|for|of|in|on|at|and|a|an|the|de|en|con|por|para|y|el|la|[àa]|au|avec|pour|et|le|les|when|after|"
    r"before|while|once|if|that|so|because|think|guess|mean|cuando|despu[eé]s|antes|que|si|quand|apr[eè]s|avant)$",
    re.I,
)


def _habit_then_why(text: str) -> tuple[str, re.Match[str] | None]:
    """A habit in one to six words, then why in a clause of its own with no comma between ("put my phone
    away at night i scroll til 1am", "beber más agua me duele la cabeza", "faire des étirements j'ai mal
    au dos"): the second clause is the reason."""
    first = re.match(r"[^,.;!?]+", text)
    clause = first[0] if first is not None else ""
    start = _STATEMENT_STARTS.search(clause)
    if start is None or _BEFORE_AN_OBJECT.search(clause[: start.start()].strip()):
        return "", None
    habit, said = clause[: start.start()].split(), clause[start.start() :]
    reason = _clean(_REASON_OPENS.sub("", _clean(said)))
    core = _clean(_LEFT_FILLER.sub(" ", reason))
    if not 1 <= len(habit) <= 6 or len(reason.split()) < 2 or not _substantive(core) or accepts(reason):
        return "", None
    return _words(reason, 15), re.compile(re.escape(said.strip())).search(text, start.start())


_CLAUSE = re.compile(r"[^,.;!?]+")
_PLACE_LEAD = re.compile(
    r"^(?:on|at|during|in|en|durante|pendant|[àa] la hora de|a la hora del?|au|aux|[àa] la|al|con)\s+\S", re.I
)
_MEAL_LEAD = re.compile(r"^(?:breakfast|lunch|dinner|supper|coffee|tea)\b", re.I)
_BESIDE_FILLER = re.compile(
    r"^(?:ok(?:ay)?|so|um+|well|probably|maybe|usually|every ?day|daily|i guess|like|y|et|and|pues)\s+"
    r"|\s+(?:every ?day|daily|i guess|i think|please|pls|works|is fine|por favor|s'il vous pla[iî]t|cada d[ií]a|"
    r"tous les jours)$",
    re.I,
)


def _routine_beside_time(text: str) -> str:
    """The routine said in the same sentence as a clock time, when no "after/before/when" clause
    names it: "on my lunch break at work", "dinner time" → "at dinner time", "en la comida"."""
    for clause in _CLAUSE.findall(without_times(text)):
        phrase = _clean(clause)
        while _BESIDE_FILLER.search(phrase):
            phrase = _clean(_BESIDE_FILLER.sub("", phrase))
        if len(phrase.split()) < 2 or len(phrase.split()) > 10 or not _ROUTINE_WORDS.search(phrase):
            continue
        if _PLACE_LEAD.match(phrase):
            return _words(phrase, 10)
        if _MEAL_LEAD.match(phrase):
            return "at " + _words(phrase, 9)
    return ""


def _time_said_apart(text: str) -> bool:
    """A clock time in a clause of its own ("my neck is killing me. 3pm works"): an answer to when,
    not part of the reason."""
    for clause in _CLAUSE.findall(text):
        if parse_clock_time(clause) and len(_clean(without_times(clause)).split()) <= 2:
            return True
    return False


def _habit_changed(text: str, known: dict[str, str]) -> str:
    """ "actually no lets do journaling instead": a change of mind naming another known habit."""
    if not known.get(DOMAIN) or not _CHANGE_OF_MIND.search(text) or re.search(r"\d", text):
        return ""
    habit = parse_domain(text)
    return habit if habit and habit != known[DOMAIN] else ""


_REASON_LEAD = re.compile(
    r"^\s*(?:to|so that|so i can|because|'?cause|para|porque|pour|parce que|afin de)\s+(?!be honest)[a-zà-ÿ]", re.I
)
# The words of a reply that only says when ("every evening please", "after work").
_TIME_WORDS = any_word(
    *DAYPARTS,
    *MEALS,
    "in",
    "the",
    "every",
    "each",
    "at",
    "around",
    "by",
    "after",
    "before",
    "sometime",
    "please",
    "pls",
    "maybe",
    "work",
    "bed",
    "day",
    "sleep",
    "ish",
)


def _only_when(clause: str) -> str:
    """What a clause says beyond when: "" for "every evening please", "relax" for "relax after work"."""
    return re.sub(r"\W+", "", _TIME_WORDS.sub("", clause))


def _leading_clause_as_motivation(text: str) -> tuple[str, re.Match[str] | None]:
    """Answering "why does it matter?", the first clause is the reason ("to unwind before sleep")
    — unless it is plainly an anchor or a time instead."""
    match = re.match(r"\s*(?P<rest>[^.;!?,]+)", text)
    if match is None or text.rstrip().endswith("?") or _ANCHOR.match(match["rest"].strip()):
        return "", None
    clause = _clean(_FILLER.sub("", _clean(match["rest"])))
    if not _substantive(clause) or parse_clock_time(clause) or not _only_when(clause):
        return "", None
    if parse_vague_time(clause, loose=True) and not _only_when(clause):
        return "", None  # "every evening please" is a time; "relax after work" is a reason
    return _words(re.sub(r"^(?:to|because)\s+", "", clause, flags=re.I), 15), match


# Words that still belong to the habit after its keyword ("drink more water every day", "walk 10 minutes").
_HABIT_GOES_ON = re.compile(
    r"^(?:\s*(?:more|a bit|a little|every ?day|daily|each day|a day|per day|once|twice|regularly|again|"
    r"\d+\s*(?:min\w*|minutes?|pages?|glass\w*|mins?)|ups?|in the (?:morning|evening)s?)\b)+",
    re.I,
)
_REASON_OPENS = re.compile(r"^(?:to|so|bc|because|cuz|cause|coz|since|i want to|i wanna|i'd like to)\s+", re.I)


def _reason_beside_the_habit(text: str) -> tuple[str, re.Match[str] | None]:
    """The habit and its reason in one run-on ("meditation stress mostly", "journaling to process my day",
    "water im always tired by 3", "reading relax after work"): the words the habit's clause goes on with,
    after its keyword, up to a time or a routine, are why it matters."""
    clause = re.match(r"[^,.;!?]+", text)
    if clause is None:
        return "", None
    hits = sorted(
        (m.start(), m.end(), name) for pattern, name in _DOMAINS for m in re.finditer(pattern, clause[0], re.I)
    )
    if not hits:
        return "", None
    first, end, label = hits[0]
    want = _WANT.search(clause[0])
    wants_first = want is not None and want.start("x") <= first and len(clause[0][: want.start()].split()) <= 2
    opens = want.start("x") if want is not None and wants_first else 0
    if len(clause[0][opens:first].split()) > 3:  # a run-on says its habit first; a later keyword is in the reason
        return "", None
    while True:  # the habit's phrase: its keyword, the words that go on with it, the same habit named again
        goes_on = _HABIT_GOES_ON.match(clause[0][end:])
        end += goes_on.end() if goes_on else 0
        again = next((h for h in hits if h[2] == label and h[0] > end - 1 and not clause[0][end : h[0]].strip()), None)
        if again is None:
            break
        end = again[1]
    start = end
    said = clause[0][start:]
    stops = [m.start() for m in (_WHEN_STARTS.search(said), _ANCHOR.search(said), _SOFT_ANCHOR.search(said)) if m]
    said = said[: min(stops)] if stops else said
    if re.match(r"\s*(?:instead|en vez|en lugar|au lieu)\b", said, re.I):
        return "", None  # "read more instead of scrolling my phone": what the habit replaces, not why
    if re.match(r"\s*to\b", said, re.I) and _WANT.search(clause[0]):
        return "", None  # "I'd like to learn to play guitar": the habit goes on, no reason yet
    reason = _clean(_REASON_OPENS.sub("", _clean(said)))
    core = _clean(_LEFT_FILLER.sub(" ", reason))
    if not _substantive(core) or accepts(reason) or "?" in text or not _only_when(core):
        return "", None
    if parse_clock_time(reason) and len(reason.split()) <= 2:
        return "", None
    span = re.compile(re.escape(said.rstrip())).search(text, start)
    return _words(reason, 15), span


def _reason_after_the_habit(text: str) -> tuple[str, re.Match[str] | None]:
    """ "stretch, my back hurts all day", "I sit at a desk all day, I want to stretch more": answering
    "which habit?", the habit in one clause and, in another, three words or more that are neither a
    time, a routine nor a yes: why it matters."""
    clauses = [m for m in re.finditer(r"[^,.;!?]+", text) if m[0].strip()]
    if len(clauses) < 2:
        return "", None
    habit = next((m for m in clauses if parse_domain(m[0]) or _WANT.search(m[0])), clauses[0])
    for clause in clauses:
        rest = _clean(clause[0])
        if clause is habit or len(rest.split()) < 3 or _WANT.search(rest):
            continue
        if _ANCHOR.search(rest) or parse_clock_time(rest) or parse_vague_time(rest) or accepts(rest):
            continue
        return _words(rest, 15), clause
    return "", None


def _answer_for(expected: str, text: str, domain_text: str) -> str:
    """Read a bare reply as the answer to the question we asked."""
    if text.rstrip().endswith("?") or accepts(text):  # "dale", "ok" answer no question asked
        return ""
    answer = _clean(_FILLER.sub("", _clean(text)))
    if expected == DOMAIN:
        phrase = _clean(_FILLER.sub("", _clean(_DOMAIN_TAIL.sub("", domain_text))))
        return _words(phrase, 6).lower() if _substantive(phrase) else ""
    if expected == ANCHOR and _substantive(answer):
        return _as_anchor(answer)
    if expected == MOTIVATION and _substantive(answer):
        return _as_motivation(text)
    if expected not in INTAKE_ORDER and _substantive(answer):  # a field a flow definition added
        return _words(answer, 30)
    return ""
