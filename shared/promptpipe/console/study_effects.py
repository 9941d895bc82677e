"""The console's study view of randomised decisions (docs/studies.md, "Analysing decisions"): each
arm's proximal effect against the no-prompt arm as an inline SVG forest plot (a dot at the risk
difference, a bar for its 95 % interval, a line at no effect), drawn on the server like the other
charts (``console/charts.py``); ``coordinator/study_report.py`` computes what it shows."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from markupsafe import Markup

from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.coordinator.deidentified_export import is_test_participant
from promptpipe.coordinator.study_report import DecisionPointReport, StudyReport, study_report
from promptpipe.models.study import StudyDefinition

_ROW, _LEFT, _RIGHT, _TOP = 28, 150, 20, 22
WIDTH = 560
EFFECT_COLOUR, ZERO_COLOUR = "#1565c0", "#999"


def _extent(point: DecisionPointReport) -> float:
    """Half the x-axis: the largest |bound| of any interval, rounded up to a tenth, at least 0.1."""
    largest = max((max(abs(e.low), abs(e.high)) for e in point.effects), default=0.0)
    return max(0.1, -(-round(largest * 1000) // 100) / 10)


def effects_svg(point: DecisionPointReport) -> Markup | None:
    """The forest plot of one decision point; None when it has no effect to show."""
    if not point.effects:
        return None
    extent = _extent(point)
    plot_w = WIDTH - _LEFT - _RIGHT
    height = _TOP + _ROW * len(point.effects) + 24

    def x(value: float) -> float:
        return round(_LEFT + plot_w * (value + extent) / (2 * extent), 1)

    bottom = _TOP + _ROW * len(point.effects)
    parts = [
        f'<line class="no-effect" x1="{x(0)}" y1="{_TOP - 6}" x2="{x(0)}" y2="{bottom}" stroke="{ZERO_COLOUR}" '
        'stroke-dasharray="4 3"/>',
        f'<text x="{x(0)}" y="12" font-size="10" text-anchor="middle">no effect</text>',
    ]
    for tick in (-extent, -extent / 2, extent / 2, extent):
        parts.append(f'<text x="{x(tick)}" y="{bottom + 16}" font-size="10" text-anchor="middle">{tick:+.2f}</text>')
    parts.append(f'<text x="{x(0)}" y="{bottom + 16}" font-size="10" text-anchor="middle">0</text>')
    labels = []
    for index, effect in enumerate(point.effects):
        cy = _TOP + _ROW * index + _ROW / 2
        words = (
            f"{effect.arm} vs {effect.reference}: {effect.estimate:+.3f} "
            f"(95 % CI {effect.low:+.3f} to {effect.high:+.3f}, SE {effect.standard_error:.3f}, n={effect.decisions})"
        )
        labels.append(words)
        parts.append(
            f'<g class="effect"><title>{escape(words)}</title>'
            f'<text x="4" y="{cy + 4}" font-size="11">{escape(effect.arm)}</text>'
            f'<line x1="{x(max(effect.low, -extent))}" y1="{cy}" x2="{x(min(effect.high, extent))}" y2="{cy}" '
            f'stroke="{EFFECT_COLOUR}" stroke-width="2"/>'
            f'<circle cx="{x(effect.estimate)}" cy="{cy}" r="4" fill="{EFFECT_COLOUR}"/></g>'
        )
    label = f"Effect on done of each arm against {point.reference}, decision point {point.name}: " + "; ".join(labels)
    return Markup(
        f'<svg class="study-effects" role="img" aria-label="{escape(label)}" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>'
    )


def api_study_report(client: CoordinatorClient, study: StudyDefinition) -> Callable[[], StudyReport]:
    """The study view's report (``Console.study_report``) of ``study`` (``promptpipe console --study
    FILE``): its decision records read through the API at each view, test participants left out as
    the export leaves them."""

    def report() -> StudyReport:
        test_ids = {p.id for p in client.iter_participants() if is_test_participant(p)}
        return study_report(study, [r for r in client.decisions(study.id) if r.participant_id not in test_ids])

    return report
