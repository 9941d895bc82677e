"""The participants list, one page of rows in one call (docs/console.md, "The list's reads").

A row is the participant's record and what their flow state says: sub-state, the controller's hold
(needs a person), the prompt and Done counts the flow keeps in the profile (``total_prompts``,
``success_count``), the last message of theirs the coach read, and the pending timer due first.
Without a search or the needs-a-person filter a page costs three reads whatever the study's size:
one page of the participants index (the status filtered by DynamoDB), one ``Select=COUNT`` of it
and one ``BatchGetItem`` of the page's flow states, projected to the keys a row shows. The first
page counts the total; a later one counts where it starts (the matches up to its cursor's place,
so participants enrolled meanwhile are counted), and its total is that plus the matches after the
cursor when the cursor was made, which the cursor carries (``.N`` after the store's cursor); the
last page's total is exact (its offset plus its rows). Only a participant after the cursor deleted,
or leaving the status filter, between two pages leaves a later page's total high by one each until
the last page.
A search (name, id or phone digits, case-insensitive) reads every participant's record (and, with
the needs-a-person filter, their state, 100 a call) and pages the matches by offset. The
needs-a-person filter alone (the console's ``/queue``) reads the markers the commits keep instead
(one Query of the index's ``NEEDS_PERSON`` partition: docs/console.md, "Nobody missed"), then the
records they name and the page's states (a ``BatchGetItem`` each), whatever the study's size.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from promptpipe.errors import ValidationFailed
from promptpipe.models.participant_list import ListView, NextTimer, ParticipantRow, ParticipantRowsPage
from promptpipe.models.participant_rows import (
    MAX_ROWS_PAGE,
    ROWS_PAGE,
    ListedParticipant,
    listing_cursor,
    listing_key,
    read_listing_cursor,
)
from promptpipe.models.state import StateData
from promptpipe.usecases import participant_listing as listing

if TYPE_CHECKING:
    from promptpipe.ports import ParticipantRepo

# Between a page cursor and the matches after it (a cursor is URL-safe base64: never a ".").
_AFTER = "."
_SCAN_PAGE = 1000  # records a search or the needs-a-person filter reads per index page
NEEDS_PERSON_SHOWN = 200  # the queue above the list: one index Query (a marker is about 200 bytes)
# The needs-a-person filter and /queue: one index Query too (a Query returns up to 1 MB: ~5,000 markers).
NEEDS_PERSON_LISTED = 1000


def matches(participant: ListedParticipant, search: str) -> bool:
    """The console's search: a part of the name (any case) or of the id, or the phone's digits."""
    if not search:
        return True
    needle = search.lower()
    digits = "".join(ch for ch in search if ch.isdigit())
    return (
        needle in participant.name.lower()
        or needle in participant.id
        or bool(digits and digits in participant.phone_number)
    )


def row_of(participant: ListedParticipant, raw: dict[str, str] | None) -> ParticipantRow:
    """One row from the participant's record and (part of) their ``state_data``; ``None``: no state."""
    data = StateData(dict(raw or {}))
    runtime = data.controller_state()
    hold = data.hold()
    profile = data.profile()
    replies = [m.timestamp for m in data.history() if m.role == "user"]
    return ParticipantRow(
        participant=participant,
        sub_state=data.sub_state.value if raw is not None else "",
        needs_person=hold is not None or (runtime is not None and runtime.hold is not None),
        prompts_sent=profile.total_prompts,
        done=profile.success_count,
        last_reply_at=max(replies) if replies else None,
        next_timer=_next_timer(data),
        hold_reason=hold.reason.value if hold is not None else None,
        hold_since=hold.since if hold is not None else None,
    )


def _next_timer(data: StateData) -> NextTimer | None:
    timers = [
        NextTimer(kind=spec.timer.kind.value if spec.timer else "daily_prompt", due_at=spec.at)
        for spec in data.pending_timers().values()
    ]
    if not timers:
        return None
    # the earliest first; one whose time the state does not record after every dated one
    return min(timers, key=lambda t: (t.due_at is None, t.due_at.timestamp() if t.due_at else 0.0))


def _rows(repo: ParticipantRepo, shown: Sequence[ListedParticipant]) -> list[ParticipantRow]:
    states = repo.list_states([p.id for p in shown])
    return [row_of(p, states.get(p.id)) for p in shown]


def participant_rows(
    repo: ParticipantRepo,
    *,
    limit: int = ROWS_PAGE,
    next_token: str | None = None,
    status: str | None = None,
    search: str = "",
    needs_person: bool = False,
    view: ListView | None = None,
    now: datetime | None = None,
) -> ParticipantRowsPage:
    """One page of rows, newest participants first (or as ``view`` sorts and narrows them: docs/console.md,
    "Sorting and filtering"; ``now`` places each participant on their study day), with the total of the matches."""
    if not 1 <= limit <= MAX_ROWS_PAGE:
        raise ValidationFailed(f"limit must be between 1 and {MAX_ROWS_PAGE}", field="limit")
    search = search.strip()
    if view is not None and not view.plain:
        return _viewed(
            repo, view, now, limit=limit, next_token=next_token, status=status, search=search, needs=needs_person
        )
    next_token, after_cursor = _read_cursor(next_token)
    if not search and not needs_person:
        shown, token = repo.page(limit=limit, next_token=next_token, status=status)
        # where this page starts, counted now: the cursor is a place in the list, not a row number
        offset = repo.count(status=status, through=next_token) if next_token is not None else 0
        if token is None:  # the last page: what it shows is all there is after its start
            total = offset + len(shown)
        elif next_token is not None and after_cursor is not None:  # enrolled meanwhile: in the offset
            total = offset + after_cursor
        else:
            total = repo.count(status=status)
        rows = _rows(repo, shown)
        if token is not None:
            token = f"{token}{_AFTER}{total - offset - len(shown)}"
        return ParticipantRowsPage(rows=rows, total=total, next_token=token, offset=offset, read_at=now)
    if needs_person and not search:
        found = _held(repo, status)
    else:
        found = _every(repo, status, search)
        if needs_person:
            states = repo.list_states([p.id for p in found])
            found = [p for p in found if row_of(p, states.get(p.id)).needs_person]
    start = 0
    if next_token is not None:  # the matches after the cursor's place (newest first)
        try:
            place = read_listing_cursor(next_token)
        except ValueError:
            raise ValidationFailed("invalid next_token", field="next_token") from None
        start = sum(1 for p in found if listing_key(p) >= place)
    shown = found[start : start + limit]
    more = start + limit < len(found)
    return ParticipantRowsPage(
        rows=_rows(repo, shown),
        total=len(found),
        next_token=listing_cursor(shown[-1]) if more else None,
        offset=start,
        read_at=now,
    )


def with_needs_person_queue(repo: ParticipantRepo, page: ParticipantRowsPage) -> ParticipantRowsPage:
    """The page with the needs-a-person queue above it: one more read, of the markers the commits
    keep (``NEEDS_PERSON_SHOWN`` at most, the longest wait first), never of every participant
    (docs/console.md, "Nobody missed")."""
    return page.model_copy(update={"needs_person_queue": repo.needs_person_queue(NEEDS_PERSON_SHOWN)})


def _read_cursor(token: str | None) -> tuple[str | None, int | None]:
    """The store's cursor and the matches after it when it was made (``None``: a cursor without
    that count, as an older link carries: the total is counted)."""
    if token is None:
        return None, None
    cursor, separator, after = token.rpartition(_AFTER)
    if separator and cursor and after.isdigit() and len(after) <= 9:
        return cursor, int(after)
    return token, None


def _viewed(
    repo: ParticipantRepo,
    view: ListView,
    now: datetime | None,
    *,
    limit: int,
    next_token: str | None,
    status: str | None,
    search: str,
    needs: bool,
) -> ParticipantRowsPage:
    """A sorted or narrowed page: every match's row read (the index, then its flow states 100 a call)."""
    listing.check_view(view)
    found = _every(repo, status, search)
    states = repo.list_states([p.id for p in found])
    rows = [row_of(p, states.get(p.id)) for p in found]
    if needs:
        rows = [r for r in rows if r.needs_person]
    shown, total, token, start = listing.page_of(
        rows, view, now or datetime.now(UTC), limit=limit, next_token=next_token
    )
    return ParticipantRowsPage(rows=shown, total=total, next_token=token, offset=start, read_at=now)


def _held(repo: ParticipantRepo, status: str | None) -> list[ListedParticipant]:
    """The participants held for a person (of ``status``), newest first: the markers the commits keep
    (one Query), then the records they name (``BatchGetItem``s), never every participant."""
    markers = repo.needs_person_queue(NEEDS_PERSON_LISTED)
    found = [p for p in repo.listed([m.participant_id for m in markers]) if status in (None, p.status.value)]
    return sorted(found, key=listing_key, reverse=True)


def _every(repo: ParticipantRepo, status: str | None, search: str) -> list[ListedParticipant]:
    found: list[ListedParticipant] = []
    token: str | None = None
    while True:
        page, token = repo.page(limit=_SCAN_PAGE, next_token=token, status=status)
        found += [p for p in page if matches(p, search)]
        if token is None:
            return found
