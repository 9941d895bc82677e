"""Events that reach the engine: queued conversation turns and timer payloads."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import ConfigDict, Field

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


class SweepRequest(LazyModel):
    """Input of the stack's periodic sweep schedule (targets the timers function): repair the
    participants whose schedule changes failed after a commit (docs/architecture.md, "Effects that
    failed"), and publish the hold alerts left pending (docs/safety.md, "Asking for a person").
    Extra keys (the scheduler's) are refused, so a timer's input can never pass as one."""

    model_config = ConfigDict(extra="forbid")

    sweep: Literal["pending_effects"]
    limit: int = Field(default=100, ge=1, le=1000)


class StudySweepCursor(LazyModel):
    """Where the daily study sweep stopped before its deadline (``usecases/studies.sweep_study``): the
    participants list's page it was in (its token; None: the first page) and the last participant it
    swept on that page (None: none yet). A continuation resumes after that participant."""

    model_config = ConfigDict(extra="forbid")

    page: str | None = Field(None, max_length=2048)
    after: str | None = Field(None, max_length=64)


class StudySweepRequest(LazyModel):
    """Input of the stack's daily study sweep schedule (targets the timers function): every enrolled
    participant's missing study days recorded, outcome windows closed, the study ended past its
    duration (docs/studies.md, "Every day has its row"). Extra keys are refused."""

    model_config = ConfigDict(extra="forbid")

    sweep: Literal["study"]
    # Where a run that ran out of time stopped; its continuation (a one-shot schedule) resumes there.
    cursor: StudySweepCursor | None = None


class RedriveRequest(LazyModel):
    """Input of the stack's unanswered-turns sweep schedule (targets the worker): once the model
    answers again, put the turns the inbound queue dead-lettered back on it (docs/reliability.md,
    "The record under faults"). Extra keys are refused."""

    model_config = ConfigDict(extra="forbid")

    sweep: Literal["unanswered"]
    limit: int = Field(default=100, ge=1, le=1000)


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
