"""What a turn's message may be about, read from the turn's context: a hint, never a limit
(docs/pipeline.md, "Tools by context"). Every turn is offered all the tools of its module with
``tool_choice="auto"``; the ``Intent`` these rules return names the tools the message most likely needs,
and an explicit request for an action adds a line saying so to the context (``intent.intent_hint``).

One pure function: ``decide(TurnContext) -> Intent`` (``TurnContext``: ``promptpipe.models.turn_context``,
plain data the offline coach and the corpus stand-in can build too). The context is what the coach last asked or
offered (the flow controller's node and the tools the flow names for it, a first prompt given and no
schedule yet, a question in the last reply) and the participant's message. The rules, in order:

1. a system hint (the enrollment greeting): nothing stressed;
2. an explicit request for an action ("move my reminder to 7pm", "stop the reminders", "I'd rather
   get it at 7pm from now on"): its tools, named in a hint when there is something to act on. The
   same words asked as a question about what is possible ("can I change the time later?", "is it
   possible to stop the messages at some point?"): the tools, no hint (a question needs an answer);
3. a message that needs no action ("thanks", "ok", "hi") when nothing is pending: nothing stressed;
4. otherwise the tools that can record an answer to what is pending, whatever the message's
   length ("yes", "dinner", "9ish" are answers), plus what the message itself may need (it may
   complete the profile; it asks about the schedule);
5. a question of the participant's that the rules cannot place: not confident (the classifier, when
   on, may name tools for the hint).
"""

from __future__ import annotations

import re
from typing import Literal

from promptpipe.flow.intent import FEEDBACK_TOOLS, GENERATE, INTAKE_TOOLS, SAVE, SCHEDULER, TRANSITION, Intent
from promptpipe.models.turn_context import TurnContext
from promptpipe.rules.intent_patterns import CHANGE_TIME, NEW_HABIT, PREFER, STOP, is_capability_question
from promptpipe.rules.literal_prefilter import Prefiltered

__all__ = ["TurnContext", "decide", "is_capability_question", "mentions_time", "needs_no_action", "normalise"]

# --- what the participant wrote ----------------------------------------------------------------
_NO_ACTION = re.compile(
    r"^(?:hi|hello|hey|hiya|hola|yo|ok(?:ay)?|k|kk|thanks?|thank you|thx|ty|gracias|cool|great|nice|good|fine|"
    r"lol|haha|sure|yes|yep|yup|yeah|ya|si|sí|vale|claro|no|nope|bye|good ?night|good morning|see you|cheers|"
    r"awesome|perfect|got it|sounds good|will do|np|no problem|you too|ok thanks|okay thanks|thanks a lot|"
    r"thank you so much|hi there|hello there|hey there)$"
)
_ONLY_SYMBOLS = re.compile(r"^[\W_]*$")
_CLOCK = re.compile(
    r"\b(?:[01]?\d|2[0-3])(?:[:.][0-5]\d)?\s*(?:am|pm|a\.m\.|p\.m\.)"  # 7pm, 7.30 am
    r"|\b(?:[01]?\d|2[0-3])[:.h][0-5]\d\b"  # 7:30, 7.30, 19h30
    r"|\b(?:[01]?\d|2[0-3])\s?-?ish\b"  # 9ish
    r"|\b(?:at|around|about|by|a las|sobre las)\s+(?:[01]?\d|2[0-3])\b",  # at 7, a las 9
    re.I,
)
# Behind exact literal prefilters (rules/literal_prefilter.py, proved by tests/unit/test_literal_prefilter.py):
# compiled at the first text holding a trigger, not at import.
_DAYPART = Prefiltered(
    r"\b(?:mornings?|evenings?|afternoons?|nights?|noon|midday|midnight|lunch(?:time)?|dinner|breakfast|"
    r"tonight|bed ?time|wake up|waking up|o'?clock|after work|before work|"
    r"ma[ñn]anas?|tardes?|noches?|mediod[ií]a|desayuno|almuerzo|comida|cena)\b",
    (
        "morning", "evening", "afternoon", "night", "noon", "midday", "lunch", "dinner", "breakfast", "time",
        "wake up", "waking up", "clock", "work", "mañana", "manana", "tarde", "noche", "mediod", "desayuno",
        "almuerzo", "comida", "cena",
    ),
    re.I,
)  # fmt: skip
_ANCHOR = re.compile(
    r"\b(?:after|before|when|once|while|as soon as|right after|first thing|despu[eé]s|antes|cuando|al)\b", re.I
)
_LIST_SCHEDULE = Prefiltered(
    r"\b(?:when|what time)\b.*\b(?:reminder|prompt|message|schedule)s?\b",
    ("reminder", "prompt", "message", "schedule"),
    re.I,
)
_PROMPT_NOW = Prefiltered(r"\b(?:give|send|suggest|try)\b.*\b(?:prompt|habit|something|one)\b.*\bnow\b", ("now",), re.I)
_DONE_ANSWER = re.compile(r"^q:\s*did you do it\?\s*a:", re.I)
_INTENSITY_ANSWER = re.compile(r"^q:\s*how's the intensity\?\s*a:", re.I)
_HINT = "<hint:"


def normalise(text: str) -> str:
    """Lower case, inner whitespace collapsed, surrounding punctuation and emoji dropped: the key of
    the no-action rule and of the classifier cache."""
    lowered = re.sub(r"\s+", " ", text.strip().lower())
    return re.sub(r"^[\W_]+|[\W_]+$", "", lowered)


def needs_no_action(text: str) -> bool:
    """Thanks, a greeting, a bare acknowledgement or an emoji: an answer only if something was asked."""
    return bool(_ONLY_SYMBOLS.match(text.strip())) or bool(_NO_ACTION.match(normalise(text)))


def mentions_time(text: str) -> bool:
    return bool(_CLOCK.search(text) or _DAYPART.search(text))


# --- what is pending ----------------------------------------------------------------------------
def pending_tools(ctx: TurnContext) -> tuple[str, ...]:
    """The tools that can record an answer to what is pending."""
    if ctx.module == "feedback":
        if ctx.missing_required:
            return (TRANSITION,)  # a profile that needs repair goes back to intake
        return FEEDBACK_TOOLS if ctx.asked_question else ()
    if ctx.paused or (ctx.node is not None and not ctx.flow_complete):
        return ctx.node_tools or (SAVE,)  # paused: a fact they give is still recorded
    if ctx.missing_required and not ctx.flow_complete:
        # Without the controller: the answer fills the profile; with one field left it may
        # complete it, and the first prompt and its schedule follow in the same turn.
        return (SAVE,) if len(ctx.missing_required) > 1 else INTAKE_TOOLS
    return INTAKE_TOOLS  # the profile is complete: first prompt, schedule, hand-over


# --- the decision -------------------------------------------------------------------------------
def _action(ctx: TurnContext, text: str) -> tuple[str, tuple[str, ...], bool] | None:
    """An explicit request for an action: (name, its tools, whether there is something to act on)."""
    if NEW_HABIT.search(text):
        return "change_habit", (SAVE, TRANSITION), ctx.module == "feedback" and not ctx.paused
    if STOP.search(text):
        return "stop_messages", (SAVE, SCHEDULER), ctx.has_schedule and not ctx.paused
    if CHANGE_TIME.search(text) or (PREFER.search(text) and mentions_time(text)):
        return "change_time", (SAVE, SCHEDULER), ctx.has_schedule and not ctx.paused
    return None


def decide(ctx: TurnContext) -> Intent:
    text = ctx.text.strip()
    if text.lower().startswith(_HINT):
        return Intent("greeting", ())
    action = _action(ctx, text)
    if action is not None:
        name, tools, actionable = action
        if is_capability_question(text):  # asked whether it could be done: answer, offer, never force
            return Intent(f"{name}_question", _merge(tools, pending_tools(ctx)))
        if actionable:
            return Intent(name, _merge(tools, pending_tools(ctx)))
    if needs_no_action(text) and not ctx.awaiting_answer:
        return Intent("small_talk", ())
    intent = _feedback(ctx, text) if ctx.module == "feedback" else _intake(ctx, text)
    if action is not None:  # nothing to act on yet (no schedule): an answer that also names its tools
        return Intent(intent.name, _merge(intent.tools, action[1]), confident=intent.confident, source=intent.source)
    return intent


def _intake(ctx: TurnContext, text: str) -> Intent:
    if _PROMPT_NOW.search(text):
        return Intent("prompt_now", (SAVE, GENERATE))
    pending = pending_tools(ctx)
    source: Literal["rules", "controller"] = "controller" if ctx.node is not None else "rules"
    supplied = {"preferred_time"} if mentions_time(text) else set()
    if _ANCHOR.search(text):
        supplied.add("prompt_anchor")
    if ctx.missing_required and set(ctx.missing_required) <= supplied:
        return Intent("completes_profile", _merge(pending, INTAKE_TOOLS), source=source)  # set-up follows
    if _LIST_SCHEDULE.search(text):
        return Intent("schedule_question", _merge(pending, (SCHEDULER,)), source=source)
    name = f"intake:{ctx.node}" if ctx.node else ("answer" if ctx.awaiting_answer else "profile")
    # A question of the participant's may ask for anything; answers fill in what is pending.
    return Intent(name, pending, confident="?" not in text, source=source)


def _feedback(ctx: TurnContext, text: str) -> Intent:
    pending = pending_tools(ctx)
    if ctx.missing_required:
        return Intent("repair", pending)
    if _INTENSITY_ANSWER.match(text):
        return Intent("intensity_answer", ())  # recorded by the system
    if _DONE_ANSWER.match(text):
        return Intent("done_answer", (SAVE,))
    if _LIST_SCHEDULE.search(text):
        return Intent("schedule_question", (SAVE, SCHEDULER))
    if ctx.asked_question:
        return Intent("answer", pending, confident="?" not in text)
    return Intent("report", (SAVE,), confident="?" not in text)


def _merge(first: tuple[str, ...], second: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*first, *second)))
