"""The participants list's rows (``GET /conversation/participant-rows``): what one row of the
console's list shows, read in one call for a whole page (docs/console.md, "The list's reads")."""

from __future__ import annotations

import base64
import binascii
from datetime import datetime

from pydantic import Field

from promptpipe.lazy_model import LazyModel
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.safety import ANNOUNCED_HOLDS, HoldReason, NeedsPerson
from promptpipe.models.state import DataKey, StateData
from promptpipe.models.store import OPAQUE_TOKEN

ROWS_PAGE = 50  # the console's page
MAX_ROWS_PAGE = 100  # one BatchGetItem's worth of flow states
# What a row reads of a flow state: the sub-state, the controller's hold, the counts in the profile,
# the last reply in the history, the timers and the reminder's due time.
ROW_STATE_KEYS = (
    DataKey.CONVERSATION_STATE,
    DataKey.CONTROLLER_STATE,
    DataKey.USER_PROFILE,
    DataKey.CONVERSATION_HISTORY,
    DataKey.PENDING_TIMERS,
    DataKey.DAILY_PROMPT_PENDING,
    DataKey.HOLD,
)


class ListedParticipant(LazyModel):
    """The fields of the participant's record a list row shows or filters on (the rest — gender,
    ethnicity, background, debug mode — is left out of the read: docs/console.md)."""

    id: str
    phone_number: str
    name: str = ""
    timezone: str = ""
    status: ParticipantStatus = ParticipantStatus.ACTIVE
    opted_out: bool = False
    enrolled_at: datetime
    created_at: datetime


# What the list reads of a META item (the index's keys too: a page's cursor is made of them).
LISTED_FIELDS = tuple(ListedParticipant.model_fields)


class NextTimer(LazyModel):
    """The participant's pending timer due first."""

    kind: str = Field(description="What fires: reminder, auto_feedback, state_transition, feedback_timeout, …")
    due_at: datetime | None = Field(None, description="When it fires (UTC); null when the state does not record it")


class ParticipantRow(LazyModel):
    participant: ListedParticipant
    sub_state: str = Field(description="The conversation's sub-state (INTAKE, FEEDBACK, …)")
    needs_person: bool = Field(description="The conversation is held for a person (a safety flag, a hand-off)")
    prompts_sent: int = Field(description="Daily prompts sent, the original's imported ones included (total_prompts)")
    done: int = Field(description="Prompts answered Done, once per prompt, imported ones included (success_count)")
    last_reply_at: datetime | None = Field(None, description="The participant's last message the coach read")
    next_timer: NextTimer | None = None
    hold_reason: str | None = Field(
        None, description="Why the conversation is held for a person (safety, handoff, staff); null: not held"
    )
    hold_since: datetime | None = Field(None, description="When the hold began (the wait of the needs-a-person queue)")

    @property
    def done_rate(self) -> float | None:
        return round(self.done / self.prompts_sent, 3) if self.prompts_sent else None


class ParticipantRowsPage(LazyModel):
    rows: list[ParticipantRow]
    total: int = Field(description="Participants matching the filters, on every page")
    next_token: str | None = Field(None, description=OPAQUE_TOKEN)
    offset: int = Field(
        0,
        description="Matches before this page, newest first, counted when the page is read: the page "
        "shows matches offset+1 to offset+len(rows), however many were enrolled since its cursor was made",
    )
    read_at: datetime | None = Field(None, description="The API's clock when the page was read (a hold's wait)")
    needs_person_queue: list[NeedsPerson] | None = Field(
        None,
        description="With queue=true: every participant held for a person, the longest wait first "
        "(one read of the held markers, whatever the page)",
    )


def listing_key(participant: ListedParticipant) -> tuple[datetime, str]:
    """A participant's place in the list: newest first, by creation time, then id."""
    return participant.created_at, participant.id


def listing_cursor(participant: ListedParticipant) -> str:
    """The cursor of the page after ``participant``: its place, not a count of rows, so that a page
    stays right when participants are enrolled after the cursor was made (they come first)."""
    created_at, participant_id = listing_key(participant)
    raw = f"{created_at.isoformat()}|{participant_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def read_listing_cursor(token: str) -> tuple[datetime, str]:
    """The place ``listing_cursor`` made; ``ValueError`` for anything else."""
    if not token or len(token) > 200:
        raise ValueError("invalid cursor")
    try:
        created_at, _, participant_id = (
            base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode().partition("|")
        )
        instant = datetime.fromisoformat(created_at)
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise ValueError("invalid cursor") from exc
    if not participant_id or instant.tzinfo is None:
        raise ValueError("invalid cursor")
    return instant, participant_id


# --- sorting and filtering the list (docs/console.md, "Sorting and filtering") -------------------------
SORTS = ("enrolled", "enrolled_oldest", "activity", "status", "adherence", "adherence_high")
ADHERENCE_BANDS = {"none": "no prompt yet", "low": "under 50 %", "mid": "50–79 %", "high": "80 % and over"}


class ListView(LazyModel):
    """How the list is sorted and narrowed beyond status, search and needs a person. The default
    (newest enrolled first, nothing narrowed) is the plain list, paged by the index."""

    sort: str = Field("enrolled", description="enrolled, enrolled_oldest, activity, status, adherence, adherence_high")
    zone: str = Field("", max_length=64, description="Only participants in this IANA zone (their zone or the default)")
    study_day_min: int | None = Field(None, ge=1, le=10000, description="Only those on this study day or later")
    study_day_max: int | None = Field(None, ge=1, le=10000, description="Only those on this study day or earlier")
    adherence: str = Field("", description="Only this adherence band: none, low (<50 %), mid (50–79 %), high (>=80 %)")

    @property
    def plain(self) -> bool:
        return (
            self.sort == "enrolled"
            and not self.zone
            and self.study_day_min is None
            and self.study_day_max is None
            and not self.adherence
        )


def needs_person_of(
    participant: ConversationParticipant, data: StateData, *, stored: NeedsPerson | None = None, event_id: str = ""
) -> NeedsPerson | None:
    """The participant's entry of the needs-a-person queue, from their state as committed: the one
    hold, or the flow controller's own (a hand-off, its start unknown); none once withdrawn (their
    messages have stopped for good: docs/console.md, "Nobody missed"). ``stored``: the marker as the
    event loaded it; ``event_id``: the committing event. The entry's alert is pending when this
    event placed an announced hold, and stays as stored while the hold is the same one."""
    if participant.status is ParticipantStatus.WITHDRAWN:
        return None
    hold = data.hold()
    if hold is not None:
        entry = NeedsPerson(
            participant_id=participant.id,
            name=participant.name,
            reason=hold.reason,
            since=hold.since,
            detail=hold.detail,
        )
        if stored is not None and (stored.reason, stored.since) == (entry.reason, entry.since):
            pending = stored.alert_pending  # published already, or not yet
        else:
            pending = bool(event_id) and hold.event_id == event_id and hold.reason in ANNOUNCED_HOLDS
        return entry.model_copy(update={"alert_pending": pending})
    runtime = data.controller_state()
    if runtime is not None and runtime.hold is not None:
        return NeedsPerson(participant_id=participant.id, name=participant.name, reason=HoldReason.HANDOFF)
    return None
