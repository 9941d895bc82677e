"""The participants list's rows (``GET /conversation/participant-rows``): what one row of the
console's list shows, read in one call for a whole page (docs/console.md, "The list's reads")."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from promptpipe.lazy_model import LazyModel
from promptpipe.models.participant import ParticipantStatus
from promptpipe.models.state import DataKey
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

    @property
    def done_rate(self) -> float | None:
        return round(self.done / self.prompts_sent, 3) if self.prompts_sent else None


class ParticipantRowsPage(LazyModel):
    rows: list[ParticipantRow]
    total: int = Field(description="Participants matching the filters, on every page")
    next_token: str | None = Field(None, description=OPAQUE_TOKEN)
