"""A committed session's schedule changes applied in a test, as the effects step applies them
(``usecases/schedules.apply_schedule_specs``), without sending its messages."""

from __future__ import annotations

from promptpipe.flow.effects import Effects
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.schedules import apply_schedule_specs


def apply_schedules(app: AppContext, effects: Effects) -> int:
    """Each schedule change of ``effects`` tried; the number applied."""
    return apply_schedule_specs(app, effects.schedules)
