"""A competent-model stand-in: an ``LLM`` that makes exactly the tool calls the corpus says a capable
model would make for the message being answered, and only if the request offers those tools.

The player (``scripts/corpus/player.py``) moves a ``Cursor`` to the conversation and turn being
played; every request is answered from it:

* a conversation turn (intake or feedback): round *n* of the turn's annotated calls, limited to the
  tools the request offers (round *n* = the number of tool-call responses since the participant's
  message); after the last round, or when none of a round's tools is offered, the annotated reply.
  ``tool_choice="required"`` does not make it call anything the message does not need (the player
  counts that turn as *forced*);
* the enrollment greeting (the ``<Hint: …>`` turn): the conversation's greeting;
* the prompt generator: a habit prompt built from the profile in the request (the offline coach's
  template);
* the synthesis call: the annotated reply;
* the intent classifier: the annotated tools of the turn as JSON.

A call the corpus gives by role (``record_outcome``, ``opt_out``: ``scripts/corpus/model.py``) is made
with the offered tool that ``ROLE_TOOLS`` binds to the role, its arguments adapted by the binding. When
the engine names that tool differently, add a binding here: it maps a capability to a name and touches
no conversation, so it is no tuning of the held-out split.

Requests that arrive over HTTP (``scripts/corpus/chat_completions_server.py``) carry no purpose: it is
recognised from the request itself.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from promptpipe.adapters.offline_coach.habit_prompt import build_habit_prompt
from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse, TokenUsage, ToolCall
from scripts.corpus.model import Conversation, Turn

STANDIN_MODEL = "competent-stand-in"
_SCHEDULE_ID = re.compile(r"\b(sched_[0-9a-f]{16})\b")
_LAST_PROMPT = re.compile(r"^- last habit prompt: (.+)$", re.M)
_GENERATOR_ASK = "Write today's habit prompt"
_MODULE_PURPOSES = ("intake", "feedback")
_SIDE_PURPOSES = ("prompt_generator", "synthesis", "classifier")


def _same(args: dict[str, Any]) -> dict[str, Any]:
    return dict(args)


def _outcome_as_done(args: dict[str, Any]) -> dict[str, Any]:
    """The corpus's ``outcome: done | not_done`` as the engine's ``record_outcome`` takes it (``done``)."""
    return {"done": args.get("outcome") == "done"}


# role -> (engine tool name, corpus arguments -> that tool's arguments), tried in order.
ROLE_TOOLS: dict[str, tuple[tuple[str, Callable[[dict[str, Any]], dict[str, Any]]], ...]] = {
    "record_outcome": (("record_outcome", _outcome_as_done),),
    "opt_out": (("opt_out", _same),),
}


def _binding(tool: str, offered: Collection[str]) -> tuple[str, Callable[[dict[str, Any]], dict[str, Any]]] | None:
    bindings = ROLE_TOOLS.get(tool, ((tool, _same),))
    return next(((name, adapt) for name, adapt in bindings if name in offered), None)


def bound_call(tool: str, args: dict[str, Any], offered: Collection[str]) -> tuple[str, dict[str, Any]] | None:
    """The offered tool (and its arguments) that makes the corpus's call, or ``None`` if none is offered."""
    binding = _binding(tool, offered)
    return (binding[0], binding[1](args)) if binding is not None else None


def fulfilled(tool: str, offered: Collection[str]) -> bool:
    """Whether an offered tool can make the corpus's call to ``tool`` (an engine tool or a role)."""
    return _binding(tool, offered) is not None


@dataclass(frozen=True)
class Position:
    conversation: Conversation | None = None
    turn_index: int | None = None

    @property
    def turn(self) -> Turn | None:
        if self.conversation is None or self.turn_index is None:
            return None
        return self.conversation.turns[self.turn_index]


class Cursor:
    """Where the player is: the conversation, and the turn whose message is being answered (``None``
    between messages: the greeting, scheduled prompts)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._position = Position()

    def move(self, conversation: Conversation | None, turn_index: int | None = None) -> None:
        with self._lock:
            self._position = Position(conversation, turn_index)

    @property
    def position(self) -> Position:
        with self._lock:
            return self._position


def purpose_of(request: ChatRequest) -> str:
    """The request's purpose; recognised from its shape when it came without one (over HTTP)."""
    if request.purpose in (*_MODULE_PURPOSES, *_SIDE_PURPOSES):
        return request.purpose
    if request.response_format:
        return "classifier"
    if request.messages and request.messages[-1].role == "system":
        return "synthesis"  # the synthesis instruction comes after the conversation
    last_user = _last_user(request.messages)
    if last_user.startswith(_GENERATOR_ASK):
        return "prompt_generator"
    return "intake" if any("INTAKE CONVERSATION CONTEXT" in (m.content or "") for m in request.messages) else "feedback"


def _last_user(messages: list[ChatMessage]) -> str:
    return next((m.content or "" for m in reversed(messages) if m.role == "user"), "")


def rounds_answered(messages: list[ChatMessage]) -> int:
    """Tool-call responses since the participant's message: the round this request asks for."""
    count = 0
    for message in reversed(messages):
        if message.role == "user":
            break
        if message.role == "assistant" and message.tool_calls:
            count += 1
    return count


def fill(value: object, messages: list[ChatMessage]) -> object:
    """Arguments with ``{schedule_id}`` and ``{last_prompt}`` replaced by what the request shows."""
    if isinstance(value, dict):
        return {k: fill(v, messages) for k, v in value.items()}
    if not isinstance(value, str) or "{" not in value:
        return value
    if "{schedule_id}" in value:
        ids = [m for message in messages if message.role == "tool" for m in _SCHEDULE_ID.findall(message.content or "")]
        value = value.replace("{schedule_id}", ids[-1] if ids else "unknown")
    if "{last_prompt}" in value:
        found = [m.group(1) for message in messages for m in _LAST_PROMPT.finditer(message.content or "")]
        value = value.replace("{last_prompt}", found[-1].strip() if found else "")
    return value


def habit_prompt_result(messages: list[ChatMessage]) -> str | None:
    """The text the last ``generate_habit_prompt`` call returned in this request, if any."""
    calls = [c for m in messages if m.role == "assistant" for c in m.tool_calls]
    call_ids = {c.id for c in calls if c.name == "generate_habit_prompt"}
    results = [m.content or "" for m in messages if m.role == "tool" and m.tool_call_id in call_ids]
    return results[-1] if results else None


def _reply_text(turn: Turn, messages: list[ChatMessage]) -> str:
    text = turn.reply
    if "{habit_prompt}" in text:
        prompt = habit_prompt_result(messages)
        text = text.replace("{habit_prompt}", prompt if prompt is not None else "a tiny first step")
    return text


class CompetentStandIn:
    """``LLM`` port implementation playing the corpus (see the module docstring)."""

    def __init__(self, cursor: Cursor) -> None:
        self.cursor = cursor
        self._next_id = 0
        self._lock = threading.Lock()

    def complete(self, request: ChatRequest) -> ChatResponse:
        purpose = purpose_of(request)
        position = self.cursor.position
        turn = position.turn
        if purpose == "prompt_generator":
            system = next((m.content or "" for m in request.messages if m.role == "system"), "")
            return self._text(build_habit_prompt(_last_user(request.messages), system))
        if purpose == "classifier":
            needed = turn.needed_tools if turn is not None else set()
            tools = sorted({name for t in needed for name, _ in ROLE_TOOLS.get(t, ((t, _same),))})
            return self._text(json.dumps({"intent": "action" if tools else "small_talk", "tools": tools}))
        if purpose == "synthesis":
            return self._text(_reply_text(turn, request.messages) if turn is not None else "Thanks!")
        if _last_user(request.messages).startswith("<Hint:") or turn is None:
            greeting = position.conversation.greeting if position.conversation is not None else "Hi!"
            return self._text(greeting)
        return self._turn(turn, request)

    def _turn(self, turn: Turn, request: ChatRequest) -> ChatResponse:
        offered = {tool.name for tool in request.tools}
        index = rounds_answered(request.messages)
        if index < len(turn.rounds):
            calls = [bound for c in turn.rounds[index] if (bound := bound_call(c.tool, c.args, offered))]
            if calls:
                return self._calls(calls, request.messages)
        return self._text(_reply_text(turn, request.messages))

    def _calls(self, calls: list[tuple[str, dict[str, Any]]], messages: list[ChatMessage]) -> ChatResponse:
        built = []
        with self._lock:
            for name, args in calls:
                self._next_id += 1
                arguments = json.dumps(fill(args, messages), ensure_ascii=False)
                built.append(ToolCall(id=f"call_{self._next_id}", name=name, arguments=arguments))
        return ChatResponse(tool_calls=built, model=STANDIN_MODEL, finish_reason="tool_calls", usage=_usage())

    @staticmethod
    def _text(content: str) -> ChatResponse:
        return ChatResponse(content=content, model=STANDIN_MODEL, finish_reason="stop", usage=_usage())


def _usage() -> TokenUsage:
    return TokenUsage()  # a stand-in spends nothing; the real-model evaluation reports tokens
