"""The Intake and Feedback modules and the turn pipeline they share (see ``promptpipe.flow.pipeline``;
their context blocks: ``promptpipe.flow.context``).

Messages are built in this order: system prompt, context block, tone guide, history window, user
message; then the tool call/result pairs of this turn. The system prompt and the tool list are the
same for every participant (the provider's prompt cache applies to that prefix); what changes per
turn comes after them. A turn makes at most ``MAX_TOOL_ROUNDS`` model calls, the synthesis call
included; content ends it; tool errors go back to the model as tool results with their detail and a
reflection hint (at most ``MAX_CORRECTIVE_ROUNDS`` corrective rounds); a response with both content
and tool calls runs the tools and returns the content; when the loop ends without a reply after
tools ran, a tools-free synthesis call writes it; the fixed fallback answers only when the model
produces nothing (or fails during synthesis).
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from promptpipe.controller import tool_table
from promptpipe.controller.tool_table import Module
from promptpipe.errors import LLMError
from promptpipe.flow import routing, sms_fit
from promptpipe.flow.context import feedback_context, history_window, intake_context
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.engine_texts import ENGLISH, TOOL_PHRASES, fallback_in, joined, language_of, module_fallback
from promptpipe.flow.intent import Intent, TTLCache, classifier_request, intent_hint, parse_classifier
from promptpipe.flow.intent_rules import TurnContext, decide, normalise
from promptpipe.flow.pipeline import (
    MAX_CORRECTIVE_ROUNDS,
    MAX_MODEL_CALLS,
    REFLECTION_HINT,
    LLMCallRecord,
    ParsedTurn,
    StageTimer,
    parse,
    refused_call_text,
    split_tool_calls,
    synthesis_messages,
    validate_inbound,
)
from promptpipe.flow.session import ConversationSession
from promptpipe.flow.steering import IntakeSteering, ToolEffect, finish_intake_steering
from promptpipe.flow.tools.base import ToolContext, ToolResult
from promptpipe.flow.tools.registry import tools_for
from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse, ToolCall, ToolDefinition
from promptpipe.models.state import ConversationMessage, DataKey
from promptpipe.rules import tone
from promptpipe.rules.outcome import correct_count

logger = logging.getLogger(__name__)

MAX_TOOL_ROUNDS = MAX_MODEL_CALLS  # model calls per turn, the synthesis call included
CLASSIFIER_CACHE_SECONDS = 300.0
CLASSIFIER_CACHE_ENTRIES = 512
INTAKE_FALLBACK = "I'm here to help you build a small daily habit. What would you like to work on?"
FEEDBACK_FALLBACK = "Thanks for the update! How did today's habit go for you?"
# After a failed or empty synthesis (``fallback_reply``): never "done" when nothing was done.
TRY_AGAIN_FALLBACK = "Sorry, I couldn't finish that just now. Could you try again in a moment?"


def fallback_reply(runs: list[ToolRun], language: str | None = None) -> str:
    """The reply when the synthesis failed or came back empty: what the tool results say (what
    went through, what did not), or a request to try again when nothing went through; in the
    participant's stored ``language`` (``flow/engine_texts.py``), English otherwise."""
    # A schedule listed changed nothing: only the runs that changed something are claimed.
    claimed = {row.name: row for row in tool_table.TABLE if row.done_phrase}
    changed = [
        r
        for r in runs
        if r.ok and r.name in claimed and r.arguments.get("action") not in claimed[r.name].read_only_actions
    ]
    done = list(dict.fromkeys(r.name for r in changed))
    failed = [n for n in dict.fromkeys(r.name for r in runs if not r.ok) if n in claimed and n not in done]
    language = language_of(language)
    if language != ENGLISH and all(language in TOOL_PHRASES.get(name, {}) for name in (*done, *failed)):
        return fallback_in(language, done, failed)
    if not done:
        return TRY_AGAIN_FALLBACK
    text = f"I've {joined([claimed[name].done_phrase for name in done], ' and ')}."
    if failed:
        couldnt = joined([claimed[name].failed_phrase for name in failed], " and ")
        text += f" I couldn't {couldnt}: could you try that again?"
    return text


@dataclass
class ToolRun:
    name: str
    arguments: dict[str, Any]
    ok: bool
    result: str
    duration_ms: float


@dataclass
class ModuleResult:
    reply: str
    module: str
    tool_runs: list[ToolRun] = field(default_factory=list)
    llm_calls: list[LLMCallRecord] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    used_fallback: bool = False
    controller: dict[str, Any] | None = None  # the flow controller's decision (intake), for the audit
    intent: Intent | None = None
    stages: dict[str, float] = field(default_factory=dict)
    prompt_version: str = ""
    clipped: bool = False
    refused_tool_calls: int = 0
    retries_exhausted: bool = False
    round_cap_hit: bool = False
    synthesised: bool = False


class ConversationModule(ABC):
    """One module: a system prompt, a tool set and the shared turn pipeline (``promptpipe.flow.pipeline``)."""

    prompt_name: str = ""

    def __init__(self, deps: FlowDeps, name: Module, fallback: str) -> None:
        """The module ``name``: the system prompt of that name and the table's tools for it."""
        self.name = name
        self.system_prompt = deps.prompts.get(name).text
        self.tools = {t.definition.name: t for t in tools_for(deps, name)}
        self.fallback = fallback
        self.classifier_cache = TTLCache(ttl=CLASSIFIER_CACHE_SECONDS, max_entries=CLASSIFIER_CACHE_ENTRIES)

    @abstractmethod
    def context_block(self, session: ConversationSession) -> str:
        """The module's context message (profile status and what is still needed)."""

    def build_messages(
        self,
        deps: FlowDeps,
        session: ConversationSession,
        user_text: str,
        history: Sequence[ConversationMessage],
        system_prompt: str | None = None,
    ) -> list[ChatMessage]:
        """System prompt first (with the tool list, the byte-stable prefix every participant shares),
        then the per-turn context, the tone guide, the history window and the user message."""
        messages = [
            ChatMessage(role="system", content=system_prompt or self.system_prompt),
            ChatMessage(role="system", content=self.context_block(session)),
        ]
        guide = tone.build_tone_guide(session.data.profile().tone.tags)
        if deps.config.sms_channel:  # docs/behaviour.md#B-SMS-3
            guide += sms_fit.reply_guide(user_text)
        if guide:
            messages.append(ChatMessage(role="system", content=guide))
        for message in history_window(history, deps.config.chat_history_limit):
            if message.role in ("user", "assistant") and message.content:
                messages.append(ChatMessage(role=message.role, content=message.content))  # type: ignore[arg-type]
        messages.append(ChatMessage(role="user", content=user_text))
        return messages

    # -- stages -----------------------------------------------------------------------------
    def turn_context(
        self,
        session: ConversationSession,
        text: str,
        history: Sequence[ConversationMessage],
        steering: IntakeSteering | None = None,
    ) -> TurnContext:
        """What the coach last asked or offered, what the state says, and the message."""
        data = session.data
        last_reply = next((m.content or "" for m in reversed(history) if m.role == "assistant"), "")
        return TurnContext(
            module="feedback" if self.name == "feedback" else "intake",
            text=text,
            last_reply=last_reply,
            missing_required=tuple(data.profile().missing_required),
            prompt_offered=bool(data.get(DataKey.LAST_HABIT_PROMPT)),
            has_schedule=bool(data.schedules()),
            **(steering.turn_context() if steering is not None else {}),
        )

    def decide_intent(
        self,
        deps: FlowDeps,
        session: ConversationSession,
        parsed: ParsedTurn,
        result: ModuleResult,
        context: TurnContext,
    ) -> Intent:
        """The rules of ``intent_rules`` on the turn's context, then the optional classifier when
        they are unsure (its tools are added to what is pending, never instead of it)."""
        intent = decide(context.model_copy(update={"text": parsed.text}))
        intent = Intent(intent.name, tuple(t for t in intent.tools if t in self.tools), **_intent_rest(intent))
        if intent.confident:
            return intent
        unsure = Intent(intent.name, tuple(self.tools), source="unsure")
        if not deps.config.intent_classifier_enabled:
            return unsure
        classified = self._classify(deps, session, parsed, result)
        if classified is None:
            return unsure
        tools = tuple(t for t in self.tools if t in classified.tools or t in intent.tools)
        return Intent(classified.name, tools, source="classifier")

    def _classify(
        self, deps: FlowDeps, session: ConversationSession, parsed: ParsedTurn, result: ModuleResult
    ) -> Intent | None:
        key = f"{self.name}|{normalise(parsed.text)}"
        cached = self.classifier_cache.get(key)
        if cached is not None:
            return cached
        prompt = deps.prompts.get("classifier")
        request = classifier_request(self.name, parsed.text, list(self.tools), system=prompt.text)
        request = routing.routed(request, routing.resolve(deps.config, "classifier", session.data.raw))
        try:
            response = deps.llm.complete(request)
        except LLMError:
            logger.warning("intent classifier unavailable; sending the full tool set")
            return None
        _record_call(result, "classifier", response, stage="intent", prompt_version=prompt.version)
        intent = parse_classifier(response, list(self.tools))
        if intent is not None:
            self.classifier_cache.put(key, intent)
        return intent

    def select_tools(self, intent: Intent) -> list[ToolDefinition]:
        """Every tool of the module, in the table's order (a stable prefix the provider caches),
        whatever the intent: what the turn should pursue is said in the context, and the words of a
        message never take a capability away (docs/pipeline.md, "Tools by context")."""
        return [tool.definition for tool in self.tools.values()]

    def steering(self, deps: FlowDeps, session: ConversationSession) -> IntakeSteering | None:
        """The flow controller's steering for this turn (intake only; docs/controller.md)."""
        return None

    def keep_to_the_record(self, session: ConversationSession, reply: str) -> str:
        """The reply as sent, its statements of fact checked against the record (feedback: the count)."""
        return reply

    def run(
        self,
        deps: FlowDeps,
        session: ConversationSession,
        user_text: str,
        history: Sequence[ConversationMessage],
    ) -> ModuleResult:
        """One turn through the pipeline. ``LLMError`` from the model loop propagates: the event is
        retried as a whole (nothing is committed yet)."""
        timer = StageTimer()
        result = ModuleResult(reply="", module=self.name)
        steering = self.steering(deps, session)
        with timer.stage("parse"):
            parsed = parse(user_text)
        with timer.stage("validate"):
            parsed = validate_inbound(parsed, deps.config.max_inbound_tokens)
        result.clipped = parsed.clipped
        with timer.stage("intent"):
            context = self.turn_context(session, parsed.text, history, steering)
            intent = self.decide_intent(deps, session, parsed, result, context)
        result.intent = intent
        with timer.stage("tools"):
            definitions = self.select_tools(intent)
            prompt = deps.prompts.get(self.prompt_name or self.name)
            messages = self.build_messages(deps, session, parsed.text, history, system_prompt=prompt.text)
            if steering is not None:  # after the stable prefix (system prompt and context)
                messages.insert(2, ChatMessage(role="system", content=steering.text))
            hint = intent_hint(intent)
            if hint:  # beside the message it reads, after everything that caches
                messages.insert(len(messages) - 1, ChatMessage(role="system", content=hint))
        result.prompt_version = prompt.version
        tool_ctx = ToolContext(deps=deps, session=session, on_llm_call=_nested_recorder(result))
        with timer.stage("model_loop"):
            done = self._model_loop(
                deps,
                session,
                tool_ctx,
                messages=messages,
                definitions=definitions,
                intent=intent,
                result=result,
                steering=steering,
            )
        if not done:
            with timer.stage("synthesis"):
                self._synthesise(deps, session, messages, result)
        with timer.stage("finalize"):
            if not result.reply:
                fallback = module_fallback(self.name, self.fallback, session.participant.language)
                result.reply, result.used_fallback = fallback, True
            result.reply = self.keep_to_the_record(session, result.reply)
            if steering is not None:
                reply, result.controller = finish_intake_steering(
                    deps, session, steering, tool_effects(result.tool_runs)
                )
                result.reply = reply or result.reply
        result.stages = timer.timings
        return result

    def _request(
        self,
        deps: FlowDeps,
        session: ConversationSession,
        messages: list[ChatMessage],
        definitions: list[ToolDefinition],
        tool_choice: str | None,
    ) -> ChatRequest:
        request = ChatRequest(
            purpose=self.name,
            messages=messages,
            tools=definitions,
            tool_choice=tool_choice if definitions else None,  # type: ignore[arg-type]
            parallel_tool_calls=True if definitions else None,
        )
        return routing.routed(request, routing.resolve(deps.config, self.name, session.data.raw))

    def _model_loop(
        self,
        deps: FlowDeps,
        session: ConversationSession,
        tool_ctx: ToolContext,
        *,
        messages: list[ChatMessage],
        definitions: list[ToolDefinition],
        intent: Intent,
        result: ModuleResult,
        steering: IntakeSteering | None = None,
    ) -> bool:
        """Rounds until the model answers with content. ``True`` when the reply is settled (content,
        or nothing to synthesise from); ``False`` when the synthesis call must write it."""
        limit = deps.config.max_tool_calls_per_response
        failed_rounds = 0
        tool_choice: str | None = intent.tool_choice
        for _round in range(MAX_TOOL_ROUNDS - 1):  # one call is kept for the synthesis
            request = self._request(deps, session, messages, definitions, tool_choice)
            response = deps.llm.complete(request)
            _record_call(
                result, self.name, response, stage="model_loop", prompt_version=result.prompt_version, tools=definitions
            )
            tool_choice = "auto"  # "required" holds for the first round only
            content = (response.content or "").strip()
            if not response.tool_calls:
                result.reply = content
                return bool(content) or not result.tool_runs
            to_run, refused = split_tool_calls(response.tool_calls, limit)
            messages.append(ChatMessage(role="assistant", content=response.content, tool_calls=response.tool_calls))
            round_failed = False
            for call in to_run:
                outcome = self._execute(tool_ctx, call, result)
                text = outcome.for_model()
                if not outcome.ok:
                    round_failed = True
                    if failed_rounds < MAX_CORRECTIVE_ROUNDS:
                        text = f"{text}\n{REFLECTION_HINT}"
                messages.append(ChatMessage(role="tool", tool_call_id=call.id, content=text))
            for call in refused:
                result.refused_tool_calls += 1
                messages.append(ChatMessage(role="tool", tool_call_id=call.id, content=refused_call_text(limit)))
            update = steering.after_tools(tool_effects(result.tool_runs)) if steering is not None else None
            if update:
                messages.append(ChatMessage(role="system", content=update))
            if content:
                result.reply = content
                return True
            if round_failed:
                failed_rounds += 1
                if failed_rounds > MAX_CORRECTIVE_ROUNDS:
                    result.retries_exhausted = True
                    return False
        logger.warning("tool loop exhausted without content", extra={"conversation_module": self.name})
        result.round_cap_hit = True
        return False

    def _synthesise(
        self, deps: FlowDeps, session: ConversationSession, messages: list[ChatMessage], result: ModuleResult
    ) -> None:
        """One tools-free call that writes the reply from what happened; the fixed text if it fails."""
        prompt = deps.prompts.get("synthesis")
        request = ChatRequest(purpose="synthesis", messages=synthesis_messages(messages, prompt.text))
        route = routing.resolve(deps.config, "synthesis", session.data.raw, turn=self.name)  # the turn's model
        request = routing.routed(request, route)
        try:
            response = deps.llm.complete(request)
        except LLMError:
            logger.warning("synthesis call failed; using the fixed reply", extra={"conversation_module": self.name})
            result.reply, result.used_fallback = fallback_reply(result.tool_runs, session.participant.language), True
            return
        _record_call(result, "synthesis", response, stage="synthesis", prompt_version=prompt.version)
        result.synthesised = True
        content = (response.content or "").strip()
        if content:
            result.reply = content
        else:
            result.reply, result.used_fallback = fallback_reply(result.tool_runs, session.participant.language), True

    def _execute(self, ctx: ToolContext, call: ToolCall, result: ModuleResult) -> ToolResult:
        """Run one call; every failure becomes a tool error with detail. A tool the module has but
        did not offer this turn still runs: the model named it, and refusing would cost a round."""
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
                except (
                    Exception
                ) as exc:  # a tool bug must reach the model, not kill the turn (docs/behaviour.md#B-LOOP-3)
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


def _intent_rest(intent: Intent) -> dict[str, Any]:
    return {"confident": intent.confident, "tool_choice": intent.tool_choice, "source": intent.source}


def _record_call(
    result: ModuleResult,
    purpose: str,
    response: ChatResponse,
    *,
    stage: str,
    prompt_version: str = "",
    tools: Sequence[ToolDefinition] = (),
) -> None:
    result.llm_calls.append(
        LLMCallRecord.of(
            response, purpose=purpose, stage=stage, prompt_version=prompt_version, tools_offered=len(tools)
        )
    )
    if response.reasoning:
        result.reasoning.append(response.reasoning)


def _nested_recorder(result: ModuleResult) -> Any:
    """What a tool calls with the model calls it makes itself (the prompt generator)."""

    def record(purpose: str, response: ChatResponse, prompt_version: str) -> None:
        _record_call(result, purpose, response, stage="tools", prompt_version=prompt_version)

    return record


class IntakeModule(ConversationModule):
    def __init__(self, deps: FlowDeps) -> None:
        super().__init__(deps, "intake", INTAKE_FALLBACK)

    def context_block(self, session: ConversationSession) -> str:
        return intake_context(session.data.profile(), session.data.get(DataKey.PARTICIPANT_BACKGROUND))

    def steering(self, deps: FlowDeps, session: ConversationSession) -> IntakeSteering | None:
        if deps.flows is None or not deps.config.flow_controller_enabled:
            return None
        return IntakeSteering.begin(deps.flows, session.data, deps.config.intake_flow_id)


class FeedbackModule(ConversationModule):
    def __init__(self, deps: FlowDeps) -> None:
        super().__init__(deps, "feedback", FEEDBACK_FALLBACK)

    def keep_to_the_record(self, session: ConversationSession, reply: str) -> str:
        """A count of habits done that is not the stored one is corrected before sending."""
        return correct_count(reply, session.data.profile().success_count)

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


def tool_effects(runs: Sequence[ToolRun]) -> list[ToolEffect]:
    return [ToolEffect(name=r.name, arguments=r.arguments, ok=r.ok) for r in runs]
