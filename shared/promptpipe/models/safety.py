"""The one hold and its reasons (docs/safety.md). What the study team is told (a safety flag's alert, a
hold's alert) is in ``models/alerts.py``: built only when a message is flagged or a hold placed, so no
function defines those classes at cold start (docs/benchmarks.md, section 2)."""

import json
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field

from promptpipe.lazy_model import LazyModel
from promptpipe.rules.clock import to_rfc3339


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
