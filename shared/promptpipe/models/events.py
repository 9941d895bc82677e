"""Events that reach the engine: queued conversation turns and timer payloads. The stack's sweeps'
inputs are in ``models/sweeps.py``: each is its own scheduled event, never a function's first
ordinary one (cold start: docs/benchmarks.md, section 2)."""

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import Field

from promptpipe.lazy_model import LazyModel
from promptpipe.models.messaging import InboundMessage


class TurnKind(StrEnum):
    MESSAGE = "message"
    GREETING = "greeting"
    # The schedule changes of a STOP or START: the public webhook commits the opt-out / opt-in and
    # sends its confirmation, the worker brings these schedules in line with the committed state.
    SCHEDULES = "schedules"


class TurnEvent(LazyModel):
    """A body on the inbound FIFO queue: one conversation turn for one participant."""

    kind: TurnKind
    participant_id: str
    event_id: str = Field(min_length=1, max_length=128)  # provider message id, or greeting id
    message: InboundMessage | None = None
    enqueued_at: datetime
    schedules: list[str] = Field(default_factory=list, max_length=64)  # SCHEDULES: the names to bring in line


class TimerKind(StrEnum):
    DAILY_PROMPT_REMINDER = "daily_prompt_reminder"
    AUTO_FEEDBACK = "auto_feedback"
    STATE_TRANSITION = "state_transition"
    FEEDBACK_TIMEOUT = "feedback_timeout"
    FEEDBACK_FOLLOWUP = "feedback_followup"
    SCHEDULE_RESUME = "schedule_resume"  # the end of a pause of the daily prompts (flow/schedule_pause.py)
    STUDY_CHECK_IN = "study_check_in"  # the end-of-day check-in of a study (docs/studies.md)


class TimerPayload(LazyModel):
    """Input of a one-shot schedule (targets the timers function)."""

    participant_id: str
    kind: TimerKind
    timer_id: str  # the schedule name; must still be the stored id when it fires
    # Guard values: what must still hold for the firing to have an effect.
    expected_sent_at: datetime | None = None  # reminder: the prompt it follows up
    due_at: datetime | None = None  # delayed transition / feedback timers: the armed due time
    target_state: str | None = None
    # Filled from the scheduler's context attributes (``<aws.scheduler.*>``).
    scheduled_time: str | None = None
    execution_id: str | None = None


class ScheduledPromptPayload(LazyModel):
    """Input of a recurring daily-prompt schedule (targets the scheduled_prompt function)."""

    participant_id: str
    schedule_id: str
    kind: Literal["daily_prompt", "random_window"] = "daily_prompt"
    # Random schedules: the window (minutes) after the trigger in which the prompt is delivered.
    window_minutes: int = 0
    # When the schedule was created: the local pump fires no occurrence before it.
    created_at: datetime | None = None
    scheduled_time: str | None = None
    execution_id: str | None = None
