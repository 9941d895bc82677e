"""The study view's series (docs/console.md, "The study view"): the shares by calendar date (each
participant's study days on the local date they fell on), and the cohorts by enrolment week (the
Monday of the week of each participant's enrolment day), each cohort's series by study day. Pure
functions of the strips ``coordinator.adherence.study_days`` draws."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Any

from promptpipe.console.charts import study_chart_svg
from promptpipe.coordinator.adherence import DayShare, StudyDay, record_end, study_days, study_series
from promptpipe.coordinator.summary import ParticipantSummary


def calendar_series(strips: Sequence[Sequence[StudyDay]]) -> list[tuple[date, DayShare]]:
    """One point per calendar date any participant was in the study, counted as the series by study
    day is (``study_series``), over the participants on that date (each a one-day strip)."""
    by_date: dict[date, list[StudyDay]] = {}
    for strip in strips:
        for day in strip:
            by_date.setdefault(day.local_date, []).append(day)
    return [
        (when, replace(study_series([[day] for day in by_date[when]])[0], day=number))
        for number, when in enumerate(sorted(by_date), start=1)
    ]


@dataclass(frozen=True)
class Cohort:
    week_of: date  # the Monday of the enrolment week
    participants: int
    series: list[DayShare]

    @property
    def prompted(self) -> int:
        return sum(s.prompted for s in self.series)

    @property
    def answered_share(self) -> float | None:
        return round(sum(s.answered for s in self.series) / self.prompted, 3) if self.prompted else None

    @property
    def done_share(self) -> float | None:
        return round(sum(s.done for s in self.series) / self.prompted, 3) if self.prompted else None


def cohorts(strips: Sequence[Sequence[StudyDay]]) -> list[Cohort]:
    """The participants grouped by the week of their enrolment day (their strip's first day)."""
    by_week: dict[date, list[Sequence[StudyDay]]] = {}
    for strip in strips:
        if strip:
            first = strip[0].local_date
            by_week.setdefault(first - timedelta(days=first.weekday()), []).append(strip)
    return [Cohort(week, len(group), study_series(group)) for week, group in sorted(by_week.items())]


def study_context(summaries: Sequence[ParticipantSummary]) -> dict[str, Any]:
    """What ``study.html`` shows: the chart by calendar date (each point with its n), the series by
    study day, the cohorts by enrolment week."""
    end = record_end(summaries)
    strips = [study_days(s, end) for s in summaries] if end is not None else []
    dated = calendar_series(strips)
    return {
        "chart": study_chart_svg([(f"{when:%a %d %b}", share) for when, share in dated]) if dated else None,
        "series": study_series(strips) if strips else [],
        "participants": len(summaries),
        "cohorts": cohorts(strips),
    }
