"""The ``LLM`` port implementation: it reads the turn, lets the rules of its purpose decide, and
answers as a model would (a reply, or tool calls)."""

from __future__ import annotations

import json

from promptpipe.adapters.offline_coach.faq import StudyFacts
from promptpipe.adapters.offline_coach.feedback import FeedbackRules
from promptpipe.adapters.offline_coach.habit_prompt import build_habit_prompt
from promptpipe.adapters.offline_coach.intake import IntakeRules
from promptpipe.adapters.offline_coach.rewrite import rewrite_within
from promptpipe.adapters.offline_coach.text import FEEDBACK_HEADER, INTAKE_HEADER, LABEL, OPT_OUT
from promptpipe.adapters.offline_coach.turn import Turn, _Step, read_turn
from promptpipe.models.llm import ChatRequest, ChatResponse, TokenUsage, ToolCall
from promptpipe.rules.opt_out import OptKind, read_opt_message


class OfflineCoach:
    """The rule-based ``LLM`` port implementation. ``explain=True`` fills ``reasoning`` with the
    rule that fired (shown only in debug output); ``study``: what its answers may say of the study
    (``StudyFacts.from_settings``)."""

    def __init__(
        self, model_name: str = "offline-coach", *, explain: bool = False, study: StudyFacts | None = None
    ) -> None:
        self.model = f"{model_name} {LABEL}"
        self.explain = explain
        self.study = study or StudyFacts()

    def complete(self, request: ChatRequest) -> ChatResponse:
        turn = read_turn(request)
        turn.study = self.study
        if request.purpose == "prompt_generator":
            user = next((m.content or "" for m in request.messages if m.role == "user"), "")
            step: _Step = build_habit_prompt(user, turn.system_text)
            why = "prompt generator: MAP template from the profile lines"
        elif request.purpose == "sms_rewrite":
            step, why = rewrite_within(turn.user, turn.system_text), "SMS rewrite: whole sentences within the limit"
        elif (opt_out := _opt_out_first(turn)) is not None:
            step, why = opt_out, "an opt-out, read before anything else (the opt-out reader)"
        elif request.purpose == "intake" or turn.context_text.startswith(INTAKE_HEADER):
            step, why = IntakeRules(turn).decide()
        elif request.purpose == "feedback" or turn.context_text.startswith(FEEDBACK_HEADER):
            step, why = FeedbackRules(turn).decide()
        else:
            step, why = "Thanks for your message! How is your habit going today?", "no rule for this purpose"
        return self._respond(request, turn, step, why)

    def _respond(self, request: ChatRequest, turn: Turn, step: _Step, why: str) -> ChatResponse:
        calls: list[ToolCall] = []
        content: str | None = None
        if isinstance(step, str):
            content = step
        else:
            for offset, (name, args) in enumerate(step, start=1):
                arguments = json.dumps(args, ensure_ascii=False, sort_keys=True)
                calls.append(ToolCall(id=f"offline_{turn.call_count + offset}", name=name, arguments=arguments))
        prompt_chars = sum(len(m.content or "") + sum(len(c.arguments) for c in m.tool_calls) for m in request.messages)
        completion_chars = len(content or "") + sum(len(c.name) + len(c.arguments) for c in calls)
        return ChatResponse(
            content=content,
            tool_calls=calls,
            model=self.model,
            usage=TokenUsage(prompt_tokens=prompt_chars // 4, completion_tokens=max(1, completion_chars // 4)),
            latency_ms=0.0,
            finish_reason="tool_calls" if calls else "stop",
            reasoning=why if self.explain else None,
        )


def _opt_out_first(turn: Turn) -> _Step | None:
    """An opt-out in any form, honoured before the message is read as anything else. The webhook
    honours it first (usecases/receive_text.py), so it reaches a coach only by another way in (a queue
    fed directly, the model path's own reading): then the opt-out tool, as a capable model calls it,
    and nothing else. After it, a short reply, which the flow does not send to an opted-out person."""
    if OPT_OUT not in turn.tools:  # offered in the intake and the feedback only
        return None
    if turn.called(OPT_OUT):
        return "Done: no more messages."
    reading = read_opt_message(turn.user)
    return [(OPT_OUT, {})] if reading is not None and reading.kind is OptKind.OPT_OUT else None
