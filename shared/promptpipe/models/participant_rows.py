"""The participants list's reads (``GET /conversation/participant-rows``): what the list reads of a
participant's record and state, its cursor, and the needs-a-person marker a commit writes
(docs/console.md, "The list's reads"). The rows, the page and the view the API answers with are in
``models/participant_list.py``: only the participants API and the console define them (every
function's repository reads the listing, a cold start: docs/benchmarks.md, section 2)."""

import base64
import binascii
from datetime import datetime

from promptpipe.lazy_model import LazyModel
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.safety import ANNOUNCED_HOLDS, HoldReason, NeedsPerson
from promptpipe.models.state import DataKey, StateData

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
