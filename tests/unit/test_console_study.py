"""The study view (console/study.py, console/charts.py): the shares by calendar date with the sample
size of each, a scale for the latency, and the cohorts by enrolment week."""

from __future__ import annotations

import re
from datetime import date, timedelta

from promptpipe.console.charts import _nice_ceiling, study_chart_svg
from promptpipe.console.study import calendar_series, cohorts
from promptpipe.coordinator.adherence import DONE, NO_ANSWER, NO_PROMPT, StudyDay

MON = date(2026, 3, 2)


def strip(start: date, states: list[str], latency: float | None = 30) -> list[StudyDay]:
    return [
        StudyDay(i + 1, start + timedelta(days=i), s, latency_minutes=latency if s == DONE else None)
        for i, s in enumerate(states)
    ]


def test_the_series_by_calendar_date_counts_the_participants_on_each_date() -> None:
    # Ana enrolled Monday, Ben Wednesday: on Wednesday Ana is on day 3 and Ben on day 1
    ana = strip(MON, [DONE, NO_ANSWER, DONE])
    ben = strip(MON + timedelta(days=2), [NO_ANSWER, NO_PROMPT])
    points = calendar_series([ana, ben])
    assert [when for when, _ in points] == [MON + timedelta(days=i) for i in range(4)]
    wednesday = points[2][1]
    assert (wednesday.participants, wednesday.prompted, wednesday.done) == (2, 2, 1)
    thursday = points[3][1]
    assert (thursday.participants, thursday.prompted, thursday.done_share) == (1, 0, None)


def test_cohorts_are_the_weeks_of_enrolment() -> None:
    found = cohorts(
        [strip(MON, [DONE]), strip(MON + timedelta(days=4), [NO_ANSWER]), strip(MON + timedelta(days=7), [DONE])]
    )
    assert [(c.week_of, c.participants, c.done_share) for c in found] == [
        (MON, 2, 0.5),
        (MON + timedelta(days=7), 1, 1.0),
    ]
    assert cohorts([[]]) == [] and found[0].answered_share == 0.5


def test_a_day_with_one_participant_shows_its_n_and_a_hollow_point() -> None:
    points = calendar_series([strip(MON, [DONE, DONE], latency=42)])
    chart = str(study_chart_svg([(f"{when:%a %d %b}", share) for when, share in points]))
    assert chart.count('<text class="n"') == 2 and ">n=1</text>" in chart
    assert 'class="done small-n"' in chart and "(n=1, few)" in chart
    assert ">Mon 02 Mar</text>" in chart and ">Tue 03 Mar</text>" in chart
    # The latency has a scale: 0, half and the top (the nice ceiling of 42 min: 50)
    assert re.findall(r'class="latency-tick"[^>]*>([^<]+)<', chart) == ["0 min", "25 min", "50 min"]
    assert 'viewBox="0 0 ' in chart and "width=" not in chart.split(">", 1)[0]  # scaled by the page: full width


def test_the_nice_ceiling() -> None:
    assert [_nice_ceiling(v) for v in (0.5, 1, 3, 7, 42, 120, 501)] == [1, 1, 5, 10, 50, 200, 1000]
