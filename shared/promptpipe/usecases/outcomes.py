"""What a use case returns to its handler: typed outcomes, their log fields, the event id of a firing.
(A reconcile's report is in ``usecases/reconcile_report.py``: no event function builds it.)"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from promptpipe.models.decision import DecisionRecord
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.messaging import OutboundMessage
from promptpipe.models.metrics import Metric
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus

if TYPE_CHECKING:
    from promptpipe.flow.conversation import TurnResult
    from promptpipe.flow.delivery import DeliveryResult
    from promptpipe.flow.effects import Effects
    from promptpipe.flow.timer_events import TimerOutcome
    from promptpipe.models.alerts import HoldAlert


class InboundDecision(NamedTuple):
    """What the webhook did with one inbound message (a record: a named tuple, cheaper to define at
    import than a dataclass, docs/benchmarks.md section 2)."""

    action: str  # "enqueued" | "opted_out" | "opted_in" | "help" | "unknown_sender" | "auto_enrolled" | "ignored"
    participant_id: str | None = None


class UpdateOutcome(NamedTuple):
    """A participant update: the participant as stored, and whether its schedule changes are still
    pending (they failed after the commit; the marker makes them re-applied: the API answers 202).
    A record: a named tuple, cheaper to define at import than a dataclass."""

    participant: ConversationParticipant
    effects_pending: bool = False


@dataclass
class EventOutcome:
    """What one event did, for the handler's logs and metrics."""

    participant_id: str
    event_id: str
    replayed: bool = False
    committed_version: int | None = None
    outbound: list[OutboundMessage] = field(default_factory=list)
    turn: TurnResult | None = None
    delivery: DeliveryResult | None = None
    timer: TimerOutcome | None = None
    degraded: bool = False
    # Schedules to bring in line with the committed state (``finish`` applies them after sending).
    schedules: dict[str, ScheduleSpec | None] = field(default_factory=dict)
    # For the send rule and the delivery outcomes (``Effects`` says what each is).
    decided_status: ParticipantStatus | None = None
    recipient: ConversationParticipant | None = None
    committed_at: datetime | None = None
    seqs: dict[str, str] = field(default_factory=dict)
    # The participant's pending-effects marker seen when the event loaded their state: ``finish``
    # repairs their schedules and clears it.
    pending_effects: str | None = None
    # What the flow observed on the session (``usecases/outcome_metrics.py`` adds the rest).
    metrics: list[Metric] = field(default_factory=list)
    # The study decisions this event committed (docs/studies.md): ``apply_effects`` fills in their delivery.
    decisions: list[DecisionRecord] = field(default_factory=list)
    # The study team's alert of the hold this event placed, an effect like its messages
    # (``usecases/hold_alerts.py``): published by ``apply_effects``, resumed by a redelivery.
    hold_alert: HoldAlert | None = None

    def take(self, effects: Effects) -> None:
        """The effects to apply (messages, schedules and what the send rule needs)."""
        self.outbound, self.schedules = effects.messages, effects.schedules
        self.decided_status, self.recipient = effects.decided_status, effects.recipient
        self.committed_at, self.seqs = effects.committed_at, effects.seqs


def outcome_of_effects(effects: Effects, *, replayed: bool) -> EventOutcome:
    """An event's effects as the outcome ``usecases.sending.apply_effects`` applies."""
    outcome = EventOutcome(participant_id=effects.participant_id, event_id=effects.event_id, replayed=replayed)
    outcome.take(effects)
    return outcome


def event_id_for_schedule(
    name_or_kind: str, execution_id: str | None, scheduled_time: str | None, fallback: datetime
) -> str:
    """Scheduler execution ids are the idempotency keys; local runs fall back to name + time."""
    if execution_id and not execution_id.startswith("<aws."):
        return f"{name_or_kind}:{execution_id}"
    when = scheduled_time if scheduled_time and not scheduled_time.startswith("<aws.") else fallback.isoformat()
    return f"{name_or_kind}:{when}"


def outcome_log_fields(outcome: EventOutcome) -> dict[str, Any]:
    return {
        "participant_id": outcome.participant_id,
        "event_id": outcome.event_id,
        "replayed": outcome.replayed,
        "committed_version": outcome.committed_version,
        "messages": len(outcome.outbound),
        "degraded": outcome.degraded,
    }
