"""The coordinators' audit: who did what to a participant, and why (docs/console.md, "Accountability").

A record names the action, who took it (the coordinator the console names, or the AWS principal that
signed the API call), the principal the API saw (``via``), the reason given, and the names of the
fields an edit changed. It never holds a participant's data (no values, no message text), so the
record of an erasure outlives the erased data without keeping any of it.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import Field

from promptpipe.lazy_model import LazyModel

# The caller the API could not name (a local, unsigned call without ``by``).
UNNAMED_CALLER = "unsigned local caller"


class AuditAction(StrEnum):
    ENROL = "enrol"
    PAUSE = "pause"
    RESUME = "resume"
    EDIT = "edit"
    WITHDRAW = "withdraw"
    RELEASE = "release"
    OVERRIDE = "override"
    STAFF_MESSAGE = "staff_message"
    DELETE = "delete"
    ERASURE = "erasure"
    EXPORT = "export"


class Actor(LazyModel):
    """Who acts: ``name`` is the coordinator the console names (``by``), else the principal."""

    name: str = Field(max_length=200)
    principal: str = Field("", max_length=500)

    @classmethod
    def of(cls, by: str | None, principal: str | None) -> Actor:
        principal = principal or ""
        return cls(name=(by or "").strip() or principal or UNNAMED_CALLER, principal=principal)


class AuditRecord(LazyModel):
    record_id: str
    at: datetime
    action: AuditAction
    # Empty for an action on the study (the export).
    participant_id: str = ""
    by: str
    via: str = ""  # the AWS principal of the API call (empty locally)
    reason: str = ""
    fields: list[str] = Field(default_factory=list)  # names of the fields changed, never their values
    # The reason was removed with the participant's data (an erasure after it).
    redacted: bool = False
