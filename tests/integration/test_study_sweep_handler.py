"""The deployed daily study sweep (docs/studies.md, "Every day has its row"): the timers function
invoked with the study sweep schedule's input, on the local stack (moto DynamoDB and Scheduler),
writes each past study day a participant had no decision for, once however often it fires."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from infra import constants as c
from promptpipe.local.lambda_runtime import FakeLambdaContext
from promptpipe.models.decision import UnavailableReason
from promptpipe.usecases.studies import load_study, with_study
from tests.support import enroll_over_api

STUDIES = Path(__file__).resolve().parents[2] / "prompts" / "studies"


def _sweep(env: Any) -> dict[str, Any]:
    from functions.timers.handler import handler

    event = json.loads(c.STUDY_SWEEP_INPUT)  # what the stack's schedule sends
    result: dict[str, Any] = handler(event, FakeLambdaContext(function_name="promptpipe-timers"))
    return result


def test_the_study_sweep_handler_writes_each_missing_day_once(local_env_factory: Any) -> None:
    env = local_env_factory()
    with_study(env.app, load_study(STUDIES, "example-mrt"))
    paused = enroll_over_api(env, "+14155550101", timezone="America/Toronto")
    response = env.api("PUT", f"/conversation/participants/{paused}", json_body={"status": "paused"})
    assert response.status == 200, response.body
    env.clock.advance(timedelta(days=3))
    before = len(env.messages(paused))  # the greeting

    first = _sweep(env)
    again = _sweep(env)  # the schedule fired twice the same day (an at-least-once delivery)

    rows = env.app.decisions.for_participant(paused)
    assert [r.study_day for r in rows] == [1, 2, 3]
    assert all(not r.available and r.unavailable_reason is UnavailableReason.PAUSED for r in rows)
    assert first["unavailable_rows"] == 3 and first["participants"] == 1
    assert again["unavailable_rows"] == 0
    assert len(env.app.decisions.all("example-mrt")) == 3  # the index sees exactly those rows
    assert len(env.messages(paused)) == before  # nothing is sent to a paused participant


def test_the_study_sweep_handler_without_a_study_does_nothing(local_env_factory: Any) -> None:
    env = local_env_factory()
    with_study(env.app, None)
    enroll_over_api(env, "+14155550102")
    env.clock.advance(timedelta(days=2))
    assert _sweep(env) == {
        "participants": 0,
        "unavailable_rows": 0,
        "outcomes_closed": 0,
        "ended": 0,
        "continued": False,
    }


class Deadline(FakeLambdaContext):
    """The Lambda context of a run near its 30 s: each reading finds 7 s less left."""

    def get_remaining_time_in_millis(self) -> int:
        self.remaining_ms -= 7_000
        return self.remaining_ms


def test_a_sweep_out_of_time_continues_through_a_one_shot_schedule_and_reaches_everyone(
    local_env_factory: Any,
) -> None:
    from functions.timers.handler import handler

    env = local_env_factory()
    with_study(env.app, load_study(STUDIES, "example-mrt"))
    ids = []
    for n in range(5):
        pid = enroll_over_api(env, f"+1415555{n:04d}", timezone="America/Toronto")
        assert env.api("PUT", f"/conversation/participants/{pid}", json_body={"status": "paused"}).status == 200
        ids.append(pid)
    env.clock.advance(timedelta(days=3))

    first = handler(json.loads(c.STUDY_SWEEP_INPUT), Deadline(function_name="promptpipe-timers", remaining_ms=30_000))

    assert first["continued"] is True and first["participants"] == 3  # 23 s, 16 s, then 9 s: under the reserve
    swept = {pid for pid in ids if env.app.decisions.for_participant(pid)}
    assert len(swept) == 3
    # The continuation is a one-shot of the timers function in moto's scheduler; the local pump
    # fires it a minute later, with the cursor, and it sweeps the rest.
    firings = env.advance(timedelta(minutes=2))
    [continuation] = [f for f in firings if f.name.startswith("sweep-study-")]
    assert "timers" in continuation.target_arn
    assert all([r.study_day for r in env.app.decisions.for_participant(pid)] == [1, 2, 3] for pid in ids)
    assert len(env.app.decisions.all("example-mrt")) == 3 * len(ids)  # each row once
    assert _sweep(env)["unavailable_rows"] == 0  # a second run the same day writes nothing
