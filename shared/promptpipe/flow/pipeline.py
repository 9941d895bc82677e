"""The stages of one conversation turn, each a small function:

parse → validate → intent → tools → model loop → synthesis → finalize.

* **parse**: the text as the model will see it, whether it is a system hint, its normalised form.
* **validate**: an inbound text over the token budget (characters/4) is clipped and marked; a model
  response with more than ``max_tool_calls`` tool calls runs the first ones and answers the rest
  with a tool error saying they were not run; unknown tools and malformed arguments are tool errors
  with detail (see ``ToolExecutor``). Nothing here raises out of the turn.
* **intent / tools**: see ``promptpipe.flow.intent``; only the needed schemas are sent.
* **model loop**: tool calls run in the order the model gave them; a failed call gets up to
  ``MAX_CORRECTIVE_ROUNDS`` corrective rounds with a short reflection hint.
* **synthesis**: when the loop ends without a reply after tools ran (round cap, retries used up),
  one call with no tools writes it from what happened, the tool exchanges rewritten as plain
  user-role notes. The fixed fallback text is left only for a model that answers nothing or fails
  during synthesis.
* **finalize**: the reply, the per-stage timings and the per-call metrics for the audit.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from promptpipe.models.llm import ChatMessage, ChatResponse, ToolCall
from promptpipe.rules.text_clipping import TRUNCATION_MARK

CHARS_PER_TOKEN = 4  # the documented estimate (no tokenizer at run time)
MAX_MODEL_CALLS = 10  # per turn, the synthesis call included
MAX_CORRECTIVE_ROUNDS = 3
REFLECTION_HINT = (
    "A tool call failed. Reflect briefly on the error above: fix the arguments and call the tool again, "
    "or, if it cannot work, tell the participant plainly. Never claim it succeeded."
)


# --- timings -------------------------------------------------------------------------------------
@dataclass
class StageTimer:
    """Milliseconds per stage (summed when a stage runs more than once)."""

    perf: Callable[[], float] = time.perf_counter
    timings: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = self.perf()
        try:
            yield
        finally:
            elapsed = (self.perf() - started) * 1000
            self.timings[name] = round(self.timings.get(name, 0.0) + elapsed, 3)


# --- parse ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ParsedTurn:
    text: str
    is_hint: bool
    clipped: bool = False


def parse(user_text: str) -> ParsedTurn:
    text = (user_text or "").strip()
    return ParsedTurn(text=text, is_hint=text.startswith("<Hint:"))


# --- validate ------------------------------------------------------------------------------------
def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def validate_inbound(parsed: ParsedTurn, max_tokens: int) -> ParsedTurn:
    """Clip a text over ``max_tokens`` (estimated) and mark it; never reject it."""
    if parsed.is_hint or estimate_tokens(parsed.text) <= max_tokens:
        return parsed
    clipped = parsed.text[: max_tokens * CHARS_PER_TOKEN] + TRUNCATION_MARK
    return ParsedTurn(text=clipped, is_hint=False, clipped=True)


def split_tool_calls(calls: Sequence[ToolCall], limit: int) -> tuple[list[ToolCall], list[ToolCall]]:
    """The calls to run (the first ``limit``) and those to refuse."""
    return list(calls[:limit]), list(calls[limit:])


def refused_call_text(limit: int) -> str:
    return (
        f"ERROR: not run: a response may make at most {limit} tool calls; this was call number {limit + 1} "
        "or later. Call it again in the next response if it is still needed."
    )


# --- synthesis -----------------------------------------------------------------------------------
def synthesis_messages(messages: Sequence[ChatMessage], instruction: str) -> list[ChatMessage]:
    """The conversation for a tools-free final call: assistant tool calls and tool results become
    plain user-role notes (a provider rejects tool messages when no tools are declared)."""
    out: list[ChatMessage] = []
    for message in messages:
        if message.role == "tool":
            out.append(ChatMessage(role="user", content=f"[Note: tool result] {message.content or ''}"))
        elif message.role == "assistant" and message.tool_calls:
            calls = "; ".join(f"{c.name}({c.arguments})" for c in message.tool_calls)
            note = f"[Note: the assistant called {calls}]"
            if message.content:
                note = f"{message.content}\n{note}"
            out.append(ChatMessage(role="user", content=note))
        else:
            out.append(ChatMessage(role=message.role, content=message.content))
    out.append(ChatMessage(role="system", content=instruction))
    return out


# --- per-call metrics ----------------------------------------------------------------------------
@dataclass
class LLMCallRecord:
    purpose: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    cached_tokens: int = 0
    stage: str = ""
    prompt_version: str = ""
    tools_offered: int = 0

    @classmethod
    def of(
        cls, response: ChatResponse, *, purpose: str, stage: str, prompt_version: str = "", tools_offered: int = 0
    ) -> LLMCallRecord:
        """The record of one model call, from its response."""
        return cls(
            purpose=purpose,
            model=response.model,
            prompt_tokens=response.usage.prompt_tokens,
            completion_tokens=response.usage.completion_tokens,
            latency_ms=response.latency_ms,
            cached_tokens=response.usage.cached_tokens,
            stage=stage,
            prompt_version=prompt_version,
            tools_offered=tools_offered,
        )

    def to_audit(self) -> dict[str, Any]:
        return {
            "purpose": self.purpose,
            "stage": self.stage,
            "model": self.model,
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_ms": self.latency_ms,
            "prompt_version": self.prompt_version,
            "tools_offered": self.tools_offered,
        }
