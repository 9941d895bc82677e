"""The console's adherence views as inline SVG, drawn on the server (no JavaScript): a participant's
calendar strip of study days and the study's answered / done shares by day with the response
latency (``promptpipe.coordinator.adherence`` computes both)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from markupsafe import Markup

from promptpipe.coordinator.adherence import DAY_WORDS, DayShare, StudyDay

COLOURS = {
    "done": "#2e7d32",
    "next_time": "#f9a825",
    "answered": "#64b5f6",
    "delivered": "#90a4ae",
    "no_answer": "#c62828",
    "no_prompt": "#eceff1",
}
_CELL, _GAP = 18, 3


def strip_svg(days: Sequence[StudyDay]) -> Markup:
    """One square per study day, coloured by what it held; each with a title for hover and readers."""
    width = max(len(days), 1) * (_CELL + _GAP)
    cells = []
    for index, day in enumerate(days):
        words = DAY_WORDS[day.state] + (", reminder sent" if day.reminder_sent else "")
        words += ", reminder delayed by quiet hours" if day.quiet_hours_delay else ""
        if day.latency_minutes is not None:
            words += f", answered after {day.latency_minutes:g} min"
        cells.append(
            f'<rect class="day-{day.state}" x="{index * (_CELL + _GAP)}" y="0" width="{_CELL}" height="{_CELL}" '
            f'rx="3" fill="{COLOURS[day.state]}"><title>Day {day.day} ({day.local_date:%a %d %b}): '
            f"{escape(words)}</title></rect>"
        )
        if day.quiet_hours_delay:  # a moon-dark dot in the corner: the reminder waited for the morning
            cells.append(
                f'<circle class="quiet-delay" cx="{index * (_CELL + _GAP) + _CELL - 4}" cy="4" r="3" fill="#283593">'
                f"<title>Day {day.day}: reminder delayed by quiet hours</title></circle>"
            )
    label = f"{len(days)} study days: " + ", ".join(
        f"{sum(1 for d in days if d.state == state)} {DAY_WORDS[state]}" for state in COLOURS
    )
    return Markup(
        f'<svg class="strip" role="img" aria-label="{escape(label)}" width="{width}" height="{_CELL}" '
        f'viewBox="0 0 {width} {_CELL}" xmlns="http://www.w3.org/2000/svg">{"".join(cells)}</svg>'
    )


def study_chart_svg(series: Sequence[DayShare]) -> Markup:
    """Answered and done shares (0–100 %, lines) and the median latency (bars, scaled to the
    largest) by study day."""
    width, height, left, top, plot_h = 640, 220, 40, 10, 150
    step = (width - left - 10) / max(len(series), 1)
    most_latency = max((s.median_latency_minutes or 0 for s in series), default=0) or 1

    def x(index: int) -> float:
        return round(left + step * index + step / 2, 1)

    def y(share: float) -> float:
        return round(top + plot_h * (1 - share), 1)

    parts = [
        f'<line x1="{left}" y1="{y(0)}" x2="{width - 10}" y2="{y(0)}" stroke="#999"/>',
        f'<text x="4" y="{y(1) + 4}" font-size="10">100%</text><text x="14" y="{y(0) + 4}" font-size="10">0%</text>',
        f'<text x="0" y="{height - 22}" font-size="9">latency</text>',
    ]
    for index, share in enumerate(series):
        bar = round(40 * (share.median_latency_minutes or 0) / most_latency, 1)
        latency = "—" if share.median_latency_minutes is None else f"{share.median_latency_minutes:g} min"
        parts.append(
            f'<rect class="latency" x="{x(index) - step / 4:.1f}" y="{height - 20 - bar}" width="{step / 2:.1f}" '
            f'height="{bar}" fill="#b0bec5"><title>Day {share.day}: median response {latency}</title></rect>'
            f'<text x="{x(index)}" y="{height - 6}" font-size="10" text-anchor="middle">{share.day}</text>'
        )
    for name, colour, values in (
        ("answered", "#1565c0", [s.answered_share for s in series]),
        ("done", "#2e7d32", [s.done_share for s in series]),
    ):
        points = " ".join(f"{x(i)},{y(v)}" for i, v in enumerate(values) if v is not None)
        parts.append(f'<polyline class="{name}" points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts.extend(
            f'<circle cx="{x(i)}" cy="{y(v)}" r="3" fill="{colour}"><title>Day {i + 1}: {round(v * 100)}% '
            f"{name}</title></circle>"
            for i, v in enumerate(values)
            if v is not None
        )
    label = "Share of prompted participants who answered and who did the habit, by study day, with median latency"
    return Markup(
        f'<svg class="study-chart" role="img" aria-label="{label}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>'
    )
