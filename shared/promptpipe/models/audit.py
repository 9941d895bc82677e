"""The coordinators' audit: who did what to a participant, and why (docs/console.md, "Accountability").

A record names the action, who took it (``by``: the AWS principal that signed the API call, which API
Gateway's IAM authorisation vouches for; locally, unsigned, ``UNNAMED_CALLER``), the coordinator the
caller named (``named``: the console's signed-in coordinator, a note the caller vouches for, never
the who), the reason given, and the names of the fields an edit changed. It never holds a
participant's data (no values, no message text), so the record of an erasure outlives the erased
data without keeping any of it.
"""

# Annotations as objects, not strings: pydantic evaluates none at the participants API's cold start
# (models/api.py).
from datetime import datetime
from enum import StrEnum
from typing import Self

from pydantic import Field

from promptpipe.lazy_model import LazyModel

# Who acts when no AWS principal signed the call (a local run, a test): never the caller's own claim.
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
    """Who acts: ``principal`` is the AWS principal that signed the call (``UNNAMED_CALLER`` when none
    did); ``named`` is the coordinator the caller says it acts for (``by``), kept as a note only."""

    principal: str = Field(max_length=500)
    named: str = Field("", max_length=200)

    @classmethod
    def of(cls, by: str | None, principal: str | None) -> Self:
        return cls(principal=(principal or UNNAMED_CALLER)[:500], named=(by or "").strip())


class AuditRecord(LazyModel):
    record_id: str
    at: datetime
    action: AuditAction
    # Empty for an action on the study (the export).
    participant_id: str = ""
    by: str  # who: the AWS principal of the API call (``UNNAMED_CALLER`` locally)
    reason: str = ""
    fields: list[str] = Field(default_factory=list)  # names of the fields changed, never their values
    # The reason was removed with the participant's data (an erasure after it).
    redacted: bool = False
    # The coordinator the caller named (the console's signed-in coordinator): a note, never the who.
    named: str = ""
