"""A scripted ``LLM`` for tests: it replays the steps it was given, in order, and records requests.

Each step is a ``ChatResponse`` (returned), a callable ``(ChatRequest) -> ChatResponse`` (called with
the request) or an exception instance (raised). Tool calls without an id get deterministic ids
``call_1``, ``call_2``, … in the order this fake hands them out.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeAlias

from promptpipe.errors import PromptPipeError
from promptpipe.models.llm import ChatRequest, ChatResponse, ToolCall

ScriptStep: TypeAlias = ChatResponse | Callable[[ChatRequest], ChatResponse] | BaseException

SCRIPTED_MODEL = "scripted"


class ScriptExhaustedError(PromptPipeError, AssertionError):
    """The code under test made more LLM calls than the test scripted."""


class ScriptedLLM:
    """``LLM`` port fake. ``requests`` holds a deep copy of every request, in call order."""

    def __init__(self, steps: Iterable[ScriptStep] = ()) -> None:
        self._steps: deque[ScriptStep] = deque()
        self._next_call_id = 1
        self._lock = threading.Lock()
        self.requests: list[ChatRequest] = []
        self.add(*steps)

    def add(self, *steps: ScriptStep) -> ScriptedLLM:
        """Append steps to the script; returns ``self`` so calls chain."""
        for step in steps:
            if not isinstance(step, ChatResponse | BaseException) and not callable(step):
                raise TypeError(f"a script step must be a ChatResponse, a callable or an exception: {step!r}")
        with self._lock:
            self._steps.extend(steps)
        return self

    @property
    def remaining(self) -> int:
        """Steps not consumed yet."""
        return len(self._steps)

    @property
    def calls(self) -> int:
        return len(self.requests)

    def assert_exhausted(self) -> None:
        """Fail when the code under test made fewer calls than scripted."""
        if self._steps:
            raise AssertionError(
                f"ScriptedLLM: {len(self._steps)} scripted step(s) were never used (after {len(self.requests)} call(s))"
            )

    def complete(self, request: ChatRequest) -> ChatResponse:
        # Copy: callers often keep appending to the same message list after the call.
        recorded = request.model_copy(deep=True)
        with self._lock:
            self.requests.append(recorded)
            if not self._steps:
                raise ScriptExhaustedError(self._exhausted_message(recorded))
            step = self._steps.popleft()
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, ChatResponse):
            response = step
        else:
            response = step(recorded)
            if not isinstance(response, ChatResponse):
                raise TypeError(f"a scripted callable returned {type(response).__name__}, not ChatResponse")
        return self._with_call_ids(response)

    def _with_call_ids(self, response: ChatResponse) -> ChatResponse:
        """A copy (a step may be reused) whose id-less tool calls get the next ``call_N``."""
        response = response.model_copy(deep=True)
        with self._lock:
            for call in response.tool_calls:
                if not call.id:
                    call.id = f"call_{self._next_call_id}"
                    self._next_call_id += 1
        return response

    def _exhausted_message(self, request: ChatRequest) -> str:
        last_user = next((m.content for m in reversed(request.messages) if m.role == "user"), None)
        return (
            f"ScriptedLLM: no scripted response left for call #{len(self.requests)} "
            f"(purpose={request.purpose!r}, last user message={last_user!r}); add more steps"
        )

    # --- response builders ----------------------------------------------------------------------

    @staticmethod
    def text(content: str | None, *, model: str = SCRIPTED_MODEL) -> ChatResponse:
        """A plain reply."""
        return ChatResponse(content=content, model=model, finish_reason="stop")

    @staticmethod
    def tool_call(
        name: str,
        arguments: dict[str, Any] | None = None,
        call_id: str | None = None,
        *,
        content: str | None = None,
    ) -> ChatResponse:
        """A reply with one tool call; ``arguments`` are JSON-encoded. Without ``call_id`` the id is
        assigned when the step is played (``call_N``)."""
        call = ToolCall(id=call_id or "", name=name, arguments=json.dumps(arguments or {}))
        return ChatResponse(content=content, tool_calls=[call], model=SCRIPTED_MODEL, finish_reason="tool_calls")

    @staticmethod
    def tool_calls(
        calls: Sequence[tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], str]],
        *,
        content: str | None = None,
    ) -> ChatResponse:
        """A reply with several tool calls: ``(name, arguments)`` or ``(name, arguments, call_id)``."""
        built: list[ToolCall] = []
        for item in calls:
            name, arguments, *rest = item
            built.append(ToolCall(id=rest[0] if rest else "", name=name, arguments=json.dumps(arguments)))
        return ChatResponse(content=content, tool_calls=built, model=SCRIPTED_MODEL, finish_reason="tool_calls")
