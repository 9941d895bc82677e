"""The scripted participant of the benchmarks: one participant on a fresh ``LocalEnvironment``, each
step one event (``scripts/bench/calls.py`` counts its AWS calls, ``scripts/bench/tokens.py`` its
model tokens)."""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import moto  # noqa: F401  (before any handler module: their import-time clients must be intercepted)

from scripts.bench.call_meter import CallMeter

SETUP = "(setup)"
START = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)  # Monday 08:00 in Toronto
ZONE = "America/Toronto"
PHONE = "+14165550142"

EXTENDED_EVENTS = ("turn with a delayed transition", "delayed transition firing", "STOP")

# Messages the participant receives per event: the reply; the prompt and the intensity poll; none
# (auto-feedback only moves the conversation to FEEDBACK); the reminder; the reply; none; the
# opt-out confirmation.
EXPECTED_SENT = {
    "greeting": 1,
    "plain reply turn": 1,
    "turn with 4 tool calls": 1,
    "daily prompt delivery": 2,
    "auto-feedback firing": 0,
    "reminder firing": 1,
    "turn with a delayed transition": 1,
    "delayed transition firing": 0,
    "STOP": 1,
}


def prepare_environment() -> None:
    """Before any boto3 session or Powertools object exists: dummy credentials, a region, quiet logs."""
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    os.environ.setdefault("AWS_REGION", "us-east-1")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SECURITY_TOKEN", "AWS_SESSION_TOKEN"):
        os.environ[name] = "testing"
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "OPENAI_API_KEY"):
        os.environ.pop(name, None)
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    logging.basicConfig(level=logging.ERROR)
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    from aws_lambda_powertools.metrics.provider import cold_start

    cold_start.is_cold_start = False  # Powertools emits the ColdStart metric even when disabled


def _script(extended: bool = False) -> Any:
    from promptpipe.adapters.scripted_llm import ScriptedLLM

    steps = [
        # 1. greeting
        ScriptedLLM.text("Hi Sam! I'm your habit coach. What would you like to do more of?"),
        # 2. plain reply turn
        ScriptedLLM.text("Great goal. Why does moving more matter to you?"),
        # 3. four tool calls, then text
        ScriptedLLM.tool_call(
            "save_user_profile",
            {
                "habit_domain": "movement",
                "motivational_frame": "more energy during the day",
                "preferred_time": "07:30",
                "prompt_anchor": "after my morning coffee",
            },
        ),
        ScriptedLLM.tool_call("generate_habit_prompt", {"delivery_mode": "immediate"}),
        ScriptedLLM.text("After your morning coffee, stretch for one minute."),  # the generator's call
        ScriptedLLM.tool_call("scheduler", {"action": "create", "type": "fixed", "fixed_time": "07:30"}),
        ScriptedLLM.tool_call("transition_state", {"target_state": "FEEDBACK"}),
        ScriptedLLM.text("All set: a prompt every day at 07:30. First one: stretch after coffee!"),
        # 4. daily prompt delivery: the generator's call
        ScriptedLLM.text("After your coffee, take a two-minute walk around the block."),
    ]
    if extended:
        steps += [
            # 7. a turn that moves the conversation back to INTAKE in 30 minutes
            ScriptedLLM.tool_call("transition_state", {"target_state": "INTAKE", "delay_minutes": 30}),
            ScriptedLLM.text("Sure, in half an hour we can revisit your habit."),
        ]
    return ScriptedLLM(steps)


class Scenario:
    """One participant on a fresh ``LocalEnvironment``; each step is one measured event.

    ``extended`` adds events 7-9 (delayed transition, its firing, STOP); ``scripts/bench/tokens.py``
    plays the first six only, with its own model."""

    def __init__(self, meter: CallMeter, *, extended: bool = False) -> None:
        from promptpipe.local.environment import LocalEnvironment, local_settings

        self.meter = meter
        self.extended = extended
        self.llm = _script(extended) if extended else _script()
        settings = local_settings(
            offline_coach=False,
            openai_api_key=None,
            daily_prompt_reminder_delay=timedelta(hours=5),
            auto_feedback_after_prompt_enabled=True,
            feedback_timers_enabled=False,
        )
        with self.setup():
            self.env = LocalEnvironment(start=START, llm=self.llm, seed=0, settings=settings)
        meter.main_table = self.env.settings.table_name
        self.participant_id = ""
        self.sent: dict[str, int] = {}

    def close(self) -> None:
        self.env.close()

    @contextmanager
    def setup(self) -> Iterator[None]:
        """Calls that are part of no measured event (resources, operator override, checks)."""
        with self.meter.measure(SETUP):
            yield
        self.meter.calls.pop(SETUP)

    def state(self) -> dict[str, Any]:
        with self.setup():
            response = self.env.api("GET", f"/conversation/participants/{self.participant_id}/state")
        return dict(response.body["result"])

    def live_schedules(self) -> list[str]:
        with self.setup():
            return sorted(self.env.app.timers.list_names(self.participant_id))

    @contextmanager
    def event(self, name: str) -> Iterator[None]:
        before = len(self.env.messages())
        with self.meter.measure(name):
            yield
        self.sent[name] = len(self.env.messages()) - before

    def sms(self, text: str, message_id: str) -> None:
        from promptpipe.local.demo import send_sms

        status = send_sms(self.env, PHONE, text, message_id)
        if status != 200:
            raise RuntimeError(f"webhook answered {status}")

    def fire_next(self, expected_kind: str) -> None:
        due = self.env.pump.next_due()
        if due is None:
            raise RuntimeError(f"nothing scheduled; expected {expected_kind}")
        firings = self.env.advance_to(due)
        kinds = [f.kind for f in firings]
        if kinds != [expected_kind]:
            raise RuntimeError(f"expected one {expected_kind} firing, got {kinds}")

    def run(self) -> None:
        env = self.env
        with self.event("greeting"):
            response = env.api(
                "POST",
                "/conversation/participants",
                json_body={"phone_number": PHONE, "name": "Sam", "timezone": ZONE, "background": "Office worker"},
            )
        if response.status != 201:
            raise RuntimeError(f"enrollment failed: {response.status} {response.body}")
        self.participant_id = response.body["result"]["id"]

        with self.event("plain reply turn"):
            self.sms("Hi! I'd like to exercise more.", "SMbench0001")
        with self.event("turn with 4 tool calls"):
            self.sms("Mornings at 7:30, after my coffee.", "SMbench0002")

        state = self.state()
        if state["sub_state"] != "FEEDBACK" or len(state["schedules"]) != 1:
            raise RuntimeError(f"the four tools did not all take effect: {state}")

        # Not measured: back to INTAKE, so that the auto-feedback firing below really transitions.
        with self.setup():
            override = env.api(
                "POST",
                f"/conversation/participants/{self.participant_id}/state",
                json_body={"sub_state": "INTAKE", "reason": "benchmark setup"},
            )
        if override.status != 200:
            raise RuntimeError(f"override failed: {override.status} {override.body}")

        with self.event("daily prompt delivery"):
            self.fire_next("daily_prompt")
        with self.event("auto-feedback firing"):
            self.fire_next("auto_feedback")
        if self.state()["sub_state"] != "FEEDBACK":
            raise RuntimeError("the auto-feedback firing did not move the conversation to FEEDBACK")
        with self.event("reminder firing"):
            self.fire_next("daily_prompt_reminder")
        if self.extended:
            self._run_extended()
        self.llm.assert_exhausted()
        expected = {k: v for k, v in EXPECTED_SENT.items() if self.extended or k not in EXTENDED_EVENTS}
        if self.sent != expected:
            raise RuntimeError(f"unexpected messages per event: {self.sent}")

    def _run_extended(self) -> None:
        with self.event("turn with a delayed transition"):
            self.sms("Can we rethink the habit later?", "SMbench0003")
        if not self.state()["pending_timers"]:
            raise RuntimeError("the delayed transition armed no timer")
        with self.event("delayed transition firing"):
            self.fire_next("state_transition")
        if self.state()["sub_state"] != "INTAKE":
            raise RuntimeError("the delayed transition did not move the conversation to INTAKE")
        with self.event("STOP"):
            self.sms("STOP", "SMbench0004")
        if self.state()["status"] != "paused" or self.live_schedules():
            raise RuntimeError("STOP did not pause the participant and delete every schedule")
