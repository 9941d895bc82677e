"""What the state store loads and commits: the unit of work's view of DynamoDB."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from promptpipe.models.messaging import OutboundMessage
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import FlowState

MAX_RECENT_EVENTS = 25


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


class EventRecord(BaseModel):
    """An event committed to a participant's state, with the messages it must send.

    Kept (bounded) on the flow-state item so that a retried event never runs twice and a reply whose
    sending failed after the commit is re-sent from here, without asking the model again.
    """

    event_id: str
    committed_at: datetime
    outbound: list[OutboundMessage] = Field(default_factory=list)


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
