"""What the state store loads and commits: the unit of work's view of DynamoDB."""

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from promptpipe.lazy_model import LazyModel
from promptpipe.models.decision import DecisionRecord
from promptpipe.models.effects import MessageRef
from promptpipe.models.messaging import OutboundMessage
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.safety import NeedsPerson
from promptpipe.models.state import FlowState

# Event records kept on the state item: the idempotency record of every event (docs/architecture.md,
# "Event records"). Kept for a day (longer than any redelivery: SQS retries within minutes, the
# scheduler and Lambda's asynchronous retries within hours) and at most this many.
MAX_RECENT_EVENTS = 25
RECENT_EVENTS_MAX_AGE_HOURS = 24

# Event ids claimed by a commit (docs/architecture.md, "Event ids: answered at most once"): an item per
# event, written in the event's own transaction only if new, that expires after the longest any copy
# of the event can come back: Meta retries an unacknowledged WhatsApp webhook for up to 7 days, and a
# dead-lettered turn or firing can be redriven for as long as its dead-letter queue keeps it (14 days,
# infra/constants.py DLQ_RETENTION_DAYS). One day of margin on top.
EVENT_ID_RETENTION_DAYS = 15

# How long after a send a provider's report on it is looked for (Twilio reports within hours; Meta
# retries a webhook for up to 7 days): the window of ``DeliveryLog.find_sent`` and the life of the
# pointer from a provider id to its message.
PROVIDER_REPORT_DAYS = 8

OPAQUE_TOKEN = "Opaque pagination token from the previous page's next_token; absent or null on the last page."


# Transcript kinds written by ``promptpipe import`` (promptpipe.usecases.import_history): one message of the
# original's history, and the record of the import itself with the original's counts.
IMPORTED_KIND = "imported"
IMPORT_KIND = "import"


class Direction(StrEnum):
    INBOUND = "inbound"
    OUTBOUND = "outbound"
    SYSTEM = "system"


DeliveryStatus = Literal["pending", "sent", "failed", "skipped"]
# A provider's later report of success on a message it accepted (Twilio ``MessageStatus``, Meta
# ``statuses``): ``read`` comes after ``delivered``; a report never moves a message back.
Receipt = Literal["delivered", "read"]
RECEIPT_ORDER: dict[str, int] = {"delivered": 1, "read": 2}


class DeliveryOutcome(LazyModel):
    """What became of an outbound message (docs/architecture.md, "Delivery outcomes").

    ``pending``: decided and committed, no outcome recorded yet (the send is under way, or the
    process died before it could record one: never shown or counted as sent); ``sent``: the
    provider accepted it (``provider_id``); ``failed``: the provider refused it (``code``);
    ``skipped``: not sent, and why (``reason``: the participant opted out or was paused or deleted
    by the time it was sent, or WhatsApp's window was closed).
    """

    status: DeliveryStatus = "pending"
    provider_id: str = ""
    code: str = ""
    reason: str = ""
    at: datetime | None = None
    # A split SMS: the provider id of each part accepted, in order (``failed``: those accepted
    # before the refusal, which a retry does not send again).
    parts: list[str] = Field(default_factory=list)
    # The provider's later report of success on a ``sent`` message (``delivered``, then ``read``) and
    # when it arrived; empty until one comes. Kept beside ``status`` (the provider's answer to the
    # send), so a report that arrives before the outcome is recorded is not overwritten by it.
    receipt: Receipt | None = None
    receipt_at: datetime | None = None
    # What went out (docs/console.md, "Every delivery visible"): the channel ("sms", "whatsapp",
    # "local"), the template sent in place of free text (WhatsApp outside its window), and the SMS
    # segments billed (0: not an SMS, or not known).
    channel: str = ""
    template: str = ""
    segments: int = 0

    @property
    def delivered(self) -> bool:
        """Accepted by the provider and not reported failed since (counted as sent)."""
        return self.status == "sent"

    @property
    def final(self) -> str:
        """The message's final outcome, as counts, the calendar strip and the export read it:
        ``pending``, ``sent``, ``delivered``, ``read``, ``failed`` or ``skipped``. A receipt refines
        ``sent`` only: a message reported failed stays failed whatever report comes after."""
        return self.receipt if self.status == "sent" and self.receipt else self.status


class TranscriptEntry(LazyModel):
    """One item of the append-only transcript (``MSG#{timestamp}#{seq}``)."""

    participant_id: str
    at: datetime
    seq: str  # unique within the participant at this timestamp (event id + index)
    direction: Direction
    kind: str  # "message", "reply", "daily_prompt", "reminder", "override", …
    content: str
    event_id: str = ""
    # Per-turn audit data: module, tool calls, LLM calls, committed version, durations.
    metadata: dict[str, Any] = Field(default_factory=dict)
    # An outbound entry keeps the message as sent (recipient, question), so a resumed event can
    # send it again from here. Stored, never part of the API's transcript.
    outbound: OutboundMessage | None = Field(default=None, exclude=True)
    # Outbound entries: what became of the message. ``None`` on entries written before outcomes were
    # recorded (read as sent: that is what those entries meant).
    delivery: DeliveryOutcome | None = None
    # Inbound messages: where the answer stands, while it is not final (``InboundState``; written
    # when the worker first receives the message, before the model). Empty: answered (the turn's
    # commit wrote it), or an entry written before states were kept.
    state: str = ""

    @property
    def delivered(self) -> bool:
        """Inbound and system entries are; an outbound one only when the provider accepted it."""
        return self.direction is not Direction.OUTBOUND or self.delivery is None or self.delivery.delivered


class InboundState:
    """Where a participant's message stands in the record (docs/reliability.md, "The record under
    faults"): written with the message when the worker first receives it; the turn's commit
    replaces that entry with its own, answered, in the same transaction."""

    AWAITING_REPLY = "awaiting reply"
    MODEL_UNAVAILABLE = "not answered: model unavailable"
    # The commit failed for good (the degraded save): the reply went out, the turn was not saved.
    ANSWERED_NOT_SAVED = "answered; the turn could not be saved"


def accepted_seq(event_id: str) -> str:
    """The transcript ``seq`` of a message accepted before its turn ran: fixed by its event id, so
    every receive of the message finds the same entry (and the turn's commit removes it)."""
    return f"in#{event_id}"


class EventRecord(LazyModel):
    """An event committed to a participant's state, with the effects it decided.

    Kept (bounded) on the flow-state item: a redelivered event finds it and applies what is left of
    its effects instead of running again. Slim on purpose: message bodies live in the transcript
    (``messages`` points at them), schedules are described by the state itself (``schedules`` names
    the ones this event touched). ``token`` is unique to the commit attempt that wrote the record, so
    a session whose commit landed but whose answer was lost recognises its own write.
    """

    event_id: str
    committed_at: datetime
    version: int = 0
    token: str = ""
    messages: list[MessageRef] = Field(default_factory=list)
    schedules: list[str] = Field(default_factory=list)
    # The participant's status as this event committed it: who its messages were meant for (the
    # send rule, ``flow/send_rule.py``). ``None`` on records written before it was kept: active.
    status: ParticipantStatus | None = None


class PartialDelivery(LazyModel):
    """What an event whose effects failed part-way had already delivered (``SentLedger``): the ids of
    the messages that went out; for a split SMS refused part-way, the provider ids of its parts
    already accepted; and the event's record, kept with them so that a redelivery can resume the
    event after its record left the state item's window."""

    sent: list[str] = Field(default_factory=list)
    parts: dict[str, list[str]] = Field(default_factory=dict)
    record: EventRecord | None = None


class EventClaim(LazyModel):
    """The event id a commit claims: written only if no commit claimed it before (then the commit
    is refused as a whole, ``EventAlreadyCommitted``); kept until ``expires_at``."""

    event_id: str
    committed_at: datetime
    expires_at: datetime


class LoadedState(LazyModel):
    """Everything one event needs, read with a single Query on the participant's partition."""

    participant: ConversationParticipant
    flow: FlowState
    recent_events: list[EventRecord] = Field(default_factory=list)
    # The token of the participant's pending-effects marker, when schedule changes of an earlier
    # event failed after its commit (docs/architecture.md, "Effects that failed"); read by the same Query.
    pending_effects: str | None = None
    # The participant's needs-a-person marker as stored (docs/console.md, "Nobody missed"), read by the
    # same Query; None: not in the queue.
    needs_person: NeedsPerson | None = None


class StateCommit(LazyModel):
    """One atomic, version-conditioned write of a participant's state."""

    participant_id: str
    expected_version: int
    flow: FlowState  # with ``version`` = expected_version + 1
    participant: ConversationParticipant | None = None  # written too when the event changed it
    recent_events: list[EventRecord] = Field(default_factory=list)
    transcript: list[TranscriptEntry] = Field(default_factory=list)
    # The event id this commit answers, claimed at most once (None: an API change, claimed by nobody).
    claim: EventClaim | None = None
    # DynamoDB's ClientRequestToken: an identical retry of a landed transaction succeeds (in AWS).
    request_token: str | None = None
    # The event's message as accepted before the model (``TranscriptEntry.state``): removed by the
    # commit, whose own inbound entry answers it.
    accepted: TranscriptEntry | None = None
    # The study decisions this event made (docs/studies.md#the-decision-record): written with the
    # state or not at all, each only if new.
    decisions: list[DecisionRecord] = Field(default_factory=list)
    # The needs-a-person marker (docs/console.md, "Nobody missed"): written (``needs_person``) or
    # removed (None) in the same transaction, only when it differs from the one the event loaded.
    needs_person: NeedsPerson | None = None
    needs_person_changed: bool = False
