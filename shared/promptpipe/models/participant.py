"""``ConversationParticipant`` (docs/behaviour.md#B-API-1) and the enrollment API's request models."""

from datetime import UTC, datetime
from enum import StrEnum

from pydantic import ConfigDict, Field, field_validator

from promptpipe.lazy_model import LazyModel


class ParticipantStatus(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"
    COMPLETED = "completed"
    WITHDRAWN = "withdrawn"


# How consent was given (docs/safety.md#consent): a study's own words for API enrolments, and two
# set by the engine: a participant who enrolled themselves by texting in, and one imported.
CONSENT_IMPLIED = "implied"
CONSENT_IMPORTED = "imported"
EARLIEST_CONSENT_YEAR, LATEST_CONSENT_YEAR = 1990, 2200


class ConsentRecord(LazyModel):
    """When, under which version of the consent form, and how a participant consented (or withdrew)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    at: datetime = Field(description="When it was given (RFC 3339)")
    version: str = Field(min_length=1, max_length=64, description="The consent form's version", examples=["v2"])
    method: str = Field(
        min_length=1,
        max_length=32,
        pattern=r"^[a-z][a-z0-9_-]*$",
        description=(
            "How it was given, in the study's words (written, electronic, verbal, ...); the engine sets "
            f"{CONSENT_IMPLIED!r} for a participant enrolled by texting in and {CONSENT_IMPORTED!r} for an import"
        ),
        examples=["electronic"],
    )

    @field_validator("at")
    @classmethod
    def _plausible_time(cls, value: datetime) -> datetime:
        """An aware time in this era (naive: UTC): a year such as 13 could be stored but never read back."""
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        if not EARLIEST_CONSENT_YEAR <= value.astimezone(UTC).year <= LATEST_CONSENT_YEAR:
            raise ValueError(f"must be between {EARLIEST_CONSENT_YEAR} and {LATEST_CONSENT_YEAR}")
        return value


def engine_consent(at: datetime, method: str) -> ConsentRecord:
    """The record the engine keeps for a participant it enrolled itself (``implied``: texted in) or
    imported (``imported``): no form version was recorded."""
    return ConsentRecord(at=at, version=UNRECORDED_VERSION, method=method)


UNRECORDED_VERSION = "unrecorded"


class ConversationParticipant(LazyModel):
    """An enrolled person. ``phone_number`` is canonical E.164 (docs/behaviour.md#B-API-2)."""

    model_config = ConfigDict(validate_assignment=True)

    id: str = Field(pattern=r"^p_[0-9a-f]{32}$")
    phone_number: str = Field(pattern=r"^\+[1-9]\d{5,14}$")
    name: str = ""
    gender: str = ""
    ethnicity: str = ""
    background: str = ""
    timezone: str = ""
    status: ParticipantStatus = ParticipantStatus.ACTIVE
    # Paused by the participant's own STOP: only then does their START resume them.
    opted_out: bool = False
    debug_mode: bool = False
    # The language the fixed texts (opt-out, opt-in and help replies) come in: an ISO 639-1 code
    # ("en", "es"), set at enrolment or from the first opt-out / help word; "" reads as English.
    language: str = Field("", max_length=8)
    enrolled_at: datetime
    created_at: datetime
    updated_at: datetime
    # Consent on record (docs/safety.md#consent); ``withdrawal`` once they withdrew.
    consent: ConsentRecord | None = None
    withdrawal: ConsentRecord | None = None
    # A staff phone (docs/studies.md): kept out of the study's decisions, exports and charts.
    test_participant: bool = False

    @property
    def is_active(self) -> bool:
        return self.status is ParticipantStatus.ACTIVE


def format_background(participant: ConversationParticipant) -> str:
    """``participantBackground`` exactly as the contract formats it (docs/behaviour.md#B-API-5)."""
    return (
        f"Name: {participant.name}\nGender: {participant.gender}\n"
        f"Ethnicity: {participant.ethnicity}\nBackground: {participant.background}"
    )


def has_background(participant: ConversationParticipant) -> bool:
    return any((participant.name, participant.gender, participant.ethnicity, participant.background))
