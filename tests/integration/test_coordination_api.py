"""The console's coordination through the participants API (docs/console.md): every coordinator action
recorded in the audit with who and why; a staff message reaches the outbox and holds the coach until
released; a cohort's rows checked before anything is written; an erasure's record outlives it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from promptpipe.local.environment import LocalEnvironment, local_settings
from promptpipe.models.audit import UNNAMED_CALLER
from promptpipe.models.messaging import OutboundKind

BASE = "/conversation/participants"
START = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)


@pytest.fixture
def env() -> LocalEnvironment:
    settings = local_settings(offline_coach=True, openai_api_key=None)
    with LocalEnvironment(start=START, settings=settings) as environment:
        yield environment


def _enrol(env: LocalEnvironment, phone: str = "+14165550142", **fields: str) -> str:
    answer = env.api("POST", BASE, json_body={"phone_number": phone, "name": "Sam", **fields})
    assert answer.status == 201, answer.body
    return str(answer.body["result"]["id"])


def _audit(env: LocalEnvironment, pid: str | None = None) -> list[dict[str, object]]:
    query = {"participant_id": pid} if pid else None
    return list(env.api("GET", "/conversation/audit", query=query).body["result"]["records"])


def test_each_coordinator_action_is_recorded_with_who_and_why(env: LocalEnvironment) -> None:
    pid = _enrol(env, by="Ana")
    env.api("PUT", f"{BASE}/{pid}", json_body={"status": "paused", "reason": "on holiday", "by": "Ana"})
    env.api("PUT", f"{BASE}/{pid}", json_body={"status": "active", "by": "Ben"})
    env.api("PUT", f"{BASE}/{pid}", json_body={"timezone": "Europe/Madrid", "name": "Samuel", "by": "Ben"})
    env.api("POST", f"{BASE}/{pid}/state", json_body={"release_hold": True, "reason": "talked", "by": "Ana"})
    env.api("PUT", f"{BASE}/{pid}", json_body={"status": "withdrawn", "reason": "moved away", "by": "Ana"})
    records = _audit(env, pid)
    # Who is the signing principal (none locally: named as such), never the ``by`` the caller sends,
    # which is kept as a note
    assert {r["by"] for r in records} == {UNNAMED_CALLER}
    assert [(r["action"], r["named"], r["reason"]) for r in records] == [
        ("enrol", "Ana", ""),
        ("pause", "Ana", "on holiday"),
        ("resume", "Ben", ""),
        ("edit", "Ben", ""),
        ("release", "Ana", "talked"),
        ("withdraw", "Ana", "moved away"),
    ]
    assert records[3]["fields"] == ["name", "timezone"]  # the names, never the values
    assert "Samuel" not in str(records) and "Madrid" not in str(records)
    # A call without ``by`` is recorded as its caller, with no note
    env.api("PUT", f"{BASE}/{pid}", json_body={"status": "active"})
    assert (_audit(env, pid)[-1]["by"], _audit(env, pid)[-1]["named"]) == (UNNAMED_CALLER, "")
    # The export, recorded by the caller that makes it
    assert env.api("POST", "/conversation/audit", json_body={"action": "export", "by": "Ana"}).status == 201
    study = [r for r in _audit(env) if r["participant_id"] == ""]
    assert [(r["action"], r["by"], r["named"]) for r in study] == [("export", UNNAMED_CALLER, "Ana")]
    assert env.api("POST", "/conversation/audit", json_body={"action": "delete", "by": "Ana"}).status == 400


def test_a_staff_message_reaches_the_outbox_holds_the_coach_and_release_lets_it_go(env: LocalEnvironment) -> None:
    pid = _enrol(env)
    env.advance(timedelta(minutes=5))
    before = len(env.outbox.messages())
    answer = env.api("POST", f"{BASE}/{pid}/staff-messages", json_body={"body": "Hi, this is Ana.", "by": "Ana"})
    assert answer.status == 201, answer.body
    sent = env.outbox.messages()[before:]
    assert [(m.kind, m.body) for m in sent] == [(OutboundKind.STAFF, "Hi, this is Ana.")]
    state = env.api("GET", f"{BASE}/{pid}/state").body["result"]
    assert state["hold"]["reason"] == "staff" and state["hold"]["set_by"] == "staff: Ana"
    history = env.api("GET", f"{BASE}/{pid}/history").body["result"]["messages"]
    staff = [m for m in history if m["kind"] == "staff"]
    assert len(staff) == 1 and staff[0]["metadata"]["staff"] == "Ana"
    # While held, the coach sends nothing of its own: the daily prompt's firings are skipped
    env.api("POST", f"{BASE}/{pid}/state", json_body={"release_hold": True, "reason": "done", "by": "Ana"})
    assert env.api("GET", f"{BASE}/{pid}/state").body["result"]["hold"] is None
    assert [r["action"] for r in _audit(env, pid)] == ["enrol", "staff_message", "release"]


def test_a_staff_message_to_a_paused_participant_is_refused_saying_why(env: LocalEnvironment) -> None:
    pid = _enrol(env)
    env.api("PUT", f"{BASE}/{pid}", json_body={"status": "paused"})
    answer = env.api("POST", f"{BASE}/{pid}/staff-messages", json_body={"body": "Hi", "by": "Ana"})
    assert answer.status == 400 and "participant is paused" in answer.body["message"]


def test_the_cohort_check_names_each_rows_problems_and_writes_nothing(env: LocalEnvironment) -> None:
    _enrol(env, phone="+14165550100")
    rows = [
        {"phone_number": "+14165550101", "name": "A", "timezone": "America/Toronto"},
        {"phone_number": "not a number", "name": "B"},
        {"phone_number": "+14165550103", "timezone": "Mars/Olympus"},
        {"phone_number": "+1 416 555 0101"},  # row 1's number again
        {"phone_number": "+14165550100"},  # enrolled already
        {"phone_number": "+14165550106", "favourite": "x"},
    ]
    answer = env.api("POST", "/conversation/enrolment-checks", json_body={"rows": rows})
    assert answer.status == 200, answer.body
    problems = {r["row"]: r["problems"] for r in answer.body["result"]["rows"]}
    assert problems[1] == []
    assert problems[2] and problems[2][0].startswith("phone_number")
    assert problems[3] and "timezone" in problems[3][0]
    assert problems[4] == ["phone_number: the same number as row 1"]
    assert problems[5] == ["phone_number: already enrolled"]
    assert problems[6] and problems[6][0].startswith("favourite")
    listed = env.api("GET", BASE).body["result"]["participants"]
    assert len(listed) == 1  # nothing written


def test_an_erasure_record_outlives_the_participant_without_their_data(env: LocalEnvironment) -> None:
    pid = _enrol(env, by="Ana")
    env.api("PUT", f"{BASE}/{pid}", json_body={"status": "paused", "reason": "Sam asked, sister ill", "by": "Ana"})
    answer = env.api("DELETE", f"{BASE}/{pid}", query={"keep_transcript": "false", "by": "Ben", "reason": "asked"})
    assert answer.status == 200
    assert env.api("GET", f"{BASE}/{pid}").status == 404
    records = _audit(env, pid)
    assert [(r["action"], r["named"]) for r in records] == [("enrol", "Ana"), ("pause", "Ana"), ("erasure", "Ben")]
    assert records[1]["reason"] == "" and records[1]["redacted"] is True  # free text goes with the data
    assert "Sam" not in str(records)


def test_a_status_the_participant_already_has_is_no_action_in_the_audit(env: LocalEnvironment) -> None:
    pid = _enrol(env, by="Ana")
    env.api("PUT", f"{BASE}/{pid}", json_body={"status": "active", "by": "Ana"})
    env.api(
        "PUT",
        f"{BASE}/{pid}",
        json_body={
            "withdrawal": {"at": "2026-03-02T13:00:00Z", "version": "v1", "method": "email"},
            "by": "Ana",
            "reason": "by email",
        },
    )
    assert [(r["action"], r["reason"]) for r in _audit(env, pid)] == [("enrol", ""), ("withdraw", "by email")]


def test_a_staff_message_from_the_longest_name_is_sent(env: LocalEnvironment) -> None:
    pid = _enrol(env)
    answer = env.api("POST", f"{BASE}/{pid}/staff-messages", json_body={"body": "Hi", "by": "A" * 200})
    assert answer.status == 201, answer.body
    assert env.api("GET", f"{BASE}/{pid}/state").body["result"]["hold"]["set_by"] == ("staff: " + "A" * 200)[:200]
