"""What the state store loads and commits: the unit of work's view of DynamoDB."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from promptpipe.models.effects import MessageRef
from promptpipe.models.messaging import OutboundMessage
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import FlowState

# Event records kept on the state item: the idempotency record of every event (docs/architecture.md,
# "Event records"). Kept for a day (longer than any redelivery: SQS retries within minutes, the
# scheduler and Lambda's asynchronous retries within hours) and at most this many.
MAX_RECENT_EVENTS = 25
RECENT_EVENTS_MAX_AGE_HOURS = 24


# Transcript kinds written by ``promptpipe import`` (promptpipe.import_history): one message of the
# original's history, and the record of the import itself with the original's counts.
IMPORTED_KIND = "imported"
IMPORT_KIND = "import"


class Direction(StrEnum):
    INBOUND = "inbound"
    OUTBOUND = "outbound"
    SYSTEM = "system"


class TranscriptEntry(BaseModel):
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


class EventRecord(BaseModel):
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


class LoadedState(BaseModel):
    """Everything one event needs, read with a single Query on the participant's partition."""

    participant: ConversationParticipant
    flow: FlowState
    recent_events: list[EventRecord] = Field(default_factory=list)


class StateCommit(BaseModel):
    """One atomic, version-conditioned write of a participant's state."""

    participant_id: str
    expected_version: int
    flow: FlowState  # with ``version`` = expected_version + 1
    participant: ConversationParticipant | None = None  # written too when the event changed it
    recent_events: list[EventRecord] = Field(default_factory=list)
    transcript: list[TranscriptEntry] = Field(default_factory=list)
    # DynamoDB's ClientRequestToken: an identical retry of a landed transaction succeeds (in AWS).
    request_token: str | None = None
