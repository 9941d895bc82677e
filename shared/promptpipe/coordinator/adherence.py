"""Adherence over the study's days: per participant, what each day held (a calendar strip); per
study, the share of participants who answered and who did the habit by study day, with the response
latency (docs/export.md, ``adherence.csv``; the console draws both). Pure functions of the
summaries (``promptpipe.coordinator.summary``) and the instant the record ends.

Study day 1 is the participant's enrolment day in their own zone; day N is N-1 local days later.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from statistics import median

from promptpipe.coordinator.summary import ParticipantSummary, PromptRow, zone_of

# What a day held, from best to worst; a day with several prompts shows its best.
DONE = "done"
NEXT_TIME = "next_time"
ANSWERED = "answered"  # a reply, but not the Done / Next time answer
DELIVERED = "delivered"  # the prompt is out and the day is not over (the record ends that day)
NO_ANSWER = "no_answer"
NO_PROMPT = "no_prompt"  # no daily prompt that day (paused, skipped or not yet scheduled)
DAY_STATES = (DONE, NEXT_TIME, ANSWERED, DELIVERED, NO_ANSWER, NO_PROMPT)
DAY_WORDS = {
    DONE: "done",
    NEXT_TIME: "next time",
    ANSWERED: "answered",
    DELIVERED: "prompt delivered",
    NO_ANSWER: "no answer",
    NO_PROMPT: "no prompt",
}


@dataclass(frozen=True)
class StudyDay:
    day: int  # 1 = the enrolment day
    local_date: date
    state: str
    latency_minutes: float | None = None
    reminder_sent: bool = False
    quiet_hours_delay: bool = False  # quiet hours moved (or dropped) the day's reminder


def _state_of(row: PromptRow, last_day: bool) -> str:
    if row.answer == "Done":
        return DONE
    if row.answer == "Next time":
        return NEXT_TIME
    if row.answered_at is not None:
        return ANSWERED
    return DELIVERED if last_day else NO_ANSWER


def study_days(summary: ParticipantSummary, until: datetime) -> list[StudyDay]:
    """One entry per local day from enrolment to ``until`` (the end of the record)."""
    zone = zone_of(summary.participant)
    first = summary.participant.enrolled_at.astimezone(zone).date()
    last = until.astimezone(zone).date()
    if last < first:
        return []
    by_date: dict[date, list[PromptRow]] = {}
    for row in summary.prompts:
        by_date.setdefault(row.sent_at.astimezone(zone).date(), []).append(row)
    days = []
    for offset in range((last - first).days + 1):
        local = date.fromordinal(first.toordinal() + offset)
        rows = by_date.get(local, [])
        if not rows:
            days.append(StudyDay(offset + 1, local, NO_PROMPT))
            continue
        states = [_state_of(r, local == last) for r in rows]
        best = min(states, key=DAY_STATES.index)
        answered = [r.latency_minutes for r in rows if r.latency_minutes is not None]
        days.append(
            StudyDay(
                offset + 1,
                local,
                best,
                latency_minutes=min(answered) if answered else None,
                reminder_sent=any(r.reminder_sent for r in rows),
                quiet_hours_delay=any(r.reminder_quiet_hours for r in rows),
            )
        )
    return days


@dataclass(frozen=True)
class DayShare:
    """One study day across participants: of those prompted that day, who answered and who did it."""

    day: int
    participants: int  # in the study on that day (enrolled at least that many days before the end)
    prompted: int
    answered: int
    done: int
    median_latency_minutes: float | None
    quiet_hours_delays: int = 0  # of the prompted, those whose reminder quiet hours moved or dropped

    @property
    def answered_share(self) -> float | None:
        return round(self.answered / self.prompted, 3) if self.prompted else None

    @property
    def done_share(self) -> float | None:
        return round(self.done / self.prompted, 3) if self.prompted else None


def study_series(strips: Sequence[Sequence[StudyDay]]) -> list[DayShare]:
    """The study's series by study day, from every participant's strip."""
    length = max((len(s) for s in strips), default=0)
    series = []
    for index in range(length):
        days = [strip[index] for strip in strips if len(strip) > index]
        prompted = [d for d in days if d.state != NO_PROMPT]
        latencies = [d.latency_minutes for d in prompted if d.latency_minutes is not None]
        series.append(
            DayShare(
                day=index + 1,
                participants=len(days),
                prompted=len(prompted),
                answered=sum(1 for d in prompted if d.state in (DONE, NEXT_TIME, ANSWERED)),
                done=sum(1 for d in prompted if d.state == DONE),
                median_latency_minutes=round(median(latencies), 1) if latencies else None,
                quiet_hours_delays=sum(1 for d in prompted if d.quiet_hours_delay),
            )
        )
    return series


def record_end(summaries: Sequence[ParticipantSummary]) -> datetime | None:
    """The last instant the record knows of (the latest prompt or reply): the strips end there."""
    instants = [
        instant
        for s in summaries
        for row in s.prompts
        for instant in (row.sent_at, row.answered_at)
        if instant is not None
    ]
    instants += [s.last_reply_at for s in summaries if s.last_reply_at is not None]
    return max(instants, default=None)


ADHERENCE_COLUMNS = (
    "day",
    "participants",
    "prompted",
    "answered",
    "done",
    "answered_share",
    "done_share",
    "median_latency_minutes",
    "quiet_hours_delays",
)


def adherence_row(share: DayShare) -> dict[str, object]:
    def blank(value: float | None) -> object:
        return "" if value is None else value

    return {
        "day": share.day,
        "participants": share.participants,
        "prompted": share.prompted,
        "answered": share.answered,
        "done": share.done,
        "answered_share": blank(share.answered_share),
        "done_share": blank(share.done_share),
        "median_latency_minutes": blank(share.median_latency_minutes),
        "quiet_hours_delays": share.quiet_hours_delays,
    }
