"""The coordinator's tools over real HTTP and from the command line (each test owns its local stack)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from promptpipe.adapters.api_http import HttpTransport
from promptpipe.cli.commands import EXIT_FAILED, EXIT_UNAVAILABLE, main
from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.local.environment import LocalEnvironment, local_settings
from promptpipe.local.server import LocalServer


@pytest.fixture(autouse=True)
def _quiet_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_LOG_LEVEL", "POWERTOOLS_TRACE_DISABLED"):
        monkeypatch.setenv(name, "true" if name != "POWERTOOLS_LOG_LEVEL" else "ERROR")


def test_http_transport_pages_through_a_served_api() -> None:
    env = LocalEnvironment(
        start=datetime(2026, 3, 2, 13, 0, tzinfo=UTC), settings=local_settings(offline_coach=True, openai_api_key=None)
    )
    server = LocalServer("127.0.0.1", 0, env=env, tick_seconds=3600).start()
    transport = HttpTransport(server.url)
    try:
        client = CoordinatorClient(transport)
        for n in range(3):
            answer = transport.request(
                "POST", "/conversation/participants", json_body={"phone_number": f"+1416555010{n}", "name": f"P{n}"}
            )
            assert answer.status == 201
        assert sorted(p.name for p in client.iter_participants(page_size=2)) == ["P0", "P1", "P2"]
        assert [p.name for p in client.participants(phone="+14165550101")] == ["P1"]
        paused = client.set_status(client.participants(phone="+14165550101")[0].id, "paused")
        assert paused.status.value == "paused"
        assert [p.name for p in client.participants(status="paused")] == ["P1"]
    finally:
        transport.close()
        server.stop()


def test_cli_participants_transcript_and_export_on_the_demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["participants", "--demo", "--status", "active"]) == 0
    out = capsys.readouterr().out
    assert "Sam" in out and "+14165550142" in out and "FEEDBACK" in out
    assert main(["transcript", "+1 416 555 0142", "--demo", "--tz", "UTC"]) == 0
    out = capsys.readouterr().out
    assert "times in UTC" in out and "12:20 coach" in out
    assert main(["transcript", "+1 416 555 0142", "--demo", "--format", "jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(json.loads(line)["participant_id"].startswith("p_") for line in lines)
    assert main(["export", "--demo", "--out", str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    assert "1/1 participants" in captured.err
    assert {p.name for p in (tmp_path / "out").iterdir()} == {
        "participants.csv",
        "prompts.csv",
        "messages.jsonl",
        "adherence.csv",
        "audit.csv",
    }
    audit = (tmp_path / "out" / "audit.csv").read_text(encoding="utf-8").splitlines()
    assert audit[0] == "at_utc,participant_id,action,by,named,reason,fields,redacted"
    assert main(["transcript", "+14165550199", "--demo"]) == EXIT_FAILED
    assert "no participant has the phone number" in capsys.readouterr().err


def test_cli_reports_an_unreachable_api_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    assert main(["participants", "--api", f"http://127.0.0.1:{port}"]) == EXIT_UNAVAILABLE
    err = capsys.readouterr().err
    assert "cannot reach the API" in err and "promptpipe serve" in err and "Traceback" not in err
