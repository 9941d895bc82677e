"""The participants list as the API answers it (``GET /conversation/participant-rows``): one row of
the console's list, a page of rows, and how the list is sorted and narrowed (docs/console.md, "The
list's reads"). Apart from what the repository reads (``models/participant_rows.py``), which every
function loads: only the participants API and the console define these (cold start,
docs/benchmarks.md, section 2)."""

# Annotations as objects, not strings: pydantic evaluates none at the participants API's cold start
# (models/api.py).
from datetime import datetime

from pydantic import Field

from promptpipe.lazy_model import LazyModel
from promptpipe.models.participant_rows import ListedParticipant
from promptpipe.models.safety import NeedsPerson
from promptpipe.models.store import OPAQUE_TOKEN


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
