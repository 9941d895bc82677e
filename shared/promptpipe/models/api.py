"""Request and response bodies of the participants API (docs/behaviour.md#api).

Every route declares its models at import, so they are part of the API's cold start; their annotations
are objects, not strings (no ``from __future__ import annotations``): pydantic compiles and evaluates
each string annotation when a class is defined, about 10 M instructions for this module's 39 classes
(docs/benchmarks.md, section 2). A class is defined before any annotation names it.
"""

from typing import Any, Literal

from pydantic import ConfigDict, Field, StrictBool

from promptpipe.lazy_model import LazyModel
from promptpipe.models.audit import AuditRecord
from promptpipe.models.decision import DecisionRecord
from promptpipe.models.llm_routes import LLMRoute
from promptpipe.models.participant import ConsentRecord, ConversationParticipant, ParticipantStatus
from promptpipe.models.participant_list import ParticipantRowsPage
from promptpipe.models.state import SubState
from promptpipe.models.store import OPAQUE_TOKEN, TranscriptEntry
from promptpipe.rules.timezones import IanaTimeZoneOrEmpty

# The ``by`` a caller sends: a note beside the who, which is the AWS principal that signed the call.
BY_NOTE = (
    "The coordinator the caller acts for (the console names them): kept in the audit as a note (named); "
    'the who recorded is the AWS principal that signed the call (docs/console.md, "Accountability").'
)


class Envelope(LazyModel):
    """Every answer's body; each route's envelope below names the type of its ``result``. Subclasses
    rather than ``Envelope[T]``: a parametrized generic is one more model class to create, and one
    to build, at every cold start of the participants API (docs/benchmarks.md)."""

    status: Literal["ok", "error"] = "ok"
    message: str | None = None
    result: Any = None


class EnrollmentRequest(LazyModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    phone_number: str = Field(
        min_length=1,
        max_length=64,
        description=(
            "The participant's number, best with + and the country code (+1 516 484 5567); stored as E.164. "
            "Without +, it is read in the deployment's DEFAULT_PHONE_REGION; when it is only valid with a "
            "country code, the answer is 400 suggesting the + form."
        ),
        examples=["+1 416 555 0142"],
    )
    name: str = Field("", max_length=200, examples=["Sam"])
    gender: str = Field("", max_length=100)
    ethnicity: str = Field("", max_length=100)
    background: str = Field("", max_length=4000, examples=["Office worker"])
    timezone: IanaTimeZoneOrEmpty = Field("", max_length=50, examples=["America/Toronto"])
    language: str = Field(
        "",
        pattern=r"^([A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*)?$",
        max_length=35,
        description="The participant's language (ISO 639-1, e.g. es or es-MX): the opt-out, opt-in and help "
        "replies come in it (docs/compliance.md); English when unset or without texts.",
        examples=["es"],
    )
    consent: ConsentRecord | None = Field(
        None,
        description=(
            "The participant's consent: when, the form's version, how (docs/safety.md#consent). Required "
            "when the deployment sets CONSENT_REQUIRED; nothing is sent to a participant before it is on record."
        ),
    )
    test_participant: bool = Field(
        False,
        strict=True,
        description="A staff phone: kept out of the study's decisions, exports and charts (docs/studies.md).",
    )
    by: str | None = Field(None, max_length=200, description=BY_NOTE)


class ParticipantUpdate(LazyModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    name: str | None = Field(None, max_length=200)
    gender: str | None = Field(None, max_length=100)
    ethnicity: str | None = Field(None, max_length=100)
    background: str | None = Field(None, max_length=4000)
    timezone: IanaTimeZoneOrEmpty | None = Field(None, max_length=50)
    status: ParticipantStatus | None = None
    # Consent recorded after enrolment (docs/safety.md#consent).
    consent: ConsentRecord | None = None
    withdrawal: ConsentRecord | None = Field(
        None,
        description=(
            "The participant's withdrawal of consent: sets the status to withdrawn. A status change to "
            "withdrawn without it is recorded with the request's time and method 'api'."
        ),
    )
    test_participant: bool | None = Field(
        None, strict=True, description="Flag or unflag a staff phone: kept out of the study's record (docs/studies.md)."
    )
    by: str | None = Field(None, max_length=200, description=BY_NOTE)
    reason: str | None = Field(
        None, max_length=500, description="Why (a pause, a withdrawal): recorded in the audit, not the transcript."
    )
    preferred_time: str | None = Field(
        None,
        pattern=r"^([01]?[0-9]|2[0-3]):[0-5][0-9]$",
        examples=["19:00"],
        description=(
            "The daily prompt's time, HH:MM (24-hour) in the participant's zone: the coach's profile takes it "
            "and the fixed daily schedule moves to it after the commit (a paused one moves within the pause, "
            "and comes back at the new time). Random windows are kept; no schedule is added "
            "(docs/behaviour.md#B-API-9)."
        ),
    )


class ProfileFacts(LazyModel):
    """Intake facts an operator supplies with a state override, for a participant handed to a
    person (docs/controller.md, "Hand-offs that resume"): saved to the profile and recorded by the
    flow controller."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    habit_domain: str | None = Field(None, min_length=1, max_length=500, examples=["a short walk"])
    motivational_frame: str | None = Field(None, min_length=1, max_length=500)
    preferred_time: str | None = Field(None, min_length=1, max_length=100, examples=["19:00"])
    prompt_anchor: str | None = Field(None, min_length=1, max_length=500, examples=["after dinner"])
    additional_info: str | None = Field(None, min_length=1, max_length=2000)


class StateOverride(LazyModel):
    """At least one of ``sub_state``, ``debug_mode``, ``llm_routes``, ``profile`` and
    ``release_hold``; the reason goes into the transcript."""

    model_config = ConfigDict(
        extra="forbid",
        str_strip_whitespace=True,
        json_schema_extra={
            "anyOf": [
                {"required": [name], "properties": {name: {"not": {"type": "null"}}}}
                for name in ("sub_state", "debug_mode", "llm_routes", "profile", "release_hold")
            ]
        },
    )

    sub_state: SubState | None = None
    debug_mode: StrictBool | None = None  # true or false; not 0/1 or "yes"
    # This participant's model routes by purpose (see docs/pipeline.md, "Model routing");
    # an empty mapping clears the override.
    llm_routes: dict[Literal["intake", "feedback", "generator", "classifier", "synthesis"], LLMRoute] | None = None
    # Facts the participant could not give (a hand-off), supplied by the operator; with sub_state
    # in the same call the hold is released and the flow resumes with them.
    profile: ProfileFacts | None = None
    reason: str = Field(min_length=1, max_length=500)
    # true: a coordinator releases the hold (docs/safety.md, "The hold"); the reason is the note. A
    # sub_state given releases it too (a hand-off resolved).
    release_hold: Literal[True] | None = None
    by: str | None = Field(None, max_length=200, description=BY_NOTE)


class StateView(LazyModel):
    participant_id: str
    status: ParticipantStatus
    current_state: str
    sub_state: str
    debug_mode: bool
    profile: dict[str, Any]
    schedules: list[dict[str, Any]]
    pending_timers: dict[str, str]
    daily_prompt_pending: dict[str, Any] | None
    version: int
    # The flow controller's state (intake), with ``needs_person`` (docs/controller.md); None before intake ran on it.
    controller: dict[str, Any] | None = None
    # Schedule changes failed after a commit and are being retried (docs/architecture.md, "Effects that failed").
    effects_pending: bool = False
    # The hold (reason, since, set_by, detail, replied_at) while the conversation waits for a person; None: not held.
    hold: dict[str, Any] | None = None


class ErrorEnvelope(LazyModel):
    """Every error answer, as ``promptpipe.errors.error_body`` builds it: status ``error`` and a message."""

    status: Literal["error"] = "error"
    message: str


class ParticipantPage(LazyModel):
    participants: list[ConversationParticipant]
    next_token: str | None = Field(None, description=OPAQUE_TOKEN)


class TranscriptPage(LazyModel):
    messages: list[TranscriptEntry]
    next_token: str | None = Field(None, description=OPAQUE_TOKEN)


class ParticipantEnvelope(Envelope):
    result: ConversationParticipant | None = None


class ParticipantPageEnvelope(Envelope):
    result: ParticipantPage | None = None


class TranscriptPageEnvelope(Envelope):
    result: TranscriptPage | None = None


class StateViewEnvelope(Envelope):
    result: StateView | None = None


class MessageEnvelope(Envelope):
    result: None = None


# -- reconcile (docs/architecture.md#effects) -------------------------------------------------
class DriftedScheduleView(LazyModel):
    """A live schedule rewritten because its specification differed from what the state asks for."""

    name: str
    fields: list[str]  # expression, timezone, flexible_window_minutes, target_arn, role_arn, payload, ...


class ReconcileReportView(LazyModel):
    """One participant's live schedules against what their state wants, and the repairs made."""

    participant_id: str
    desired: int
    live: int
    deleted_orphans: list[str]
    created_missing: list[str]
    skipped_past: list[str]  # one-shots whose time has passed: not re-created
    updated_drifted: list[DriftedScheduleView] = []  # written under older settings: rewritten  # noqa: RUF012
    repairs: int


class ReconcileAll(LazyModel):
    participants: list[ReconcileReportView]
    repairs: int


class ParticipantRowsEnvelope(Envelope):
    result: ParticipantRowsPage | None = None


class ReconcileEnvelope(Envelope):
    result: ReconcileReportView | None = None


class ReconcileAllEnvelope(Envelope):
    result: ReconcileAll | None = None


# -- flow definitions (docs/controller.md) ---------------------------------------------------
class FlowProblem(LazyModel):
    path: str
    message: str


class FlowValidation(LazyModel):
    valid: bool
    problems: list[FlowProblem]


class FlowVersion(LazyModel):
    version: int
    created_at: str = Field(description="ISO 8601")
    created_by: str = ""


class FlowVersions(LazyModel):
    flow_id: str
    versions: list[FlowVersion]


class FlowEnvelope(Envelope):
    """``result`` is the flow definition as stored (docs/controller.md)."""

    result: dict[str, Any] | None = None


class FlowValidationEnvelope(Envelope):
    result: FlowValidation | None = None


class FlowVersionsEnvelope(Envelope):
    result: FlowVersions | None = None


# -- the console's coordination routes (docs/console.md) -------------------------------------
class StaffMessageRequest(LazyModel):
    """A message from the study team, in the conversation (docs/console.md, "A person in the
    conversation"): the coach is held while a person has the conversation."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    body: str = Field(min_length=1, max_length=1600)
    by: str = Field(min_length=1, max_length=200, description="The coordinator writing: shown in the transcript.")


class StaffMessageSent(LazyModel):
    message_id: str
    outcome: str  # sent | not sent (the transcript entry has the delivery outcome and its reason)


class StaffMessageEnvelope(Envelope):
    result: StaffMessageSent | None = None


class AuditRequest(LazyModel):
    """An action the caller records itself: the export (the use cases record the others)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    action: Literal["export"]
    by: str | None = Field(None, max_length=200, description=BY_NOTE)
    reason: str = Field("", max_length=500)


class AuditRecords(LazyModel):
    records: list[AuditRecord]


class AuditEnvelope(Envelope):
    result: AuditRecords | None = None


class EnrolmentChecks(LazyModel):
    """Rows of a cohort to check before enrolling them (a dry run: nothing is written)."""

    model_config = ConfigDict(extra="forbid")

    rows: list[dict[str, Any]] = Field(max_length=1000)


class RowProblems(LazyModel):
    row: int  # 1-based, as the file's data rows
    problems: list[str]


class EnrolmentChecked(LazyModel):
    rows: list[RowProblems]


class EnrolmentCheckedEnvelope(Envelope):
    result: EnrolmentChecked | None = None


class DecisionPage(LazyModel):
    """A page of a study's decision records (docs/studies.md#the-decision-record), in (participant,
    study day, decision point) order; none for a study with no decision on record."""

    decisions: list[DecisionRecord]
    next_token: str | None = Field(None, description=OPAQUE_TOKEN)


class DecisionPageEnvelope(Envelope):
    result: DecisionPage | None = None
