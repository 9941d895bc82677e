"""Operations on the flow state shared by tools, timers and the lifecycle functions.

Each builder returns an operation function for ``ConversationSession.apply``: deterministic, guards
re-checked on replay. Schedule changes are recorded on the operation's context and made live only
after the commit (``OpContext.arm`` / ``disarm``).
"""

from __future__ import annotations

from collections.abc import Callable

from promptpipe.flow.session import OpContext
from promptpipe.models.state import DataKey, SubState


def clear_timer_key(op: OpContext, key: DataKey) -> None:
    """Forget the timer a DataKey names and have its schedule deleted after the commit; a deletion
    that fails leaves a stale timer whose guard ignores it (and reconcile removes it)."""
    name = op.data.get(key)
    if name:
        op.data.clear(key)
        op.disarm(name)


def write_sub_state(op: OpContext, target: SubState) -> None:
    """Any write of the sub-state cancels a pending auto-feedback (docs/behaviour.md, auto-feedback).
    Re-entering intake from another state restarts the flow controller's attempts (docs/controller.md)."""
    previous = op.data.sub_state_raw
    if target is SubState.INTAKE and previous in SubState.__members__ and previous != SubState.INTAKE.value:
        runtime = op.data.controller_state()
        if runtime is not None:
            # Imported here: the webhook writes sub-states too, and never loads the controller.
            from promptpipe.controller.engine import restart_attempts

            op.data.set_controller_state(restart_attempts(runtime))
    op.data.set(DataKey.CONVERSATION_STATE, target.value)
    clear_timer_key(op, DataKey.AUTO_FEEDBACK_TIMER_ID)


def cancel_pending_transition(op: OpContext) -> None:
    op.data.set_pending_transition(None)
    clear_timer_key(op, DataKey.STATE_TRANSITION_TIMER_ID)


def immediate_transition(target: SubState) -> Callable[[OpContext], None]:
    """An immediate transition also cancels a pending delayed one."""

    def apply(op: OpContext) -> None:
        cancel_pending_transition(op)
        write_sub_state(op, target)

    return apply
