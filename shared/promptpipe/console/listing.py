"""The participants list's sorting and filters as the console's form carries them (docs/console.md,
"Sorting and filtering"): ``?sort=``, ``zone=``, ``day_from=``, ``day_to=``, ``adherence=``; a value
the API would refuse is dropped, so a hand-edited address still shows a list."""

from __future__ import annotations

from promptpipe.models.participant_list import ADHERENCE_BANDS, SORTS, ListView

SORT_WORDS = {
    "enrolled": "enrolment date (newest first)",
    "enrolled_oldest": "enrolment date (oldest first)",
    "activity": "last activity",
    "status": "status",
    "adherence": "adherence (lowest first)",
    "adherence_high": "adherence (highest first)",
}
assert set(SORT_WORDS) == set(SORTS)
# What the list's form offers (templates/_list_view.html).
FORM = {"sorts": SORT_WORDS, "bands": ADHERENCE_BANDS}


def _day(text: str | None) -> int | None:
    try:
        value = int(text or "")
    except ValueError:
        return None
    return value if 1 <= value <= 10000 else None


def view_of(query: dict[str, str]) -> tuple[ListView, dict[str, str]]:
    """The view the address asks for, and the parameters that say it (for the pager's links)."""
    sort = query.get("sort", "")
    sort = sort if sort in SORTS else "enrolled"
    zone = query.get("zone", "").strip()[:64]
    band = query.get("adherence", "")
    band = band if band in ADHERENCE_BANDS else ""
    low, high = _day(query.get("day_from")), _day(query.get("day_to"))
    if low is not None and high is not None and low > high:
        low, high = high, low
    view = ListView(sort=sort, zone=zone, study_day_min=low, study_day_max=high, adherence=band)
    keep = {
        "sort": sort if sort != "enrolled" else "",
        "zone": zone,
        "day_from": str(low) if low is not None else "",
        "day_to": str(high) if high is not None else "",
        "adherence": band,
    }
    return view, {k: v for k, v in keep.items() if v}
