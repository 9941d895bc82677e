"""Times of day from what people write ("7:30am", "after dinner", "in the evening"), and said back."""

from __future__ import annotations

import re

from promptpipe.adapters.offline_coach.day_parts import AM_HINT as _AM_HINT
from promptpipe.adapters.offline_coach.day_parts import PM_HINT as _PM_HINT
from promptpipe.adapters.offline_coach.day_parts import START_OF_DAY as _START_OF_DAY
from promptpipe.adapters.offline_coach.day_parts import TARDE as _TARDE
from promptpipe.adapters.offline_coach.time_forms import CORRECTION, HOUR_LEAD
from promptpipe.adapters.offline_coach.time_forms import COUNTED as _COUNTED
from promptpipe.adapters.offline_coach.time_forms import spoken_times as _spoken
from promptpipe.rules.half_of_day import (
    plausible,
)
from promptpipe.rules.word_patterns import any_word

_RANGE = re.compile(
    r"\b(\d{1,2})(?:[:.]([0-5]\d))?\s*(?:-|–|to)\s*\d{1,2}(?:[:.][0-5]\d)?\s*(a\.?m\.?|p\.?m\.?)(?![a-z])", re.I
)
_AMPM = re.compile(r"\b(\d{1,2})(?:[:.]([0-5]\d))?\s*(a\.?m\.?|p\.?m\.?)(?![a-z])", re.I)
_HHMM = re.compile(r"\b([01]?\d|2[0-3])[:h]([0-5]\d)\b", re.I)
_AT_HOUR = re.compile(
    r"\b(?:at|around|about|by|for)\s+(\d{1,2})(?![\d:]|\.\d)(?:\s*o'?clock)?\b(?!\s*(?:min|hour|day|week|month|time|x\b))",
    re.I,
)
# A clock time as a limit or a refusal says it: "8", "8:30", "8.30pm".
_LIMIT_TIME = r"\d{1,2}(?:[:.][0-5]\d)?(?:\s*[ap]\.?m\.?)?"
_A_LIMIT = re.compile(
    rf"\b(?:no|not|never) (?:later|earlier|sooner) than (?:at )?{_LIMIT_TIME}|"
    r"\bno m[aá]s tarde de (?:las )?\d{1,2}(?:[:.][0-5]\d)?|\bpas plus tard que \d{1,2}(?:h[0-5]?\d?)?",
    re.I,
)
_LONE_HOUR = re.compile(r"[\W_]*\d{1,2}[\W_]*")  # "hmm 6. no make that 6:15": the hour corrected
_NOT_THIS_TIME = re.compile(rf"\bnot (?:at )?{_LIMIT_TIME}", re.I)
# A time refused where it is said, in any language: "a las 6 de la tarde, no al mediodía", "pas à midi".
_REFUSED_AT = re.compile(rf"\b(?:no|pas|never|nunca|jamais) (?:at|[àa]) {_LIMIT_TIME}", re.I)
# A time judged too early or too late where it is said ("9:30 es muy temprano", "6 is too early", "8h c'est
# trop tôt"): refused, when another time is left to be the answer.
_TOO_EARLY_OR_LATE = re.compile(
    rf"(?:\b(?:las|the|a las|at)\s+)?\b{_LIMIT_TIME}\s*(?:(?:is|'s|es|est|c'est|seria|would be)\s+)?"
    r"(?:(?:way|muy|demasiado|bien|un peu|trop|too|super|tan|a bit|kinda|un poco)\s+)+"
    r"(?:early|late|soon|temprano|tarde|pronto|tot|tôt|tard)\b",
    re.I,
)
# Where a second thought starts: "8:30? maybe 8:45", "10pm wait no 10:45", "mejor a las 10", "enfin plutôt 10h".
# A hesitation alone ("7 or 8", "7h ou un peu après", "bueno, a las 7", "no sé", "no later than 8") starts none:
# the first time stands unless a word of correction goes with it ("7 o mejor 7:30", "ou plutôt 7h30").
_SECOND_THOUGHT = re.compile(
    r"\b(?:maybe|instead of|no(?!\s+(?:s[eé]|idea|clue|sure|later|earlier|sooner|more|"
    rf"less|m[aá]s|menos|antes|plus|tard)\b)|pardon|{CORRECTION})\b",
    re.I,
)
# A bare hour opening a second thought ("… actually 10 is better"): an hour, not a count ("… no 2 pages").
_LEAD_HOUR = re.compile(
    r"^\W*(\d{1,2})\b(?![:.\d])(?!\s*(?:min\w*|hours?|hrs?|days?|weeks?|times?|x\b|%|[ap]\.?m))" + _COUNTED, re.I
)
# The half of the day said outright: am/pm, a 24-hour form ("19:30", "08:00"), a day-part word.
_MERIDIEM_SAID = re.compile(r"\d\s*[ap]\.?m\b|\b(?:0\d|1[3-9]|2[0-3])[:h]\d", re.I)
_NOON_WORD = re.compile(r"\b(?:(?:at|around|about|by|like|al|a|[àa]|vers|tipo) )?(?:noon|midday|mediod[ií]a)\b", re.I)
_NOON = re.compile(r"^\W*(?:at |around |al |a |[àa] |vers )?(?:noon|midday|mediod[ií]a|midi)(?:\s*-?\s*ish)?\W*$", re.I)
# A break at work, said for when ("on my coffee break", "en mi descanso", "pendant la pause café"): mid-morning.
_WORK_BREAK = (
    r"\b(?:coffee|tea|morning) break\b|\b(?:on|during|at) (?:my|the|our) (?:work )?break\b|"
    r"\b(?:mi|el|del) (?:descanso|receso|break)\b|\bpause[- ]caf[ée]\b"
)
_AT_THE_MEAL_ES = r"(?:a la hora de(?:l| la)?|en (?:la|el)|durante (?:la|el)) "
_AT_THE_MEAL_FR = r"(?:[àa] l'heure du|\bau|\bpendant le) "
_VAGUE_TIMES: tuple[tuple[str, str], ...] = (
    (_START_OF_DAY, "07:00"),
    (r"\bmornings?\b|\bbreakfast\b|\bwak(?:e|ing) up\b", "08:00"),
    (r"\bafter lunch\b", "13:00"),
    (r"\bnoon\b|\bmidday\b|\blunch(?:time)?\b", "12:00"),
    (r"\bafternoons?\b", "15:00"),
    (r"\bevenings?\b|\btonight\b", "19:00"),
    (r"\bafter work\b", "18:00"),
    (r"\bafter dinner\b", "20:00"),
    (r"\bdinner\b", "19:00"),
    (r"\bnights?\b|\bbed ?time\b|\bbefore bed\b|\bbefore sleep\b", "21:00"),
    # Spanish and French day-parts ("mañana" alone is also "tomorrow": only with its article)
    (r"\b(?:por|en|de|a) la ma[ñn]ana\b|\blas ma[ñn]anas\b|\ble matin\b|\bdu matin\b", "08:00"),
    (r"\bdespu[eé]s de (?:comer|almorzar)\b|\bdespu[eé]s del almuerzo\b", "15:00"),
    (r"\b(?:al |a )?mediod[ií]a\b|\ble midi\b", "12:00"),
    (r"\b(?:por|en|de|a) la tarde\b|\blas tardes\b|\bl'apr[eè]s-midi\b", "15:00"),
    (r"\bantes de (?:dormir|acostarme|ir a la cama)\b|\bavant de (?:dormir|me coucher)\b", "21:00"),
    (r"\b(?:por|en|de|a) la noche\b|\blas noches\b|\ble soir\b|\bdu soir\b", "21:00"),
    # a meal said as the moment ("a la hora de comer", "en la cena", "à l'heure du déjeuner", "au petit-déj")
    (rf"\b{_AT_THE_MEAL_ES}(?:comida|comer)\b", "14:00"),
    (rf"\b{_AT_THE_MEAL_ES}(?:almuerzo|almorzar)\b", "12:30"),
    (rf"\b{_AT_THE_MEAL_ES}(?:cena|cenar)\b", "19:00"),
    (rf"\b{_AT_THE_MEAL_ES}(?:desayuno|desayunar)\b|{_AT_THE_MEAL_FR}petit[- ]d[ée]j\w*", "08:00"),
    (rf"{_AT_THE_MEAL_FR}d[ée]j(?:euner)?\b", "12:30"),
    (rf"{_AT_THE_MEAL_FR}d[îi]ner\b", "19:00"),
    (_WORK_BREAK, "10:00"),  # last: "on my lunch break" is lunch
)
# A vague word counts as a time only when phrased like one ("in the morning", "every evening")
# unless we just asked for a time or an anchor.
_TIME_CONTEXT = re.compile(
    r"\b(?:in the|every|each|at|around|by|this|during the|mid|late|early|todas|todos|cada|por|en|tous|chaque)"
    r"(?:\s+(?:las|los|la|el|les|le))?\s+$",
    re.I,
)


def _hhmm(hour: int, minute: int) -> str:
    return f"{hour % 24:02d}:{minute:02d}"


def parse_clock_time(text: str, hint: str = "") -> str | None:
    """An explicit time of day ("8am", "7:30 pm", "19:00", "at 7", "9ish", "7:15ish", "7.30", "half 8",
    "quarter to 8", "19h", "7 in the evening", "a las 9 de la noche") as HH:MM (24-hour); of several
    ("8:30? maybe 8:45"), the last one said. ``hint``: what else is known of the moment (the habit,
    its routine: "before bed") to tell 10:30 at night from the morning when the message does not."""
    if _NOON.match(text):
        return "12:00"
    text = _noon_set_aside(text)
    text = _REFUSED_AT.sub(" ", _NOT_THIS_TIME.sub(" ", _spoken(text)))  # "make it 8 not 8:30": refused, no answer
    bounded = _A_LIMIT.sub(" ", text)  # "7:30, no later than 8pm tho": the limit is no second answer
    text = bounded if bounded != text and _parse_clock(bounded) else text
    judged = _TOO_EARLY_OR_LATE.sub(" ", text)  # "mejor a las 10, 9:30 es muy temprano": 10 is the answer
    text = judged if judged != text and _parse_clock(judged) else text
    pieces = _SECOND_THOUGHT.split(text)
    for index in range(len(pieces) - 1, 0, -1):
        before = " ".join(pieces[:index])
        corrected = _parse_clock(before, hint) or parse_vague_time(before, loose=True) or _LONE_HOUR.fullmatch(before)
        piece = _LEAD_HOUR.sub(r"at \1", pieces[index], count=1) if corrected else pieces[index]
        if _parse_clock(piece) is None:
            continue
        if _says_half_of_day(piece):
            return _parse_clock(piece, hint)
        if isinstance(corrected, str) and _says_half_of_day(before):
            # a correction keeps the half of the day the answer it corrects said ("9pm... no, 9:45")
            return plausible(same_half_of_day(_parse_clock(piece), corrected, "") or "")
        # else the whole message's words give it ("like 8 no actually 8:30 bc the kids are asleep")
        return _parse_clock(f"{piece} {text}", hint)
    return _parse_clock(text, hint)


def _noon_set_aside(text: str) -> str:
    """``text`` without its "noon" when it gives an exact time too ("al mediodía, en mi break de las 12:30",
    "se puede poner a mediodía? a las 2 y cuarto"): noon only says roughly when."""
    beside_noon = _NOON_WORD.sub(" ", text)
    return beside_noon if beside_noon != text and _parse_clock(_spoken(beside_noon)) else text


def _says_half_of_day(text: str) -> bool:
    """The words say which half of the day: am/pm, a 24-hour form, a day-part word ("du soir", "tonight")."""
    return bool(_MERIDIEM_SAID.search(text) or _PM_HINT.search(text) or _AM_HINT.search(text))


# A clock time that says its half itself ("8pm", "7 a.m.", "19:30"): an earlier answer a bare change keeps.
_CLOCK_PM = re.compile(r"\d\s*p\.?m\b|\b(?:1[3-9]|2[0-3])[:h][0-5]\d", re.I)
_CLOCK_AM = re.compile(r"\d\s*a\.?m\b", re.I)


def _day_part(words: str) -> str | None:
    """ "pm" or "am" when ``words`` tell one half of the day and not the other."""
    evening = bool(_PM_HINT.search(words) or _EVENING_HABIT.search(words) or _CLOCK_PM.search(words))
    morning = bool(_AM_HINT.search(words) or _MORNING_HABIT.search(words) or _CLOCK_AM.search(words))
    return "pm" if evening and not morning else "am" if morning and not evening else None


# Habits whose nature is the evening, beyond the day-part words ("winding down", "sueño").
_EVENING_HABIT = any_word("wind(?:ing)? down", "unwind\\w*", "sue[nñ]o", "insomni\\w*", "dodo")
# Routines whose nature is the morning, a hint too weak for the small hours ("2 with my coffee" is 2pm).
_MORNING_HABIT = any_word("coffee", "caf[eé]", "cafecito", "cafesito", "tinto")
_SLEEP_REASON = any_word("sleep\\w*", "asleep", "bed(?:time)?", "dormir", "duerm\\w*", "sue[nñ]o", "insomni\\w*")
# A French hour in its 24-hour clock ("10h", "7h30"): only a day-part word, not a habit, makes it 22h.
_FRENCH_HOUR = re.compile(r"\b\d{1,2}h(?:[0-5]\d)?\b", re.I)


def settle_half_of_day(time: str, said: str, *, earlier: str = "", habit: str = "", reason: str = "") -> str:
    """``time``, read from ``said``, in the half of the day the rest of what is known says when ``said``
    leaves it open: the participant's ``earlier`` words about the time ("stretch at night", then "around
    10"), then the ``habit``'s own nature (winding down: the evening; a morning run, breakfast: the
    morning), or a ``reason`` that is sleep ("para dormir mejor"; not "headaches in the afternoon"). A weak
    hint never makes a night of the morning's 7 nor the small hours of the afternoon."""
    hour, minute = (int(part) for part in time.split(":"))
    spoken = _spoken(said)
    if hour in (0, 12) or _MERIDIEM_SAID.search(spoken):
        return time
    base = hour % 12
    if _says_half_of_day(spoken):  # its own words, which a reason read apart may have taken from the time
        earlier, habit, reason = spoken, "", ""
    habit = "" if _FRENCH_HOUR.search(said) else f"{habit} {reason if _SLEEP_REASON.search(reason) else ''} {said}"
    strong, weak = (earlier, range(1, 12), range(5, 12)), (habit, range(8, 12), range(4, 12))
    for words, evening_hours, morning_hours in (strong, weak):
        part = _day_part(words) if words else None
        if part == "pm" and base in evening_hours:
            return _hhmm(base + 12, minute)
        if part == "am" and base in morning_hours:
            return _hhmm(base, minute)
    return time


def beside_a_suggestion(time: str, suggested: str, said: str, *, habit: str = "", reason: str = "") -> str:
    """``time``, read from ``said`` in place of the coach's suggested time ("How about 8am?"): in the half
    of the day its own words say ("8:30 después de cenar"), else the one the habit's nature says ("11:15"
    to wind down is 23:15), else the suggestion's ("earlier, like 6:45"), never the small hours ("after
    lunch at 1" is 13:00)."""
    said = _TOO_EARLY_OR_LATE.sub(" ", said)  # "…, 9:30 es muy temprano": "temprano" judges 9:30, not the answer
    if _says_half_of_day(_spoken(said)):
        return time
    hour, minute = (int(part) for part in time.split(":"))
    morning = _hhmm(hour % 12, minute)
    evening = settle_half_of_day(morning, said, habit=habit, reason=reason)
    if evening != morning:
        return evening
    if _day_part(f"{habit} {said}") == "am":  # "7:10 with my coffee" to "How about 7pm?"
        return morning
    return plausible(same_half_of_day(time, suggested, said) or time)


# A day-part said in a request ("to the evening", "para la tarde", "le soir"), as against a routine.
_DAY_PART_WORD = re.compile(
    r"\b(?:mornings?|evenings?|nights?|afternoons?|tonight|(?:de|en|por|para|a) la (?:ma[ñn]ana|tarde|noche)|"
    rf"las (?:ma[ñn]anas|tardes|noches)|noches?|{_TARDE}|soirs?|matin|nuit|apr[eè]s-midi)\b",
    re.I,
)
# An hour with its own day-part ("a las 7 de la mañana", "8h du matin"): read with it, whatever else is said.
_HOUR_WITH_DAY_PART = re.compile(
    r"\d(?:[:h.][0-5]\d)?\s*h?\s+(?:de la (?:ma[ñn]ana|tarde|noche)|du (?:matin|soir)|in the (?:morning|evening|"
    r"afternoon)|at night|tonight|(?:le|ce) (?:matin|soir))\b",
    re.I,
)
_TIME_PHRASE = re.compile(
    rf"(?:\b(?:{HOUR_LEAD}|for|vers|[àa]|sur|sobre|hacia|como|tipo|de las?|approx\w*)\s+)*(?:~\s*)?"
    r"\b\d{1,2}(?:[:h.][0-5]\d|h)?(?![\d:])\s*(?:[ap]\.?m\.?(?![a-z]))?"
    r"(?:\s*(?:-?\s*ish|or so|o'?clock|de la (?:ma[ñn]ana|tarde|noche)|du (?:matin|soir)|"
    r"in the (?:morning|evening|afternoon)|at night|tonight)\b)?",
    re.I,
)


# The words of a correction between the time taken back and the one that replaces it ("8 wait make that
# 8:30", "7pm, no sorry 7:30", "a las 8, no, mejor 8:30"): part of the time said, not a reason or a routine.
_CORRECTION_BETWEEN_TIMES = re.compile(rf",(?:[\s,.!…?:]*\b(?:no|{CORRECTION})\b)+[\s,.!…?:]*(?=,)", re.I)


def without_times(text: str) -> str:
    """``text`` with its clock times taken out ("on my lunch break at work around 12:30" -> "on my
    lunch break at work , "), and the words correcting one time into another ("8 wait make that 8:30"),
    so what else the sentence says (a routine) can be read."""
    return re.sub(r"\s+", " ", _CORRECTION_BETWEEN_TIMES.sub(", ", _TIME_PHRASE.sub(" , ", _spoken(text)))).strip()


def spoken_form(text: str) -> str:
    """``text`` with its times rewritten to the forms the patterns read ("a las 6 y media" -> "at 6:30",
    "à neuf heures" -> "à 9:00"): to tell whether a sentence says when, as well as what."""
    return _spoken(text)


def parse_asked_time(text: str) -> str | None:
    """A time given in answer to "what time?": as ``parse_clock_time``, and a lone hour in a short
    reply ("morning 7", "6") too."""
    found = parse_clock_time(text)
    if found is None and len(text.split()) <= 4:
        found = parse_clock_time(re.sub(r"\b(\d{1,2})\b(?![:.]\d)", r"at \1", text, count=1))
    if found is None:  # "mejor 10 q ya se durmieron": a lone hour, then why
        head = _LONE_HOUR_THEN_WHY.match(text)
        found = parse_clock_time(f"at {head[1]}") if head else None
    return found


# A lone hour with only a word of preference around it, then a reason ("mejor 10 q ya se durmieron", "10
# when the kids are asleep", "ok pero 10 porque salgo tarde"); not "i'll do 10 when i wake up".
_LONE_HOUR_THEN_WHY = re.compile(
    r"^\W*(?:(?:mejor|better|like|tipo|como|mas bien|más bien|ok|okay|pero|but|no|nah|nel|si|sí|yes|maybe|quizas|"
    r"quizás|plutot|plutôt|then|entonces|mm+|hm+|make it|a las|at|around)\W+)*(\d{1,2})\s*,?\s+"
    r"(?:q|que|porque|xq|pq|because|bc|cuz|cause|when|cuando|since|ya que|parce que|car|quand)\b",
    re.I,
)


def _parse_clock(text: str, hint: str = "") -> str | None:
    match = _RANGE.search(text) or _AMPM.search(text)  # a range: its start ("8-9am" → 08:00)
    if match:
        hour, minute = int(match[1]), int(match[2] or 0)
        if not 1 <= hour <= 12:
            return None
        is_pm = match[3].lower().startswith("p")
        return _hhmm(hour % 12 + (12 if is_pm else 0), minute)
    match = _HHMM.search(text)
    if match:
        return _hhmm(_own_half_of_day(match, text) or _guess_half_of_day(int(match[1]), text, hint), int(match[2]))
    match = _AT_HOUR.search(text)
    if match and int(match[1]) <= 23:
        return _hhmm(_own_half_of_day(match, text) or _guess_half_of_day(int(match[1]), text, hint), 0)
    bare = re.fullmatch(r"\s*(\d{1,2})\s*", text)
    if bare and int(bare[1]) <= 23:
        return _hhmm(_guess_half_of_day(int(bare[1]), text, hint), 0)
    return None


# A day-part said right after the hour it belongs to ("7 de la noche", "8:30 in the morning"): it wins over
# a day-part elsewhere in the message ("a las 7 de la noche, en la mañana voy con prisa" is 19:00).
_OWN_DAY_PART = re.compile(
    r"\s*(?:(?P<am>in the morning|this morning|(?:de|en|por) la ma[ñn]ana|du matin|le matin)|"
    r"(?P<pm>in the (?:afternoon|evening)|at night|tonight|this (?:afternoon|evening)|(?:de|en|por) la (?:tarde|noche)|"
    r"du soir|le soir|de l'apr[eè]s-midi))\b",
    re.I,
)


def _own_half_of_day(match: re.Match[str], text: str) -> int | None:
    """The hour of ``match`` in the half of the day said right after it, if one is."""
    hour = int(match[1])
    own = _OWN_DAY_PART.match(text, match.end())
    if own is None or not 1 <= hour <= 11:
        return None
    return hour if own["am"] else hour + 12


def _guess_half_of_day(hour: int, text: str, hint: str = "") -> int:
    """ "at 7" in the evening is 19:00; "at 3" is more likely the afternoon than the night; what the
    message says wins over the ``hint`` (the habit and its routine)."""
    if hour == 0 or hour >= 12:
        return hour
    for words in (text, hint):
        if _PM_HINT.search(words) and not _AM_HINT.search(words):
            return hour + 12
        if _AM_HINT.search(words):
            return hour
    return hour + 12 if hour <= 6 else hour


def parse_vague_time(text: str, *, loose: bool = False) -> str | None:
    """A time-of-day word ("morning" → 08:00, "after lunch" → 13:00, "evening" → 19:00)."""
    for pattern, value in _VAGUE_TIMES:
        for match in re.finditer(pattern, text, re.I):
            before = text[: match.start()]
            if loose or _TIME_CONTEXT.search(before) or re.match(r"(?:after|before)\s", match[0], re.I):
                return value
    return None


def normalise_time(value: str) -> str | None:
    """A stored preferred time as HH:MM, reading legacy forms ("8am", "morning") too."""
    value = value.strip()
    if re.fullmatch(r"([01]?\d|2[0-3]):[0-5]\d", value):
        hours, minutes = value.split(":")
        return _hhmm(int(hours), int(minutes))
    return parse_clock_time(value) or parse_vague_time(value, loose=True)


def friendly_time(hhmm: str) -> str:
    """ "08:00" → "8am", "19:30" → "7:30pm"."""
    try:
        hour, minute = (int(part) for part in hhmm.split(":"))
    except ValueError:
        return hhmm
    suffix = "am" if hour < 12 else "pm"
    hour12 = hour % 12 or 12
    return f"{hour12}{suffix}" if minute == 0 else f"{hour12}:{minute:02d}{suffix}"


# A concrete time to suggest for a vague one (the participant confirms it): the middle of the
# usual window rather than its start ("after work" → 5:30pm, "before bed" → 9:30pm).
_PROPOSALS: tuple[tuple[str, str], ...] = (
    (r"\bafter lunch\b", "13:00"),
    (r"\blunch(?:time)?\b|\balmuerzo\b|\balmorzar\b|(?<!petit )(?<!petit-)\bd[ée]jeuner\b", "12:30"),
    (
        r"\bafter work\b|\bsalir del trabajo\b|\b(?:get|getting) off work\b|\bhome from work\b|\bclock(?:ing)? out\b|"
        r"\b(?:cuando|al) (?:salgo|salir|llego|llegar|vuelvo|volver) (?:del|de la) "
        r"(?:trabajo|oficina|curro|chamba|jale)\b|"
        r"\bdespu[eé]s del (?:trabajo|curro|jale|chamba)\b|\b(?:en )?saliendo del (?:trabajo|curro)\b",
        "17:30",
    ),
    # back home, said as when: "when i get home", "al llegar a casa", "cuando llego a casa"
    (r"\bwhen i get home\b|\bonce i(?:'m| am)? home\b|\b(?:al llegar|cuando llego|cuando vuelvo) a casa\b", "18:00"),
    (r"\bafter dinner\b", "20:00"),
    (
        r"\bbefore bed\b|\bbed ?time\b|\bbefore sleep\b|\bnights?\b|\bnoches?\b|\bantes de (?:dormir|acostarme)\b|"
        r"\bavant de (?:dormir|me coucher)\b",
        "21:30",
    ),
    (r"\bdespu[eé]s de (?:comer|almorzar|la comida)\b", "15:00"),
    # the Spanish midday meal, eaten later than lunch ("a la hora de comer", "en la comida")
    (r"\b(?:la )?comida\b|\bcomer\b", "14:00"),
    (r"\bdinner\b|\bcena\b|\bcenar\b|\bd[îi]ner\b|\bevenings?\b|\btonight\b", "19:00"),
    (r"\bafternoons?\b|\btardes?\b|\bapr[eè]s-midi\b", "15:00"),
    (r"\bsoir\b", "19:00"),
    # the very start of the day: "first thing in the morning", "a primera hora", "à la première heure"
    (_START_OF_DAY, "07:00"),
    (
        r"\bmornings?\b|\bbreakfast\b|\bwak(?:e|ing) up\b|\bma[ñn]anas?\b|\bdesayun\w*|\bpetit[- ]d[ée]j\w*|"
        r"\bmatin\b",
        "08:00",
    ),
    (_WORK_BREAK, "10:00"),
)


def propose_time(text: str) -> str | None:
    """The concrete time to suggest for a vague answer to "what time?", if it names one."""
    return next((value for pattern, value in _PROPOSALS if re.search(pattern, text, re.I)), None)


_HALF_OF_DAY_SAID = re.compile(
    r"\d\s*[ap]\.?m\b|\b(?:morning|evening|night|afternoon|tonight|noon|noche|matin|soir)\b|"
    rf"\b(?:la|las|de|por|en|a|para) (?:ma[nñ]ana|tarde)s?\b|\btardes\b|\b(?:{_TARDE})\b|"  # not "llego tarde"
    r"\b(?:0\d|1[3-9]|2[0-3])[:h]|\b\d{1,2}h(?:[0-5]\d)?\b",  # "10h": the 24-hour clock French is written in
    re.I,
)


def same_half_of_day(new: str | None, earlier: str | None, text: str) -> str | None:
    """A change of mind keeps the half of the day of the time it replaces ("8pm" then "actually make it
    9" is 9pm), unless the message says which half it means."""
    if new is None or earlier is None or _HALF_OF_DAY_SAID.search(text):
        return new
    new_hour, minute = (int(part) for part in new.split(":"))
    earlier_hour = int(earlier.split(":")[0])
    if earlier_hour >= 12 and 1 <= new_hour < 12:
        return _hhmm(new_hour + 12, minute)
    # an hour of the 24-hour clock said ("a las 18"), not minutes ("6:15", "7h20")
    if earlier_hour < 12 and new_hour > 12 and not re.search(r"(?<![:.h])\b(?:1[3-9]|2[0-3])\b", text):
        return _hhmm(new_hour - 12, minute)
    return new
