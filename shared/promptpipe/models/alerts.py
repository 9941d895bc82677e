"""What the study team is told (docs/safety.md): a safety flag's alert and a new hold's alert. Apart
from the hold (``models/safety.py``), which every state carries: these are built only when a message
is flagged or a hold placed, and imported there (cold start: docs/benchmarks.md, section 2)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from promptpipe.models.safety import HOLD_WORDS, HoldReason
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
