"""Constants of the offline coach (tool names, profile fields, context headers, fixed replies) and
the text helpers its rules share."""

from __future__ import annotations

import re

from promptpipe.adapters.offline_coach.vocabulary import MAYBE, OPINION
from promptpipe.controller import tool_table

LABEL = "(rule-based, no LLM)"
INTAKE_HEADER = "INTAKE CONVERSATION CONTEXT:"
FEEDBACK_HEADER = "FEEDBACK TRACKING CONTEXT:"
HINT_PREFIX = "<Hint:"
# Placeholders the context blocks use for "nothing stored".
_EMPTY_VALUES = {"STILL NEEDED", "(unknown)", "(none recorded)", "(not given)", "(none)"}

SAVE, GENERATE = tool_table.PROFILE.name, tool_table.HABIT_PROMPT.name
SCHEDULER, TRANSITION = tool_table.SCHEDULER.name, tool_table.TRANSITION.name
RECORD = tool_table.OUTCOME.name
OPT_OUT = tool_table.OPT_OUT.name
DOMAIN, MOTIVATION, TIME, ANCHOR = "habit_domain", "motivational_frame", "preferred_time", "prompt_anchor"
INTAKE_ORDER = (DOMAIN, MOTIVATION, TIME, ANCHOR)  # the order intake asks in

HOLDING_REPLY = "Thanks for your patience — someone from our team will follow up with you soon."

# Markers in our own questions, read back from history to interpret a bare answer.
ASK_HELPED = "What helped you"
ASK_BARRIER = "What got in the way"


# ---------------------------------------------------------------------------------------------
# Text helpers (pure, module-level so they can be tested directly)
# ---------------------------------------------------------------------------------------------

_ACKS = {
    "hi", "hello", "hey", "hiya", "ok", "okay", "k", "thanks", "thank you", "yes", "no", "sure", "cool",
    "great", "hmm", "lol", "yo", "good", "fine", "nice", "what", "why", "huh", "something", "anything",
    "done", "next time", "1", "2", "stop", "start",
}  # fmt: skip
_GREETINGS = {"hi", "hello", "hey", "hiya", "yo", "good morning", "good evening", "hi there", "hello there"}
_NON_ANSWERS = ("i don't know", "i dont know", "idk", "not sure", "no idea", "whatever", "anything", "dunno")
_ACK = (
    r"(?:ah+|oh+|ok(?:ay)?|cool|i see|got it|good to know|good|great|perfect|nice|awesome|sounds good|"
    r"that'?s (?:good|great|fine)|thanks|thank you|thx|d'accord|ah bon|parfait|super|tr[eè]s bien|vale|bueno|"
    r"genial|perfecto|muy bien|dale|ya veo|entiendo|je vois|alright)"
)
_FILLER = re.compile(
    rf"^(?:(?:um+|uh+|ah+|oh+|well|hmm+|so|{MAYBE}|{OPINION}|honestly|ok(?:ay)?|idk|i dunno|dunno|"
    r"not sure|no s[eé]|ni idea|je sais pas|bof|cool|alright|gotcha|got it|i see)[,\s]+"
    # an acknowledgement closed by its own stop or comma: "ok cool. ", "ok good. ", "great, ", "nice nice. ",
    # "perfecto. ", "ah genial, ", "parfait, " — said of what the coach just said, never the answer itself
    rf"|{_ACK}(?:[\s,]+{_ACK})*(?:\s+(?:then|ya))?[.!,]+\s+)+",
    re.I,
)
_WORD = re.compile(r"[a-z']+", re.I)
_ACKS_ONLY = re.compile(rf"\W*{_ACK}(?:[\s,]+{_ACK})*\W*", re.I)


def is_acknowledgement(text: str) -> bool:
    """ "perfect", "ok good", "muy bien!", "parfait": said of what the coach said, never an answer."""
    return _ACKS_ONLY.fullmatch(text.strip()) is not None


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" \t\n,.;:!?-—\"'")


def _words(text: str, limit: int) -> str:
    parts = text.split()
    return " ".join(parts[:limit])


def _substantive(text: str) -> bool:
    """A real answer, not a greeting, an acknowledgement or a shrug."""
    norm = _clean(text).lower()
    if not norm or norm in _ACKS or any(norm.startswith(n) for n in _NON_ANSWERS):
        return False
    if len(norm.split()) <= 3 and re.match(r"(?:hi|hello|hey|hiya|hola|yo|good (?:morning|evening))\b", norm):
        return False  # "hi again", "hello there"
    return len(_WORD.findall(norm)) >= 1 and len(norm) >= 3


def _is_hint(text: str) -> bool:
    return text.strip().startswith(HINT_PREFIX)
