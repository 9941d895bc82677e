"""A feedback reply read for everything it carries, whatever the coach last asked (docs/offline-coach.md,
"The feedback week, robust to the path"):

- ``report_parts``: the outcome a message reports and what its other clauses say beside it (what helped
  or got in the way, a request, a question), in any order ("the dog staring at me. Done", "hecho, pero
  pausa una semana porfa", "nope forgot. is this a bot?");
- ``what_helped_clause``: who or what helped, by structure ("my roommate joined me", "me ayudó poner la
  alarma", "ma coloc l'a fait avec moi");
- ``smaller_version``: the tweak of a smaller habit, done or wished for ("did a short one");
- ``poll_number``: the daily prompt's poll answered by its number, typed with a thanks ("1 ty").

English, Spanish and French. Pure: ``re`` and the rules it names only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from promptpipe.rules.feedback_reading import (
    asks_for_another_time,
    not_yet,
    pause_request,
    resumes,
    shift_minutes,
    time_preference,
)
from promptpipe.rules.lexicon import THANKS
from promptpipe.rules.message_reading import plain, read_message
from promptpipe.rules.outcome import Outcome, read_outcome
from promptpipe.rules.report_details import proposes_a_time, says_it_helps

__all__ = ["ReportParts", "poll_number", "report_parts", "smaller_version", "what_helped_clause"]

# --- what helped, said by who or what did it ----------------------------------------------------------
# "my roommate joined me", "having the mat by my bed really helps", "mi esposo me acompañó", "me ayudó
# poner la alarma", "ma coloc l'a fait avec moi": a subject (someone, something) and a verb of helping or
# of company, in either order. Read on the participant's own words (accents kept).
# The verbs, as people write them (regular expressions, accents optional where people drop them).
_HELPING = (
    "joined me", "came (?:along|with me)", "did (?:it|them|that|'em|one) (?:with me|too(?![ \\t]+[a-z]))",
    "walked with me", "kept me company", "reminded me", "(?:also|too) did (?:it|them)",
    "helped(?: me)?", "helps(?: me)?", "is helping", "made it (?:easy|easier)", "makes it (?:easy|easier)",
    "me acompa(?:ñ|n)(?:ó|o|a)", "lo hizo conmigo", "me ayud(?:ó|o|a)", "me record(?:ó|o)",
    "m'a (?:accompagn|aid|rappel)\\w*", "m'aide", "l'a fait avec moi", "est venue? avec moi",
    # what motivated them: "seeing my streak motivated me", "me motivó ver…", "ça m'a motivée"
    "motivated me", "motivates me", "kept me going", "got me (?:going|moving|out the door)", "pushed me",
    "tagged along", "me motiv(?:ó|o|a|aba)", "me anim(?:ó|o|a|aba)", "m'a (?:motiv|pouss)\\w*", "me motive",
    # what made it easy: "the new podcast made it fly by", "leaving my shoes out works", "me lo hizo fácil"
    "made it (?:fly by|go by|fun|bearable|a breeze|doable|way easier|so much easier|so easy)",
    "makes it (?:fly by|go by|fun|bearable|a breeze|doable)",
    "(?:rly |totally |def )?works(?! for\\b| better\\b| fine\\b| ok\\b)(?: wonders| great)?",
    "worked (?:wonders|great|like a charm)", "me lo (?:hizo|hace) (?:m[aá]s |muy )?(?:f[aá]cil|llevadero)",
    "funciona(?:ba)? (?:muy bien|de maravilla)", "m'a facilit[ée] la t[aâ]che",
    "se me (?:hizo|hace|hac[ií]a) (?:m[aá]s |muy |bien |s[uú]per )?(?:f[aá]cil|r[aá]pido|ligero|corto|llevadero)",
    "se (?:me )?pas(?:a|ó|o|aba) volando",
)  # fmt: skip
_HELPED_BY = (
    "me ayud(?:ó|o|a)", "m'a aid[ée]e?", "m'aide", "what helped (?:was|is)", "lo que me ayud(?:ó|o) fue",
    "ce qui m'a aid[ée]e?,? c'est", "me motiv(?:ó|o|a|aba)", "me anim(?:ó|o|a|aba)",
    "what (?:motivated|pushed) me (?:was|is)", "lo que me motiv(?:ó|o|a) fue", "m'a motiv[ée]e?",
    "ce qui m'a motiv[ée]e?,? c'est",
)  # fmt: skip
_LEAD_WORDS = (
    "done", "did it", "finished(?: it)?", "hecho", "listo", "ya qued[oó]", "ya lo hice", "c'est fait", "fait", "and",
    "y", "et", "so", "also", "pero", "but", "mais", "yes", "s[ií]", "oui", "because", "bc", "cuz", "porque",
    "parce que", "oh", "ah", "also", "plus", "btw", "oh and", "aparte", "ademas",
)  # fmt: skip
_WHO = r"(?P<who>[^.;!?,]*?\b\w[^.;!?,]*?)\s+(?:(?:really|actually|also|de verdad|vraiment)\s+)?"
_HELPER_AFTER = re.compile(rf"{_WHO}(?:{'|'.join(_HELPING)})\b", re.I)
_HELPER_BEFORE = re.compile(rf"\b(?:{'|'.join(_HELPED_BY)})\s+(?P<what>[^.;!?,]{{3,}})", re.I)
_HELPER_LEAD = re.compile(rf"^(?:(?:{'|'.join(_LEAD_WORDS)})\b[\s,!.]*|[^\w\s]+\s*)+", re.I)


def what_helped_clause(text: str) -> str:
    """Who or what helped, when the message says it by its structure: "my roommate joined me so that was
    fun" → "my roommate joined me"; "having the mat by my bed really helps" → "having the mat by my bed";
    "me ayudó poner la alarma" → "poner la alarma"; "" when it says no such thing."""
    before = _HELPER_BEFORE.search(text)
    # "mi compa me animó a salir": what follows says what for, and who helped comes before the verb
    if before is not None and not re.match(r"(?:a|to|de|à)\s", before["what"], re.I):
        return before["what"].strip()
    after = _HELPER_AFTER.search(text)
    if after is None:
        return ""
    who = _HELPER_LEAD.sub("", after["who"].strip()).strip()
    if not who or re.fullmatch(r"(?:it|that|this|eso|esto|ça|cela|nothing|nada|rien|así|asi|so|i|we|yo|je)", who, re.I):
        return ""
    if re.fullmatch(r"(?:at |a las )?\d{1,2}(?:[:.h]\d{2})?\s*(?:[ap]\.?m\.?)?", who, re.I):  # "7pm works": a time
        return ""
    verb = text[after.end("who") : after.end()].strip()
    # a verb of helping or of ease ("works", "made it fly by", "se me hizo fácil") names no more than who
    return who if _HELPED_OR_EASED.search(verb) else f"{who} {verb}"


_HELPED_OR_EASED = re.compile(
    r"help|ayud|aid|motiv|anim|work|made it|makes it|hizo|hace|volando|facilit|funciona", re.I
)


# --- a report and what comes with it -------------------------------------------------------------------
# A message is cut where a sentence ends, at a comma, before "¿"/"¡", and where an emoji or a symbol ends
# before a word ("did it 💪 is this a bot?").
_CLAUSE_BREAK = re.compile(r"(?<=[.!?;…])\s+|,\s+|\s+(?=[¿¡])|(?<=[^\w\s.,!?;:'’\"()¿¡-])\s+(?=\w)|\n+")
# A clause that corrects the time just said ("no wait 9:30", "no actually 8:30", "non, 21h45"): no report.
# The words that take the time back ("no wait", "actually make it", "mejor a las", "non, plutôt vers") ...
_TAKING_BACK = (
    r"(?:no+|nah|nope|wait|actually|sorry|i mean|mejor|perdon|espera|non|enfin|plutot|attends)\b[\s,.]*"
    r"(?:(?:wait|actually|make (?:it|that)|mejor|espera|i mean|plutot|attends|a las|at|a|vers)\b[\s,.]*)*"
)
# ... and the clock time that replaces it ("9:30", "8pm", "21h45"; not "10 reps", "5 min").
_NEW_CLOCK_TIME = (
    r"\d{1,2}(?:[:h.][0-5]\d|\s*[ap]\.?m\b|h\b)?(?![\d:])(?!\s*(?:reps?|sets?|min\w*|pages?|times?|veces|x)\b)"
)
_CORRECTS_A_TIME = re.compile(rf"^{_TAKING_BACK}{_NEW_CLOCK_TIME}")
_ONLY_TAKING_BACK = re.compile(rf"^{_TAKING_BACK}$")
_NEW_CLOCK_TIME_OPENS = re.compile(rf"^{_NEW_CLOCK_TIME}")
_THANKS = re.compile(rf"^(?:{THANKS}|tysm|cheers|gracias|muchas gracias|merci|merci beaucoup)\b[\s!.]*\W*$")


@dataclass(frozen=True)
class ReportParts:
    """An outcome report and what the same message says beside it, each as said."""

    outcome: Outcome  # "done" or "not_done"
    report: str  # the clauses that report it
    facts: tuple[str, ...] = ()  # what else it says: what helped, what got in the way
    requests: tuple[str, ...] = ()  # a change asked for: another time, a pause, a stop
    questions: tuple[str, ...] = ()  # something asked


_POLL_NUMBER = re.compile(rf"\s*(?P<n>[12])[\s.!,]*(?:(?:{THANKS}|gracias|merci)\b\W*)?")


def poll_number(text: str) -> Outcome | None:
    """ "1", "1 ty", "2.": the daily prompt's poll answered by its number (1 Done, 2 Next time), typed
    with a thanks or a full stop; ``None`` for anything else."""
    match = _POLL_NUMBER.fullmatch(plain(text))
    return None if match is None else "done" if match["n"] == "1" else "not_done"


def _clause_outcome(clause: str, asked: bool) -> Outcome:
    outcome = (poll_number(clause) if asked else None) or read_outcome(clause, asked=asked)
    # "thank u this is honestly working 🙌 how long is this?": the habit judged working answers the prompt
    return "done" if asked and outcome == "no_report" and says_it_helps(clause) else outcome


# "no texts this weekend", "no me mandes nada": a no about the messages, not about the habit.
_ABOUT_THE_TEXTS = re.compile(
    r"\b(?:texts?|texting|messages?|mensajes?|reminders?|recordatorios?|prompts?|notifications?|mandes|mandar|"
    r"envies|enviar|escribas|m'envoie\w*|m'ecri\w*)\b"
)


def _reports_in(clause: str, asked: bool) -> bool:
    """The clause reports the day's outcome, and asks for no change of the messages."""
    outcome = _clause_outcome(clause, asked)
    if outcome == "no_report" or _asks_for_a_change(clause):
        return False
    return outcome == "done" or not _ABOUT_THE_TEXTS.search(plain(clause))


def _asks_for_a_change(clause: str) -> bool:
    reading = read_message(clause)
    preference = time_preference(clause)
    return (
        reading.kind == "request"
        or pause_request(clause) is not None
        or asks_for_another_time(clause)
        or shift_minutes(clause) is not None
        or (preference is not None and preference.wanted is not None)
        or resumes(clause)
        or proposes_a_time(clause)  # "can we try 12:30?"
    )


def report_parts(text: str, *, asked: bool) -> ReportParts | None:
    """The outcome a message reports in its first clause that reports one, and what its other clauses say;
    ``None`` when it is one clause, or reports no outcome there. ``asked``: the open question is whether
    they did it (a bare "yes", "👍" or "1" then reports)."""
    clauses: list[str] = []
    split = [c.strip() for c in _CLAUSE_BREAK.split(text.strip()) if c and c.strip()]
    bare = [_ONLY_TAKING_BACK.match(plain(c)) is not None for c in split]  # "no", "no wait", "espera"
    for i, clause in enumerate(split):
        said = plain(clause)
        # "… 10 instead.. no wait 9:30", and "move it to 8pm, no wait, 8:30": one answer
        after = next((plain(c) for c, b in zip(split[i + 1 :], bare[i + 1 :], strict=True) if not b), "")
        opens_with_a_time = _NEW_CLOCK_TIME_OPENS.match(said) is not None
        joins = bool(clauses) and (
            _CORRECTS_A_TIME.match(said) is not None
            or (bare[i] and _NEW_CLOCK_TIME_OPENS.match(after) is not None)  # past "no, espera,": the time
            or (i > 0 and bare[i - 1] and opens_with_a_time)
        )
        if joins:
            clauses[-1] = f"{clauses[-1]} {clause}"
        else:
            clauses.append(clause)
    if len(clauses) < 2 or not_yet(text):  # "not yet, thanks": the day is not over
        return None
    at = next((i for i in range(len(clauses)) if _reports_in(clauses[i], asked)), None)
    if at is None:
        return None
    outcome = _clause_outcome(clauses[at], asked)
    report, facts, requests, questions = [clauses[at]], [], [], []
    for clause in clauses[:at] + clauses[at + 1 :]:
        said = plain(clause)
        if _asks_for_a_change(clause):
            requests.append(clause)
        elif "?" in clause or read_message(clause).kind == "question":
            questions.append(clause)
        elif _clause_outcome(clause, asked) == outcome:
            report.append(clause)
        elif _THANKS.match(said) or read_message(clause).kind in ("yes", "greeting", "later", "complaint"):
            continue  # "thanks!", "👍", "ok lo intento": nothing to keep
        else:
            facts.append(clause)
    return ReportParts(outcome, " ".join(report), tuple(facts), tuple(requests), tuple(questions))


# --- a smaller version, done or wished for ------------------------------------------------------------
_SMALLER = re.compile(
    r"\b(?:(?:a|the|one)\s+)?(?:short|shorter|quick|quicker|small|smaller|mini|tiny|easier|lighter)\s+"
    r"(?:one|version|session|set|round|walk|bit)\b|"
    r"\b(?:una?\s+)?versi[oó]n\s+m[aá]s\s+(?:corta|peque[nñ]a|f[aá]cil|ligera)\b|\buna?\s+(?:cortit[oa]|rapidit[oa])\b|"
    r"\b(?:une\s+)?version\s+(?:plus\s+)?(?:courte|rapide|mini|l[eé]g[eè]re|simple)\b",
    re.I,
)


def smaller_version(text: str) -> str:
    """ "did a short one", "a shorter version would help", "una versión más corta", "une version plus
    courte": the tweak of a smaller habit, as said; "" when the message says none."""
    match = _SMALLER.search(text)
    return match[0].strip() if match else ""
