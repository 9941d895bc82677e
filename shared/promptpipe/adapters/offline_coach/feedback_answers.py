"""A feedback reply read (done or not: ``rules/outcome.py``; the why, part of it, a pause, a day-part:
``rules/feedback_reading.py``), and the feedback replies said in the participant's language."""

from __future__ import annotations

import re

from promptpipe.adapters.offline_coach.text import ASK_BARRIER, ASK_HELPED, _clean, _substantive, _words
from promptpipe.rules.feedback_reading import Language, asks_for_another_time, asks_when, reason_clause
from promptpipe.rules.feedback_report import what_helped_clause
from promptpipe.rules.intent_patterns import CHANGE_TIME, PREFER
from promptpipe.rules.lexicon import LAUGHS, SHRUGS
from promptpipe.rules.message_reading import plain, read_message
from promptpipe.rules.outcome import Outcome, read_outcome, without_outcome_words
from promptpipe.rules.outcome_fields import in_the_way_beside
from promptpipe.rules.report_details import cause_words, company, hard_going, said_as_plan, says_it_helps

_DONE_CANON = re.compile(r"\bq:\s*did you do it\?\s*a:\s*(done|next time)\b", re.I)
_INTENSITY_CANON = re.compile(
    r"\bq:\s*how's the intensity\?\s*a:\s*(decrease|keep current|increase|low|normal|high)", re.I
)
# A feedback reply that gives a time corrects the schedule when it asks for a change (the request's
# words, promptpipe.rules.intent_patterns) or words it as a correction ("make it 8", "actually 7", "not at 6").
_CORRECTION = re.compile(
    r"\bmake it\b|\bactually\b|\bnot (?:at )?\d|\bcambi\w*|\bmuev\w*|\bchanger\b|\bplut[oô]t\b", re.I
)
_KNOWN_BARRIERS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"forg|olvid|oubli|se me pas[oó]|slipped my mind", re.I), "forgot",
     "leave a visible cue right where your routine happens, or set a phone reminder"),
    # "time", not "the whole time" or "this time" (when, not the lack of it)
    (re.compile(r"\b(?:(?<!whole )(?<!all the )(?<!this )(?<!first )(?<!last )(?<!on )time|busy|rushed|hectic|late|"
                r"tiempo|prisa|temps|press[eé]e?)\b", re.I), "not enough time",
     "shrink it to a 30-second version you can do anywhere"),
    # "ill" only as being ill ("felt ill"), never "ill" typed for "I'll" ("ill give it a go")
    (re.compile(r"\b(?:tired|exhausted|sleepy|sick|wiped|drained|knackered|(?:was|am|felt|feeling|got|been|i'?m) ill|"
                r"energy|cansad\w*|agotad\w*|fatigu[eé]e?|crev[eé]e?s?|[eé]puis[eé]e?s?|malade|enferm[oa])\b", re.I),
     "too tired", "do the easiest possible version, even just 30 seconds"),
)  # fmt: skip
SMALLER = "make it even smaller so it fits on a busy day"
SMALLEST = "make it even smaller — just 30 seconds right after your usual routine"
ASKED_HELPED = (ASK_HELPED, "¿Qué te ayudó", "Qu'est-ce qui t'a aidé")
ASKED_BARRIER = (ASK_BARRIER, "¿Qué te lo impidió", "Qu'est-ce qui t'en a empêché")


def asks_for_a_new_time(text: str) -> bool:
    return bool(
        CHANGE_TIME.search(text) or PREFER.search(text) or _CORRECTION.search(text) or asks_for_another_time(text)
    )


def says_done(text: str) -> bool:
    """A reply that says it was done, whatever was asked ("Done", "did it", "c'est fait")."""
    return read_outcome(text, asked=False) == "done"


# "went well", "went great": said of the day, in the yes that goes on and in what made it easy.
_WENT_WELL = "went (?:well|great|fine)"
# "Yes! Having my mat out helped a lot": a yes that goes on to say how it went is a report, whatever was asked.
_YES_AND_HOW = re.compile(
    rf"^\W*(?:yes|yep|yeah|yup|s[ií]|oui)\b.*\b(?:helped|{_WENT_WELL}|was (?:easy|great|good|fine)|"
    r"me ayud[oó]|fue f[aá]cil|m'a aid[eé]|c'[ée]tait facile)\b",
    re.I,
)


_EASY = re.compile(rf"\b(?:easy|easier|helped|helps|{_WENT_WELL}|f[aá]cil|me ayud[oó]|facile|m'a aid[eé])\b", re.I)


def what_made_it_easy(text: str) -> str:
    """ "honestly it was easy because the kettle takes forever" → "the kettle takes forever", "my roommate
    joined me so that was fun" → "my roommate joined me": why it went well, said without being asked; ""
    when the message says no such thing."""
    return motivator_in(text) if _EASY.search(text) else _clean(what_helped_clause(text))


def says_yes_and_how(text: str) -> bool:
    return bool(_YES_AND_HOW.search(text))


def says_not_done(text: str) -> bool:
    return read_outcome(text, asked=False) == "not_done"


def classify_barrier(text: str) -> tuple[str, str]:
    """(barrier, tweak) for a "not this time" reply: a known kind ("forgot", "too tired"), the reason it
    gives ("because it rained"), what it says got in the way without the words of the miss ("no pude,
    llovió todo el día" → "llovió todo el día"), or its own words when they say more than "no"."""
    if _DONE_CANON.search(text):
        return "not specified", SMALLEST
    for pattern, barrier, tweak in _KNOWN_BARRIERS:
        if pattern.search(text):
            return barrier, tweak
    cause = _clean(reason_clause(text) or cause_words(text))
    if _substantive(cause):
        return _words(cause, 15), SMALLER
    if _substantive(_clean(without_outcome_words(text))) and not said_as_plan(text):
        return _words(_clean(text), 15), SMALLER
    return "not specified", SMALLEST


def hard_barrier(text: str) -> str:
    """What got in the way of a done that was hard ("did it but it was rough, my shins were aching" → "my
    shins were aching"; "yes but it was hard, I was exhausted" → "too tired"); "" when it was not hard."""
    hard = hard_going(text) or in_the_way_beside(text)  # "done but the kids were sick": in the way too
    hard = re.sub(r"^(?:but|though|tho|although|pero|aunque|mais)\s+", "", hard.strip(), flags=re.I)
    if not hard:
        return ""
    known, _tweak = classify_barrier(hard)
    return known if known != "not specified" else _words(_clean(hard), 15)


_WITH_COMPANY = {"en": "doing it with {who}", "es": "hacerlo con {who}", "fr": "le faire avec {who}"}


_THANKS_LEAD = re.compile(
    r"^(?:(?:cheers|thanks?|thank (?:you|u)|ty|thx|ta|tysm|gracias|merci|mate|again|so much|muchas|re)\b[\s,!.]*)+",
    re.I,
)
_ONLY_THE_HABIT = re.compile(r"(?:it|this|that|these|they|them|esto|eso|estos|sirve|re sirve|todo)?", re.I)


def motivator_in(text: str, lang: Language = "en") -> str:
    """What helped, when a report says it: the reason it gives ("bc my sister joined"), who or what it
    says helped ("having my mat out helped", "my roommate joined me", "me ayudó poner la alarma"), or who
    it was done with ("did it w my roommate" → "doing it with my roommate"); "" when it says none."""
    said = _THANKS_LEAD.sub("", _clean(reason_clause(text) or what_helped_clause(text))).strip()
    if _ONLY_THE_HABIT.fullmatch(said) or says_it_helps(said):
        said = ""  # "cheers this is helping", "thanks mate, it's working": the thanks and the habit, no helper
    who = company(text)
    return said or (_WITH_COMPANY[lang].format(who=who) if who else "")


# A shrug that opens an answer to "what helped?", with the filler said around it ("idk", "no idea lol",
# "hmm nothing special,", "ni idea jaja,"): what follows it is the answer ("idk just did it").
_SHRUG_LEAD = re.compile(
    rf"^(?:(?:hmm+|um+|well|honestly|tbh|really|la verdad|pues|{LAUGHS})[\s,.!]+)*"
    rf"(?:(?:(?!no (?:lo )?se\b)(?:{SHRUGS})|no (?:lo )?se(?=\s*(?:[,.!]|$|{LAUGHS}))|"  # not "no se pudo"
    r"(?:nothing|nada)(?: (?:really|special|much|in particular|en especial|especial)|"
    r" (?:really )?helped| me ayud[oó]|(?=\s*(?:[,.!]|$))))"
    rf"\b[\s,.!]*(?:(?:honestly|tbh|really|la verdad|{LAUGHS})\b[\s,.!]*)*)+"
)


def after_a_shrug(text: str) -> str:
    """What a message says after the shrug it opens with, in its own words ("idk just did it" → "just did
    it", "no sé, solo lo hice" → "solo lo hice", "idk" → ""); the whole message when it opens with none."""
    lead = _SHRUG_LEAD.match(plain(text))
    if lead is None:
        return _clean(text)
    return _clean(" ".join(text.split()[len(lead[0].split()) :]))


def what_helped(text: str) -> str:
    """The motivator in an answer to "what helped?": what it says helped, or its own words after a shrug."""
    return motivator_in(text) or after_a_shrug(text)


# The coach's own proposal of a time ("How about 7pm — would that work?", "¿Qué tal a las 7pm?") and
# its own question for one: a yes, or another time, answers them.
_PROPOSED = re.compile(r"(?:How about|Qué tal a las|Que dirais-tu de) (\d{1,2}(?::\d{2})?\s*[ap]m)\b")
_ASKED_TIME = re.compile(
    r"What time would suit you better|A qué hora te va mejor|À quelle heure plutôt|move it to another time|"
    r"text me the new time|dime la nueva hora|envoie-moi la nouvelle heure",
    re.I,
)


def proposed_time(last_reply: str) -> str:
    """The time the coach proposed in ``last_reply`` ("7pm"), or ""."""
    match = _PROPOSED.search(last_reply)
    return match[1] if match else ""


def asked_for_a_time(last_reply: str) -> bool:
    return bool(_ASKED_TIME.search(last_reply) or proposed_time(last_reply))


_ENGLISH_DAYS = (
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
    "august september october november december"
)
_DAY_WORDS: dict[Language, dict[str, str]] = {
    "es": dict(
        zip(
            _ENGLISH_DAYS.split(),
            [
                "lunes",
                "martes",
                "miércoles",
                "jueves",
                "viernes",
                "sábado",
                "domingo",
                "enero",
                "febrero",
                "marzo",
                "abril",
                "mayo",
                "junio",
                "julio",
                "agosto",
                "septiembre",
                "octubre",
                "noviembre",
                "diciembre",
            ],
            strict=True,
        )
    ),
    "fr": dict(
        zip(
            _ENGLISH_DAYS.split(),
            [
                "lundi",
                "mardi",
                "mercredi",
                "jeudi",
                "vendredi",
                "samedi",
                "dimanche",
                "janvier",
                "février",
                "mars",
                "avril",
                "mai",
                "juin",
                "juillet",
                "août",
                "septembre",
                "octobre",
                "novembre",
                "décembre",
            ],
            strict=True,
        )
    ),
}


def local_day(day: str, lang: Language) -> str:
    """ "Monday 09 March" in ``lang``: "lunes 09 marzo", "lundi 09 mars" (the scheduler's own words)."""
    names = _DAY_WORDS.get(lang)
    if not names:
        return day
    return " ".join(names.get(word.lower(), word) for word in day.split())


# The coach's own offer of a pause while the participant is away: a yes to it is the pause it names.
OFFERED_PAUSE = ("while you're away", "mientras no estás", "pendant ton absence")
_WEEKDAY_NAMES: dict[Language, tuple[str, ...]] = {
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "es": ("lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"),
    "fr": ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"),
}


def pause_length(lang: Language, days: int | None, weekday: int | None) -> str:
    """ "for 3 days", "hasta el lunes", "jusqu'à lundi": the length of a pause as the offer says it (and
    as ``pause_request`` reads it back)."""
    if weekday is not None:
        day = _WEEKDAY_NAMES[lang][weekday]
        return {"en": f"until {day}", "es": f"hasta el {day}", "fr": f"jusqu'à {day}"}[lang]
    count = days or 1
    unit = {"en": ("day", "days"), "es": ("día", "días"), "fr": ("jour", "jours")}[lang][count != 1]
    return {"en": f"for {count} {unit}", "es": f"{count} {unit}", "fr": f"{count} {unit}"}[lang]


# After "what helped?": an answer that opens by taking the done back, or one about next time, is no motivator.
_OPENS_WITH_A_MISS = re.compile(
    r"^\W*(?:no|nope|nah|not really|actually no|well no|i didn'?t|didn'?t|i did not|no lo hice|no pude|hoy no|"
    r"en realidad no|non|pas fait)\b",
    re.I,
)
_NEXT_TIME = re.compile(
    r"\b(?:i'?ll|i will|gonna|going to|next time|tomorrow|from now on|voy a|la pr[oó]xima|ma[nñ]ana|"
    r"je vais|demain|la prochaine fois)\b",
    re.I,
)
# A thanks, which answers no question ("thank u so much" after "what helped?").
_THANKS_ONLY = re.compile(r"(?:thanks?|thank (?:you|u)|thx|ty|tysm|gracias|merci)\b[\s\w]{0,12}$", re.I)


def answers_what_helped(text: str, outcome: Outcome) -> bool:
    """The message answers "what helped?": something said, after any shrug ("idk just did it"), not a miss it
    opens with ("leaving the notebook on my pillow so I couldn't miss it" says how), a plan for next time, a
    question or request, a yes, a greeting, a complaint or a thanks."""
    said = after_a_shrug(text)
    return (
        _substantive(said)
        and (outcome != "not_done" or not _OPENS_WITH_A_MISS.match(said))
        and not _NEXT_TIME.search(said)
        and "?" not in text  # a question or a request is no answer to what helped
        and not asks_for_another_time(text)
        and read_message(said).kind not in ("yes", "greeting", "later", "complaint")  # "thank u!!"
        and not _THANKS_ONLY.match(said)
    )


# A question said after the answer, in its own sentence ("El buen tiempo. Oye, ¿cuenta si lo hago en dos ratos?").
_QUESTION_SENTENCE = re.compile(r"(?:(?<=[.!?])|^)\s*[^.!?]*(?:\?+|¿[^.!]*)\s*$")


def what_helped_and_asked(text: str, outcome: Outcome) -> tuple[str, str] | None:
    """An answer to "what helped?", with any question asked after it: (the motivator, the question, or "");
    ``None`` when the message answers nothing, or what follows is a request ("… can we move it to 7?")."""
    asked = _QUESTION_SENTENCE.search(text)
    question = asked[0].strip() if asked and asked.start() > 0 else ""
    statement = text[: asked.start()] if question and asked else text
    if question and (asks_for_another_time(question) or asks_when(question) or read_message(question).request):
        return None
    return (_words(what_helped(statement), 15), question) if answers_what_helped(statement, outcome) else None
