"""Tone adaptation (contract §6, FACTS §3, decision 9). Pure: no I/O, the clock is an argument.

The model below is the stored shape (``UserProfile.tone``). The functions are completed in this
module: ``validate_proposal``, ``update_profile_tone``, ``build_tone_guide``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

GO_ZERO_TIME = "0001-01-01T00:00:00Z"


class UpdateSource(StrEnum):
    EXPLICIT = "explicit"
    IMPLICIT = "implicit"


class ProfileTone(BaseModel):
    """``UserProfile.tone`` with the original's JSON names."""

    model_config = ConfigDict(populate_by_name=True, validate_assignment=True)

    tags: list[str] = Field(default_factory=list, alias="tone_tags")
    scores: dict[str, float] = Field(default_factory=dict, alias="tone_scores")
    version: int = Field(0, alias="tone_version")
    last_updated_at: datetime | None = Field(None, alias="tone_last_updated_at")
    update_source: UpdateSource | None = Field(None, alias="tone_update_source")
    override_until: datetime | None = Field(None, alias="tone_override_until")

    @field_validator("last_updated_at", "override_until", mode="before")
    @classmethod
    def _go_zero_time_is_none(cls, value: Any) -> Any:
        if value in (None, "", GO_ZERO_TIME) or (isinstance(value, str) and value.startswith("0001-01-01")):
            return None
        return value

    @field_validator("update_source", mode="before")
    @classmethod
    def _empty_source_is_none(cls, value: Any) -> Any:
        return None if value == "" else value

    @field_serializer("last_updated_at")
    def _serialize_last_updated(self, value: datetime | None) -> str:
        if value is None:
            return GO_ZERO_TIME
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")

    def to_json_dict(self) -> dict[str, Any]:
        """The stored JSON object: empty tags/scores/source/override are omitted (Go ``omitempty``)."""
        data: dict[str, Any] = {}
        if self.tags:
            data["tone_tags"] = list(self.tags)
        if self.scores:
            data["tone_scores"] = dict(self.scores)
        data["tone_version"] = self.version
        data["tone_last_updated_at"] = self._serialize_last_updated(self.last_updated_at)
        if self.update_source is not None:
            data["tone_update_source"] = self.update_source.value
        if self.override_until is not None:
            data["tone_override_until"] = self.override_until.astimezone(UTC).isoformat().replace(
                "+00:00", "Z"
            )
        return data
