"""The ``promptpipe`` command as a newcomer uses it: the demo, and the local server over real HTTP."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from datetime import UTC, datetime

import pytest

from promptpipe.cli.commands import main
from promptpipe.local.environment import LOCAL_TWILIO_AUTH_TOKEN, LocalEnvironment, local_settings
from promptpipe.local.server import LocalServer
from promptpipe.local.signing import twilio_signature


@pytest.fixture(autouse=True)
def _restore_runtime_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # main() quiets Powertools through the environment; keep that from leaking into other tests.
    for name in ("POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_LOG_LEVEL", "POWERTOOLS_TRACE_DISABLED"):
        monkeypatch.setenv(name, "true" if name != "POWERTOOLS_LOG_LEVEL" else "ERROR")


def test_demo_runs_and_shows_the_expected_events(capsys: pytest.CaptureFixture[str]) -> None:
    # When the demo runs on its embedded default
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    # Then the timeline shows intake, daily prompts at 07:20 local, the reminder, Done and intensity
    assert "offline coach" in out
    assert out.count("time for the daily prompt") == 4
    assert "07:20 timer" in out
    # in a coordinator's words: no internal timer names or state version unless --verbose
    assert "fired" not in out
    assert "version:" not in out
    assert "Friendly check-in: we haven't heard back after today's habit prompt." in out
    assert "Did you do it? Reply 1 for Done or 2 for Next time." in out
    assert "intensity: high" in out
    assert "sub-state: FEEDBACK" in out
    assert "success=2/4" in out
    assert "flow controller: intake@1 complete at turn 6; intake turns: motivation EXECUTE → time EXECUTE" in out
    assert "anchor EXECUTE → schedule EXECUTE → COMPLETE" in out  # the schedule made on the participant's yes


def test_demo_verbose_keeps_the_internal_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--verbose"]) == 0
    out = capsys.readouterr().out
    assert out.count("daily_prompt fired") == 4
    assert "auto_feedback fired" in out
    assert "version: " in out


def _request(
    method: str, url: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, object]:
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read().decode()
            status = response.status
    except urllib.error.HTTPError as exc:
        raw, status = exc.read().decode(), exc.code
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw


@pytest.fixture
def server():
    env = LocalEnvironment(
        start=datetime(2026, 3, 2, 13, 0, tzinfo=UTC), settings=local_settings(offline_coach=True, openai_api_key=None)
    )
    running = LocalServer("127.0.0.1", 0, env=env, tick_seconds=3600).start()
    yield running
    running.stop()


def test_serve_answers_enrollment_webhook_outbox_and_clock(server: LocalServer) -> None:
    base = server.url
    # Given a participant enrolled over HTTP
    status, body = _request(
        "POST",
        f"{base}/conversation/participants",
        json.dumps({"phone_number": "+14165550142", "timezone": "America/Toronto"}).encode(),
        {"content-type": "application/json"},
    )
    assert status == 201
    pid = body["result"]["id"]
    # When they complete intake through signed Twilio webhooks
    host = urllib.parse.urlsplit(base).netloc
    for index, text in enumerate(
        [
            "I'd like to exercise more",
            "I want to feel more energetic",
            "Around 7:30am works",
            "After my morning coffee",
            "yes",  # to the proposed daily time
        ]
    ):
        params = {"MessageSid": f"SMserve{index}", "From": "+14165550142", "To": "+14155550000", "Body": text}
        signature = twilio_signature(f"https://{host}/webhooks/twilio", params, LOCAL_TWILIO_AUTH_TOKEN)
        status, _ = _request(
            "POST",
            f"{base}/webhooks/twilio",
            urllib.parse.urlencode(params).encode(),
            {"content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature},
        )
        assert status == 200
    # A wrong signature is refused
    status, _ = _request(
        "POST",
        f"{base}/webhooks/twilio",
        b"MessageSid=SMbad&From=%2B14165550142&Body=hi",
        {"content-type": "application/x-www-form-urlencoded", "x-twilio-signature": "bogus"},
    )
    assert status == 403
    # Then the outbox holds the greeting and the replies
    status, outbox = _request("GET", f"{base}/_local/outbox?participant_id={pid}")
    assert status == 200 and len(outbox["messages"]) == 6
    # And moving the clock to the next morning fires the daily prompt
    status, clock = _request(
        "POST",
        f"{base}/_local/clock",
        json.dumps({"to": "2026-03-03T13:00:00Z"}).encode(),
        {"content-type": "application/json"},
    )
    assert status == 200
    assert clock["now"] == "2026-03-03T13:00:00Z"
    assert "daily_prompt" in [f["kind"] for f in clock["fired"]]
    status, outbox = _request("GET", f"{base}/_local/outbox?participant_id={pid}")
    assert any(m["kind"] == "daily_prompt" for m in outbox["messages"])
    status, now = _request("GET", f"{base}/_local/clock")
    assert now == {"now": "2026-03-03T13:00:00Z"}


def test_chat_talks_moves_the_clock_and_shows_state(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a participant typing into `promptpipe chat` (offline coach), starting Monday 08:00 Toronto
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    lines = iter(
        [
            "I'd like to exercise more",
            "I want to feel more energetic",
            "Around 7:30am works for me.",
            "After my morning coffee.",
            "Yes, please.",
            "/tomorrow 07:30",
            "/state",
            "/quit",
        ]
    )
    monkeypatch.setattr("builtins.input", lambda _prompt="": next(lines))
    # When the session runs
    assert main(["chat", "--start", "2026-03-02T13:00:00Z"]) == 0
    out = capsys.readouterr().out
    # Then it says which model it uses, the coach answers, the next morning's prompt fires, and
    # /state prints the stored state
    assert "offline coach" in out
    assert "Here's your first one-minute habit to try" in out
    assert "[Tue 07:20] timer: daily_prompt fired" in out
    assert '"sub_state": "FEEDBACK"' in out


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"not json", "JSON"),
        (b"{}", "advance_seconds or to"),
        (b'{"advance_seconds": "soon"}', "advance_seconds"),
        (b'{"advance_seconds": 1e300}', "advance_seconds"),
        (b'{"to": "tomorrow"}', "to"),
        (b'{"to": 5}', "to"),
        (b"[1]", "object"),
        (b"[" * 5000 + b"]" * 5000, "nested"),
        (b'{"to": "2026-03-03T13:00:00Z\xff"}', "UTF-8"),
    ],
    ids=["not-json", "empty", "not-a-number", "overflow", "bad-date", "wrong-type", "list", "deep", "not-utf8"],
)
def test_local_clock_answers_bad_input_in_the_api_error_envelope(
    server: LocalServer, body: bytes, fragment: str
) -> None:
    # When the tester route gets input it cannot use
    status, answer = _request("POST", f"{server.url}/_local/clock", body, {"content-type": "application/json"})
    # Then 400 in the participants API's envelope, and the clock did not move
    assert status == 400
    assert isinstance(answer, dict) and answer["status"] == "error" and fragment in answer["message"], answer
    assert _request("GET", f"{server.url}/_local/clock")[1] == {"now": "2026-03-02T13:00:00Z"}


def test_local_server_refuses_bodies_over_the_cap_and_unknown_local_routes_in_the_envelope(server: LocalServer) -> None:
    cap = server.env.settings.max_webhook_body_bytes
    status, answer = _request(
        "POST", f"{server.url}/conversation/participants", b"x" * (cap + 1), {"content-type": "application/json"}
    )
    assert status == 413 and answer["status"] == "error" and str(cap) in answer["message"]
    status, answer = _request("GET", f"{server.url}/_local/nothing")
    assert status == 404 and answer["status"] == "error"


def test_chat_commands_help_wait_bad_input_and_end_of_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the chat's own commands, a bad one of each kind, and the input ending (Ctrl-D)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    lines = iter(["", "/help", "/wait 2h", "/wait soon", "/tomorrow 7am", "/tomorrow"])

    def typed(_prompt: str = "") -> str:
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr("builtins.input", typed)
    assert main(["chat", "--start", "2026-03-02T13:00:00Z"]) == 0
    out = capsys.readouterr().out
    assert "/wait" in out and "/tomorrow" in out  # the help text
    assert "is not a time of day; use HH:MM" in out  # "/tomorrow 7am"
    assert out.count("? ") >= 2  # the unreadable duration is answered too


def test_chat_refuses_a_phone_that_cannot_enrol(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A phone number that cannot enrol is a usage mistake, caught before anything starts (exit 2)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr("builtins.input", lambda _prompt="": "/quit")
    with pytest.raises(SystemExit) as stopped:
        main(["chat", "--phone", "not-a-phone", "--start", "2026-03-02T13:00:00Z"])
    assert stopped.value.code == 2
    assert "is not a phone number" in capsys.readouterr().err


def test_flows_validate_push_and_show(server: LocalServer, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    intake = json.loads((Path(__file__).parents[2] / "prompts" / "flows" / "intake.json").read_text())
    # A valid file validates offline
    good = tmp_path / "intake.json"
    intake["nodes"][2]["retryPolicy"] = {"maxAttempts": 2, "onExhaust": "HANDOFF"}
    good.write_text(json.dumps(intake))
    assert main(["flows", "validate", str(good)]) == 0
    assert "valid: flow 'intake', 6 node(s)" in capsys.readouterr().out
    # An invalid one names each problem and exits 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**intake, "primaryGoal": {"type": "GATE", "gate": "NOPE"}}))
    assert main(["flows", "validate", str(bad)]) == 1
    assert "$.primaryGoal.gate: undefined gate 'NOPE'" in capsys.readouterr().err
    # Push stores the next version on the running server (version 1 is the seeded default)
    assert main(["flows", "show", "intake", "--url", server.url]) == 0
    assert json.loads(capsys.readouterr().out)["version"] == 1
    assert main(["flows", "push", str(good), "--url", server.url]) == 0
    assert "version 2" in capsys.readouterr().out
    assert main(["flows", "show", "intake", "--url", server.url]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["version"] == 2 and shown["nodes"][2]["retryPolicy"]["maxAttempts"] == 2
    assert main(["flows", "push", str(bad), "--url", server.url]) == 1
    assert "$.primaryGoal.gate" in capsys.readouterr().err


def test_serve_prints_its_routes_and_stops_on_ctrl_c(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given `promptpipe serve` on a free port, and a Ctrl-C during its wait
    def interrupted(_seconds: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("promptpipe.local.server.time.sleep", interrupted)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    # When it runs
    assert main(["serve", "--port", "0", "--start", "2026-03-02T13:00:00Z"]) == 0
    out = capsys.readouterr().out
    # Then it printed where everything is, then stopped cleanly
    assert "PromptPipe local server on http://127.0.0.1:" in out
    assert "simulated clock starts at 2026-03-02T13:00:00Z" in out
    assert "/webhooks/twilio" in out and "/webhooks/whatsapp" in out and "/_local/outbox" in out
    assert out.rstrip().endswith("stopping")
