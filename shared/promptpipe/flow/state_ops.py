"""Operations on the flow state shared by tools, timers and the lifecycle functions.

Each builder returns an operation function for ``ConversationSession.apply``: deterministic, guards
re-checked on replay, external effects (timer cancellations) deferred until after the commit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from promptpipe.errors import TimerError
from promptpipe.flow.session import OpContext
from promptpipe.models.state import DataKey, SubState
from promptpipe.ports import Timers


def cancel_later(op: OpContext, timers: Timers, name: str) -> None:
    """Cancel a timer after the commit; a failure leaves a stale timer that its guard will ignore."""

    def cancel() -> None:
        with contextlib.suppress(TimerError):
            timers.cancel(name)

    if name:
        op.defer(cancel)


def clear_timer_key(op: OpContext, timers: Timers, key: DataKey) -> None:
    name = op.data.get(key)
    if name:
        op.data.clear(key)
        cancel_later(op, timers, name)


def write_sub_state(op: OpContext, timers: Timers, target: SubState) -> None:
    """Any write of the sub-state cancels a pending auto-feedback (docs/behaviour.md#SC-11, B-AUTO-2)."""
    op.data.set(DataKey.CONVERSATION_STATE, target.value)
    clear_timer_key(op, timers, DataKey.AUTO_FEEDBACK_TIMER_ID)


def cancel_pending_transition(op: OpContext, timers: Timers) -> None:
    op.data.set_pending_transition(None)
    clear_timer_key(op, timers, DataKey.STATE_TRANSITION_TIMER_ID)


def immediate_transition(timers: Timers, target: SubState) -> Callable[[OpContext], None]:
    """An immediate transition also cancels a pending delayed one (docs/behaviour.md#B-TRANS-3)."""

    def apply(op: OpContext) -> None:
        cancel_pending_transition(op, timers)
        write_sub_state(op, timers, target)

    return apply
