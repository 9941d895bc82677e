"""The console's study view of randomised decisions (console/study_effects.py, study_effects.html):
each arm's effect with its interval as SVG, and the arms' shares."""

from __future__ import annotations

import re

from promptpipe.console.app import Console
from promptpipe.console.study_effects import WIDTH, effects_svg
from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.coordinator.study_report import ArmShare, DecisionPointReport, StudyReport
from promptpipe.rules.mrt import ArmEffect
from tests.support.api_fakes import CannedApi, entry, participant

ARMS = [
    ArmShare("no_prompt", 0.3, 30, 0.3),
    ArmShare("framing_a", 0.35, 36, 0.36),
    ArmShare("framing_b", 0.35, 34, 0.34),
]
EFFECTS = [ArmEffect("framing_a", "no_prompt", 0.1, 0.05, 36), ArmEffect("framing_b", "no_prompt", -0.02, 0.04, 34)]
POINT = DecisionPointReport("daily_prompt", 120, 100, 100, ARMS, "no_prompt", EFFECTS)


def test_each_arm_is_a_dot_at_its_estimate_with_its_interval() -> None:
    svg = str(effects_svg(POINT))
    # the axis runs from -0.2 to +0.2 (the widest bound, 0.198, rounded up to a tenth) over the plot
    left, plot = 150, WIDTH - 150 - 20

    def x(value: float) -> float:
        return round(left + plot * (value + 0.2) / 0.4, 1)

    dots = [float(cx) for cx in re.findall(r'<circle cx="([\d.]+)"', svg)]
    assert dots == [x(0.1), x(-0.02)]
    bars = re.findall(r'<line x1="([\d.]+)" y1="[\d.]+" x2="([\d.]+)" y2="[\d.]+" stroke="#1565c0"', svg)
    assert [(float(a), float(b)) for a, b in bars] == [(x(e.low), x(e.high)) for e in EFFECTS]
    assert "framing_a vs no_prompt: +0.100 (95 % CI +0.002 to +0.198, SE 0.050, n=36)" in svg
    assert 'aria-label="Effect on done of each arm against no_prompt' in svg


def test_no_effect_no_plot() -> None:
    empty = DecisionPointReport("daily_prompt", 0, 0, 0, ARMS, "no_prompt", [], "no available decision")
    assert effects_svg(empty) is None


def _console(report: StudyReport | None) -> Console:
    person = participant("ab")
    history = [entry(person["id"], 0, "outbound", "daily_prompt", "Walk?")]
    api = CannedApi([person], {person["id"]: history}, {person["id"]: {"sub_state": "FEEDBACK"}})
    console = Console(CoordinatorClient(api))
    if report is not None:
        console.study_report = lambda: report
    return console


def test_the_study_view_shows_the_plot_and_the_arms() -> None:
    page = _console(StudyReport("example-mrt", [POINT])).study_page()
    assert "Randomised decisions" in page and '<svg class="study-effects"' in page
    assert "available at 100 (83%)" in page
    assert '<th scope="row">framing_a</th><td data-label="Declared">35%</td>' in page
    assert "+0.100" in page and "+0.002 to +0.198" in page
    blank = DecisionPointReport("daily_prompt", 3, 0, 0, ARMS, "no_prompt", [], "no available decision")
    assert "No effect to show: no available decision." in _console(StudyReport("s", [blank])).study_page()
    assert "Randomised decisions" not in _console(None).study_page()
