"""Request and response bodies of the participants API (docs/behaviour.md#api)."""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from promptpipe.models.llm import LLMRoute
from promptpipe.models.participant import ParticipantStatus
from promptpipe.models.state import SubState
from promptpipe.timezones import IanaTimeZoneOrEmpty

T = TypeVar("T")


class Envelope(BaseModel, Generic[T]):
    status: Literal["ok", "error"] = "ok"
    message: str | None = None
    result: T | None = None


class EnrollmentRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    phone_number: str = Field(
        max_length=64,
        description=(
            "The participant's number, best with + and the country code (+1 516 484 5567). Without +, it "
            "is read in the deployment's DEFAULT_PHONE_REGION; when it is only valid with a country code, "
            "the answer is 400 suggesting the + form."
        ),
    )
    name: str = Field("", max_length=200)
    gender: str = Field("", max_length=100)
    ethnicity: str = Field("", max_length=100)
    background: str = Field("", max_length=4000)
    timezone: IanaTimeZoneOrEmpty = Field("", max_length=50)


class ParticipantUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    name: str | None = Field(None, max_length=200)
    gender: str | None = Field(None, max_length=100)
    ethnicity: str | None = Field(None, max_length=100)
    background: str | None = Field(None, max_length=4000)
    timezone: IanaTimeZoneOrEmpty | None = Field(None, max_length=50)
    status: ParticipantStatus | None = None


class StateOverride(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    sub_state: SubState | None = None
    debug_mode: bool | None = None
    # This participant's model routes by purpose (see docs/pipeline.md, "Model routing");
    # an empty mapping clears the override.
    llm_routes: dict[Literal["intake", "feedback", "generator", "classifier", "synthesis"], LLMRoute] | None = None
    reason: str = Field(min_length=1, max_length=500)


class StateView(BaseModel):
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
