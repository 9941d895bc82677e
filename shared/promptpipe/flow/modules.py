"""The Intake and Feedback modules and their shared tool loop (contract §4.2–4.3, §8).

Messages are built in the contract's order: system prompt, context block, tone guide, history
window, user message; then the tool call/result pairs of this loop. The loop runs at most
``MAX_TOOL_ROUNDS`` model calls; content ends it; tool errors go back to the model as tool results
with their detail (decision 7); a response with both content and tool calls runs the tools and
returns the content; a fallback answers when nothing is produced.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from promptpipe import tone
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.session import ConversationSession
from promptpipe.flow.tools.base import Tool, ToolContext, ToolResult
from promptpipe.flow.tools.profile_save import ProfileSaveTool
from promptpipe.flow.tools.prompt_generator import PromptGeneratorTool
from promptpipe.flow.tools.scheduler import SchedulerTool
from promptpipe.flow.tools.state_transition import StateTransitionTool
from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse, ToolCall
from promptpipe.models.profile import UserProfile
from promptpipe.models.state import DEFAULT_LLM_HISTORY, MAX_STORED_HISTORY, ConversationMessage, DataKey

logger = logging.getLogger(__name__)

MAX_TOOL_ROUNDS = 10
INTAKE_FALLBACK = "I'm here to help you build a small daily habit. What would you like to work on?"
FEEDBACK_FALLBACK = "Thanks for the update! How did today's habit go for you?"
EXHAUSTED_FALLBACK = "All set — I've taken care of that. Anything else you'd like to adjust?"


@dataclass
class ToolRun:
    name: str
    arguments: dict[str, Any]
    ok: bool
    result: str
    duration_ms: float


@dataclass
class LLMCallRecord:
    purpose: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float


@dataclass
class ModuleResult:
    reply: str
    module: str
    tool_runs: list[ToolRun] = field(default_factory=list)
    llm_calls: list[LLMCallRecord] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    used_fallback: bool = False


def history_window(history: Sequence[ConversationMessage], limit: int) -> list[ConversationMessage]:
    """Decision 13: -1 → the last 30; 0 → none; N > 0 → the last min(N, 50)."""
    if limit == 0:
        return []
    count = DEFAULT_LLM_HISTORY if limit < 0 else min(limit, MAX_STORED_HISTORY)
    return list(history[-count:])


def _status_line(label: str, value: str) -> str:
    return f"- {label}: {value}" if value else f"- {label}: STILL NEEDED"


def intake_context(profile: UserProfile, background: str) -> str:
    lines = [
        "INTAKE CONVERSATION CONTEXT:",
        "Profile so far (CURRENT values, or STILL NEEDED):",
        _status_line("habit_domain", profile.habit_domain),
        _status_line("motivational_frame", profile.motivational_frame),
        _status_line("preferred_time", profile.preferred_time),
        _status_line("prompt_anchor", profile.prompt_anchor),
    ]
    if profile.additional_info:
        lines.append(f"- additional_info: {profile.additional_info}")
    lines.append(f"- intensity: {profile.intensity.value}")
    if profile.is_complete:
        lines.append("Profile status: complete enough to generate a habit prompt and set up the schedule.")
    else:
        missing = ", ".join(profile.missing_required)
        lines.append(f"Profile status: incomplete — still needed before a prompt can be generated: {missing}.")
    if background:
        lines += ["Participant background:", background]
    return "\n".join(lines)


def feedback_context(profile: UserProfile, data_last_prompt: str, responded: bool, background: str) -> str:
    lines = [
        "FEEDBACK TRACKING CONTEXT:",
        f"- habit_domain: {profile.habit_domain or '(unknown)'}",
        f"- motivational_frame: {profile.motivational_frame or '(unknown)'}",
        f"- last habit prompt: {data_last_prompt or '(none recorded)'}",
        f"- prompts completed: {profile.success_count} of {profile.total_prompts} delivered",
        f"- intensity: {profile.intensity.value}",
        f"- replied to the latest daily prompt: {'yes' if responded else 'not yet'}",
    ]
    for label, value in (
        ("last_barrier", profile.last_barrier),
        ("last_tweak", profile.last_tweak),
        ("last_motivator", profile.last_motivator),
    ):
        if value:
            lines.append(f"- {label}: {value}")
    if profile.is_complete:
        lines.append("Profile status: complete.")
    else:
        missing = ", ".join(profile.missing_required)
        lines.append(
            f"Profile status: missing {missing}. Call transition_state with target_state INTAKE so intake "
            "can repair it; do not run intake questions here."
        )
    if background:
        lines += ["Participant background:", background]
    return "\n".join(lines)


class ConversationModule(ABC):
    """One module: a system prompt, a tool set and the shared tool loop."""

    def __init__(self, name: str, system_prompt: str, tools: Sequence[Tool], fallback: str) -> None:
        self.name = name
        self.system_prompt = system_prompt
        self.tools = {t.definition.name: t for t in tools}
        self.fallback = fallback

    @abstractmethod
    def context_block(self, session: ConversationSession) -> str:
        """The module's context message (profile status and what is still needed)."""

    def build_messages(
        self, deps: FlowDeps, session: ConversationSession, user_text: str, history: Sequence[ConversationMessage]
    ) -> list[ChatMessage]:
        messages = [
            ChatMessage(role="system", content=self.system_prompt),
            ChatMessage(role="system", content=self.context_block(session)),
        ]
        guide = tone.build_tone_guide(session.data.profile().tone.tags)
        if guide:
            messages.append(ChatMessage(role="system", content=guide))
        for message in history_window(history, deps.settings.chat_history_limit):
            if message.role in ("user", "assistant") and message.content:
                messages.append(ChatMessage(role=message.role, content=message.content))  # type: ignore[arg-type]
        messages.append(ChatMessage(role="user", content=user_text))
        return messages

    def run(
        self, deps: FlowDeps, session: ConversationSession, user_text: str, history: Sequence[ConversationMessage]
    ) -> ModuleResult:
        """The tool loop. ``LLMError`` propagates: the event is retried as a whole."""
        messages = self.build_messages(deps, session, user_text, history)
        definitions = [t.definition for t in self.tools.values()]
        result = ModuleResult(reply="", module=self.name)
        tool_ctx = ToolContext(deps=deps, session=session)
        for _round in range(MAX_TOOL_ROUNDS):
            response = deps.llm.complete(ChatRequest(purpose=self.name, messages=messages, tools=definitions))
            _record_call(result, self.name, response)
            content = (response.content or "").strip()
            if response.tool_calls:
                messages.append(ChatMessage(role="assistant", content=response.content, tool_calls=response.tool_calls))
                for call in response.tool_calls:
                    outcome = self._execute(tool_ctx, call, result)
                    messages.append(ChatMessage(role="tool", tool_call_id=call.id, content=outcome.for_model()))
                if content:
                    result.reply = content
                    return result
                continue
            if content:
                result.reply = content
                return result
            result.reply, result.used_fallback = self.fallback, True
            return result
        logger.warning("tool loop exhausted without content", extra={"conversation_module": self.name})
        result.reply, result.used_fallback = EXHAUSTED_FALLBACK, True
        return result

    def _execute(self, ctx: ToolContext, call: ToolCall, result: ModuleResult) -> ToolResult:
        started = time.perf_counter()
        tool = self.tools.get(call.name)
        arguments: dict[str, Any] = {}
        if tool is None:
            outcome = ToolResult.error(f"unknown tool: {call.name}", f"available: {', '.join(self.tools)}")
        else:
            try:
                arguments = call.parsed_arguments()
            except ValueError as exc:
                outcome = ToolResult.error("invalid arguments: not a JSON object", str(exc))
            else:
                try:
                    outcome = tool.execute(ctx, arguments)
                except Exception as exc:  # a tool bug must reach the model, not kill the turn (§8.1 rule 5)
                    logger.exception("tool raised", extra={"tool": call.name})
                    outcome = ToolResult.error(f"{call.name} failed", f"{type(exc).__name__}: {exc}")
        result.tool_runs.append(
            ToolRun(
                name=call.name,
                arguments=arguments,
                ok=outcome.ok,
                result=outcome.text[:500],
                duration_ms=round((time.perf_counter() - started) * 1000, 2),
            )
        )
        return outcome


def _record_call(result: ModuleResult, purpose: str, response: ChatResponse) -> None:
    result.llm_calls.append(
        LLMCallRecord(
            purpose=purpose,
            model=response.model,
            prompt_tokens=response.usage.prompt_tokens,
            completion_tokens=response.usage.completion_tokens,
            latency_ms=response.latency_ms,
        )
    )
    if response.reasoning:
        result.reasoning.append(response.reasoning)


class IntakeModule(ConversationModule):
    def __init__(self, deps: FlowDeps) -> None:
        super().__init__(
            "intake",
            deps.prompts.intake,
            [
                StateTransitionTool(),
                ProfileSaveTool(),
                SchedulerTool(deps.settings.scheduler_prep_time_minutes),
                PromptGeneratorTool(),
            ],
            INTAKE_FALLBACK,
        )

    def context_block(self, session: ConversationSession) -> str:
        return intake_context(session.data.profile(), session.data.get(DataKey.PARTICIPANT_BACKGROUND))


class FeedbackModule(ConversationModule):
    def __init__(self, deps: FlowDeps) -> None:
        super().__init__(
            "feedback",
            deps.prompts.feedback,
            [StateTransitionTool(), ProfileSaveTool(), SchedulerTool(deps.settings.scheduler_prep_time_minutes)],
            FEEDBACK_FALLBACK,
        )

    def context_block(self, session: ConversationSession) -> str:
        data = session.data
        return feedback_context(
            session.data.profile(),
            data.get(DataKey.LAST_HABIT_PROMPT),
            data.daily_prompt_pending() is None and bool(data.get(DataKey.DAILY_PROMPT_RESPONDED_AT)),
            data.get(DataKey.PARTICIPANT_BACKGROUND),
        )


def tool_runs_summary(runs: Sequence[ToolRun]) -> str:
    return ", ".join(f"{r.name} ({'ok' if r.ok else 'error'})" for r in runs) or "none"
