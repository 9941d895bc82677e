"""How the console words times, schedules and timers: local times with the zone named, "—" for
what is unknown (including Go's zero time ``0001-01-01T00:00:00Z`` that profiles carried over from
the original hold), the preparation time next to a schedule, and which timer is pending."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

UNKNOWN = "—"
TIMER_WORDS = {
    "dailyPromptReminderTimerID": "reminder (no answer yet)",
    "autoFeedbackTimerID": "feedback conversation starts",
    "stateTransitionTimerID": "conversation moves on",
    "feedbackTimerID": "feedback nudge",
    "feedbackFollowupTimerID": "feedback follow-up",
}


def known_time(value: Any) -> datetime | None:
    """A datetime, or an RFC 3339 text of one; ``None`` for nothing, text that is not a time, and
    Go's zero time (year 1: the original's "never")."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if not isinstance(value, datetime) or value.year <= 1:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def local_time(value: Any, zone: ZoneInfo) -> str:
    """``Mon 02 Mar 08:00 EST``: in the participant's zone, the zone named; "—" when unknown."""
    instant = known_time(value)
    if instant is None:
        return UNKNOWN
    local = instant.astimezone(zone)
    return f"{local:%a %d %b %H:%M} {local.tzname() or zone.key}"


def shown_value(value: Any, zone: ZoneInfo) -> Any:
    """A profile value for reading: a time as a local time, a zero time as "—", the rest as is."""
    if isinstance(value, str) and len(value) >= 19 and value[4:5] == "-" and value[10:11] == "T":
        return local_time(value, zone)
    return value


def _minus(hhmm: str, minutes: int) -> str:
    try:
        at = datetime.strptime(hhmm.strip(), "%H:%M")
    except ValueError:
        return hhmm
    return f"{at - timedelta(minutes=minutes):%H:%M}"


def schedule_words(schedule: dict[str, Any], zone: ZoneInfo, prep_minutes: int) -> str:
    """``fixed at 07:30 (America/Toronto): the prompt goes out at 07:20, prepared 10 min ahead``."""
    zone_name = schedule.get("timezone") or zone.key
    if schedule.get("type") == "random":
        start, end = str(schedule.get("random_start_time", "")), str(schedule.get("random_end_time", ""))
        words = f"random between {start} and {end} ({zone_name})"
        sent = f"goes out between {_minus(start, prep_minutes)} and {_minus(end, prep_minutes)}"
    else:
        fixed = str(schedule.get("fixed_time", ""))
        words = f"fixed at {fixed} ({zone_name})"
        sent = f"goes out at {_minus(fixed, prep_minutes)}"
    if prep_minutes <= 0:
        return words
    return f"{words}: the prompt {sent}, prepared {prep_minutes} min ahead (SCHEDULER_PREP_TIME_MINUTES)"


def pending_timers(state: dict[str, Any] | None, zone: ZoneInfo) -> list[tuple[str, str]]:
    """(what the timer does, when — as far as the state records it) for each pending timer."""
    if not state:
        return []
    pending = state.get("daily_prompt_pending") or {}
    found = []
    for key in state.get("pending_timers") or {}:
        when = UNKNOWN
        if key == "dailyPromptReminderTimerID" and isinstance(pending, dict):
            when = local_time(pending.get("reminder_due_at"), zone)
        found.append((TIMER_WORDS.get(key, key), when))
    return found
