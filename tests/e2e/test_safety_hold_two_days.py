"""A crisis message, then two days on hold, end to end on the local stack (docs/safety.md).

Enrollment through the participants API, every message through a signed Twilio webhook, turns through
the SQS FIFO worker, daily prompts through the scheduler pump firing the real handlers on moto, the
offline coach as the model (counted). A participant with a US number finishes intake; then, in
FEEDBACK (the sub-state intake leads to) or back in INTAKE (an operator's override), they text a
crisis message one evening. They get the safety reply naming 988 and are held: for two
days their daily schedule stays live, both firings are skipped and recorded, no model is called and
nothing is sent. A coordinator releases the hold through the API and the next prompt arrives.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from promptpipe.adapters.aws import aws_client
from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.local.demo import send_sms
from promptpipe.ports import LLM
from tests.support.logs import Captured

ZONE = ZoneInfo("America/New_York")
DAY0 = date(2026, 3, 2)
PHONE = "+1 212 555 0147"
INTAKE = (
    ("08:02", "Hi! I'd like to exercise more."),
    ("08:03", "I want to feel more energetic during the day."),
    ("08:05", "Around 7:30am works for me."),
    ("08:06", "After my morning coffee."),
    ("08:07", "Yes, please."),
)


class CountingLLM:
    def __init__(self, inner: LLM) -> None:
        self.inner, self.calls = inner, 0

    def complete(self, request: Any) -> Any:
        self.calls += 1
        return self.inner.complete(request)


def at_local(day: int, hhmm: str) -> datetime:
    base = DAY0 + timedelta(days=day)
    hour, minute = (int(x) for x in hhmm.split(":"))
    return datetime(base.year, base.month, base.day, hour, minute, tzinfo=ZONE).astimezone(UTC)


def history(env: Any, pid: str) -> list[dict[str, Any]]:
    page = env.api("GET", f"/conversation/participants/{pid}/history", query={"limit": "500"})
    assert page.status == 200, page.body
    return list(page.body["result"]["messages"])


@pytest.mark.parametrize("phase", ["FEEDBACK", "INTAKE"])
def test_a_crisis_holds_the_participant_for_two_days_of_firings_in_either_phase(
    local_env_factory: Any, logged: Captured, phase: str
) -> None:
    llm = CountingLLM(OfflineCoach())
    env = local_env_factory(llm=llm, start=at_local(0, "08:00"), seed=5)
    enrolled = env.api(
        "POST",
        "/conversation/participants",
        json_body={"phone_number": PHONE, "name": "Ana", "timezone": "America/New_York"},
    )
    assert enrolled.status == 201, enrolled.body
    pid, phone = enrolled.body["result"]["id"], enrolled.body["result"]["phone_number"]
    for index, (hhmm, text) in enumerate(INTAKE):
        env.advance_to(at_local(0, hhmm))
        assert send_sms(env, phone, text, f"SMhold{index:04d}") == 200
    if phase == "INTAKE":  # back to intake, the daily schedule kept
        moved = env.api(
            "POST",
            f"/conversation/participants/{pid}/state",
            json_body={"sub_state": "INTAKE", "reason": "redo the anchor"},
        )
        assert moved.status == 200 and moved.body["result"]["sub_state"] == "INTAKE"
    state = env.api("GET", f"/conversation/participants/{pid}/state").body["result"]
    assert state["sub_state"] == phase and len(state["schedules"]) == 1 and state["hold"] is None

    # The evening of day 0: a crisis message, as people write them
    env.advance_to(at_local(0, "21:40"))
    sent_before, calls_before = len(env.messages(pid)), llm.calls
    assert send_sms(env, phone, "whats the point anymore, im done with everything and everyone", "SMcrisis") == 200
    [safety] = env.messages(pid)[sent_before:]
    assert "988" in safety.body_text and "not watched around the clock" in safety.body_text
    assert llm.calls == calls_before  # the screen answered, not the model

    # The team is alerted (locally: a WARNING line without the words or the number)
    alerts = [r for r in logged.records if "SAFETY ALERT" in r.getMessage()]
    assert alerts and all("end" not in r.getMessage() and "5550147" not in str(r.__dict__) for r in alerts)

    # Held, with reason, start and who set it, in the state and in the needs-a-person list
    state = env.api("GET", f"/conversation/participants/{pid}/state").body["result"]
    assert state["sub_state"] == phase
    assert state["hold"]["reason"] == "safety" and state["hold"]["set_by"] == "safety screen"
    assert state["hold"]["since"].startswith(at_local(0, "21:40").strftime("%Y-%m-%dT%H:%M"))
    rows = env.api("GET", "/conversation/participant-rows", query={"needs_person": "true"}).body["result"]["rows"]
    assert [(r["participant"]["id"], r["hold_reason"]) for r in rows] == [(pid, "safety")]

    # Two days of scheduled firings: kept, skipped, recorded; no model call, nothing sent
    calls_held, sent_held = llm.calls, len(env.messages(pid))
    env.advance_to(at_local(2, "21:00"))
    assert llm.calls == calls_held and len(env.messages(pid)) == sent_held
    fired = [e.kind for e in env.timeline if e.participant_id == pid and e.actor == "timer"]
    assert fired == ["daily_prompt", "daily_prompt"]  # day 1 and day 2, 07:20
    skipped = [m["content"] for m in history(env, pid) if m["kind"] == "skipped"]
    assert skipped == ["daily prompt skipped: on hold (safety)"] * 2
    scheduler = aws_client("scheduler", env.settings)
    live = [s["Name"] for s in scheduler.list_schedules(GroupName=env.settings.schedule_group_name)["Schedules"]]
    assert [name for name in live if pid in name] == [state["schedules"][0]["timer_id"]]

    # A coordinator releases the hold through the API; the next prompt goes out again
    released = env.api(
        "POST",
        f"/conversation/participants/{pid}/state",
        json_body={"release_hold": True, "reason": "called Ana; she is safe and wants to continue"},
    )
    assert released.status == 200 and released.body["result"]["hold"] is None
    assert any("hold released (safety)" in m["content"] for m in history(env, pid) if m["kind"] == "override")
    env.advance_to(at_local(3, "09:00"))
    assert [m.kind for m in env.messages(pid)[sent_held:]][:1] == ["daily_prompt"]
