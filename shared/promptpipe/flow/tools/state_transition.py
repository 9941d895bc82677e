"""The conversation's move between modules (``tool_table.TRANSITION``; docs/behaviour.md#transitions,
SC-5, B-TRANS-3)."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from promptpipe.controller.tool_table import TRANSITION, Module
from promptpipe.errors import TimerError
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.effects import one_shot_timer
from promptpipe.flow.session import OpContext
from promptpipe.flow.state_ops import immediate_transition
from promptpipe.flow.timer_names import timer_name
from promptpipe.flow.tools.base import RowTool, ToolContext, ToolResult
from promptpipe.models.events import TimerKind, TimerPayload
from promptpipe.models.state import DataKey, PendingTransition, SubState

ROW = TRANSITION


class StateTransitionTool(RowTool):
    row = ROW

    def execute(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        target_raw = args.get("target_state")
        if not isinstance(target_raw, str) or not target_raw:
            return ToolResult.error("target_state is required and must be a string")
        if target_raw not in SubState.__members__:
            return ToolResult.error(f"invalid target_state: {target_raw}", "use INTAKE or FEEDBACK")
        target = SubState(target_raw)
        delay = args.get("delay_minutes")
        if delay is not None and (isinstance(delay, bool) or not isinstance(delay, int | float)):
            return ToolResult.error("delay_minutes must be a number")
        if delay is not None and (math.isnan(delay) or delay < 0):
            return ToolResult.error("delay_minutes must be zero or more")
        raw_reason = args.get("reason")
        reason = raw_reason if isinstance(raw_reason, str) else ""
        if not delay:
            ctx.session.apply(f"transition_to_{target.value}", immediate_transition(target))
            return ToolResult(ok=True, text=f"The conversation is now in {target.value}.")

        # EventBridge Scheduler has one-minute precision: round up, never down to zero (docs/behaviour.md#B-TRANS-4).
        minutes = max(1, math.ceil(delay))
        due = ctx.session.now + timedelta(minutes=minutes)
        name = timer_name(TimerKind.STATE_TRANSITION, ctx.session.participant.id)
        payload = TimerPayload(
            participant_id=ctx.session.participant.id,
            kind=TimerKind.STATE_TRANSITION,
            timer_id=name,
            due_at=due,
            target_state=target.value,
        )
        try:
            spec = one_shot_timer(name, due, payload)
        except TimerError as exc:
            return ToolResult.error("could not schedule the transition", str(exc))

        def arm(op: OpContext) -> None:
            # Same name: the schedule replaces any earlier pending transition once committed.
            op.arm(spec)
            op.data.set(DataKey.STATE_TRANSITION_TIMER_ID, name)
            op.data.set_pending_transition(PendingTransition(target_state=target, due_at=due, reason=reason))

        ctx.session.apply(f"schedule_transition_to_{target.value}", arm)
        return ToolResult(ok=True, text=f"Transition to {target.value} scheduled in {minutes} minute(s).")


def build(deps: FlowDeps, module: Module) -> StateTransitionTool:
    return StateTransitionTool()
