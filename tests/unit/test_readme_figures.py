"""The README's figures agree with what they describe: the coverage gates and the second pass's zone
with the Makefile, every ``make`` target it names with the Makefile's targets, the corpus's size with
the corpus, and the suite's size with the tests collected (the README's figures used to drift: "1287
passed" against a suite of more than 2,000 tests, an 88 % branch gate against the Makefile's 90 %)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scripts.corpus.model import load_corpus

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
RELIABILITY = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
# The README gives the suite's size to the nearest hundred or so; more drift than this is stale.
SUITE_SIZE_TOLERANCE = 0.05


def _make_variable(name: str) -> str:
    match = re.search(rf"^{name}\s*\?=\s*(\S+)\s*$", MAKEFILE, re.M)
    assert match is not None, f"{name} is not set in the Makefile"
    return match.group(1)


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_coverage_gates_are_the_makefiles() -> None:
    line, branch = _make_variable("COV_LINE"), _make_variable("COV_BRANCH")
    stated = re.findall(r"under (\d+) % line or (\d+) % branch coverage", README)
    assert stated == [(line, branch)]
    # docs/reliability.md#coverage, which the README links for the figures
    assert f"| gate (`make test` fails under it) | {line} % | {branch} % |" in RELIABILITY
    assert f"--line {line} --branch {branch}" in RELIABILITY


def test_the_second_pass_runs_in_the_makefiles_zone() -> None:
    stated = re.findall(r"a second time with `TZ=([\w/]+)`", README)
    assert stated == [_make_variable("TEST_TZ")]


def test_every_make_target_the_readme_names_exists() -> None:
    targets = set(re.findall(r"^([a-z][a-z-]*):", MAKEFILE, re.M))
    # `make demo`, ``make eval-llm EVAL_ARGS=…``, and the lines of the command blocks
    named = set(re.findall(r"(?:`|^)(?:[A-Z_]+=\S* )*make ([a-z][a-z-]*)", README, re.M))
    assert {"demo", "test", "lint", "corpus"} <= named
    assert named <= targets, f"named in README.md, not in the Makefile: {sorted(named - targets)}"


def test_the_corpus_size_is_the_corpus() -> None:
    corpus = load_corpus()
    stated = re.findall(r"(\d+) conversations, (\d+) messages as people write", README)
    assert stated == [(str(len(corpus)), str(sum(len(c.turns) for c in corpus)))]


def _suite_stated() -> int:
    stated = re.findall(r"about ([\d,]+) tests \(`pytest --collect-only -q`\)", README)
    assert len(stated) == 1, "README.md states the suite's size once"
    return _number(stated[0])


def test_every_test_count_in_the_readme_is_the_suites_figure() -> None:
    # A run's "N passed" goes stale with the next test: the README gives the size once, as "about N tests"
    size = _suite_stated()
    for count in re.findall(r"([\d,]+) (?:passed|tests\b)", README):
        assert _number(count) == size, f"README.md says {count} where the suite's size is given as {size:,}"


def test_the_suites_size_is_what_the_whole_suite_collects(request: pytest.FixtureRequest) -> None:
    config = request.config
    whole = all(Path(arg.split("::")[0]).resolve() in (ROOT, ROOT / "tests") for arg in config.args)
    narrowed = config.getoption("keyword") or config.getoption("markexpr") or config.getoption("deselect")
    if not whole or narrowed or config.getoption("lf", False):
        pytest.skip("the suite was not collected whole (make test collects it)")
    collected = len(request.session.items)
    stated = _suite_stated()
    assert abs(collected - stated) <= SUITE_SIZE_TOLERANCE * collected, (
        f"README.md says about {stated:,} tests; the suite has {collected:,} (pytest --collect-only -q)"
    )
