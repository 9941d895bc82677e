"""The inputs of the stack's sweep schedules: the periodic sweep and the daily study sweep (the timers
function) and the unanswered-turns sweep (the worker). Apart from the events every first event reads
(``models/events.py``): a function loads these with its sweep (cold start: docs/benchmarks.md,
section 2)."""

from typing import Literal

from pydantic import ConfigDict, Field

from promptpipe.lazy_model import LazyModel


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
