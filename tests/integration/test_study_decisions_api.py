"""A study's decision records through the participants API (``GET /conversation/studies/{id}/decisions``,
docs/studies.md): what the engine wrote on the local stack (moto) comes back paged, the CLI's
de-identified export writes it to decisions.csv, and the console's study view reports it."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from promptpipe.cli import coordinator_commands
from promptpipe.cli.commands import main
from promptpipe.console.app import Console
from promptpipe.console.study_effects import api_study_report
from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.local.api_transport import InProcessTransport
from promptpipe.local.study_rehearsal import ReplyModel, StudyRun, run_study_rehearsal
from promptpipe.settings import set_settings
from promptpipe.usecases.studies import parse_study

EXAMPLE = Path(__file__).resolve().parents[2] / "prompts" / "studies" / "example-mrt.json"
DECISIONS = "/conversation/studies/{}/decisions"
SALT = "a-salt-kept-for-the-study-life"


@pytest.fixture(autouse=True)
def _quiet_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_LOG_LEVEL", "POWERTOOLS_TRACE_DISABLED"):
        monkeypatch.setenv(name, "true" if name != "POWERTOOLS_LOG_LEVEL" else "ERROR")
    monkeypatch.delenv("EXPORT_PSEUDONYM_SALT", raising=False)
    set_settings(None)


@pytest.fixture(scope="module")
def run() -> Iterator[StudyRun]:
    """Three participants lived for a day by the engine (the daily prompt's draws and the sweep), on
    moto: the route reads the DynamoDB index (its tokens are the table's keys)."""
    study = parse_study(EXAMPLE.read_text(encoding="utf-8"))
    lived = run_study_rehearsal(
        study, 3, 1, seed=7, replies=ReplyModel(effects={"framing_a": 0.2}), stop_rate=0, stack="moto"
    )
    try:
        yield lived
    finally:
        lived.close()


def _client(run: StudyRun) -> CoordinatorClient:
    return CoordinatorClient(InProcessTransport(run.env))


def test_the_engine_s_records_come_back_through_the_route_page_by_page(run: StudyRun) -> None:
    written = run.decisions
    assert len(written) >= 3  # every participant has day 1, at least
    first = run.env.api("GET", DECISIONS.format(run.study.id), query={"limit": "2"})
    assert first.status == 200
    assert len(first.body["result"]["decisions"]) == 2 and first.body["result"]["next_token"]
    second = run.env.api(
        "GET", DECISIONS.format(run.study.id), query={"limit": "2", "next_token": first.body["result"]["next_token"]}
    )
    assert second.status == 200
    assert second.body["result"]["decisions"][0] != first.body["result"]["decisions"][-1]
    # the client walks every page, in the log's order, the records whole
    assert list(_client(run).decisions(run.study.id, page_size=2)) == written
    assert list(_client(run).decisions(run.study.id)) == written


def test_a_study_with_no_decision_is_an_empty_page_and_a_foreign_token_is_refused(run: StudyRun) -> None:
    missing = run.env.api("GET", DECISIONS.format("no-such-study"))
    assert missing.status == 200 and missing.body["result"] == {"decisions": [], "next_token": None}
    assert list(_client(run).decisions("no-such-study")) == []
    token = run.env.api("GET", DECISIONS.format(run.study.id), query={"limit": "1"}).body["result"]["next_token"]
    foreign = run.env.api("GET", DECISIONS.format("another-study"), query={"next_token": token})
    assert foreign.status == 400 and "next_token" in foreign.body["message"]
    assert run.env.api("GET", DECISIONS.format(run.study.id), query={"limit": "0"}).status == 400


def test_the_cli_export_writes_the_decisions_with_probabilities_summing_to_one(
    run: StudyRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    @contextmanager
    def this_stack(args: Any) -> Iterator[CoordinatorClient]:
        yield _client(run)

    monkeypatch.setattr(coordinator_commands, "coordinator_client", this_stack)
    monkeypatch.setenv("EXPORT_PSEUDONYM_SALT", SALT)
    out = tmp_path / "out"
    assert main(["export", "--demo", "--deidentified", "--quiet", "--study", str(EXAMPLE), "--out", str(out)]) == 0
    assert f"{len(run.decisions)} decisions" in capsys.readouterr().out
    with (out / "decisions.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(run.decisions)
    arms = [arm.name for arm in run.study.decision_points[0].arms]
    for row in rows:
        assert abs(sum(float(row[f"p_{arm}"]) for arm in arms) - 1) < 1e-9
        assert row["decision_point"] == "daily_prompt" and not row["participant"].startswith("p_")
    assert {row["arm"] for row in rows if row["available"] == "true"} <= set(arms)


def test_the_console_study_view_reports_the_study_it_was_given(run: StudyRun) -> None:
    console = Console(_client(run))
    assert "Randomised decisions" not in console.study_page()
    console.study_report = api_study_report(_client(run), run.study)
    report = console.study_report()
    assert report.study_id == run.study.id and report.points[0].decisions == len(run.decisions)
    assert "Randomised decisions" in console.study_page()


def test_promptpipe_console_study_gives_the_study_view_its_report(
    run: StudyRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from promptpipe.console import app

    @contextmanager
    def this_stack(args: Any) -> Iterator[CoordinatorClient]:
        yield _client(run)

    pages: list[str] = []

    def one_view(server: Any) -> int:  # instead of serving until Ctrl-C: render the study view once
        try:
            pages.append(server.console.study_page())
        finally:
            server.stop()
        return 0

    monkeypatch.setattr(coordinator_commands, "coordinator_client", this_stack)
    monkeypatch.setattr(app, "serve_until_interrupted", one_view)
    tokens = str(tmp_path / "tokens.json")
    assert main(["console", "--port", "0", "--tokens", tokens, "--study", str(EXAMPLE)]) == 0
    assert main(["console", "--port", "0", "--tokens", tokens]) == 0
    capsys.readouterr()
    assert "Randomised decisions" in pages[0] and "Randomised decisions" not in pages[1]


def test_a_test_participant_s_decisions_stay_out_of_the_export_and_the_report(
    run: StudyRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    staff = run.decisions[0].participant_id
    theirs = sum(1 for r in run.decisions if r.participant_id == staff)
    flagged = run.env.api("PUT", f"/conversation/participants/{staff}", json_body={"test_participant": True})
    assert flagged.status == 200, flagged.body
    try:

        @contextmanager
        def this_stack(args: Any) -> Iterator[CoordinatorClient]:
            yield _client(run)

        monkeypatch.setattr(coordinator_commands, "coordinator_client", this_stack)
        monkeypatch.setenv("EXPORT_PSEUDONYM_SALT", SALT)
        out = tmp_path / "out"
        assert main(["export", "--demo", "--deidentified", "--quiet", "--study", str(EXAMPLE), "--out", str(out)]) == 0
        capsys.readouterr()
        with (out / "decisions.csv").open(newline="", encoding="utf-8") as f:
            assert len(list(csv.DictReader(f))) == len(run.decisions) - theirs
        report = api_study_report(_client(run), run.study)()
        assert report.points[0].decisions == len(run.decisions) - theirs
    finally:
        run.env.api("PUT", f"/conversation/participants/{staff}", json_body={"test_participant": False})
