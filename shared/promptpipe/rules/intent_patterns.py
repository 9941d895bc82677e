"""The words of a request, in one place: what the turn's rules (``flow/intent_rules``) offer tools for
and what the offline coach (``adapters/offline_coach``) acts on read a message with the same patterns,
so that the two cannot drift apart ("start over" offering the transition the coach then never makes).

Pure: ``re`` only, no I/O; the adapters may import it (pyproject.toml, import-linter contracts).
"""

from __future__ import annotations

import re

__all__ = ["CHANGE_TIME", "NEW_HABIT", "PREFER", "STOP", "is_capability_question"]

# "stop the reminders", "don't send me messages", "no more texts"; not "I won't stop the walks".
STOP = re.compile(
    r"\b(?<!n't )(?<!not )(?:stop|pause|cancel|unsubscribe|don'?t send|deja de|dejar de)\b.*"
    r"\b(?:messages?|reminders?|prompts?|texts?|schedules?|it|mensajes|recordatorios)\b"
    r"|\bno (?:more|m[aá]s) (?:messages|reminders|prompts|texts|mensajes|recordatorios)\b",
    re.I,
)
# "move my reminder", "change the time", "a later time"
CHANGE_TIME = re.compile(
    r"\b(?:change|move|switch|reschedule|shift|update|push|cambiar|mover)\s+"
    r"(?:(?:my|the|your|our|it|that|this|daily|morning|evening|la|el|mi|del)\s+){0,3}"
    r"(?:time|reminder|prompt|schedule|message|text|hora|recordatorio|mensaje)s?\b"
    r"|\b(?:change|move|switch|shift|push)\s+it\s+(?:to|back|forward|earlier|later)\b"
    r"|\b(?:different|new|another|later|earlier) time\b",
    re.I,
)
# "I'd rather get it at 7pm from now on": with a time, a stated preference asks for a change too.
PREFER = re.compile(
    r"\b(?:rather|prefer|instead|from now on|going forward|from tomorrow|switch to|mejor (?:a las|a la|en la|por la)|"
    r"prefiero|preferir[ií]a|m[aá]s bien|plut[oô]t|je pr[ée]f[èe]re|de pr[ée]f[ée]rence|j'aimerais mieux)\b",
    re.I,
)
NEW_HABIT = re.compile(
    r"\b(?:new habit|different habit|another habit|change (?:my|the) habit|switch (?:my |the )?habit|start over)\b",
    re.I,
)

# A question about what is possible: asks whether an action could be taken, not to take it now.
_CAPABILITY = re.compile(
    r"\b(?:is it possible|would it be possible|will it be possible|is there (?:a|any) way|will i be able|"
    r"would i be able|am i able|can i|could i|may i|what if i|how (?:do|can|could|would) i|se puede|puedo|podr[ée])\b",
    re.I,
)
_LATER = re.compile(
    r"\b(?:later(?: on)?|at some point|in the future|eventually|down the (?:road|line)|some ?day|"
    r"if i (?:want|need)|if needed|m[aá]s adelante|despu[eé]s)\b",
    re.I,
)
_QUESTION_START = re.compile(r"^(?:can|could|would|will|is|are|do|does|how|what|when|may|se puede|puedo)\b", re.I)


def is_capability_question(text: str) -> bool:
    """ "can I change the time later?", "is it possible to stop the messages at some point?"."""
    if _CAPABILITY.search(text):
        return True
    asked = "?" in text or bool(_QUESTION_START.match(text.strip()))
    return asked and bool(_LATER.search(text))
