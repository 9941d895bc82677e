"""``promptpipe export --deidentified`` from the command line on the demo stack, and the end of a
study rehearsal (the report and the export of a simulated study) on a local stack
(docs/studies.md)."""

from __future__ import annotations

import csv
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from promptpipe.cli.commands import EXIT_CONFIG, EXIT_USAGE, main
from promptpipe.local.environment import LocalEnvironment, local_settings
from promptpipe.local.rehearsal_export import finish_rehearsal
from promptpipe.models.decision import DecisionDelivery, DecisionRecord, ProximalOutcomeValue, decision_id
from promptpipe.models.study import StudyDefinition
from promptpipe.settings import set_settings

STUDY_FILE = "prompts/studies/example-mrt.json"
SALT = "a-salt-kept-for-the-study-life"


@pytest.fixture(autouse=True)
def _quiet_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_LOG_LEVEL", "POWERTOOLS_TRACE_DISABLED"):
        monkeypatch.setenv(name, "true" if name != "POWERTOOLS_LOG_LEVEL" else "ERROR")
    monkeypatch.delenv("EXPORT_PSEUDONYM_SALT", raising=False)
    set_settings(None)


def test_the_deidentified_export_refuses_to_run_without_a_salt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "--demo", "--deidentified", "--quiet", "--out", str(tmp_path / "out")]) == EXIT_CONFIG
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "EXPORT_PSEUDONYM_SALT" in err[0]
    assert not (tmp_path / "out").exists()
    assert main(["export", "--demo", "--include-text", "--out", str(tmp_path / "x")]) == EXIT_USAGE


def test_a_study_file_that_is_not_a_study_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXPORT_PSEUDONYM_SALT", SALT)
    bad = tmp_path / "study.json"
    bad.write_text('{"id": "Not An Id"}', encoding="utf-8")
    out = tmp_path / "out"
    assert main(["export", "--demo", "--deidentified", "--study", str(bad), "--out", str(out)]) == EXIT_USAGE
    assert "is not a valid study" in capsys.readouterr().err
    assert not out.exists()


def test_the_deidentified_export_of_the_demo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXPORT_PSEUDONYM_SALT", SALT)
    out = tmp_path / "out"
    assert main(["export", "--demo", "--deidentified", "--study", STUDY_FILE, "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "de-identified export" in captured.out and "1/1 participants" in captured.err
    assert "no decision of study example-mrt on record" in captured.err
    assert {p.name for p in out.iterdir()} == {
        "participants.csv",
        "prompts.csv",
        "messages.jsonl",
        "adherence.csv",
        "decisions.csv",
        "data_dictionary.json",
    }
    everything = "".join(p.read_text(encoding="utf-8") for p in out.iterdir())
    assert "Sam" not in everything and "555" not in everything  # the demo participant's name and phone
    with (out / "decisions.csv").open(newline="", encoding="utf-8") as f:
        assert next(csv.reader(f))[-3:] == ["p_no_prompt", "p_framing_a", "p_framing_b"]


def test_finishing_a_rehearsal_reports_the_effects_and_writes_the_export(tmp_path: Path) -> None:
    study = StudyDefinition.model_validate_json(Path(STUDY_FILE).read_text(encoding="utf-8"))
    start = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)
    rng = random.Random(5)
    planted = {"no_prompt": 0.3, "framing_a": 0.45, "framing_b": 0.6}
    probabilities = {arm.name: arm.probability for arm in study.decision_points[0].arms}
    zone = ZoneInfo("America/Toronto")
    with LocalEnvironment(start=start, settings=local_settings(offline_coach=True, openai_api_key=None)) as env:
        ids = []
        for n in range(8):
            body = {"phone_number": f"+1416555{n:04d}", "name": f"Person{n}", "timezone": "America/Toronto"}
            ids.append(env.api("POST", "/conversation/participants", json_body=body).body["result"]["id"])
        records = []
        for pid in ids:
            for day in range(1, 29):
                at = start + timedelta(days=day - 1)
                arm = rng.choices(list(probabilities), weights=list(probabilities.values()))[0]
                records.append(
                    DecisionRecord(
                        decision_id=decision_id(pid, "daily_prompt", day),
                        study_id=study.id,
                        participant_id=pid,
                        decision_point="daily_prompt",
                        study_day=day,
                        decided_at=at,
                        decided_at_local=at.astimezone(zone),
                        available=True,
                        probabilities=probabilities,
                        arm=arm,
                        delivery=DecisionDelivery.NOT_SENT if arm == "no_prompt" else DecisionDelivery.DELIVERED,
                        outcome=ProximalOutcomeValue.DONE if rng.random() < planted[arm] else ProximalOutcomeValue.NONE,
                    )
                )
        lines, counts = finish_rehearsal(env, study, records, tmp_path / "export")
    assert counts is not None and counts.participants == 8 and counts.decisions == 8 * 28
    assert lines[0] == "study example-mrt"
    assert "224 decisions, available 224 (100.0 %)" in lines[1]
    assert lines[2].startswith("  arm shares among available decisions: no_prompt ")
    assert lines[3].startswith("  framing_a vs no_prompt: risk difference +")
    assert lines[4].startswith("  framing_b vs no_prompt: risk difference +")
    assert "wrote the de-identified export" in lines[-1]
    dictionary = json.loads((tmp_path / "export" / "data_dictionary.json").read_text(encoding="utf-8"))
    assert {r["path"] for r in dictionary["resources"]} >= {"decisions.csv", "participants.csv"}
    text = (tmp_path / "export" / "participants.csv").read_text(encoding="utf-8")
    assert "Person" not in text and "+1416555" not in text


def test_the_salt_comes_from_the_settings_or_the_secret(aws: None) -> None:
    import boto3
    from aws_lambda_powertools.utilities import parameters

    from promptpipe.adapters.secrets import pseudonym_salt
    from promptpipe.settings import Settings

    parameters.clear_caches()
    boto3.client("secretsmanager").create_secret(
        Name="pp/channel", SecretString=json.dumps({"EXPORT_PSEUDONYM_SALT": SALT, "twilio_auth_token": "t"})
    )
    try:
        assert pseudonym_salt(Settings.model_validate({"channel_secret_name": "pp/channel"})) == SALT
        assert pseudonym_salt(Settings.model_validate({"export_pseudonym_salt": "s" * 16})) == "s" * 16
        assert pseudonym_salt(Settings.model_validate({})) is None
    finally:
        parameters.clear_caches()


def test_simulate_export_needs_a_study(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["simulate", "--participants", "1", "--days", "1", "--quiet", "--export", str(tmp_path / "x")])
    assert code == EXIT_USAGE
    assert "--study" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
