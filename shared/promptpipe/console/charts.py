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


def _nice_ceiling(value: float) -> float:
    """The scale's top: the first of 1, 2, 5 x 10^k at or above ``value`` (at least 1)."""
    step = 1.0
    while True:
        for factor in (1, 2, 5):
            if value <= factor * step:
                return factor * step
        step *= 10


def study_chart_svg(points: Sequence[tuple[str, DayShare]], *, small_n: int = 5) -> Markup:
    """Answered and done shares (0–100 %, lines; left scale) and the median latency (bars; right
    scale, in minutes) per point of the series, each labelled (a calendar date) with its sample
    size: ``n`` prompted under the label, and a point of fewer than ``small_n`` drawn hollow, so
    that a day with one participant never reads as a sure 100 %. Drawn to the full width of its
    container (``viewBox``; the page's CSS sets the width)."""
    count = max(len(points), 1)
    left, right, top, plot_h = 44, 56, 12, 160
    width = max(960, 64 * count + left + right)
    bars_top, bars_h = top + plot_h + 64, 60
    height = bars_top + bars_h + 8
    step = (width - left - right) / count
    most = _nice_ceiling(max((share.median_latency_minutes or 0 for _, share in points), default=0) or 1)

    def x(index: int) -> float:
        return round(left + step * index + step / 2, 1)

    def y(share: float) -> float:
        return round(top + plot_h * (1 - share), 1)

    def bar_y(minutes: float) -> float:
        return round(bars_top + bars_h * (1 - minutes / most), 1)

    parts = []
    for tick in (0, 0.25, 0.5, 0.75, 1):  # the share scale, with light grid lines
        parts.append(
            f'<line x1="{left}" y1="{y(tick)}" x2="{width - right}" y2="{y(tick)}" stroke="#ddd"/>'
            f'<text x="{left - 4}" y="{y(tick) + 4}" font-size="11" text-anchor="end">{round(tick * 100)}%</text>'
        )
    for tick in (0, most / 2, most):  # the latency scale, on the right of the bars
        parts.append(
            f'<line x1="{left}" y1="{bar_y(tick)}" x2="{width - right}" y2="{bar_y(tick)}" stroke="#eee"/>'
            f'<text class="latency-tick" x="{width - right + 4}" y="{bar_y(tick) + 4}" font-size="11">'
            f"{tick:g} min</text>"
        )
    parts.append(f'<text x="{left}" y="{bars_top - 10}" font-size="11">median minutes to the first reply</text>')
    for index, (label, share) in enumerate(points):
        minutes = share.median_latency_minutes
        latency = "—" if minutes is None else f"{minutes:g} min"
        top_y = bar_y(minutes or 0)
        parts.append(
            f'<rect class="latency" x="{x(index) - step / 4:.1f}" y="{top_y}" width="{step / 2:.1f}" '
            f'height="{round(bars_top + bars_h - top_y, 1)}" fill="#78909c"><title>{escape(label)}: median '
            f"response {latency} (n={share.prompted})</title></rect>"
            f'<text class="date" x="{x(index)}" y="{top + plot_h + 16}" font-size="11" text-anchor="middle">'
            f"{escape(label)}</text>"
            f'<text class="n" x="{x(index)}" y="{top + plot_h + 30}" font-size="11" text-anchor="middle">'
            f"n={share.prompted}</text>"
        )
    for name, colour, values in (
        ("answered", "#1565c0", [s.answered_share for _, s in points]),
        ("done", "#2e7d32", [s.done_share for _, s in points]),
    ):
        line = " ".join(f"{x(i)},{y(v)}" for i, v in enumerate(values) if v is not None)
        parts.append(f'<polyline class="{name}" points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for i, v in enumerate(values):
            if v is None:
                continue
            label, share = points[i]
            small = share.prompted < small_n
            parts.append(
                f'<circle class="{name}{" small-n" if small else ""}" cx="{x(i)}" cy="{y(v)}" r="4" '
                f'fill="{"#fff" if small else colour}" stroke="{colour}" stroke-width="2"><title>{escape(label)}: '
                f"{round(v * 100)}% {name} (n={share.prompted}{', few' if small else ''})</title></circle>"
            )
    label = (
        "Share of prompted participants who answered and who did the habit, by date, with the number "
        "prompted (n) and the median minutes to the first reply"
    )
    return Markup(
        f'<svg class="study-chart" role="img" aria-label="{label}" viewBox="0 0 {width} {height}" '
        f'preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>'
    )
