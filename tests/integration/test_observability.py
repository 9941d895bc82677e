"""Logs, metrics and the per-turn audit record, captured from the real handlers."""

from __future__ import annotations

import json

import pytest

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.local.demo import send_sms

PHONE = "+14155550123"
SECRET_BODY = "my very private habit message"


def _emf_blobs(text: str) -> list[dict]:
    blobs = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("{") and '"_aws"' in line:
            blobs.append(json.loads(line))
    return blobs


def _metric_names(blob: dict) -> list[str]:
    return [m["Name"] for d in blob["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]]


def _dimensions(blob: dict) -> set[str]:
    return {name for d in blob["_aws"]["CloudWatchMetrics"] for dims in d["Dimensions"] for name in dims}


@pytest.fixture
def turn_with_two_tools(local_env_factory, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    from promptpipe.observability import logger

    # INFO is the production level; another test in this process may have imported at ERROR.
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)
    import logging
    import sys

    previous = logger.log_level
    logger.setLevel("INFO")
    # The handler keeps the stream it was created with (maybe a capture of an earlier test).
    handlers = [h for h in logging.getLogger(logger.name).handlers if isinstance(h, logging.StreamHandler)]
    streams = [h.stream for h in handlers]
    for handler in handlers:
        handler.stream = sys.stdout  # not setStream: it would flush a stream that may be closed
    llm = ScriptedLLM(
        [
            ScriptedLLM.text("Hi! I'm your coach."),  # greeting
            ScriptedLLM.tool_calls(
                [
                    ("save_user_profile", {"habit_domain": "walking", "prompt_anchor": "after lunch"}),
                    ("scheduler", {"action": "list"}),
                ]
            ),
            ScriptedLLM.text("Great — walking after lunch it is. What time suits you?"),
        ]
    )
    env = local_env_factory(llm=llm)
    enrolled = env.api("POST", "/conversation/participants", json_body={"phone_number": PHONE})
    pid = enrolled.body["result"]["id"]
    capfd.readouterr()  # only the turn below
    assert send_sms(env, PHONE, SECRET_BODY, "SMobs1") == 200
    captured = capfd.readouterr()
    yield env, pid, captured.out + captured.err
    logger.setLevel(previous)
    for handler, stream in zip(handlers, streams, strict=True):
        handler.stream = stream


def test_logs_at_info_never_contain_phone_numbers_or_bodies(turn_with_two_tools) -> None:
    _env, pid, output = turn_with_two_tools
    log_lines = [json.loads(line) for line in output.splitlines() if line.startswith("{") and '"level"' in line]
    # Then there are structured logs with the participant id as a correlation key …
    assert any(entry.get("participant_id") == pid for entry in log_lines)
    # … and nothing of the phone number (beyond the last 4 digits) or the message body
    assert "4155550123" not in output
    assert "555012" not in output
    assert SECRET_BODY not in output
    assert "walking after lunch it is" not in output


def test_emf_metrics_of_a_turn(turn_with_two_tools) -> None:
    _env, _pid, output = turn_with_two_tools
    blobs = _emf_blobs(output)
    by_name: dict[str, list[dict]] = {}
    for blob in blobs:
        for name in _metric_names(blob):
            by_name.setdefault(name, []).append(blob)
    assert {"TurnsProcessed", "ToolCalls", "LLMCalls", "LLMLatencyMs", "LLMPromptTokens"} <= set(by_name)
    turns = by_name["TurnsProcessed"][0]
    assert turns["module"] == "intake" and "module" in _dimensions(turns)
    tools = {(b["tool"], b["outcome"]) for b in by_name["ToolCalls"]}
    assert tools == {("save_user_profile", "ok"), ("scheduler", "ok")}
    assert all(b["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "PromptPipe" for b in blobs)


def test_audit_record_of_a_turn_with_two_tool_calls(turn_with_two_tools) -> None:
    env, pid, _ = turn_with_two_tools
    history = env.api("GET", f"/conversation/participants/{pid}/history").body["result"]["messages"]
    reply = next(m for m in history if m["kind"] == "reply")
    audit = reply["metadata"]
    assert audit["module"] == "intake"
    assert [c["name"] for c in audit["tool_calls"]] == ["save_user_profile", "scheduler"]
    assert all(c["outcome"] == "ok" and "duration_ms" in c for c in audit["tool_calls"])
    assert len(audit["llm_calls"]) == 2 and {"prompt_tokens", "completion_tokens", "latency_ms", "model"} <= set(
        audit["llm_calls"][0]
    )
    assert audit["state_version"] >= 2 and audit["duration_ms"] >= 0
    plain = env.api("GET", f"/conversation/participants/{pid}/history", query={"include_audit": "false"})
    assert all(m["metadata"] == {} for m in plain.body["result"]["messages"])
