"""The habit and why it matters, read from a message as people write it, in English, Spanish and French:
the habit by its keyword or after "I want to …", a change of habit, and the reason said with a cue
("because", "para", "pour"), by its structure ("for my back", "por salud", "my doctor told me to"), in
answer to "why?", beside the habit in one run-on ("meditation stress mostly") or in a clause of its own."""

from __future__ import annotations

import re

from promptpipe.adapters.offline_coach.intake_routines import _ANCHOR, _SOFT_ANCHOR
from promptpipe.adapters.offline_coach.reading import accepts
from promptpipe.adapters.offline_coach.text import (
    _FILLER,
    ANCHOR,
    DOMAIN,
    MOTIVATION,
    TIME,
    _clean,
    _substantive,
    _words,
    is_acknowledgement,
)
from promptpipe.adapters.offline_coach.times import parse_clock_time, parse_vague_time
from promptpipe.adapters.offline_coach.vocabulary import DAILY, HOURS_ES, HOURS_FR, LAUGH, OPINION
from promptpipe.rules.message_reading import read_message
from promptpipe.rules.word_patterns import DAYPARTS, MEALS, any_word

_MOTIVATION = re.compile(
    r"\b(?:because|'?cause|bc(?!\w)|b/c|cuz(?!\w)|coz(?!\w)|cos(?!\w)|so that|so i can|in order to"
    r"|so i(?!\s+(?:want|wanna|would|'d|was|am|'m|think|guess)\b)"  # not "hi so I want to walk": a filler
    r"|i want to (?=feel\b)|i'd like to (?=feel\b)|(?=to feel\b)"
    r"|(?=to (?:have|be(?! honest)|reduce|lower|improve|boost|lose|stay|keep|get more|get better)\b)"
    r"|(?=to get (?:my|in|fit|fitter|healthier|stronger|rid)\b)"
    r"|porque|para (?=(?:que|no|poder|estar|sentirme|tener|bajar|mejorar|dormir)\b)"
    r"|para (?=\w+(?:ar|er|ir)(?:me|te|se|nos|lo|la)?\b)"  # "para desconectarme": para + an infinitive
    r"|(?<!\w)pa (?=\w+(?:ar|er|ir)(?:me|te|se|nos|lo|la)?\b)"  # "pa quitarme el estrés": "pa", spoken "para"
    # "journaling, to get stuff out of my head": a purpose clause after the habit (not "to the park")
    r"|(?<=, )(?=to (?!be honest|the |a |an |my |your |his |her |our |their |this |that |work|school|bed)"
    r"[a-z]{2,} )"
    r"|parce que|parce qu'|(?<!the )(?<!my )(?<!a )(?<!our )(?<!your )(?<!her )(?<!his )car|afin de"  # not "the car"
    r"|pour (?=(?:[eê]tre|avoir|moins|mieux|plus|me|perdre|dormir|r[ée]duire)\b)"
    r"|motivat\w*(?:\s+(?:by|is|because))?|my reason is|the reason is|it helps me|helps me)\s*"
    r"(?P<rest>[^.;!?,]+)",
    re.I,
)


def _as_motivation(text: str) -> str:
    """The whole reply to "why does it matter?", past a leading "ah ok." or "hmm,"."""
    sentences = [part.strip() for part in re.split(r"(?<=[.!;])\s+", text) if part.strip()]
    while sentences and not _substantive(_FILLER.sub("", _clean(sentences[0]))):
        sentences.pop(0)
    reason = _clean(_FILLER.sub("", _clean(" ".join(sentences))))
    reason = _HEDGE_AFTER.sub("", reason)  # "to move more i guess": the hedge is no part of the reason
    timeish = parse_vague_time(reason, loose=True) or parse_clock_time(reason)
    if not _substantive(reason) or (timeish and len(reason.split()) <= 3):
        return ""
    return _words(re.sub(r"^(?:to|because|para|pa|porque)\s+", "", reason, flags=re.I), 15)


# A hedge that closes a reason ("to move more i guess"): no part of it.
_HEDGE_AFTER = re.compile(rf"(?:[\s,]+(?:{OPINION}|{LAUGH}|lmao|tbh|honestly|probably|jaja+|je pense))+\W*$", re.I)


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
    r"help me|my goal is to|hoping to|i (?:just |only )?need (?:a |the )?(?:daily )?reminder to|remind me to|"
    r"i(?:'ve| have)? decided to|i'd love to|habit of|get better at|"
    # "nomás quiero q me recuerdes tomar agua", "recuérdame estirar": what to be reminded of is the habit
    r"(?:quiero )?q(?:ue)? me recuerdes|recu[eé]rdame|quiero|quisiera|me gustar[ií]a|"
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

# Not "I'd rather not waste her money": a preference against something is no other habit.
_CHANGE_OF_MIND = re.compile(
    r"\b(?:rather(?! not)|instead|(?<!\bto )actually|switch|change|new habit|different habit)\b", re.I
)

# Where a reason that goes on to say when ends: a time with its preposition, or the routine's clause.
_NEAR = r"at|around|about|like|a las|a eso de las|como a las|vers|[àa]"  # "at 7", "a eso de las 7", "vers 7h"
_HOUR_IN_WORDS = rf"noon|midday|midnight|{HOURS_ES}|{HOURS_FR}|midi"
_HEDGE = "maybe|probably|prob|say|usually|ideally"
_WHEN_STARTS = re.compile(
    rf"\s(?:{_NEAR})\s+(?:\d|(?:{_HOUR_IN_WORDS})\b)"
    # a clock time said bare in a run-on ("… lately maybe 6:30 right when i get home")
    rf"|\s(?:(?:{_HEDGE})\s+)?\d{{1,2}}(?:[:h][0-5]\d|\s*[ap]\.?m\b)",
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


def parse_domain(text: str) -> str:
    """A known domain keyword (earliest wins), else the thing after "I want to …"."""
    hits = [(m.start(), label) for pattern, label in _DOMAINS for m in [re.search(pattern, text, re.I)] if m]
    if hits:
        return min(hits)[1]
    want = _WANT.search(text)
    if want:
        phrase = _clean(_START_TO.sub("", _DOMAIN_TAIL.sub("", want["x"])))
        if _substantive(phrase):
            return _LOOSE_END.sub("", _words(phrase, 6)).lower()
    return ""


# A word that leads on, left at the end of a habit cut to its first words ("escribir 3 cosas por las").
_LOOSE_END = re.compile(
    r"(?:\s+(?:a|an|the|of|for|to|in|on|at|my|and|or|with|de|del|la|las|el|los|en|por|para|que|y|o|con|mi|mis|"
    r"le|les|du|des|et|pour|sur|au))+$",
    re.I,
)


# What is left of a message once its facts are taken out, that says nothing more ("is fine", "like").
_LEFT_FILLER = re.compile(
    rf"\b(?:is fine|works(?: for me)?|sounds good|that works|ok(?:ay)?|cool|good|fine|then|obvs|{LAUGH}|jaja+|"
    rf"tbh|{OPINION}|probably|maybe|please|pls|early|late|like|around|about|ish|tonight|o'clock|mostly|"
    r"honestly|really|just|"
    rf"in the (?:morning|evening|afternoon)|{DAILY}|vale|dale|va|pues|bueno)\b",
    re.I,
)


def _read_motivation(text: str, known: dict[str, str], expected: str | None) -> tuple[str, re.Match[str] | None]:
    """Why it matters, said with a cue ("because", "para"), as a leading "to …", in answer to "why?", or
    beside the habit ("stretch, my back hurts", "meditation stress mostly")."""
    motivation, m_match = parse_motivation(text)
    if motivation and known.get(MOTIVATION) and expected in (TIME, ANCHOR) and parse_clock_time(text):
        motivation, m_match = "", None  # "1:30 because that's my lunch break": why that time, not the habit
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
    if not motivation and known.get(DOMAIN) and not known.get(MOTIVATION) and expected != DOMAIN:
        motivation, m_match = _wish_as_reason(text)  # "quiero bajar de peso", whatever was asked
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
    if read_message(" ".join(habit)).kind == "greeting":
        return "", None  # "hi i want to make my bed": a greeting before the statement, no habit
    reason = _clean(_REASON_OPENS.sub("", _clean(said)))
    core = _clean(_LEFT_FILLER.sub(" ", reason))
    if not 1 <= len(habit) <= 6 or len(reason.split()) < 2 or not _substantive(core) or accepts(reason):
        return "", None
    return _words(reason, 15), re.compile(re.escape(said.strip())).search(text, start.start())


# "sleep earlier instead of scrolling": two things compared inside an answer, not a change of habit.
_COMPARED = re.compile(r"\b(?:instead of|rather than|en vez de|en lugar de|au lieu de)\s+(?P<other>[^,.;!?]+)", re.I)


def _habit_changed(text: str, known: dict[str, str]) -> str:
    """ "actually no lets do journaling instead": a change of mind naming another known habit. Not a
    comparison whose other side is not the habit ("nice nice. sleep earlier instead of scrolling", "para
    desconectar en vez de estar con el móvil"), nor "actually" inside a reason ("to actually sleep")."""
    if not known.get(DOMAIN) or re.search(r"\d", text):
        return ""
    said = _FILLER.sub("", text.strip())
    habit_known = known[DOMAIN]
    said = _COMPARED.sub(lambda m: m[0] if parse_domain(m["other"]) == habit_known else " ", said)
    if _REASON_LEAD.match(said):  # a reason's clause: "actually" is an adverb of it, not a change of mind
        said = re.sub(r"\bactually\b", " ", said, flags=re.I)
    if not _CHANGE_OF_MIND.search(said):
        return ""
    habit = parse_domain(text)
    return habit if habit and habit != habit_known else ""


_REASON_LEAD = re.compile(
    r"^\s*(?:to|so that|so i can|because|'?cause|bc|cuz|para|porque|pour|parce que|afin de)\s+(?!be honest)[a-zà-ÿ]"
    # "for my back", "por salud", "por mi espalda": for the sake of something, not a moment ("por la noche")
    r"|^\s*(?:for (?:my|the sake of|health|fun|sanity)\b(?! (?:lunch|break|coffee|commute|shower|walk|run)\b)"
    r"|por (?!(?:la|las|el) (?:ma[nñ]ana|tarde|noche|d[ií]a)|favor|ejemplo|cierto|eso|si|ahora|fin|lo menos|"
    r"supuesto|ahi|aqui|cierto|la|las|el|los)[a-zà-ÿ]"
    r"|(?:por|para) (?:la|el|mi|mis) (?:salud|espalda|cabeza|estr[eé]s|ansiedad|peso|sue[nñ]o|energ[ií]a|"
    r"familia|hij[oa]s?)\b)"
    # "my doctor told me to", "mi doctor me lo dijo", "mon médecin me l'a dit": someone's advice is the reason
    r"|^\s*(?:my|mi|el|mon|ma|le|la) (?:doctor|dr|doc|m[ée]dic[oa]|m[ée]decin|therapist|terapeuta|th[ée]rapeute|"
    r"dentist|dentista|dentiste|physio|kin[ée]|coach|nurse|enfermera)\b"
    # with no determiner, the advice said by its verb: "doctor said so", "doc wants me to", "médico me lo pidió"
    r"|^\s*(?:doctor|dr|doc|m[ée]dic[oa]|m[ée]decin|therapist|physio|dentist)\.?\s+(?:said|says|told|tells|wants|"
    r"recommend\w*|suggest\w*|insist\w*|order\w*|dijo|dice|me|m'a|insiste|recomend\w*|pidi[oó])\b",
    re.I,
)

# A wish for an outcome once the habit is known ("quiero bajar de peso", "i want to lose weight", "je veux
# perdre du poids"): why, unless what is wished is the habit itself or doing it ("quiero hacerlo después").
_WISH_NOT_A_REASON = re.compile(
    r"^(?:do it|do that|start|try|hacerlo|empezar|intentarlo|le faire|commencer|essayer)\b|\b(?:it|lo|le)$", re.I
)


def _wish_as_reason(text: str) -> tuple[str, re.Match[str] | None]:
    """ "quiero bajar de peso" when the habit is known and its reason is not: the outcome wished for."""
    want = _WANT.search(text)
    if want is None or parse_domain(want["x"]) or _WISH_NOT_A_REASON.search(want["x"].strip()):
        return "", None
    if _ANCHOR.search(want["x"]) or parse_clock_time(want["x"]) or parse_vague_time(want["x"]):
        return "", None
    wished = re.sub(r"\s+(?:so|and|but|then|y|pero|et|mais|donc)$", "", _clean(want["x"]), flags=re.I)
    return (_words(wished, 15), want) if _substantive(wished) and len(wished.split()) >= 2 else ("", None)


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
    if is_acknowledgement(clause):
        return "", None  # "perfect", "ok good", "muy bien": said of the question, not why it matters
    if parse_vague_time(clause, loose=True) and not _only_when(clause):
        return "", None  # "every evening please" is a time; "relax after work" is a reason
    return _words(re.sub(r"^(?:to|because)\s+", "", clause, flags=re.I), 15), match


# Words that still belong to the habit after its keyword ("drink more water every day", "walk 10 minutes").
_HABIT_GOES_ON = re.compile(
    rf"^(?:\s*(?:more|a bit|a little|{DAILY}|each day|a day|per day|once|twice|regularly|again|lists?|"
    r"apps?|routines?|sessions?|practice|journal|habit|"
    r"\d+\s*(?:min\w*|minutes?|pages?|glass\w*|mins?)|ups?|in the (?:morning|evening)s?|"
    # an amount or a duration said with the habit is the habit's ("read a few pages", "stretch for 5 min")
    r"(?:for\s+)?(?:like\s+|about\s+|around\s+)?(?:a few|a couple(?: of)?|some|a|an|one|two|three|five|ten|\d+)\s+"
    r"(?:more\s+)?(?:min\w*|minutes?|pages?|chapters?|glass\w*|cups?|bottles?|reps?|sets?|laps?|times?|hours?|"
    r"hrs?|secs?|seconds?|miles?|km|steps|squats|push-?ups|sit-?ups)|"
    r"(?:every|each|at|a)\s+(?:night|morning|evening|afternoon|day)s?|around the block)\b)+",
    re.I,
)

_REASON_OPENS = re.compile(r"^(?:to|so|bc|because|cuz|cause|coz|since|i want to|i wanna|i'd like to)\s+", re.I)


# What goes on from a habit's verb as its object or its measure ("walk the dog", "even a tiny doodle", "like 3
# things", "aunque sea poquito", "weeding or watering", "ten minutes a day"): part of the habit, never why.
_MEASURE = (
    r"like|even|just|at least|or|aunq|aunque|al menos|ni que sea|tipo|como|solo|o|ou|m[eê]me|a|an|un|una|"
    r"one|two|three|four|five|ten|fifteen|twenty|thirty|\d+|un par|unos|unas|\w+ing (?:or|and|y|o) \w+"
)
_MEASURE_GOES_ON = re.compile(rf"\s*(?:{_MEASURE})\b", re.I)
_GOES_ON_AS_OBJECT = re.compile(rf"\s*(?:the|this|that|el|la|los|las|le|les|{_MEASURE})\b", re.I)


_OPENING_TALK = re.compile(
    r"^(?i:(?:hi|hey|hello|hola|buenas|buenos dias|oye|so|ok|okay|well|bueno|pues)\W+)*"
    r"(?:(?i:i'?m|i am|my name is|me llamo|soy|this is|it'?s)\s+(?:[A-Z][a-z]+|\d+)\b"
    r"|(?i:.*\b(?:number|n[uú]mero|sign(?:ed)? (?:me )?up|signed|apunt\w*|inscrib\w*|recom\w*|study|estudio|"
    r"clinic\w*)\b|(?:q|que|qu[eé]) onda\b|(?:what'?s up|sup|wassup)\b))",
)
_POSSESSIVE_OBJECT = re.compile(
    r"\s*(?:my|mi|mis|his|her|their|our|your|su|sus)\s+\w+\s*(?:$|(?:every|each|daily|a|in|at|on|before|after|"
    r"when|while|with|todos|todas|cada|al|en|por|antes|despu[eé]s|cuando|y|and|or)\b)",
    re.I,
)


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
    if _GOES_ON_AS_OBJECT.match(said) or _POSSESSIVE_OBJECT.match(said):
        return "", None  # "walk the dog a little longer", "leer mi biblia": the habit's object, not why
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
    """ "stretch, my back hurts all day", "floss every day, dentist guilt": answering "which habit?", the
    habit in one clause and, in another, two words or more that are neither a time, a routine nor a yes:
    why it matters."""
    clauses = [m for m in re.finditer(r"[^,.;!?]+", text) if m[0].strip()]
    if len(clauses) < 2:
        return "", None
    habit = next((m for m in clauses if parse_domain(m[0]) or _WANT.search(m[0])), clauses[0])
    for clause in clauses:
        rest = _clean(clause[0])
        if clause is habit or len(rest.split()) < 2 or _WANT.search(rest):
            continue
        # Before the habit, what opens a first message is no reason: a greeting, a name or an age, how they
        # came or that they are in ("buenos días", "I'm Margaret", "me apunto"). After it, not its measure.
        if clause.start() < habit.start() and read_message(rest).kind in ("greeting", "yes"):
            continue
        if clause.start() < habit.start() and not _REASON_LEAD.match(rest) and _OPENING_TALK.search(rest):
            continue
        if clause.start() > habit.start() and _MEASURE_GOES_ON.match(rest):
            continue
        said = _clean(_LEFT_FILLER.sub(" ", rest))
        if len(rest.split()) == 2 and (len(said.split()) < 2 or not _only_when(rest) or not _substantive(said)):
            continue  # "dentist guilt", "im stiff" are why; "i guess", "every morning", "ok sure" are not
        if _ANCHOR.search(rest) or parse_clock_time(rest) or parse_vague_time(rest) or accepts(rest):
            continue
        return _words(rest, 15), clause
    return "", None
