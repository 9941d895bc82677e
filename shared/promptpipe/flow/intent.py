"""Intent before tools: what a turn's decision looks like, and the optional classifier.

The deterministic decision is ``promptpipe.flow.intent_rules`` (context in, ``Intent`` out). When it
is not sure, an optional classifier call (``json_object``, a few tokens out, cached by normalised
text for five minutes in a bounded LRU) may add tools; without the classifier an unsure turn gets
the module's whole tool set, so gating never takes a tool away from a turn that may need it.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from promptpipe.controller import tool_table
from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse

SAVE, GENERATE = tool_table.PROFILE.name, tool_table.HABIT_PROMPT.name
SCHEDULER, TRANSITION = tool_table.SCHEDULER.name, tool_table.TRANSITION.name
INTAKE_TOOLS = (SAVE, GENERATE, SCHEDULER, TRANSITION)
FEEDBACK_TOOLS = (SAVE, SCHEDULER, TRANSITION)

ToolChoice = Literal["auto", "required"]
HINT_HEADER = "HINT (from the message's words; every tool stays offered, decide from the conversation):"
# The rules' names of an explicit request for an action: the intents worth a hint.
ACTION_INTENTS = frozenset({"change_habit", "stop_messages", "change_time", "prompt_now"})
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


def intent_hint(intent: Intent) -> str | None:
    """The line a keyword rule (or the classifier) may add to the context: what the message may ask
    for and the tools that would do it. It adds a hint; it never removes a tool (all are offered)."""
    if not intent.tools or not (intent.name in ACTION_INTENTS or intent.source == "classifier"):
        return None
    return f"{HINT_HEADER} it may ask to {intent.name.replace('_', ' ')}: {', '.join(intent.tools)}."


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
