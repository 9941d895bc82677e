"""The record of one randomised decision (docs/studies.md#the-decision-record).

A record is written in the same commit as the event that made the decision: no decision without its
record, no record without its decision. Its key is ``decision_id``, derived from the participant, the
decision point and the study day, so a redelivered event finds the record it already wrote (and the
generator, seeded the same way, draws the same arm).
"""

from datetime import datetime
from enum import StrEnum

from pydantic import ConfigDict, Field

from promptpipe.lazy_model import LazyModel


class UnavailableReason(StrEnum):
    """Why a participant was not available at a decision point (the availability rule of
    ``flow/study.py``). Defined with the record that stores it, so that loading a commit does not load
    the study definitions (cold start: docs/benchmarks.md, section 2)."""

    PAUSED = "paused"
    OPTED_OUT = "opted_out"
    ON_HOLD = "on_hold"
    STUDY_ENDED = "study_ended"
    # Active, but no daily prompt fired that study day (intake not finished, no schedule yet): the
    # daily sweep records the day.
    NOT_SCHEDULED = "not_scheduled"


class DecisionDelivery(StrEnum):
    NOT_SENT = "not_sent"  # unavailable, or the no-prompt arm
    PENDING = "pending"  # decided, send not yet confirmed
    SENT = "sent"
    DELIVERED = "delivered"  # the provider's later report (a receipt)
    FAILED = "failed"  # refused at the send, or reported undelivered later: final
    READ = "read"  # the provider's later report (WhatsApp, RCS)


# How far a decision's delivery has come; a provider's report only moves it forward, and a failure
# is final (as a message's receipts: docs/reliability.md).
_DELIVERY_RANK = {
    DecisionDelivery.NOT_SENT: 0,
    DecisionDelivery.PENDING: 0,
    DecisionDelivery.SENT: 1,
    DecisionDelivery.DELIVERED: 2,
    DecisionDelivery.READ: 3,
}


def delivery_after_report(current: DecisionDelivery, reported: DecisionDelivery) -> DecisionDelivery | None:
    """A decision's delivery once the provider reports ``reported`` on its message; ``None``: no
    change (a report that would move it back, or one after a failure)."""
    if current is DecisionDelivery.FAILED or current is reported:
        return None
    if reported is DecisionDelivery.FAILED:
        return reported
    return reported if _DELIVERY_RANK[reported] > _DELIVERY_RANK[current] else None


class ProximalOutcomeValue(StrEnum):
    DONE = "done"
    REPLIED = "replied"  # replied within the window, not a done
    NONE = "none"  # window closed with no reply


class DecisionRecord(LazyModel):
    model_config = ConfigDict(extra="forbid")

    decision_id: str = Field(description="<participant_id>#<decision_point>#<study_day>, stable under redelivery")
    study_id: str
    participant_id: str = Field(description="Internal id; exports replace it with a salted pseudonym")
    decision_point: str
    study_day: int = Field(ge=1, description="1 on the day of enrolment")
    decided_at: datetime = Field(description="UTC")
    decided_at_local: datetime = Field(description="The participant's local time (with offset)")
    available: bool
    unavailable_reason: UnavailableReason | None = None
    probabilities: dict[str, float] = Field(description="Each arm's probability at this decision")
    arm: str | None = Field(default=None, description="The arm drawn; None when not available")
    intended_send_at: datetime | None = None
    sent_at: datetime | None = None
    delivery: DecisionDelivery = DecisionDelivery.NOT_SENT
    outcome: ProximalOutcomeValue | None = Field(default=None, description="Filled in when known")
    outcome_at: datetime | None = None
    message_id: str | None = Field(default=None, description="The prompt's message id, when one was decided")

    @property
    def probability(self) -> float | None:
        """The drawn arm's probability (None when no arm was drawn)."""
        return None if self.arm is None else self.probabilities[self.arm]


def decision_id(participant_id: str, decision_point: str, study_day: int) -> str:
    return f"{participant_id}#{decision_point}#{study_day}"
