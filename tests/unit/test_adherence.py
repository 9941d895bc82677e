"""Adherence by study day (promptpipe.coordinator.adherence) and its SVG views (console/charts.py)."""

from __future__ import annotations

import csv
import re
from datetime import date, timedelta
from pathlib import Path

from promptpipe.console.charts import strip_svg, study_chart_svg
from promptpipe.coordinator.adherence import (
    ANSWERED,
    DELIVERED,
    DONE,
    NEXT_TIME,
    NO_ANSWER,
    NO_PROMPT,
    record_end,
    study_days,
    study_series,
)
from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.coordinator.export import write_export
from promptpipe.coordinator.summary import summarize
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.store import TranscriptEntry
from tests.support.api_fakes import T0, CannedApi, entry, participant

DAY = 24 * 60
DONE_ANSWER = "Q: Did you do it? A: Done"
NEXT_ANSWER = "Q: Did you do it? A: Next time"
PROMPT = "Walk 10 minutes. Did you do it?"

# Sam, enrolled on day 1 (08:00 in Toronto): six study days
SAM = participant("a1")
SAM_HISTORY = [
    entry(SAM["id"], 0, "outbound", "daily_prompt", PROMPT),
    entry(SAM["id"], 5, "inbound", "message", "done!", parsed_answer=DONE_ANSWER),  # day 1: done after 5 min
    entry(SAM["id"], DAY, "outbound", "daily_prompt", PROMPT),
    entry(SAM["id"], DAY + 60, "outbound", "reminder", "Any luck today?"),
    entry(SAM["id"], DAY + 90, "inbound", "message", "busy day"),  # day 2: a reply, not the answer
    # day 3: no prompt
    entry(SAM["id"], 3 * DAY, "outbound", "daily_prompt", PROMPT, reminder_quiet_hours="moved"),  # day 4: no reply
    entry(SAM["id"], 4 * DAY, "outbound", "daily_prompt", PROMPT),
    entry(SAM["id"], 4 * DAY + 20, "inbound", "message", "tomorrow", parsed_answer=NEXT_ANSWER),
    entry(SAM["id"], 5 * DAY, "outbound", "daily_prompt", PROMPT),  # day 6: the record ends here
]
# Kim, enrolled a day later
KIM = participant("b2", phone_number="+14165550143", enrolled_at=(T0 + timedelta(days=1)).isoformat())
KIM_HISTORY = [
    entry(KIM["id"], DAY, "outbound", "daily_prompt", PROMPT),
    entry(KIM["id"], DAY + 10, "inbound", "message", "yes", parsed_answer=DONE_ANSWER),
]


def summaries() -> list:
    return [
        summarize(ConversationParticipant.model_validate(p), [TranscriptEntry.model_validate(e) for e in h], {})
        for p, h in ((SAM, SAM_HISTORY), (KIM, KIM_HISTORY))
    ]


def test_a_participants_days_from_enrolment_to_the_end_of_the_record() -> None:
    sam, kim = summaries()
    end = record_end([sam, kim])
    assert end == T0 + timedelta(minutes=5 * DAY)

    days = study_days(sam, end)

    assert [d.state for d in days] == [DONE, ANSWERED, NO_PROMPT, NO_ANSWER, NEXT_TIME, DELIVERED]
    assert [d.day for d in days] == [1, 2, 3, 4, 5, 6]
    assert days[0].local_date == date(2026, 3, 2)  # 13:00Z is 08:00 in Toronto
    assert [d.latency_minutes for d in days] == [5.0, 90.0, None, None, 20.0, None]
    assert [d.reminder_sent for d in days] == [False, True, False, False, False, False]
    assert [d.quiet_hours_delay for d in days] == [False, False, False, True, False, False]
    assert [d.state for d in study_days(kim, end)] == [DONE, NO_PROMPT, NO_PROMPT, NO_PROMPT, NO_PROMPT]


def test_the_study_series_shares_by_study_day() -> None:
    sam, kim = summaries()
    end = record_end([sam, kim])
    assert end is not None

    series = study_series([study_days(sam, end), study_days(kim, end)])

    day1, day2, day4, day6 = series[0], series[1], series[3], series[5]
    assert (day1.participants, day1.prompted, day1.answered, day1.done) == (2, 2, 2, 2)
    assert (day1.answered_share, day1.done_share, day1.median_latency_minutes) == (1.0, 1.0, 7.5)
    assert (day2.participants, day2.prompted, day2.answered, day2.done, day2.done_share) == (2, 1, 1, 0, 0.0)
    assert (day4.prompted, day4.answered_share, day4.median_latency_minutes) == (1, 0.0, None)
    assert day4.quiet_hours_delays == 1 and day1.quiet_hours_delays == 0
    assert (day6.participants, day6.prompted, day6.answered) == (1, 1, 0)  # Kim's study has 5 days so far


def test_the_svg_views_draw_every_day() -> None:
    sam, kim = summaries()
    end = record_end([sam, kim])
    assert end is not None
    strip = str(strip_svg(study_days(sam, end)))
    assert re.findall(r'class="day-(\w+)"', strip) == [
        "done",
        "answered",
        "no_prompt",
        "no_answer",
        "next_time",
        "delivered",
    ]
    assert "Day 2 (Tue 03 Mar): answered, reminder sent, answered after 90 min" in strip
    assert strip.count('class="quiet-delay"') == 1 and "Day 4: reminder delayed by quiet hours" in strip
    series = study_series([study_days(sam, end), study_days(kim, end)])
    chart = str(study_chart_svg([(f"Day {share.day}", share) for share in series]))
    assert chart.count('<rect class="latency"') == 6
    assert re.search(r'<polyline class="done" points="([^"]+)"', chart)[1].count(",") == 5  # type: ignore[index]  # day 3: nobody prompted, no point


def test_the_export_writes_the_series_as_adherence_csv(tmp_path: Path) -> None:
    api = CannedApi([SAM, KIM], {SAM["id"]: SAM_HISTORY, KIM["id"]: KIM_HISTORY}, {SAM["id"]: {}, KIM["id"]: {}})

    counts = write_export(CoordinatorClient(api), tmp_path)

    with (tmp_path / "adherence.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert counts.days == len(rows) == 6
    assert rows[0] == {
        "day": "1",
        "participants": "2",
        "prompted": "2",
        "answered": "2",
        "done": "2",
        "answered_share": "1.0",
        "done_share": "1.0",
        "median_latency_minutes": "7.5",
        "quiet_hours_delays": "0",
    }
    assert rows[3]["quiet_hours_delays"] == "1"
    assert rows[2]["prompted"] == "0" and rows[2]["answered_share"] == ""
