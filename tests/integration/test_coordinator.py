"""The coordinator's tools: the API client over each transport, lookup by phone, transcripts in local
time and the research export."""

from __future__ import annotations

import csv
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from promptpipe.adapters.api_http import HttpTransport, SigV4Signer, needs_signing, region_of
from promptpipe.coordinator.client import ApiError, CoordinatorClient
from promptpipe.coordinator.export import PARTICIPANT_COLUMNS, PROMPT_COLUMNS, write_export
from promptpipe.coordinator.summary import summarize, transcript_text
from promptpipe.local.api_transport import InProcessTransport
from promptpipe.local.demo import DEMO_START, run_demo
from promptpipe.local.environment import LocalEnvironment, local_settings


@pytest.fixture(autouse=True)
def _quiet_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_LOG_LEVEL", "POWERTOOLS_TRACE_DISABLED"):
        monkeypatch.setenv(name, "true" if name != "POWERTOOLS_LOG_LEVEL" else "ERROR")


@pytest.fixture(scope="module")
def demo_env() -> Iterator[tuple[LocalEnvironment, str]]:
    env = LocalEnvironment(start=DEMO_START, settings=local_settings(offline_coach=True, openai_api_key=None))
    try:
        result = run_demo(env)
        yield env, result.participant_id
    finally:
        env.close()


def test_lookup_by_phone_accepts_any_form_and_answers_400_for_a_bad_number(
    demo_env: tuple[LocalEnvironment, str],
) -> None:
    env, pid = demo_env
    for form in ("+14165550142", "+1 416 555 0142", "(416) 555-0142"):
        answer = env.api("GET", "/conversation/participants", query={"phone": form})
        assert answer.status == 200
        assert [p["id"] for p in answer.body["result"]["participants"]] == [pid]
    assert env.api("GET", "/conversation/participants", query={"phone": "+14165550199"}).body["result"] == {
        "participants": [],
        "next_token": None,
    }
    assert env.api("GET", "/conversation/participants", query={"phone": "banana"}).status == 400
    assert env.api("GET", "/conversation/participants", query={"phone": ""}).status == 400


def test_client_finds_by_id_or_phone_and_summarizes_the_week(demo_env: tuple[LocalEnvironment, str]) -> None:
    env, pid = demo_env
    client = CoordinatorClient(InProcessTransport(env))
    assert client.find(pid).id == pid
    participant = client.find("+1 416 555 0142")
    assert participant.id == pid
    with pytest.raises(ApiError) as missing:
        client.find("+14165550199")
    assert missing.value.status == 404
    summary = summarize(participant, client.iter_history(pid), client.state(pid))
    # the demo: four daily prompts, Done on days 1 and 3, a missed day 2 with its reminder
    assert (summary.prompts_sent, summary.answered, summary.done, summary.reminders) == (4, 3, 2, 1)
    assert summary.done_rate == 0.5
    assert [row.answer for row in summary.prompts] == ["Done", "", "Done", ""]
    assert summary.prompts[2].intensity == "Increase"
    assert summary.prompts[1].reminder_sent is True
    assert summary.prompts[0].latency_minutes == 21.0


def test_transcript_is_in_the_participants_local_time_with_marks(demo_env: tuple[LocalEnvironment, str]) -> None:
    env, pid = demo_env
    client = CoordinatorClient(InProcessTransport(env))
    participant = client.participant(pid)
    entries = list(client.iter_history(pid))
    local = transcript_text(participant, entries, ZoneInfo("America/Toronto"))
    assert "── Tuesday 2026-03-03" in local
    assert "07:20 coach       ‹  [daily prompt] After your morning coffee" in local
    assert "07:41 participant ›  [answer: Done] 1" in local
    assert "[reminder] Friendly check-in" in local
    assert "reminder due (no answer yet)" in local and "fired" not in local
    utc = transcript_text(participant, entries, ZoneInfo("UTC"))
    assert "12:20 coach       ‹  [daily prompt]" in utc


def test_export_writes_the_documented_columns(demo_env: tuple[LocalEnvironment, str], tmp_path: Path) -> None:
    env, pid = demo_env
    seen: list[tuple[int, int]] = []
    counts = write_export(
        CoordinatorClient(InProcessTransport(env)), tmp_path, progress=lambda d, t: seen.append((d, t))
    )
    assert seen == [(1, 1)]
    with (tmp_path / "participants.csv").open() as f:
        people = list(csv.DictReader(f))
    assert tuple(people[0].keys()) == PARTICIPANT_COLUMNS
    assert people[0]["participant_id"] == pid
    assert (people[0]["prompts_sent"], people[0]["done"], people[0]["done_rate"]) == ("4", "2", "0.5")
    assert people[0]["reminders"] == "1" and people[0]["opted_out"] == "false"
    with (tmp_path / "prompts.csv").open() as f:
        prompts = list(csv.DictReader(f))
    assert tuple(prompts[0].keys()) == PROMPT_COLUMNS
    assert [p["sent_at_local"][11:16] for p in prompts] == ["07:20"] * 4
    assert prompts[0]["sent_at_utc"] == "2026-03-03T12:20:00Z"
    assert prompts[0]["answered_at_local"] == "2026-03-03T07:41:00-05:00"
    lines = (tmp_path / "messages.jsonl").read_text().splitlines()
    assert len(lines) == counts.messages
    first = json.loads(lines[0])
    assert first["kind"] == "greeting" and "metadata" in first  # every message with its audit


class _Recorder(BaseHTTPRequestHandler):
    seen: list[dict[str, Any]] = []  # noqa: RUF012

    def log_message(self, *_args: Any) -> None:
        pass

    def do_GET(self) -> None:
        _Recorder.seen.append({"path": self.path, "headers": dict(self.headers.items())})
        body = json.dumps({"status": "ok", "result": {"participants": [], "next_token": None}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_sigv4_signed_requests_verify_with_the_operators_credentials() -> None:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    credentials = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session-token")
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    transport = HttpTransport(base, signer=SigV4Signer("eu-west-1", credentials))
    try:
        assert CoordinatorClient(transport).participants(phone="+14165550142") == []
    finally:
        transport.close()
        httpd.shutdown()
        httpd.server_close()
    request = _Recorder.seen[-1]
    headers = {k.lower(): v for k, v in request["headers"].items()}
    auth = headers["authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-1/execute-api/aws4_request" in auth
    assert headers["x-amz-security-token"] == "session-token"
    # Recompute the signature from what the server received: it must match.
    signed = auth.split("SignedHeaders=")[1].split(",")[0].split(";")
    replay = AWSRequest(method="GET", url=base + request["path"], data=b"", headers={h: headers[h] for h in signed})
    replay.context["timestamp"] = headers["x-amz-date"]
    signer = SigV4Auth(credentials.get_frozen_credentials(), "execute-api", "eu-west-1")
    expected = signer.signature(signer.string_to_sign(replay, signer.canonical_request(replay)), replay)
    assert auth.endswith(f"Signature={expected}")


def test_signing_is_chosen_by_host_and_region_read_from_the_url() -> None:
    assert not needs_signing("http://127.0.0.1:8000")
    assert not needs_signing("http://localhost:8000")
    url = "https://abc123.execute-api.ca-central-1.amazonaws.com"
    assert needs_signing(url)
    assert region_of(url, "us-east-1") == "ca-central-1"
    assert region_of("https://api.example.org", "us-east-1") == "us-east-1"
