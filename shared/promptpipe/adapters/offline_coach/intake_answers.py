"""Intake answers in a message: the habit domain, the motivation, the anchor and the time, asked
for or volunteered, read from one message together (a time takes its words away from the anchor, a
reason's clause from the habit), in three languages. The habit and its reason are read by
``intake_reasons``, the routine by ``intake_routines``; this module reads the time and puts the four
together."""

from __future__ import annotations

import re

from promptpipe.adapters.offline_coach.intake_reasons import (
    _CHANGE_OF_MIND,
    _DOMAIN_TAIL,
    _HEDGE_AFTER,
    _LEFT_FILLER,
    _WANT,
    _as_motivation,
    _habit_changed,
    _read_motivation,
    _reason_after_the_habit,
    parse_domain,
    parse_motivation,
)
from promptpipe.adapters.offline_coach.intake_routines import (
    _CLAUSE,
    _EVENING_ROUTINE,
    _MORNING_ROUTINE,
    _ROUTINE_WORDS,
    _as_anchor,
    _routine_beside_time,
    parse_anchor,
)
from promptpipe.adapters.offline_coach.reading import accepts
from promptpipe.adapters.offline_coach.spoken import with_clause_breaks
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
    is_acknowledgement,
)
from promptpipe.adapters.offline_coach.times import (
    parse_asked_time,
    parse_clock_time,
    parse_vague_time,
    same_half_of_day,
    spoken_form,
    without_times,
)
from promptpipe.adapters.offline_coach.vocabulary import MAYBE, MEALS_FR, OPINION
from promptpipe.rules.word_patterns import any_word

# Habits done at bedtime by their nature, and the hours that, said bare, mean the evening for them.
_NIGHT_HABITS: tuple[tuple[re.Pattern[str], range], ...] = (
    (re.compile(r"\b(?:sleep\w*|bed\w*|wind(?:ing)? down|dormir|sue[nñ]o)\b", re.I), range(9, 12)),
    # flossing is a before-bed habit (dentists advise it at night): 8:45 for it is 8:45pm
    (re.compile(r"\b(?:floss\w*|hilo dental|fil dentaire)\b", re.I), range(8, 12)),
)


_SAYS_MORNING = re.compile(
    r"[ap]\.?m\b|morning|ma[nñ]ana|\b0\d:|breakfast|wak(?:e|ing)|desayun|despiert|matin|r[ée]veil", re.I
)


def _late_for_sleep(time: str | None, text: str, domain: str) -> str | None:
    """A sleep habit at "10:30", or flossing at "8:45", with nothing saying morning is at night (9 to 11
    for sleep: 7:15 may be either)."""
    hours = next((h for pattern, h in _NIGHT_HABITS if pattern.search(domain)), None)
    if time is None or hours is None or _SAYS_MORNING.search(text):
        return time
    hour, minute = (int(part) for part in time.split(":"))
    return f"{hour + 12:02d}:{minute:02d}" if hour in hours else time


# The connectives that open a routine's clause ("after", "when", "después", "quand"), read after a time.
_ROUTINE_OPENS_EN = "after|before|when|once|while|as soon as"
_ROUTINE_OPENS_ES = r"despu[eé]s|antes|cuando"
_ROUTINE_OPENS_FR = r"apr[eè]s|avant|quand"
_ROUTINE_OPENS = f"{_ROUTINE_OPENS_EN}|{_ROUTINE_OPENS_ES}|{_ROUTINE_OPENS_FR}"
# A bare hour that opens the message, followed by the routine it belongs to (also "as soon as" in Spanish
# and French: "apenas", "en cuanto", "dès que").
_HOUR_THEN_ROUTINE = re.compile(
    r"^\W*(?:ok(?:ay)?,?\s+|maybe\s+|probably\s+)?(\d{1,2})\s+(?=(?:right |just )?"
    rf"(?:{_ROUTINE_OPENS_EN}|{_ROUTINE_OPENS_ES}|apenas|en cuanto|{_ROUTINE_OPENS_FR}|d[eè]s que)\b)",
    re.I,
)
_OPENS_WITH_TIME = re.compile(r"^\W*\d{1,2}(?:[:.h][0-5]\d|\s*[ap]\.?m\b)", re.I)
# A clock time that closes the message on its own ("my dentist yelled at me 10pm", "clear my head 5:45ish"),
# not the end of a reason ("I crash by 11", "I scroll til 1am"): an answer to when.
_CLOCK = r"\d{1,2}(?:[:.h][0-5]\d\s*(?:[ap]\.?m?\b|ish)?|\s*(?:[ap]\.?m?\b|ish\b))"
# The words that make a time part of a reason ("by 11", "until 1am", "hasta las 12", "jusqu'à minuit").
_UNTIL_EN = ("by", "until", "til", "till", "since")
_UNTIL_ES_FR = ("hasta", "desde", "jusqu'[àa]")
# A closing time is no answer after one of them, nor after "past", "from", "to" ("from 10pm").
_NOT_AFTER = "".join(rf"(?<!\b{word} )" for word in (*_UNTIL_EN, "past", "from", "to", *_UNTIL_ES_FR))
_CLOSES_WITH_TIME = re.compile(rf"{_NOT_AFTER}\b{_CLOCK}\W*$", re.I)
_TIME_IN_A_REASON = re.compile(r"\b(?:" + "|".join((*_UNTIL_EN, *_UNTIL_ES_FR)) + r")\s+\d", re.I)
# A clock time right before its routine ("7:15ish after my shower", "10pm when I get into bed").
_TIME_BESIDE_ROUTINE = re.compile(rf"\b{_CLOCK}\s+(?:right |just )?(?:{_ROUTINE_OPENS})\b", re.I)
# A clock time said with its preposition ("at 6", "a las 6 y media", "à 9:00"): an answer to when.
_AT_CLOCK = re.compile(r"\b(?:at|around|about|@|[àa]|vers)\s*\d", re.I)


def _span_removed(text: str, match: re.Match[str] | None) -> str:
    if match is None:
        return text
    return text[: match.start()] + " , " + text[match.end() :]


_HEDGED = re.compile(
    rf"^\W*(?:(?:um+|uh+|hmm+|{OPINION}|{MAYBE}|like|so|quiz[aá]s?|tal vez|creo que|pues|"
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


# A meal said beside the habit with its own preposition ("walk 10 min at lunch", "leer durante la cena",
# "méditer au petit-déjeuner"): the routine the prompt follows.
_MEAL_MOMENT = re.compile(
    r"\b(?:at|during|with|over) (?:my |the )?(?:lunch|breakfast|dinner|supper)(?: ?time| ?break)?\b"
    r"|\b(?:en|durante|con) (?:el|la|mi) (?:desayuno|almuerzo|comida|cena)\b"
    rf"|\b(?:au|pendant le) (?:{MEALS_FR})\b",
    re.I,
)


def _saved_half_kept(time: str | None, saved: str, said: str) -> str | None:
    """The hour already saved, said again without its half ("with my first coffee, which is at 1", after
    1pm), keeps the saved half; any other time stands as read."""
    if not time or not saved or time == saved:
        return time
    same_face = (int(time[:2]) - int(saved[:2])) % 12 == 0 and time[3:] == saved[3:]
    return same_half_of_day(time, saved, said) if same_face else time


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
    text = with_clause_breaks(text)  # "7pm um after dinner", "me relaja eh a las 5": where one answer ends
    text = _FILLER.sub(lambda m: " " * len(m[0]), text)  # "ok so i want to…": no "so i" reason
    motivation, m_match = _read_motivation(text, known, expected)
    rest = _span_removed(text, m_match)
    anchor, a_match = parse_anchor(rest, soft=not known.get(ANCHOR))
    if not anchor and not known.get(ANCHOR) and expected == DOMAIN:  # "walk 10 min at lunch": the meal is when
        a_match = _MEAL_MOMENT.search(rest)
        anchor = _clean(a_match[0]) if a_match else ""
    # What is known of the moment tells 10:30 at night from the morning ("sleep", "before bed").
    hint = " ".join(v for v in (known.get(ANCHOR), anchor) if v)
    hint += " morning" if _MORNING_ROUTINE.search(hint) else ""  # "6:30ish with my first cup of coffee"
    hint += " evening" if _EVENING_ROUTINE.search(hint) else ""  # "al llegar del trabajo como a las 7"
    time = _late_for_sleep(parse_clock_time(rest, hint), f"{rest} {hint}", known.get(DOMAIN, ""))
    if time is None and expected == TIME:  # "morning 7", "7 is fine coffee obvs"
        time = _asked_time_in(rest)
    time = _saved_half_kept(time, known.get(TIME, ""), rest)
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
        and not _time_apart_from_the_reason(rest, m_match)
    )
    # A time said inside the reason ("I crash by 11"): the reply is the reason; a routine alone is not.
    telling_why = telling_why and (time is not None or parse_vague_time(rest) is not None or not anchor)
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
    motivation = _HEDGE_AFTER.sub("", motivation) if motivation else motivation
    only_a_time = motivation and len(_WHEN_WORDS.sub(" ", without_times(motivation)).split()) <= 1
    if only_a_time and parse_asked_time(motivation):
        motivation = ""  # "mejor 10" beside the habit: a time, never the reason
    for name, value in ((DOMAIN, domain), (MOTIVATION, motivation), (TIME, time or ""), (ANCHOR, anchor)):
        if value and value != known.get(name):
            learned[name] = value
    # Only a reply that said nothing else (bar a passing time-of-day word) is read as the answer.
    incidental = (
        not learned
        or (set(learned) == {TIME} and parse_clock_time(rest) is None)
        or telling_why
        or (set(learned) == {MOTIVATION} and expected == DOMAIN)  # the habit before its reason
        # "leer antes de dormir (para desconectar)": the habit beside its moment and its reason
        or (expected == DOMAIN and ANCHOR in learned and set(learned) <= {ANCHOR, MOTIVATION})
    )
    if expected and incidental and expected not in learned and not known.get(expected) and _substantive(text):
        guess = _answer_for(expected, text, domain_text)
        if guess:
            learned[expected] = guess
    elif learned:
        learned.update(_read_the_rest(text, rest, a_match, known=known, learned=learned, expected=expected))
    return learned


def _left_over(text: str, *spans: re.Match[str] | None) -> str:
    """``text`` without the given spans, its times and its filler: what it says beside the facts read."""
    for span in sorted((m for m in spans if m is not None), key=lambda m: m.start(), reverse=True):
        text = text[: span.start()] + " , " + text[span.end() :]
    left = _LEFT_FILLER.sub(" ", without_times(text))
    left = re.sub(r"\s*,(?:\s*,)+", ",", re.sub(r"\s+", " ", left))
    return _clean(_FILLER.sub("", _clean(left)))


def _asked_time_in(clause: str) -> str | None:
    """A time given in answer to "what time?" in a clause, past its filler ("7 is fine coffee obvs")."""
    return parse_asked_time(clause) or parse_asked_time(_LEFT_FILLER.sub(" ", clause))


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
    read_no_time = parse_clock_time(rest) is None and _asked_time_in(rest) is None
    if set(learned) == {TIME} and (read_no_time or _TIME_IN_A_REASON.search(rest)):
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
    beside = next((c for c in _CLAUSE.findall(rest) if parse_clock_time(c) or _asked_time_in(c)), "")
    left = _left_over(beside) if learned.get(TIME) and beside else ""
    if left and not accepts(left) and not known.get(ANCHOR) and ANCHOR not in learned and len(left.split()) <= 8:
        routine = _as_anchor(left)
        first = left.split()[0].lower()
        if routine and (_ROUTINE_WORDS.search(left) or first.endswith("ing")):
            return {ANCHOR: routine}
    return {}


def _time_said_apart(text: str) -> bool:
    """A clock time in a clause of its own ("my neck is killing me. 3pm works"): an answer to when,
    not part of the reason."""
    for clause in _CLAUSE.findall(text):
        # "en la noche mejor 10": the day-part and the preference it comes with are part of the time
        rest = _WHEN_WORDS.sub(" ", _clean(without_times(clause)))
        if parse_clock_time(clause) and len(rest.split()) <= 2:
            return True
    return False


_WHEN_WORDS = re.compile(
    r"\b(?:(?:en|por|de|a) la (?:noche|tarde|ma[ñn]ana)|de noche|in the (?:morning|evening|afternoon)|at night|"
    r"tonight|le (?:soir|matin)|mejor|better|rather|plut[oô]t|m[aá]s bien|like|tipo|como)\b",
    re.I,
)


# The words a time given for the prompt comes with: "and 7am works for the texts", "y a las 8 para los mensajes".
_ABOUT_THE_TEXTS = any_word(
    "and|but|so|y|pero|et|mais|for|para|pour",  # joints
    "the|los|las|les",
    "texts?|texting|messages?|mensajes?|reminders?|recordatorios?|rappels?",  # the prompts themselves
    "is|are|es|est",
    "good|best|bien|mejor|mieux|suits?|me va|me sirve|ok|okay",  # how the time suits
)
# Who does something: a clause with one is a statement (part of what they tell), not a time given apart.
_PERSON = re.compile(r"\b(?:i|i'm|im|i've|my|me|we|yo|mi|je|j'ai|mon|ma)\b", re.I)


def _time_apart_from_the_reason(rest: str, reason: re.Match[str] | None) -> bool:
    """ "for my blood pressure, and 7am works for the texts": the reason read in a clause of its own, and a
    clock time in another clause that tells nothing of the person ("I wake up at 3am" would): when, too."""
    if reason is None or _TIME_IN_A_REASON.search(rest):
        return False
    timed = [c for c in _CLAUSE.findall(rest) if parse_clock_time(c)]
    if len(timed) != 1 or _PERSON.search(timed[0]):
        return False
    beside = _ABOUT_THE_TEXTS.sub(" ", _LEFT_FILLER.sub(" ", without_times(timed[0])))
    return not re.sub(r"\W", "", beside)  # nothing said beside the time but how it suits ("3am wakeups suck" says more)


def _answer_for(expected: str, text: str, domain_text: str) -> str:
    """Read a bare reply as the answer to the question we asked."""
    if text.rstrip().endswith("?") or accepts(text) or is_acknowledgement(text):  # "dale", "ok", "perfect"
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


__all__ = ["names_a_fact", "parse_anchor", "parse_domain", "parse_intake_message", "parse_motivation"]
