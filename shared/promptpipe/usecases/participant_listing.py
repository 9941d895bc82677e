"""The participants list sorted and narrowed (docs/console.md, "Sorting and filtering"): by enrolment
date, last activity, status or adherence; to a zone, a range of study days, an adherence band.

Adherence is the share of the daily prompts answered Done, from the two counts the flow keeps in the
profile at every commit (``total_prompts``, ``success_count``: the row's "Done (rate)"), so a row's
adherence is what its flow state says when the page is read, never a recount of the transcript. The
study day is the participant's local date now against their local enrolment date (day 1: the
enrolment day, as in ``coordinator/adherence.py``).

A sorted or narrowed page reads every participant's listed fields and flow-state row keys, as a
search does, then pages by cursor: the cursor is the place of the last row shown in the sort order
(its sort key and id), never a row number, so participants enrolled or changed between two pages
never push a row off them.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from datetime import datetime

from promptpipe.errors import ValidationFailed
from promptpipe.models.participant import ParticipantStatus
from promptpipe.models.participant_list import ADHERENCE_BANDS, SORTS, ListView, ParticipantRow
from promptpipe.rules.timezones import participant_zone_name, zone_or_utc

SortKey = tuple[float, float, str]
_STATUS_ORDER = {status.value: index for index, status in enumerate(ParticipantStatus)}
_LAST = float("inf")


def adherence_of(row: ParticipantRow) -> float | None:
    return row.done_rate


def band_of(row: ParticipantRow) -> str:
    rate = adherence_of(row)
    if rate is None:
        return "none"
    return "low" if rate < 0.5 else "mid" if rate < 0.8 else "high"


def study_day_of(row: ParticipantRow, now: datetime) -> int:
    zone = zone_or_utc(participant_zone_name(row.participant.timezone))
    enrolled = row.participant.enrolled_at.astimezone(zone).date()
    return max(1, (now.astimezone(zone).date() - enrolled).days + 1)


def _time(value: datetime | None) -> float:
    return value.timestamp() if value is not None else 0.0


# Each sort: a key whose ascending order is the list's (the id last, so every place is one row).
_KEYS: dict[str, Callable[[ParticipantRow], SortKey]] = {
    "enrolled": lambda r: (-_time(r.participant.enrolled_at), -_time(r.participant.created_at), r.participant.id),
    "enrolled_oldest": lambda r: (_time(r.participant.enrolled_at), _time(r.participant.created_at), r.participant.id),
    # the most recent reply first; never replied last
    "activity": lambda r: (0.0 if r.last_reply_at else 1.0, -_time(r.last_reply_at), r.participant.id),
    "status": lambda r: (
        float(_STATUS_ORDER.get(r.participant.status.value, 99)),
        -_time(r.participant.enrolled_at),
        r.participant.id,
    ),
    # the lowest first (who may need a word); no prompt yet last
    "adherence": lambda r: (_LAST if (a := adherence_of(r)) is None else a, -float(r.prompts_sent), r.participant.id),
    "adherence_high": lambda r: (
        _LAST if (a := adherence_of(r)) is None else -a,
        -float(r.prompts_sent),
        r.participant.id,
    ),
}


def check_view(view: ListView) -> None:
    if view.sort not in SORTS:
        raise ValidationFailed(f"sort must be one of {', '.join(SORTS)}", field="sort")
    if view.adherence and view.adherence not in ADHERENCE_BANDS:
        raise ValidationFailed(f"adherence must be one of {', '.join(ADHERENCE_BANDS)}", field="adherence")
    if view.study_day_min and view.study_day_max and view.study_day_min > view.study_day_max:
        raise ValidationFailed("study_day_min is after study_day_max", field="study_day_min")


def keeps(row: ParticipantRow, view: ListView, now: datetime) -> bool:
    """Whether ``row`` is in the narrowed list."""
    if view.zone and participant_zone_name(row.participant.timezone) != view.zone:
        return False
    if view.adherence and band_of(row) != view.adherence:
        return False
    if view.study_day_min is not None or view.study_day_max is not None:
        day = study_day_of(row, now)
        if view.study_day_min is not None and day < view.study_day_min:
            return False
        if view.study_day_max is not None and day > view.study_day_max:
            return False
    return True


def sort_key(row: ParticipantRow, sort: str) -> SortKey:
    return _KEYS[sort](row)


def view_cursor(sort: str, key: SortKey) -> str:
    values = ["inf" if value == _LAST else value for value in key]
    raw = json.dumps([sort, *values], separators=(",", ":")).encode()
    return "v" + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def read_view_cursor(token: str, sort: str) -> SortKey:
    """The place ``view_cursor`` made, for the same sort; ``ValidationFailed`` for anything else."""
    try:
        if not token.startswith("v") or len(token) > 400:
            raise ValueError(token)
        body = token[1:]
        values = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        made_for, first, second, participant_id = values
        if made_for != sort or not isinstance(participant_id, str):
            raise ValueError(token)
        return (_number(first), _number(second), participant_id)
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        raise ValidationFailed("invalid next_token", field="next_token") from None


def _number(value: object) -> float:
    if value == "inf":
        return _LAST
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(value)
    return float(value)


def page_of(
    rows: Sequence[ParticipantRow], view: ListView, now: datetime, *, limit: int, next_token: str | None
) -> tuple[list[ParticipantRow], int, str | None, int]:
    """(the page's rows, the total of the matches, the next page's cursor, how many come before)."""
    kept = sorted((r for r in rows if keeps(r, view, now)), key=lambda r: sort_key(r, view.sort))
    start = 0
    if next_token is not None:
        place = read_view_cursor(next_token, view.sort)
        start = sum(1 for r in kept if sort_key(r, view.sort) <= place)
    shown = kept[start : start + limit]
    more = start + limit < len(kept)
    token = view_cursor(view.sort, sort_key(shown[-1], view.sort)) if more and shown else None
    return shown, len(kept), token, start
