"""The console's needs-a-person queue (docs/console.md, "Nobody missed"): every participant the
conversation holds for a person, the longest wait first, with the reason in the study team's words
(safety, repeated failure, asked for a person, a person has the conversation) and how long they have
waited.

At the top of the front page (``waiting``): the markers the commits keep, which come with the list's
own call (``GET /conversation/participant-rows?queue=true``: one more DynamoDB read, whatever the
study's size). The ``/queue`` page (``needs_person_queue``) adds each one's status and last reply:
the participants list's needs-a-person filter (``…?needs_person=true``), read to its end."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.models.participant_list import ParticipantRow
from promptpipe.models.participant_rows import MAX_ROWS_PAGE
from promptpipe.models.safety import HOLD_WORDS, HoldReason, NeedsPerson

# The controller's own hold, without a conversation hold, is a hand-off.
_UNNAMED = HOLD_WORDS[HoldReason.HANDOFF]
MAX_QUEUE_PAGES = 20  # a bound on what one page load reads (20 pages of 100 held participants)


@dataclass(frozen=True)
class QueueEntry:
    row: ParticipantRow
    reason: str
    waited: str


def reason_words(code: str | None) -> str:
    """``asked`` -> "asked for a person"; an unknown code as itself."""
    if not code:
        return _UNNAMED
    try:
        return HOLD_WORDS[HoldReason(code)]
    except ValueError:
        return code


def waited_words(since: datetime | None, now: datetime) -> str:
    """How long since ``since``, as a person says it: "12 min", "3 h 05 min", "2 days 4 h"."""
    if since is None:
        return "unknown"
    minutes = max(0, int((now - since).total_seconds() // 60))
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    if days:
        return f"{days} day{'s' if days != 1 else ''} {hours} h"
    if hours:
        return f"{hours} h {minutes:02d} min"
    return f"{minutes} min"


def needs_person_queue(client: CoordinatorClient, now: datetime) -> list[QueueEntry]:
    """Every held participant, the longest wait first (an unknown start last); the wait by the API's
    clock when it says it (a local stack's clock is simulated), else by ``now``."""
    rows: list[ParticipantRow] = []
    token: str | None = None
    for _ in range(MAX_QUEUE_PAGES):
        page = client.participant_rows(limit=MAX_ROWS_PAGE, next_token=token, needs_person=True)
        now = page.read_at or now
        rows += page.rows
        token = page.next_token
        if token is None:
            break
    rows.sort(key=lambda r: (r.hold_since is None, r.hold_since.timestamp() if r.hold_since else 0.0))
    return [QueueEntry(row=r, reason=reason_words(r.hold_reason), waited=waited_words(r.hold_since, now)) for r in rows]


@dataclass(frozen=True)
class Waiting:
    """One participant of the queue at the top of the front page."""

    who: NeedsPerson
    reason: str
    waited: str


def waiting(entries: list[NeedsPerson] | None, now: datetime) -> list[Waiting]:
    """The front page's queue, in the API's order (the longest wait first); ``now``: the API's clock."""
    return [
        Waiting(who=e, reason=reason_words(e.reason.value), waited=waited_words(e.since, now)) for e in entries or []
    ]
