"""The one hold, and what the study team is told when the safety screen flags a message (docs/safety.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field

from promptpipe.lazy_model import LazyModel
from promptpipe.rules.clock import to_rfc3339


@dataclass(frozen=True)
class SafetyAlert:
    """Who (by id), what kind of signal, in which language and region, and whether it came inside an
    opt-out; never the participant's words or number."""

    participant_id: str
    category: str
    language: str
    region: str
    opted_out: bool = False

    def subject(self) -> str:
        return f"Safety flag: participant {self.participant_id} ({self.category})"

    def text(self) -> str:
        lines = [
            f"The safety screen flagged a message from participant {self.participant_id}.",
            f"Kind of signal: {self.category}; language read: {self.language or 'unknown'}; "
            f"region of their number: {self.region or 'unknown'}.",
        ]
        if self.opted_out:
            lines.append("The message was an opt-out (STOP): they are unsubscribed and got only the confirmation.")
        else:
            lines.append("They got the safety reply and are on hold: no coach messages until it is released.")
        lines.append("Read the transcript in the console (needs a person) and contact them.")
        return "\n".join(lines)


class HoldReason(StrEnum):
    SAFETY = "safety"
    HANDOFF = "handoff"
    STAFF = "staff"
    ASKED = "asked"  # the participant asked to talk to a person (their words, or the coach's tool)


# The holds the study team is told of by a hold alert (docs/safety.md): a safety hold too, besides
# the flag's own alert (published at most once), and not a staff hold, which is the team's own.
ANNOUNCED_HOLDS = frozenset({HoldReason.SAFETY, HoldReason.HANDOFF, HoldReason.ASKED})

# What the study team reads for each reason of a hold (the alert, the console's queue).
HOLD_WORDS = {
    HoldReason.SAFETY: "safety",
    HoldReason.HANDOFF: "repeated failure",
    HoldReason.STAFF: "a person has the conversation",
    HoldReason.ASKED: "asked for a person",
}


@dataclass(frozen=True)
class HoldAlert:
    """A new hold the study team is told of (docs/safety.md): who (by id), why, and where to read
    them (``console_url``: the participant's page, when a console URL is set); never their words."""

    participant_id: str
    reason: HoldReason
    detail: str = ""
    console_url: str = ""
    since: datetime | None = None  # when the hold began: with the id, the hold's reference

    @property
    def reference(self) -> str:
        """The same on every copy of this hold's alert (SNS may deliver a republished one twice)."""
        started = to_rfc3339(self.since) if self.since is not None else "unknown"
        return f"{self.participant_id}@{started}"

    def subject(self) -> str:
        return f"Needs a person: participant {self.participant_id} ({HOLD_WORDS[self.reason]})"

    def text(self) -> str:
        why = HOLD_WORDS[self.reason] + (f" ({self.detail})" if self.detail else "")
        lines = [
            f"Participant {self.participant_id} is on hold for a person: {why}.",
            "The coach sends them nothing until the hold is released in the console.",
        ]
        if self.console_url:
            lines.append(f"Their page: {self.console_url.rstrip('/')}/participants/{self.participant_id}")
        else:
            lines.append("Read the transcript in the console (needs a person) and contact them.")
        lines.append(f"Hold reference: {self.reference} (a repeated alert with the same reference is the same hold).")
        return "\n".join(lines)


class ConversationHold(LazyModel):
    """The one hold (docs/safety.md, "The hold"). While it lasts no model is called, the schedules
    stay and their firings are skipped (and recorded), and nothing is sent but the hold's own reply:
    the messages of the event that placed it, then at most one holding reply a day."""

    reason: HoldReason
    since: datetime
    set_by: str = Field(max_length=200)
    # The event that placed it: its messages (the safety reply, the hand-off's holding message) go out.
    event_id: str = ""
    # What a person needs first (the safety category); never the participant's words.
    detail: str = ""
    replied_at: datetime | None = None

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "reason": self.reason.value,
            "since": to_rfc3339(self.since),
            "set_by": self.set_by,
            "event_id": self.event_id,
            "detail": self.detail,
        }
        if self.replied_at is not None:
            data["replied_at"] = to_rfc3339(self.replied_at)
        return json.dumps(data, separators=(",", ":"))

    def view(self) -> dict[str, Any]:
        """What the participants API shows."""
        return {k: v for k, v in json.loads(self.to_json()).items() if k != "event_id"}


class NeedsPerson(LazyModel):
    """One entry of the needs-a-person queue (docs/console.md, "Nobody missed"): who, why and since
    when, as the commit that placed or changed the hold wrote it beside the state (the marker item
    the front page reads in one Query); never the participant's words or number."""

    participant_id: str
    name: str = ""
    reason: HoldReason = Field(description="safety, handoff (repeated failure), staff, asked")
    since: datetime | None = Field(None, description="When the hold began; null: the controller's own hold")
    detail: str = ""
    # The hold's alert is still to be published (usecases/hold_alerts.py): the marker is its outbox.
    alert_pending: bool = False
