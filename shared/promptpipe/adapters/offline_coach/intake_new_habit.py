"""A new habit asked for in the feedback week (docs/offline-coach.md, "Intakes with a detour"): the habit
the request names ("can i start a new habit? i wanna do pushups", "quiero otro hábito: tomar más agua") is
saved with the hand-over back to the intake, and that intake asks again why, when and after what — the
earlier answers were for the earlier habit — and, once set up, replaces the earlier daily schedule rather
than adding a second one.

The coach is stateless: the second intake is told by its own reply to the request in the history (from
there on, the answers given are read again, as the first intake read them); what was said before it is
the earlier habit's."""

from __future__ import annotations

import re
from typing import Any

from promptpipe.adapters.offline_coach.intake_answers import parse_intake_message
from promptpipe.adapters.offline_coach.intake_detours import hands_over_the_time
from promptpipe.adapters.offline_coach.intake_reasons import parse_domain
from promptpipe.adapters.offline_coach.phrases import say
from promptpipe.adapters.offline_coach.reading import accepts, asked_for, suggestion
from promptpipe.adapters.offline_coach.text import (
    ANCHOR,
    DOMAIN,
    INTAKE_ORDER,
    SAVE,
    SCHEDULER,
    TIME,
    TRANSITION,
    _clean,
    _substantive,
)
from promptpipe.adapters.offline_coach.times import parse_clock_time
from promptpipe.adapters.offline_coach.turn import Turn, _result_json, _Step
from promptpipe.models.llm import ChatMessage
from promptpipe.rules.feedback_reading import new_habit
from promptpipe.rules.message_reading import hands_over, plain, read_message

# The words of the request, before the habit it names: "a new habit too?", "otro hábito:", "une autre habitude".
_ASKS_NEW = re.compile(
    r"\b(?:(?:a |an )?(?:new|different|another|other) (?:habit|one)|(?:change|switch) (?:my |the )?habit|"
    r"something else|(?:otro|nuevo) habito|cambiar de habito|otra cosa|(?:une )?(?:nouvelle|autre) habitude|"
    r"changer d'?habitude)\b"
)
# "switch to meditation", "cambio a leer", "passer au yoga": the habit switched to (never a time: "a las 8").
_SWITCH_TO = re.compile(
    r"\b(?:switch(?:ing)? to|change (?:it )?to|cambi(?:o|ar|amos|emos) a|me cambio a|passer (?:a|au|aux)|"
    r"changer pour)\s+(?!(?:the|las?|los|el|\d)\b|\d)(?P<habit>[a-z][\w' ]{1,30}?)(?=\s*(?:[?.!,;]|$|\b(?:instead|"
    r"too|en vez|mejor|plutot)\b))"
)
_LEAD = re.compile(r"^(?:\W|too\b|also\b|as well\b|instead\b|tambien\b|ahora\b|aussi\b|plutot\b|maybe\b|like\b)+")
_LANGUAGES = ("en", "es", "fr")


def habit_named(text: str) -> str:
    """The habit a request for a new one names after its request words ("new habit: drink more water",
    "can i start a new habit too? i wanna do pushups", "quiero cambiar de hábito, ahora quiero meditar"), or
    with none, the one it wants instead ("I want to do yoga instead"); "" when it names none."""
    said = plain(text)
    request = _ASKS_NEW.search(said)
    switch = _SWITCH_TO.search(said) if request is None or not _clean(said[request.end() :]) else None
    if switch is not None:  # "y si mejor cambio a leer? quiero un hábito nuevo": the habit switched to
        named = parse_domain(switch["habit"]) or _clean(switch["habit"])
        return named if _substantive(named) else ""
    if request is None:
        return parse_domain(text) if new_habit(text) else ""
    rest = _clean(_LEAD.sub("", text[request.end() :].strip()))
    if not rest or "?" in rest:
        return ""
    named = parse_domain(rest)
    if named:
        return named
    bare = parse_intake_message(rest, dict.fromkeys(INTAKE_ORDER, ""), DOMAIN).get(DOMAIN, "")
    return bare if len(bare.split()) <= 5 else ""


def switch_habit(turn: Turn, lang: str) -> tuple[_Step, str]:
    """The feedback week's new-habit request: the habit it names saved, back to the intake, and the next
    question (why it matters, or which habit when none was named)."""
    habit = habit_named(turn.user)
    if habit and not turn.called(SAVE) and SAVE in turn.tools:
        return [(SAVE, {DOMAIN: habit})], "feedback: the new habit the request names"
    if not turn.called(TRANSITION):
        args = {"target_state": "INTAKE", "reason": "participant wants a different habit"}
        return [(TRANSITION, args)], "feedback: new habit requested; back to intake"
    if habit and any(c.ok for c in turn.called(SAVE)):
        return say("new_habit_named", lang, habit=habit), "feedback: the new habit; asking why"
    return say("new_habit", lang), "feedback: asking for the new habit"


def _opening(key: str, lang: str) -> str:
    """A phrase's words up to its first "!" (what every reply of that kind starts with)."""
    return say(key, lang, habit="").split("!")[0]


_MARKS = tuple(_opening(key, lang) for key in ("new_habit", "new_habit_named") for lang in _LANGUAGES)


def second_intake_start(history: list[ChatMessage]) -> int | None:
    """The index in ``history`` of the coach's reply to a request for a new habit (the intake since is a
    second one), or ``None``."""
    marks = [i for i, m in enumerate(history) if m.role == "assistant" and (m.content or "").startswith(_MARKS)]
    return marks[-1] if marks else None


def fields_since(history: list[ChatMessage], start: int, known: dict[str, str]) -> dict[str, str]:
    """``known`` with only the fields answered since the second intake began (the habit named with the
    request, answers read against the coach's question, a suggestion taken, a choice handed over); the
    others were the earlier habit's, and are asked again."""
    marker = history[start].content or ""
    given = {DOMAIN} if marker.startswith(tuple(_opening("new_habit_named", lang) for lang in _LANGUAGES)) else set()
    for before, message in zip(history[start:], history[start + 1 :], strict=False):
        if message.role != "user" or before.role != "assistant":
            continue
        asked, text = asked_for(before.content or ""), message.content or ""
        empty = dict.fromkeys(INTAKE_ORDER, "") | {DOMAIN: known.get(DOMAIN, "")}
        said = parse_intake_message(text, empty, asked if asked in INTAKE_ORDER else None)
        if TIME in said and parse_clock_time(text) is None:  # "en la mañana": a time proposed, not yet saved
            said.pop(TIME)
        given |= set(said)
        offered = suggestion(before.content or "")
        if offered and (accepts(text) or read_message(text).kind == "yes"):
            given.add(TIME if re.search(r"\d", offered) else (asked if asked in INTAKE_ORDER else ANCHOR))
        if asked in INTAKE_ORDER and (hands_over(text) or hands_over_the_time(text)):
            given.add(asked)
    return {name: (value if name in given or name not in INTAKE_ORDER else "") for name, value in known.items()}


def replace_earlier_schedule(turn: Turn, create: dict[str, Any]) -> _Step | None:
    """The set-up of a second intake: the earlier habit's schedules listed and deleted, then ``create``;
    ``None`` once done (or when there is no scheduler to ask)."""
    if SCHEDULER not in turn.tools or turn.called(SCHEDULER, action="create"):
        return None
    listed = next((c for c in turn.called(SCHEDULER, action="list") if c.ok), None)
    if listed is None:
        return [(SCHEDULER, {"action": "list"})]
    data = _result_json(listed.result or "")
    ids = [str(i) for i in data["schedule_ids"]] if isinstance(data, dict) and data.get("schedule_ids") else []
    ids = ids or re.findall(r"internal id: ([^\s)]+)\)", listed.result or "")
    return [*((SCHEDULER, {"action": "delete", "schedule_id": i}) for i in ids), (SCHEDULER, create)]
