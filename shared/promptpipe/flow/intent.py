"""Intent before tools: which tool schemas a turn needs, decided before the first model call.

A deterministic first pass reads what the engine already knows (the module, the intake
controller's node when one is given, the profile's gaps, a fixed answer to a pending question, a
greeting hint, obvious small talk, explicit requests such as "move my reminder to 8"). When it is
not sure, an optional classifier call (``json_object``, a few tokens out, cached by normalised text
for five minutes in a bounded LRU) may narrow it; without the classifier an unsure turn gets the
module's whole tool set, so gating never takes a tool away from a turn that may need it.

``tool_choice`` is ``"required"`` only for an explicit action ("stop my messages", "new habit").
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse

SAVE, GENERATE, SCHEDULER, TRANSITION = "save_user_profile", "generate_habit_prompt", "scheduler", "transition_state"
INTAKE_TOOLS = (SAVE, GENERATE, SCHEDULER, TRANSITION)
FEEDBACK_TOOLS = (SAVE, SCHEDULER, TRANSITION)

ToolChoice = Literal["auto", "required"]
Source = Literal["rules", "controller", "classifier", "unsure"]


@dataclass(frozen=True)
class Intent:
    name: str
    tools: tuple[str, ...]
    confident: bool = True
    tool_choice: ToolChoice = "auto"
    source: Source = "rules"

    def to_audit(self) -> dict[str, object]:
        return {"name": self.name, "tools": list(self.tools), "tool_choice": self.tool_choice, "source": self.source}


# --- text patterns ------------------------------------------------------------------------------
_SMALL_TALK = re.compile(
    r"^(?:hi|hello|hey|hiya|yo|ok(?:ay)?|k|kk|thanks?|thank you|thx|ty|cool|great|nice|good|fine|lol|haha|"
    r"sure|yes|yep|yeah|no|nope|bye|good ?night|good morning|see you|cheers|awesome|perfect|got it|sounds good|"
    r"will do|np|no problem|you too|ok thanks|okay thanks|thanks a lot|thank you so much)$"
)
_ONLY_SYMBOLS = re.compile(r"^[\W_]*$")
_CLOCK = re.compile(r"\b(?:[01]?\d|2[0-3])(?::[0-5]\d)?\s*(?:am|pm|a\.m\.|p\.m\.)|\b(?:[01]?\d|2[0-3]):[0-5]\d\b", re.I)
_DAYPART = re.compile(
    r"\b(?:mornings?|evenings?|afternoons?|nights?|noon|midday|lunch(?:time)?|dinner|breakfast|tonight|"
    r"bed ?time|wake up|waking up|o'?clock)\b",
    re.I,
)
_ANCHOR = re.compile(r"\b(?:after|before|when|once|while|as soon as|right after|first thing)\b", re.I)
_STOP = re.compile(
    r"\b(?:stop|pause|cancel|unsubscribe|no more|don'?t send)\b.*\b(?:messages?|reminders?|prompts?|texts?|"
    r"schedules?|it)\b",
    re.I,
)
_CHANGE_TIME = re.compile(
    r"\b(?:change|move|switch|reschedule|shift|update|push)\b.*\b(?:time|reminder|prompt|schedule|message)\b"
    r"|\b(?:different|new) time\b",
    re.I,
)
_LIST_SCHEDULE = re.compile(r"\b(?:when|what time)\b.*\b(?:reminder|prompt|message|schedule)s?\b", re.I)
_NEW_HABIT = re.compile(
    r"\b(?:new habit|different habit|another habit|change (?:my|the) habit|switch (?:my |the )?habit|start over)\b",
    re.I,
)
_PROMPT_NOW = re.compile(r"\b(?:give|send|suggest|try)\b.*\b(?:prompt|habit|something|one)\b.*\bnow\b", re.I)
_DONE_ANSWER = re.compile(r"^q:\s*did you do it\?\s*a:", re.I)
_INTENSITY_ANSWER = re.compile(r"^q:\s*how's the intensity\?\s*a:", re.I)
_HINT = "<hint:"


def normalise(text: str) -> str:
    """Lower case, inner whitespace collapsed, surrounding punctuation and emoji dropped: the key of
    the small-talk rule and of the classifier cache."""
    lowered = re.sub(r"\s+", " ", text.strip().lower())
    return re.sub(r"^[\W_]+|[\W_]+$", "", lowered)


def is_small_talk(text: str) -> bool:
    norm = normalise(text)
    return bool(_ONLY_SYMBOLS.match(text.strip())) or bool(_SMALL_TALK.match(norm))


def mentions_time(text: str) -> bool:
    return bool(_CLOCK.search(text) or _DAYPART.search(text))


# --- the first pass -----------------------------------------------------------------------------
# The intake controller's nodes (a later change adds the controller): each names the tools that
# node may need. Unknown nodes fall through to the rules below.
CONTROLLER_NODE_TOOLS: dict[str, tuple[str, ...]] = {
    "greeting": (),
    "ask_domain": (SAVE,),
    "ask_motivation": (SAVE,),
    "ask_time": (SAVE,),
    "ask_anchor": (SAVE,),
    "offer_prompt": (SAVE, GENERATE),
    "schedule": (SAVE, SCHEDULER),
    "handoff": (TRANSITION,),
    "complete": INTAKE_TOOLS,
}


def first_pass(
    module: str,
    text: str,
    *,
    missing_required: Sequence[str],
    profile_started: bool,
    controller_node: str | None = None,
) -> Intent:
    """The deterministic decision. ``missing_required``: the profile fields the prompt generator
    still needs (``prompt_anchor``, ``preferred_time``); ``profile_started``: anything is saved.
    ``controller_node``: the intake controller's current node, when the controller runs."""
    stripped = text.strip()
    if stripped.lower().startswith(_HINT):
        return Intent("greeting", ())
    if is_small_talk(stripped):
        return Intent("small_talk", ())
    if _NEW_HABIT.search(stripped):
        return Intent("change_habit", (SAVE, TRANSITION), tool_choice="required")
    if _STOP.search(stripped):
        return Intent("stop_messages", (SAVE, SCHEDULER), tool_choice="required")
    if _CHANGE_TIME.search(stripped):
        return Intent("change_time", (SAVE, SCHEDULER), tool_choice="required")
    if module == "feedback":
        return _feedback(stripped, missing_required)
    if controller_node is not None and controller_node in CONTROLLER_NODE_TOOLS:
        return Intent(f"intake:{controller_node}", CONTROLLER_NODE_TOOLS[controller_node], source="controller")
    return _intake(stripped, missing_required, profile_started)


def _intake(text: str, missing: Sequence[str], profile_started: bool) -> Intent:
    if _PROMPT_NOW.search(text):
        return Intent("prompt_now", (SAVE, GENERATE), tool_choice="required")
    if not missing:
        return Intent("setup", INTAKE_TOOLS)  # profile complete: prompt, schedule, hand-off
    supplied = {"preferred_time"} if mentions_time(text) else set()
    if _ANCHOR.search(text):
        supplied.add("prompt_anchor")
    if set(missing) <= supplied:
        return Intent("completes_profile", INTAKE_TOOLS)  # this message may complete it: set-up follows
    if _LIST_SCHEDULE.search(text):
        return Intent("schedule_question", (SAVE, SCHEDULER))
    # A question of the participant's may ask for anything; plain answers fill in the profile.
    return Intent("profile", (SAVE,), confident="?" not in text or not profile_started)


def _feedback(text: str, missing: Sequence[str]) -> Intent:
    if missing:
        return Intent("repair", (TRANSITION,))
    if _INTENSITY_ANSWER.match(text):
        return Intent("intensity_answer", ())  # recorded by the system
    if _DONE_ANSWER.match(text):
        return Intent("done_answer", (SAVE,))
    if _LIST_SCHEDULE.search(text):
        return Intent("schedule_question", (SAVE, SCHEDULER))
    if mentions_time(text) and "instead" in text.lower():
        return Intent("change_time", (SAVE, SCHEDULER))
    return Intent("report", (SAVE,), confident="?" not in text)


# --- the optional classifier --------------------------------------------------------------------
class TTLCache:
    """A small LRU cache whose entries expire after ``ttl`` seconds (thread-safe)."""

    def __init__(self, *, ttl: float = 300.0, max_entries: int = 512, now: Callable[[], float] = time.monotonic):
        self.ttl, self.max_entries, self._now = ttl, max_entries, now
        self._items: OrderedDict[str, tuple[float, Intent]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Intent | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            if self._now() - item[0] > self.ttl:
                del self._items[key]
                return None
            self._items.move_to_end(key)
            return item[1]

    def put(self, key: str, value: Intent) -> None:
        with self._lock:
            self._items[key] = (self._now(), value)
            self._items.move_to_end(key)
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


def classifier_request(module: str, text: str, available: Sequence[str], *, system: str) -> ChatRequest:
    return ChatRequest(
        purpose="classifier",
        messages=[
            ChatMessage(role="system", content=f"{system.rstrip()} {', '.join(available)}."),
            ChatMessage(role="user", content=f"[{module}] {text}"),
        ],
        response_format={"type": "json_object"},
        max_tokens=60,
        temperature=0.0,
    )


def parse_classifier(response: ChatResponse, available: Sequence[str]) -> Intent | None:
    """The classifier's JSON as an ``Intent`` limited to ``available`` tools; ``None`` if unusable."""
    try:
        value = json.loads(response.content or "")
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("tools", []), list):
        return None
    name = value.get("intent") if isinstance(value.get("intent"), str) else "other"
    tools = tuple(t for t in available if t in value.get("tools", []))
    return Intent(str(name), () if name == "small_talk" else tools, source="classifier")
