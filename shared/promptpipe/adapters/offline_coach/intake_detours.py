"""Detours in the middle of the intake that must not stop it (docs/offline-coach.md, "Intakes with a
detour"): a request made before the set-up is done is honoured as the answer it carries, and the intake
goes on at the question still open.

- **A pause** ("pause for a week please, I'm travelling", "¿puedes pausarlo una semana?", "une pause de 3
  jours ?"): nothing is scheduled yet, so it is promised and kept: once the daily prompt is set up it is
  paused for that long (``scheduler`` pause, which resumes by itself), and the reply says until when,
  never that a prompt comes while paused.
- **Another part of the day** ("can we do evenings instead", "mejor en la tarde", "plutôt le soir"),
  with no clock time: a time of that part of the day is proposed to confirm, and a yes replaces the time
  already given.
- **The time handed over** by a free-choice word ("just send it whenever", "any time is fine", "cuando
  sea", "n'importe quand"): a default, as for "you pick".
- **A yes with a fact beside it** ("sure, after dinner" to "How about 7pm?"): the suggestion and the fact.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import cast

from promptpipe.adapters.offline_coach.feedback_answers import local_day
from promptpipe.adapters.offline_coach.intake_answers import parse_intake_message
from promptpipe.adapters.offline_coach.intake_refusals import past_the_refusal
from promptpipe.adapters.offline_coach.phrases import clock, say
from promptpipe.adapters.offline_coach.reading import (
    accepts,
    asked_for,
    common_question,
    declines,
    is_schedule_offer,
    suggestion,
    unclear_stop,
)
from promptpipe.adapters.offline_coach.text import (
    _FILLER,
    DOMAIN,
    INTAKE_ORDER,
    SAVE,
    SCHEDULER,
    TIME,
    _is_hint,
    _substantive,
)
from promptpipe.adapters.offline_coach.times import (
    normalise_time,
    parse_asked_time,
    parse_clock_time,
    parse_vague_time,
    propose_time,
    same_half_of_day,
)
from promptpipe.adapters.offline_coach.turn import Turn, _Step
from promptpipe.rules.feedback_reading import Language, pause_request, resumes, time_preference
from promptpipe.rules.hesitation import hesitation
from promptpipe.rules.intake_requests import before_the_later_start, later_start, starts_later
from promptpipe.rules.intent_patterns import STOP
from promptpipe.rules.message_reading import plain, read_message

# The words a day-part is proposed from (``times.propose_time`` reads them).
_DAYPART_WORDS = {"morning": "morning", "afternoon": "afternoon", "evening": "evening", "night": "night"}

# A free-choice word for when, as the whole of what is said: the time is the coach's to choose.
_ANY_TIME = re.compile(
    r"\b(?:whenever|any ?time|any time (?:works|is fine)|(?:it )?doesn'?t matter when|cuando sea|cuando quieras|"
    r"a cualquier hora|cualquier hora|n'importe quand|quand (?:tu veux|vous voulez)|a n'importe quelle heure|"
    # "idc when", "i don't mind what time", "no me importa la hora", "peu importe l'heure": when is not theirs
    r"(?:idc|i (?:don'?t|dont) (?:really )?(?:care|mind)|(?:don'?t|dont) (?:care|mind)|no me importa|me da igual|"
    r"peu importe|je m'en fiche de) (?:when|what time|the time|cuando|a que hora|la hora|quand|l'heure)|"
    r"just send (?:it|them|one)\W*$)"
)

_PAUSE_PROMISED = {
    "en": "Sure — once your daily prompt is set up, I'll pause it for {days} days.",
    "es": "Claro: en cuanto tu mensaje diario esté listo, lo pongo en pausa {days} días.",
    "fr": "Bien sûr : dès que votre message quotidien est en place, je le mets en pause {days} jours.",
}
# After the set-up and the pause: no "comes around …" (nothing comes while paused), the day it starts.
_PAUSED_SET_UP = {
    "en": "As you asked, your daily prompts are paused until {day}; then they start by themselves, every day at {at}.",
    "es": "Como pediste, tus mensajes diarios quedan en pausa hasta el {day}; después empiezan solos, cada día ({at}).",
    "fr": "Comme demandé, vos messages quotidiens sont en pause jusqu'au {day} ; ensuite ils démarrent tout "
    "seuls, chaque jour ({at}).",
}


# Asking for it in place of what was given: "can we do … instead", "mejor en la tarde", "plutôt le soir".
_ASKS_OTHER_PART = re.compile(
    r"\b(?:instead|rather|better|prefer\w*|can we|could we|can it be|could it be|mejor|prefier\w*|plutot|"
    r"prefere\w*|en vez|en lugar|mieux|a la place)\b"
)


def asks_to_pause(text: str) -> int | None:
    """The days of a pause a message asks for, read as the intake reads a request (``read_message``: a
    pause word, not "I always skip it" or "descansar la vista"), its length as people say it in the three
    languages ("3 jours"), or a start asked for later ("can we start next week?", ``later_start``); ``None``
    when it asks for none, or for none of a known length."""
    reading = read_message(text)
    if reading.request != "pause":
        return later_start(text)  # "can we start next week?": a pause of a week, once set up
    said = pause_request(text)
    return (said.days if said is not None else None) or reading.days


# "just send it", "can u just send the reminder", "skip the questions", "solo mándalo", "envoie-le
# simplement": the rest of the set-up left to the coach, a time said beside it or none.
_SEND_IT_NOW = re.compile(
    r"\b(?:just|only|simply) send (?:me )?(?:it|them|one|something|anything|whatever|the \w+)\b|"
    r"\bsend (?:it|them) (?:already|now)\b|\b(?:can (?:we|you|u) |let'?s )?just (?:start|begin|get started|go)\b|"
    r"\bskip (?:the|all the|these|all these) (?:rest|questions)\b|\bno more questions\b|"
    r"\b(?:solo|nada mas|ya) (?:mandalo|envialo|mandamelo|enviamelo|mandame|enviame)\b|\bmandalo ya\b|"
    # "solo manda el recordatorio", "ya manda el recordatorio y ya", "envialo y ya", "no me preguntes mas"
    r"\b(?:solo|nada mas|ya|tu) (?:manda|envia|mandame|enviame) (?:el|los|la|un|algo)\b|"
    r"\b(?:mandalo|envialo|mandamelo|enviamelo|manda(?:me)? (?:el|los|la) \w+) y ya\b|"
    r"\bno (?:me )?(?:preguntes|hagas) (?:mas|ninguna)\b|\bsin mas preguntas\b|"
    r"\b(?:stop asking|no more q'?s|enough questions)\b|"
    # "can u do that without a bunch of questions", "that's all I need", "I just need a
    # daily reminder", "I don't need to explain myself": the reminder wanted, the questions declined
    r"\bwithout (?:a bunch of|all the|all these|so many|more|any more|any|the|these) (?:questions|q'?s)\b|"
    r"\bthat'?s all (?:i need|i want|i'?m asking)\b|"
    r"\bi (?:just |only )?(?:need|want) (?:a |the )?(?:daily |simple )?reminder\b|"
    r"\b(?:don'?t|do not) need to explain\b|\bdoes it matter why\b|\bsolo quiero (?:el|un) recordatorio\b|"
    r"\bsin (?:tanto rollo|rodeos|tantas preguntas|mas preguntas)\b|"
    r"\b(?:manda|envia|mandame|enviame)(?:lo)?(?: el \w+)? y (?:ya|listo)\b|"
    r"\benvoye?z?(?:-le|-moi)? (?:juste|simplement|directement)\b|"
    # "mejor ya empieza", "empecemos ya", "arranca de una", "can u just start already"
    r"\b(?:(?:ya|mejor ya) (?:empieza|empecemos|arranca|arrancamos|comienza|comencemos)|"
    r"(?:empieza|empecemos|arranca|arrancamos|comienza|comencemos) (?:ya|de una))(?=\s*(?:[.,!]|$|porfa|por favor))|"
    r"\bjust start already\b"
)


def sends_it_now(text: str) -> bool:
    """The participant wants the prompt without more questions: every field still open takes its default."""
    return bool(_SEND_IT_NOW.search(plain(text)))


def time_beside_send_it(text: str) -> str | None:
    """The time said with "just send it" ("just send it at 7pm", "ugh. whatever. 7. just send it", "tonight,
    just send it"): a clock time, an hour alone in its clause, or a part of the day's usual time."""
    clauses = (clause for clause in re.split(r"[,.;!?]", text) if clause.strip())
    lone = next((t for clause in clauses if (t := parse_asked_time(clause.strip())) and len(clause.split()) <= 3), None)
    return parse_clock_time(text) or lone or propose_time(text) or parse_vague_time(text, loose=True)


def hands_over_the_time(text: str) -> bool:
    """ "just send it whenever", "any time is fine", "cuando sea", "n'importe quand": when is left to
    the coach (a free-choice word for when, and no clock time beside it)."""
    said = plain(text)
    return bool(_ANY_TIME.search(said)) and not re.search(r"\d", said)


def asks_for_a_part_of_the_day(text: str) -> str | None:
    """The part of the day a message asks for instead, with no clock time ("can we do evenings instead",
    "mejor en la tarde"): ``morning``, ``afternoon``, ``evening`` or ``night``; else ``None``."""
    if parse_clock_time(text) is not None or not _ASKS_OTHER_PART.search(plain(text)):
        return None  # a clock time is the time itself; with no request form, a day-part is part of a fact
    preference = time_preference(text)
    return _DAYPART_WORDS.get(preference.wanted or "") if preference is not None else None


def proposed_time(part: str) -> str:
    """The time proposed for a part of the day asked for (HH:MM)."""
    return propose_time(part) or {"morning": "08:00", "afternoon": "15:00", "night": "21:00"}.get(part, "19:00")


def beside_the_yes(text: str) -> str:
    """What a yes says beside it ("sure, after dinner" → "after dinner"; "yes" → "")."""
    parts = re.split(r"[,;.!]\s*", text, maxsplit=1)
    if len(parts) < 2 or not accepts(parts[0]):
        return ""
    rest = parts[1].strip()
    if not re.search(r"[^\W\d_]", rest) or re.search(r"\d", rest) or _CONTRAST.search(plain(rest)):
        return ""  # "ok, but at 8 instead": another answer, not the yes and a fact beside it
    return rest


def yes_then_question(text: str) -> str:
    """The question a yes to the offer comes with ("ok. what time will it come?", "sure! what if i
    forget?", "vale, ¿y si un día no puedo?"): the question, answered once the schedule is set up; "" when
    the message is no plain yes followed by a question (not "ok but can it be at 8?": another time)."""
    parts = re.split(r"[.!,]+\s*", text.strip(), maxsplit=1)
    if len(parts) < 2 or "?" not in parts[1] or not accepts(parts[0]) or re.search(r"\d", parts[1]):
        return ""
    rest = parts[1].strip()
    if declines(rest) or hesitation(rest) or read_message(rest).kind in ("no", "later", "complaint", "request"):
        return ""
    return rest


def own_answer_past_the_yes(text: str, field: str, known: dict[str, str]) -> str:
    """ "fine. stretching i guess", "ok fine, yoga", "bueno. tomar más agua" to a default the coach suggested
    for ``field`` (the habit, why, the routine): a grudging yes, then an answer of their own — theirs, not
    the default. Not a hedge ("fine, i guess") nor another field beside the yes ("sure, after dinner")."""
    rest = beside_the_yes(text)
    said = _FILLER.sub("", rest).strip(" .,!")
    if not said or not _substantive(said) or _HEDGE_ONLY.fullmatch(said):
        return ""
    return parse_intake_message(rest, {**known, field: ""}, field).get(field, "")


def facts_past_the_yes(text: str, field: str, known: dict[str, str]) -> dict[str, str]:
    """An answer of one's own past a grudging yes, for ``field``, with the other fields said beside it ("ok
    got it. journaling, to clear my head": the reason too), never one already known; {} when there is none."""
    own = own_answer_past_the_yes(text, field, known)
    if not own:
        return {}
    said = parse_intake_message(beside_the_yes(text), {**known, field: ""}, field)
    return {field: own} | {name: value for name, value in said.items() if name != field and not known.get(name)}


# A hedge alone after a yes ("i guess", "i suppose", "supongo", "je suppose"): no answer of its own.
_HEDGE_ONLY = re.compile(r"(?i)(?:i guess|i suppose|i think|then|supongo|creo|je suppose|je crois)")
# "but", "instead", "rather", "pero", "mejor", "plutôt", "mais": what follows the yes takes it back.
_CONTRAST = re.compile(r"\b(?:but|instead|rather|not|no|pero|mejor|en vez|plutot|mais|non|pas)\b")


# Lost, said of oneself ("im confused what do u need from me", "no entiendo qué pones", "je suis perdue"):
# the last question is said another way, and nothing of it is an answer.
_LOST_EN = (
    r"\b(?:i'?m|im|i am|kinda|bit|so) (?:confused|lost)\b|\bconfused\b"
    r"|\bwhat (?:do|should) (?:you|u|i) (?:need|want|say|put|write)\b|\bwhat am i (?:supposed|meant) to\b"
)
_LOST_ES = r"\bno entiendo\b|\bestoy (?:perdid|confundid)\w*|\bque (?:tengo que|debo) (?:poner|decir|escribir)\b"
_LOST_FR = r"\bje (?:suis|me sens) (?:perdue?|confuse?)\b|\bje (?:ne )?comprends pas\b"
_LOST = re.compile(f"{_LOST_EN}|{_LOST_ES}|{_LOST_FR}")


def is_lost(text: str) -> bool:
    """ "im confused what do u need from me": the participant does not see what is asked (no clock time)."""
    return bool(_LOST.search(plain(text))) and parse_clock_time(text) is None


# Impatience said beside a question ("¿cuántas preguntas son? tengo prisa"): no fact.
_IMPATIENT = re.compile(
    r"^(?:tengo prisa|estoy apurad\w*|ando (?:con prisa|apurad\w*)|(?:i'?m|im) in a (?:hurry|rush)|in a hurry|"
    r"je suis press\w*|j'ai pas (?:le )?temps|pas le temps|i don'?t have (?:all day|much time)|no tengo tiempo)\b"
)
# Who the coach is, asked in any word order ("vous êtes qui exactement", "y tú quién eres", "who r u"):
# an interrogative of person and the second person, no number.
_WHO = re.compile(r"\b(?:who|qui|quien)\b")
_YOU = re.compile(r"\b(?:you|u|vous|tu|toi|eres|sos|usted|etes)\b")


def is_impatience(text: str) -> bool:
    return bool(_IMPATIENT.match(plain(text).strip(" .!,")))


def asks_who_the_coach_is(text: str) -> bool:
    said = plain(text)
    return bool(_WHO.search(said) and _YOU.search(said)) and not re.search(r"\d", said) and len(said.split()) <= 8


def hesitates(text: str) -> bool:
    """ "lo tengo que pensar", "i need to think about that one", "let me check my calendar": no answer yet
    (a clock time said with it is an answer)."""
    return hesitation(text) and parse_clock_time(text) is None


# What made them wait is over: "we're good now", "ok she's better", "all good now", "ya estamos bien".
_MATTER_OVER = re.compile(
    r"\b(?:we'?re|we are|i'?m|im|i am|all|everything'?s?|things are) (?:good|ok|okay|fine|better|back|settled)"
    r"(?: now| again)?\b|\b(?:he|she|they)(?:'s| is|s| are|'re) (?:much |a lot |all )?(?:better|fine|ok|okay|well)\b|"
    r"\bya (?:estamos|estoy|esta|están|estan) (?:bien|mejor|de vuelta|de regreso)\b|"
    r"\b(?:ya se|ya me) (?:curo|mejoro|alivio)\b"
)


def pause_asked(turn: Turn) -> int | None:
    """The days of a pause the participant asked for during this intake (since the coach last asked for
    the habit), unless they took it back ("start again"); ``None`` when none was asked with a length."""
    history = turn.history
    start = next(
        (i for i in range(len(history) - 1, -1, -1) if history[i].role == "assistant"
         and asked_for(history[i].content or "") == DOMAIN),
        -1,
    )  # fmt: skip
    said = [m.content or "" for m in history[start + 1 :] if m.role == "user" and not _is_hint(m.content or "")]
    days: int | None = None
    for text in [*said, turn.user]:
        if resumes(text) or _MATTER_OVER.search(plain(text)):  # "we're good now. 8:30pm": the wait is over
            days = None
            continue
        days = asks_to_pause(text) or days
    return days


def pause_promised(days: int, language: str) -> str:
    return _PAUSE_PROMISED.get(language, _PAUSE_PROMISED["en"]).format(days=days)


def paused_set_up(turn: Turn, time: str) -> str:
    """The sentence after a set-up paused at once, from the pause's own result ("" when none ran)."""
    paused = next((c for c in reversed(turn.called(SCHEDULER, action="pause")) if c.ok), None)
    if paused is None:
        return ""
    back = re.search(r"until (\w+) (\d{2} \w+)", paused.result or "")
    language = turn.language
    day = local_day(f"{back[1]} {back[2]}", cast(Language, language)) if back else ""
    if not day:
        return ""
    return _PAUSED_SET_UP.get(language, _PAUSED_SET_UP["en"]).format(day=day, at=clock(time, language))


class IntakeDetours:
    """The detours' steps; ``IntakeRules`` decides when they are taken (its ``_pending`` and ``profile``)."""

    turn: Turn
    asked: str | None
    known: dict[str, str]
    said: str
    _pending: Callable[[dict[str, str]], str]
    profile: Callable[[], dict[str, str]]

    def _stop_reply(self) -> tuple[_Step, str] | None:
        """A stop, pause, resume or limit in intake: which stop, when unclear; a pause with a length is
        promised for once the prompt is set up; else nothing is scheduled yet."""
        turn = self.turn
        if unclear_stop(turn.user):
            return say("stop_which", turn.language), "intake: an unclear stop request; asking which"
        days = asks_to_pause(turn.user)
        if (days or starts_later(turn.user)) and self._fact_beside_the_later_start():
            return None  # "journaling but can we start next week": the habit is saved, the pause promised
        if days and is_schedule_offer(turn.last_assistant):
            return None  # "my son is sick, can we pause for 2 days?" to the offer: set up, then paused
        if days:
            promised = pause_promised(days, turn.language)
            return f"{promised} {self._pending(self.profile())}", "intake: a pause asked for; made at the set-up"
        if STOP.search(turn.user) and common_question(turn.user) is None:
            # Intake has set nothing up: there is nothing to stop, and the message is no answer.
            return (
                "Nothing is scheduled yet, so no daily messages will come. Whenever you'd like to start, "
                "just text me and we'll pick up where we left off.",
                "intake: a stop request with nothing scheduled",
            )
        request = read_message(turn.user).request
        if request == "resume" and is_schedule_offer(turn.last_assistant):
            return None  # "ok we're back, start the texts" to the offer still open: a yes to it
        if request in ("pause", "resume", "limit"):
            pending = self._pending(self.profile())
            return (
                f"Nothing is scheduled yet, so no daily messages will come until we finish setting up. {pending}",
                f"intake: a {request} request with nothing scheduled",
            )
        return None

    def _fact_beside_the_later_start(self) -> bool:
        """A fact said before a later start ("journaling but i wanna start next week", "tomar agua pero
        empiezo la otra semana"): it is what is read and saved (``said``); the pause is made once set up
        (``pause_asked`` reads it from the history) and promised in the reply (``_promised_beside``)."""
        turn = self.turn
        beside = before_the_later_start(turn.user)
        if turn.calls or not beside or SAVE not in turn.tools or read_message(beside).kind != "fact":
            return False
        if not parse_intake_message(beside, self.known, self.asked if self.asked in INTAKE_ORDER else None):
            return False
        self.said = beside
        return True

    def _promised_beside(self) -> list[str]:
        """The pause promised for a later start said beside a fact this turn saved (none else)."""
        turn = self.turn
        days = later_start(turn.user) if before_the_later_start(turn.user) and turn.called(SAVE) else None
        return [pause_promised(days, turn.language)] if days else []

    def _unrefused(self, text: str) -> str:
        """The message without its clause about a time offered or known ("no thats when im driving lol do
        9:15"): that clause names no routine for the prompt."""
        offered = suggestion(self.turn.last_assistant)
        return past_the_refusal(text) if (offered and re.search(r"\d", offered)) or self.known[TIME] else text

    def _another_part_of_the_day(self) -> tuple[_Step, str] | None:
        """ "can we do evenings instead" once a time is known, or while another field is asked: a time of
        that part of the day proposed to confirm (a yes saves it in place of the earlier one)."""
        turn = self.turn
        if turn.calls or (self.asked == TIME and not self.known[TIME]):
            return None  # asked for the time, a day-part is the intake's own proposal (IntakeRules.proposal)
        part = asks_for_a_part_of_the_day(turn.user)
        if part is None:
            return None
        if not self.known[DOMAIN] and parse_intake_message(turn.user, self.known, DOMAIN).get(DOMAIN):
            return None  # "quiero dejar de comer pan dulce en la noche y mejor comer fruta": the night is the habit's
        proposal = clock(proposed_time(part), turn.language)
        return say("suggest_time", turn.language, time=proposal), f"intake: the {part} asked for; a time proposed"

    def _another_time_among_other_facts(self, text: str, expected: str | None) -> dict[str, str]:
        """ "oh and can we do 6:45 instead, 8 is when i leave. its for my mood", once a time is known: the
        clause that asks for another time gives the time; a clause about the time it replaces ("8 is when i
        leave", "6 is too early") is no fact; the other clauses are read as usual. {} when no clause asks."""
        known = normalise_time(self.known[TIME]) if self.known[TIME] else None
        clauses = [c.strip() for c in re.split(r"[,;.!?]+\s*", text) if c.strip()]
        if known is None or len(clauses) < 2:
            return {}
        asking = next((c for c in clauses if _ASKS_INSTEAD.search(plain(c)) and parse_clock_time(c)), None)
        new = same_half_of_day(parse_clock_time(asking), known, asking) if asking else None
        if asking is None or new is None or new == known:
            return {}
        hour = int(known.split(":")[0])
        said_hour = re.compile(rf"(?<![\d:])(?:{hour}|{hour % 12 or 12})(?:[:h.]\d\d)?(?!\d)")
        about_the_old = [c for c in clauses if c != asking and (parse_clock_time(c) or said_hour.search(c))]
        rest = " ".join(c for c in clauses if c != asking and c not in about_the_old)
        beside = parse_intake_message(rest, {**self.known, TIME: new}, expected) if rest else {}
        return {TIME: new} | {n: v for n, v in beside.items() if n != TIME and not self.known[n]}


# A clause that asks for another time: "instead", "can we do", "make it", "move it", "mejor", "plutôt".
_ASKS_INSTEAD = re.compile(
    r"\b(?:instead|can we (?:do|make it)|could we (?:do|make it)|make it|move it|switch it|change it|rather|"
    r"en vez|en lugar|mejor|cambia\w*|plutot|a la place|on peut faire)\b"
)
