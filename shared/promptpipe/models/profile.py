"""``UserProfile`` (docs/behaviour.md#profile), stored as JSON under the ``userProfile`` DataKey."""

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import ConfigDict, Field, field_validator

from promptpipe.lazy_model import LazyModel
from promptpipe.rules.tone import GO_ZERO_TIME, ProfileTone


class Intensity(StrEnum):
    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"


# The order in which save_user_profile merges fields and reports them (docs/behaviour.md#B-PROF-1).
PROFILE_TEXT_FIELDS: tuple[str, ...] = (
    "habit_domain",
    "motivational_frame",
    "last_motivator",
    "preferred_time",
    "prompt_anchor",
    "additional_info",
    "last_successful_prompt",
    "last_barrier",
    "last_tweak",
)
_OMIT_WHEN_EMPTY = ("last_successful_prompt", "last_barrier", "last_tweak", "last_motivator")


def _rfc3339(value: datetime | None) -> str:
    if value is None:
        return GO_ZERO_TIME
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


class UserProfile(LazyModel):
    model_config = ConfigDict(validate_assignment=True, extra="ignore")

    habit_domain: str = ""
    motivational_frame: str = ""
    preferred_time: str = ""
    prompt_anchor: str = ""
    additional_info: str = ""
    intensity: Intensity = Intensity.NORMAL
    created_at: datetime | None = None
    updated_at: datetime | None = None
    last_successful_prompt: str = ""
    last_barrier: str = ""
    last_tweak: str = ""
    last_motivator: str = ""
    success_count: int = 0
    total_prompts: int = 0
    tone: ProfileTone = Field(default_factory=ProfileTone)

    @field_validator("created_at", "updated_at", mode="before")
    @classmethod
    def _zero_time(cls, value: Any) -> Any:
        if value in (None, "") or (isinstance(value, str) and value.startswith("0001-01-01")):
            return None
        return value

    @field_validator("intensity", mode="before")
    @classmethod
    def _default_intensity(cls, value: Any) -> Any:
        return Intensity.NORMAL if value in (None, "") else value

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> "UserProfile":
        """Load, migrating legacy shapes: ``last_blocker`` fills an empty ``last_barrier``."""
        data = dict(data)
        blocker = data.pop("last_blocker", None)
        if isinstance(blocker, str) and blocker and not data.get("last_barrier"):
            data["last_barrier"] = blocker
        tone = data.get("tone")
        if isinstance(tone, dict) and not tone.get("tone_version"):
            tone = {**tone, "tone_version": 1}
            data["tone"] = tone
        elif tone is None:
            data["tone"] = {"tone_version": 1}
        return cls.model_validate(data)

    def to_json_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "habit_domain": self.habit_domain,
            "motivational_frame": self.motivational_frame,
            "preferred_time": self.preferred_time,
            "prompt_anchor": self.prompt_anchor,
            "additional_info": self.additional_info,
            "intensity": self.intensity.value,
            "created_at": _rfc3339(self.created_at),
            "updated_at": _rfc3339(self.updated_at),
        }
        for name in _OMIT_WHEN_EMPTY:
            if getattr(self, name):
                data[name] = getattr(self, name)
        data["success_count"] = self.success_count
        data["total_prompts"] = self.total_prompts
        data["tone"] = self.tone.to_json_dict()
        return data

    @property
    def missing_required(self) -> list[str]:
        """Fields the prompt generator needs, in the order it checks them (docs/behaviour.md#B-GEN-2)."""
        missing = []
        if not self.prompt_anchor.strip():
            missing.append("prompt_anchor")
        if not self.preferred_time.strip():
            missing.append("preferred_time")
        return missing

    @property
    def is_complete(self) -> bool:
        return not self.missing_required
