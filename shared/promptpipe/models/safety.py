"""What the study team is told when the safety screen flags a message (docs/safety.md)."""

from __future__ import annotations

from dataclasses import dataclass


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
