"""The daily study sweep in the stack (docs/studies.md, "Every day has its row"): one recurring
schedule that invokes the timers function once a day with the study sweep's input."""

from __future__ import annotations

import json

from infra import constants as c
from promptpipe.models.sweeps import StudySweepRequest
from tests.infra.synth import PREFIX, Synth, render


def test_the_study_sweep_invokes_the_timers_function_once_a_day(synth: Synth) -> None:
    schedule = synth.schedule(f"{PREFIX}-study-sweep")
    assert schedule["ScheduleExpression"] == c.STUDY_SWEEP_CRON
    assert schedule["ScheduleExpression"].startswith("cron(") and schedule["ScheduleExpression"].endswith("* * ? *)")
    assert schedule["FlexibleTimeWindow"] == {"Mode": "OFF"}
    target = schedule["Target"]
    assert render(target["Arn"]).endswith(f"function:{PREFIX}-timers")
    # the payload the handler dispatches on, and one the model accepts
    assert json.loads(target["Input"]) == {"sweep": "study"}
    StudySweepRequest.model_validate_json(target["Input"])
    assert target["RetryPolicy"]["MaximumRetryAttempts"] == 0  # tomorrow's run redoes a failed one
    assert "Arn" in target["DeadLetterConfig"]
