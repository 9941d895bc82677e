"""The words of a request, in one place: what the turn's rules (``flow/intent_rules``) offer tools for
and what the offline coach (``adapters/offline_coach``) acts on read a message with the same patterns,
so that the two cannot drift apart ("start over" offering the transition the coach then never makes).

Each pattern sits behind an exact literal prefilter (``rules/literal_prefilter.py``): it compiles at
the first text holding one of its triggers, never at import, and a text with none of them cannot match
(proved over the regex parser's tree, case folding included, by tests/unit/test_literal_prefilter.py).

Pure: ``re`` and ``rules/literal_prefilter`` only, no I/O; the adapters may import it (pyproject.toml,
import-linter contracts).
"""

from __future__ import annotations

import re

from promptpipe.rules.lexicon import TIME_CHANGE
from promptpipe.rules.literal_prefilter import Prefiltered

__all__ = ["CHANGE_TIME", "NEW_HABIT", "PREFER", "STOP", "is_capability_question"]

# "stop the reminders", "don't send me messages", "no more texts"; not "I won't stop the walks".
STOP = Prefiltered(
    # (not a habit of quitting: "stop using my phone in bed", "dejar de comer pan dulce"; "stop sending" is a stop)
    r"\b(?<!n't )(?<!not )"
    r"(?:stop(?!\s+(?!sending|texting|messaging|reminding|bugging|contacting|writing|pinging)\w+ing\b)|"
    r"pause|cancel|unsubscribe|don'?t send|"
    r"dejar? de(?!\s+(?!mandar|enviar|escribir|molestar|mensajear)\w+(?:ar|er|ir)(?:me|nos|le)?\b))\b.*"
    r"\b(?:messages?|reminders?|prompts?|texts?|schedules?|it|mensajes|recordatorios)\b"
    r"|\bno (?:more|m[aá]s) (?:messages|reminders|prompts|texts|mensajes|recordatorios)\b",
    (
        "stop", "pause", "cancel", "unsubscribe", "dont send", "don't send", "deja de", "dejar de", "no more ",
        "no mas ", "no más ",
    ),
    re.I,
)  # fmt: skip
# "move my reminder", "change the time", "a later time"
CHANGE_TIME = Prefiltered(
    r"\b(?:change|move|switch|reschedule|shift|update|push|cambiar|mover)\s+"
    r"(?:(?:my|the|your|our|it|that|this|daily|morning|evening|la|el|mi|del)\s+){0,3}"
    r"(?:time|reminder|prompt|schedule|message|text|hora|recordatorio|mensaje)s?\b"
    r"|\b(?:change|move|switch|shift|push)\s+it\s+(?:to|back|forward|earlier|later)\b"
    r"|\b(?:different|new|another|later|earlier) time\b"
    rf"|\b(?:{TIME_CHANGE})\b",  # "time change pls"
    ("change", "move", "switch", "reschedule", "shift", "update", "push", "cambiar", "mover", " time", "cambio de"),
    re.I,
)
# "I'd rather get it at 7pm from now on": with a time, a stated preference asks for a change too.
PREFER = Prefiltered(
    r"\b(?:rather|prefer|instead|from now on|going forward|from tomorrow|switch to|mejor (?:a las|a la|en la|por la)|"
    r"prefiero|preferir[ií]a|m[aá]s bien|plut[oô]t|je pr[ée]f[èe]re|de pr[ée]f[ée]rence|j'aimerais mieux)\b",
    (
        "rather", "prefer", "instead", "from now on", "going forward", "from tomorrow", "switch to", "mejor ",
        "prefiero", "s bien", "plut", "je pr", "de pr", "j'aimerais mieux",
    ),
    re.I,
)  # fmt: skip
NEW_HABIT = Prefiltered(
    r"\b(?:new habit|different habit|another habit|change (?:my|the) habit|switch (?:my |the )?habit|start over)\b",
    (" habit", "start over"),
    re.I,
)

# A question about what is possible: asks whether an action could be taken, not to take it now.
_CAPABILITY = Prefiltered(
    r"\b(?:is it possible|would it be possible|will it be possible|is there (?:a|any) way|will i be able|"
    r"would i be able|am i able|can i|could i|may i|what if i|how (?:do|can|could|would) i|se puede|puedo|podr[ée])\b",
    (
        "possible", "is there a", "able", "can i", "could i", "may i", "what if i", "how do i", "how can i",
        "how could i", "how would i", "se puede", "puedo", "podr",
    ),
    re.I,
)  # fmt: skip
_LATER = Prefiltered(
    r"\b(?:later(?: on)?|at some point|in the future|eventually|down the (?:road|line)|some ?day|"
    r"if i (?:want|need)|if needed|m[aá]s adelante|despu[eé]s)\b",
    (
        "later", "at some point", "in the future", "eventually", "down the ", "some day", "someday",
        "if i want", "if i need", "if needed", "adelante", "despu",
    ),
    re.I,
)  # fmt: skip
_QUESTION_START = Prefiltered(
    r"^(?:can|could|would|will|is|are|do|does|how|what|when|may|se puede|puedo)\b",
    ("can", "could", "would", "will", "is", "are", "do", "how", "what", "when", "may", "se puede", "puedo"),
    re.I,
)


def is_capability_question(text: str) -> bool:
    """ "can I change the time later?", "is it possible to stop the messages at some point?"."""
    if _CAPABILITY.search(text):
        return True
    asked = "?" in text or bool(_QUESTION_START.match(text.strip()))
    return asked and bool(_LATER.search(text))
