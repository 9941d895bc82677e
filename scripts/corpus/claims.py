"""What a coach reply claims, checked against the stored state (docs/offline-coach.md, "Never
claiming what did not happen").

Each statement of a reply (a sentence that does not ask: an offer, "Shall I send you one every day
around 8am?", claims nothing) is read for

* **a schedule time**: "comes every day around 8pm", "will now come around 9pm", "I'll send you a fresh
  prompt every day around 7:15am": that daily schedule exists after the turn;
* **today**: "the first one arrives today", "comes today around 8pm": that time is still ahead of the
  participant's local time when the message came;
* **paused or stopped**: "your daily prompts are paused", "I've stopped your daily prompts", "no daily
  prompt scheduled": no daily schedule is live after the turn;
* **a check-in before any prompt**: "How did today's habit go?", "did you get a chance to try it?"
  while no daily prompt had been delivered;
* **a schedule touched unasked**: a live daily schedule moved or deleted by a message for which the
  corpus makes no ``scheduler`` or ``opt_out`` call and saves no new time ("need to stop at the
  pharmacy first", "no more texts after 9pm").

A quoted habit prompt (“…”) is the prompt's text, not the coach's claim, and is left out. The turn's
local time, prompts delivered before it and schedules after it come from the player
(``scripts/corpus/player.py``, ``TurnOutcome``).
"""

from __future__ import annotations

import re
from typing import Any

_QUOTED = re.compile(r"“[^”]*”")
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_TIME = r"(\d{1,2})(?::(\d{2}))?\s*([ap]m)"
_SCHEDULE_CLAIM = re.compile(
    r"\b(?:comes?|arrives?|set for|will now come|now comes|on again|send you a fresh prompt)\b"
    rf"[^.!?]*?\baround {_TIME}",
    re.I,
)
_TODAY = re.compile(r"\b(?:arrives?|comes?)\b[^.!?]*\btoday\b|\btoday\b[^.!?]*\baround\b", re.I)
_NOTHING_LIVE = re.compile(
    r"\b(?:are paused|paused until|stopped your daily prompts|no daily prompt scheduled|"
    r"nothing is scheduled)\b",
    re.I,
)
# The same statements in Spanish and French (the offline coach's phrases.py and feedback_answers.py):
# "llega cada día hacia las 8am", "a las 20:00", "arrive chaque jour vers 19h", "en pausa", "en pause".
_LOCAL_TIME = r"(\d{1,2})(?:(?::|h)(\d{2}))?\s*(h\b|[ap]m\b)?"
_LOCAL_SCHEDULE_CLAIM = re.compile(
    r"\b(?:llega|llegan|vuelven|queda|enviar[ée]|arrive|arrivera|reprennent|pr[ée]vu|enverrai)\b"
    rf"[^.!?]*?(?:\bhacia las|\ba las|\bvers|(?<!\w)à)\s+{_LOCAL_TIME}",
    re.I,
)
_LOCAL_TODAY = re.compile(r"\b(?:llega|arrive)\b[^.!?]*\b(?:hoy|aujourd'hui)\b", re.I)
_LOCAL_NOTHING_LIVE = re.compile(
    r"\b(?:quedan en pausa|sont en pause|he detenido tus mensajes|j'ai arrêté tes messages|"
    r"no hay ningún mensaje diario programado|aucun message quotidien n'est prévu)",
    re.I,
)
_CHECK_IN = re.compile(
    r"\bhow did (?:today's|your latest|your) (?:habit|prompt)|\bdid you get a chance to try it\b|"
    r"\bhow did today's\b",
    re.I,
)


def _hhmm(match: re.Match[str]) -> str:
    hour, minute, half = int(match[1]), int(match[2] or 0), match[3].lower()
    return f"{hour % 12 + (12 if half == 'pm' else 0):02d}:{minute:02d}"


def _hhmm_local(match: re.Match[str]) -> str:
    hour, minute, half = int(match[1]), int(match[2] or 0), (match[3] or "").lower()
    if half in ("am", "pm"):
        hour = hour % 12 + (12 if half == "pm" else 0)
    return f"{hour:02d}:{minute:02d}"


def _passed(said: str, local_time: Any) -> bool:
    """Whether today's ``said`` time is already past at ``local_time``. A time just after midnight is
    the end of the day (its prompt goes out some minutes before: today, at 23:50, for "12am")."""
    said = f"24{said[2:]}" if said.startswith("00:") else said
    return said <= f"{local_time:%H:%M}"


def statements(reply: str) -> list[str]:
    """The sentences of ``reply`` that state something (not a question), quoted prompts left out."""
    return [s.strip() for s in _SENTENCE.findall(_QUOTED.sub("", reply)) if s.strip() and not s.strip().endswith("?")]


def contradicted(reply: str, *, schedules_after: tuple[str, ...], local_time: Any) -> list[str]:
    """The claims of ``reply`` the state contradicts, one line each."""
    found: list[str] = []
    for sentence in statements(reply):
        claim = _SCHEDULE_CLAIM.search(sentence)
        if claim:
            said = _hhmm(claim)
            if said not in schedules_after:
                found.append(f"says the prompt comes around {said}; schedules: {list(schedules_after) or 'none'}")
            if _TODAY.search(sentence) and local_time is not None and _passed(said, local_time):
                found.append(f"says today around {said}, but it is {local_time:%H:%M} there")
        local = None if claim else _LOCAL_SCHEDULE_CLAIM.search(sentence)
        if local:
            said = _hhmm_local(local)
            if said not in schedules_after:
                found.append(f"says the prompt comes at {said}; schedules: {list(schedules_after) or 'none'}")
            if _LOCAL_TODAY.search(sentence) and local_time is not None and _passed(said, local_time):
                found.append(f"says today at {said}, but it is {local_time:%H:%M} there")
        if (_NOTHING_LIVE.search(sentence) or _LOCAL_NOTHING_LIVE.search(sentence)) and schedules_after:
            found.append(f"says nothing is scheduled or it is paused; schedules: {list(schedules_after)}")
    return found


def replies_of(turn_outcome: Any) -> list[str]:
    """The coach's replies (text, not tool calls) in one turn."""
    return [
        o.response.content
        for o in turn_outcome.observations
        if o.purpose in ("intake", "feedback") and o.response is not None and o.response.content
    ]


def _saves_a_time(turn: Any) -> bool:
    """The corpus saves a new preferred time for the message: a change of mind moves the schedule."""
    return any(call.args.get("preferred_time") for round_ in turn.rounds for call in round_)


def claim_problems(outcome: Any) -> list[str]:
    """Every contradicted claim of a played conversation, every check-in before a delivered prompt, and
    every live daily schedule moved or deleted by a message that asked for no such thing (the corpus
    gives no ``scheduler`` or ``opt_out`` call for it, nor a new preferred time)."""
    found: list[str] = []
    before: tuple[str, ...] = ()
    for turn_outcome in outcome.turns:
        where = f"{outcome.conversation.id} turn {turn_outcome.index + 1} {turn_outcome.say!r}"
        turn = outcome.conversation.turns[turn_outcome.index] if hasattr(outcome.conversation, "turns") else None
        asked = turn is None or bool({"scheduler", "opt_out"} & turn.needed_tools) or _saves_a_time(turn)
        if before and turn_outcome.schedules_after != before and not asked:
            found.append(f"{where}: the daily schedule {list(before)} became {list(turn_outcome.schedules_after)}")
        before = turn_outcome.schedules_after
        for reply in replies_of(turn_outcome):
            for problem in contradicted(
                reply, schedules_after=turn_outcome.schedules_after, local_time=turn_outcome.local_time
            ):
                found.append(f"{where}: {problem}: {reply!r}")
            if turn_outcome.delivered_before == 0 and _CHECK_IN.search(reply):
                found.append(f"{where}: asks how it went before any prompt was delivered: {reply!r}")
    return found


# An example after the question still leaves the question the last thing asked ("What time …? For example
# 8am or 7:30pm.", "¿A qué hora …? Por ejemplo 8:00 o 19:30.").
_EXAMPLE_AFTER = re.compile(r"\?\s*(?:for example|e\.g\.|por ejemplo|par exemple)\b[^?]*$", re.I)


def asks_at_the_end(reply: str) -> bool:
    """The reply ends on a question (an example after it aside)."""
    return reply.rstrip().endswith("?") or bool(_EXAMPLE_AFTER.search(reply))


def ends_gracefully(outcome: Any) -> bool:
    """Ended as expected, or the last thing the coach said asks something (or no model answered the
    last message: an opt-out or HELP the webhook answered)."""
    if outcome.completed:
        return True
    last = outcome.turns[-1] if outcome.turns else None
    replies = replies_of(last) if last is not None else []
    return not replies or asks_at_the_end(replies[-1])
