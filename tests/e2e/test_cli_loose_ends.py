"""The command's small mistakes: ``export`` to an API that cannot be reached creates nothing, and
an optional setting's error names its type."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from promptpipe.cli import EXIT_CONFIG, EXIT_UNAVAILABLE, main


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_LOG_LEVEL", "POWERTOOLS_TRACE_DISABLED"):
        monkeypatch.setenv(name, "true" if name != "POWERTOOLS_LOG_LEVEL" else "ERROR")
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MESSAGING_PROVIDER", "PROMPTPIPE_API_URL"):
        monkeypatch.delenv(name, raising=False)


def _free_port() -> int:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        return int(closed.getsockname()[1])


def test_export_to_an_unreachable_api_creates_no_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given an --out folder that does not exist yet, and no API listening
    out = tmp_path / "study" / "export"
    # When exporting / Then the unreachable API is reported (exit 4) and nothing was created
    assert main(["export", "--out", str(out), "--api", f"http://127.0.0.1:{_free_port()}", "--quiet"]) == (
        EXIT_UNAVAILABLE
    )
    err = capsys.readouterr().err
    assert err.startswith("promptpipe export: ") and "cannot reach" in err
    assert not (tmp_path / "study").exists()


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("RETENTION_DAYS_AFTER_DELETE", "0", "allowed: a whole number ≥ 1, ≤ 3650"),
        ("CHAT_HISTORY_LIMIT", "-2", "allowed: a whole number ≥ -1"),
        ("LLM_ROUTES", "[1]", "allowed: a JSON object"),
    ],
)
def test_a_setting_error_names_the_type_of_the_setting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str, value: str, allowed: str
) -> None:
    monkeypatch.setenv(name, value)
    assert main(["openapi"]) == EXIT_CONFIG
    [line] = [line.strip() for line in capsys.readouterr().err.splitlines() if line.strip().startswith(name)]
    assert line.startswith(f"{name}=") and " is not valid (" in line and line.endswith(allowed)
