"""The request read as a turn: the purpose, the context block's fields, the history, the latest user
message, the flow controller's steering and the tool calls already made in this loop."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from promptpipe.adapters.offline_coach.faq import StudyFacts
from promptpipe.adapters.offline_coach.text import _EMPTY_VALUES, FEEDBACK_HEADER, HINT_PREFIX, INTAKE_HEADER
from promptpipe.models.llm import ChatMessage, ChatRequest
from promptpipe.rules.language import DEFAULT_LANGUAGE, conversation_language, detect_language


@dataclass
class LoopCall:
    """A tool call made earlier in this loop, with its result (``None`` when not answered)."""

    name: str
    args: dict[str, Any]
    result: str | None

    @property
    def ok(self) -> bool:
        return self.result is not None and not self.result.startswith("ERROR:")

    @property
    def failed(self) -> bool:
        return self.result is not None and self.result.startswith("ERROR:")


@dataclass
class Turn:
    purpose: str
    user: str
    context_text: str = ""
    context: dict[str, str] = field(default_factory=dict)
    system_text: str = ""
    history: list[ChatMessage] = field(default_factory=list)
    calls: list[LoopCall] = field(default_factory=list)
    tools: set[str] = field(default_factory=set)
    call_count: int = 0  # tool calls already in the request (ids continue from here)
    # The flow controller's latest choice (intake), when the request carries one.
    steer_node: str = ""
    steer_mode: str = ""
    steer_fields: list[str] = field(default_factory=list)
    study: StudyFacts = field(default_factory=StudyFacts)  # what the answers may say of the study

    def called(self, name: str, **match: Any) -> list[LoopCall]:
        return [c for c in self.calls if c.name == name and all(c.args.get(k) == v for k, v in match.items())]

    @property
    def last_assistant(self) -> str:
        return next((m.content or "" for m in reversed(self.history) if m.role == "assistant"), "")

    @property
    def language(self) -> str:
        """The participant's language (rules/language.py): from their own messages, latest first, else
        from the study's greeting that opened the conversation, else English."""
        found = self.own_language
        greeting = next((m.content or "" for m in self.history if m.role == "assistant"), "")
        return found or detect_language(greeting) or DEFAULT_LANGUAGE

    @property
    def own_language(self) -> str:
        """The language the participant's own messages tell (rules/language.py), "" when none does."""
        said = [m.content or "" for m in self.history if m.role == "user"] + [self.user]
        # a hint, or a poll's answer in its canonical English form ("Q: Did you do it? A: Next time"), is
        # not their words
        own = [t for t in said if not t.startswith(HINT_PREFIX) and not re.match(r"\s*Q: .* A: ", t)]
        return conversation_language(own, default="")

    @property
    def name(self) -> str:
        match = re.search(r"^Name:\s*(\S.*)$", self.context_text, re.M)
        return match[1].strip().split()[0] if match else ""


def read_turn(request: ChatRequest) -> Turn:
    messages = request.messages
    user_index = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    turn = Turn(
        purpose=request.purpose,
        user=(messages[user_index].content or "") if user_index >= 0 else "",
        tools={t.name for t in request.tools},
        call_count=sum(len(m.tool_calls) for m in messages),
    )
    systems = [m.content or "" for m in messages[: max(user_index, 0)] if m.role == "system"]
    turn.system_text = "\n".join(systems)
    for text in systems:
        if text.startswith((INTAKE_HEADER, FEEDBACK_HEADER)):
            turn.context_text = text
            for key, value in re.findall(r"^- ([A-Za-z_ ]+):\s*(.*)$", text, re.M):
                turn.context[key.strip()] = "" if value.strip() in _EMPTY_VALUES else value.strip()
    turn.history = [m for m in messages[: max(user_index, 0)] if m.role in ("user", "assistant")]
    steering = [
        m.content or "" for m in messages if m.role == "system" and (m.content or "").startswith(_STEER_HEADERS)
    ]
    if steering:
        _read_steering(turn, steering[-1])
    results = {m.tool_call_id: m.content or "" for m in messages[user_index + 1 :] if m.role == "tool"}
    for message in messages[user_index + 1 :]:
        for call in message.tool_calls:
            try:
                args = call.parsed_arguments()
            except ValueError:
                args = {}
            turn.calls.append(LoopCall(call.name, args, results.get(call.id)))
    return turn


_STEER_HEADERS = ("FLOW CONTROLLER:", "FLOW CONTROLLER UPDATE:")


def _read_steering(turn: Turn, text: str) -> None:
    """The controller's block: ``- pursue: <node> (<MODE>)`` and ``- fields: a, b``."""
    match = re.search(r"^- pursue: (\S+) \((\w+)\)", text, re.M)
    if match:
        turn.steer_node, turn.steer_mode = match[1], match[2]
    elif re.search(r"^- pursue: nothing:", text, re.M):
        turn.steer_mode = "PAUSED"
    fields = re.search(r"^- fields: (.+)$", text, re.M)
    turn.steer_fields = [f.strip() for f in fields[1].split(",")] if fields else []


def _result_json(result: str) -> Any:
    """The JSON payload a tool result carries after its first line, if any."""
    for index, char in enumerate(result):
        if char in "{[" and (index == 0 or result[index - 1] == "\n"):
            try:
                return json.loads(result[index:])
            except ValueError:
                return None
    return None


def _error_reason(result: str | None) -> str:
    text = (result or "").removeprefix("ERROR:").strip()
    return text.split(" (", 1)[0].strip() or "an unexpected error"


_Step = str | list[tuple[str, dict[str, Any]]]  # reply text, or tool calls to make
