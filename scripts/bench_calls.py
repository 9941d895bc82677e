"""AWS API calls per event, by service and operation.

Run: ``python -m scripts.bench_calls`` (``make bench``). Add ``--json`` for machine-readable rows.

Everything runs in one process on ``LocalEnvironment`` (moto, the real Lambda handlers, the scheduler
pump, a ``ScriptedLLM``), one scripted participant through six events, each measured in isolation:

1. the greeting (enrollment through the participants API, then the worker's greeting turn);
2. a plain reply turn (signed Twilio webhook, then the worker; the model answers with text);
3. a turn with four tool calls (save_user_profile, generate_habit_prompt + the generator's call,
   scheduler create, transition_state, then text);
4. the daily prompt delivery (the pump fires the recurring schedule the tool created);
5. the auto-feedback firing (five minutes later);
6. the reminder firing (five hours after the prompt; nobody answered).

How calls are counted: a hook is appended to botocore's ``BUILTIN_HANDLERS`` before any boto3
session exists, so every client (the app's, the Powertools idempotency layers', moto's own) carries
it. It listens to ``before-parameter-build``, which botocore emits once per API call with the call's
parameters (``before-call`` fires once per call too, but carries the serialized request instead);
botocore's own retries are not API calls of ours and are not counted. Each call is attributed to
the Lambda function whose module is on the call stack (``functions.inbound.worker`` …). Calls made by
no function are the harness: the SQS event-source polling (``ReceiveMessage``/``DeleteMessage``, done
by the Lambda service in AWS) and the scheduler pump (``ListSchedules``/``GetSchedule``, done by
EventBridge Scheduler in AWS); they are reported on one line and left out of the figures.

"state reads" are reads of the participant's flow-state item (the session's single ``Query``);
"state writes" are writes of that item (the session's ``TransactWriteItems``), with the number of them
conditional on ``version``. The target (docs/architecture.md#state): the function handling each event makes one
read and one conditional write, whatever the number of tool calls.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import botocore.handlers
import moto  # noqa: F401  (before any handler module: their import-time clients must be intercepted)

FUNCTION_MODULES = {
    "functions.enrollment.handler": "enrollment",
    "functions.inbound.webhook": "webhook",
    "functions.inbound.worker": "worker",
    "functions.scheduled_prompt.handler": "scheduled-prompt",
    "functions.timers.handler": "timers",
}
HARNESS = "harness"
SETUP = "(setup)"
START = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)  # Monday 08:00 in Toronto
ZONE = "America/Toronto"
PHONE = "+14165550142"


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


# --- counting ---------------------------------------------------------------------------------------
@dataclass(frozen=True, order=True)
class Call:
    function: str  # a FUNCTION_MODULES label, or HARNESS
    service: str  # botocore service name: dynamodb, sqs, scheduler, …
    operation: str
    table: str  # "main" | "idempotency" | "" (not DynamoDB)
    state_read: bool = False
    state_write: bool = False
    conditional_on_version: bool = False


def _calling_function() -> str:
    """The Lambda function whose handler module is on the stack (the outermost one), else harness."""
    frame = sys._getframe(2)
    label = HARNESS
    while frame is not None:
        label = FUNCTION_MODULES.get(frame.f_globals.get("__name__", ""), label)
        frame = frame.f_back
    return label


def _values(params: dict[str, Any]) -> list[str]:
    return [str(v.get("S", "")) for v in params.get("ExpressionAttributeValues", {}).values()]


def _is_flow_put(action: dict[str, Any]) -> bool:
    put = action.get("Put") or {}
    return str(put.get("Item", {}).get("sk", {}).get("S", "")).startswith("FLOW#")


def _on_version(condition: dict[str, Any]) -> bool:
    names = condition.get("ExpressionAttributeNames", {})
    expression = condition.get("ConditionExpression", "")
    return "version" in expression or any(v == "version" for v in names.values())


class CallMeter:
    """Records every AWS API call of the process, tagged with the current event and function."""

    def __init__(self, main_table: str, idempotency_table: str) -> None:
        self.main_table = main_table
        self.idempotency_table = idempotency_table
        self.event: str | None = None
        self.calls: dict[str, list[Call]] = {}
        self.outside = 0  # calls made outside any measured event (there should be none)

    def install(self) -> None:
        """Must run before the first boto3 session is created (moto gives each mock a fresh one)."""
        botocore.handlers.BUILTIN_HANDLERS.append(("before-parameter-build", self._hook))

    @contextmanager
    def measure(self, event: str) -> Iterator[list[Call]]:
        calls = self.calls.setdefault(event, [])
        self.event = event
        try:
            yield calls
        finally:
            self.event = None

    def _hook(self, params: dict[str, Any], model: Any, **_kwargs: Any) -> None:
        call = self._classify(model.service_model.service_name, model.name, params, _calling_function())
        if self.event is None:
            self.outside += 1
        else:
            self.calls[self.event].append(call)

    def _table(self, params: dict[str, Any]) -> str:
        names = {params.get("TableName")}
        for action in params.get("TransactItems", []):
            names |= {body.get("TableName") for body in action.values()}
        names |= set(params.get("RequestItems", {}))
        names.discard(None)
        if names == {self.idempotency_table}:
            return "idempotency"
        if names == {self.main_table}:
            return "main"
        return ",".join(sorted(str(n) for n in names))

    def _classify(self, service: str, operation: str, params: dict[str, Any], function: str) -> Call:
        if service != "dynamodb":
            return Call(function, service, operation, "")
        table = self._table(params)
        read = write = conditional = False
        if table == "main":
            if operation == "Query":
                # The session load; a transcript listing (begins_with MSG#) or a GSI listing is not one.
                read = "IndexName" not in params and not any(v.startswith("MSG#") for v in _values(params))
            elif operation == "GetItem":
                read = str(params.get("Key", {}).get("sk", {}).get("S", "")).startswith("FLOW#")
            elif operation == "TransactWriteItems":
                flow_puts = [a["Put"] for a in params.get("TransactItems", []) if _is_flow_put(a)]
                write = bool(flow_puts)
                conditional = any(_on_version(put) for put in flow_puts)
            elif operation in ("PutItem", "UpdateItem"):
                key = params.get("Item") or params.get("Key") or {}
                write = str(key.get("sk", {}).get("S", "")).startswith("FLOW#")
                conditional = write and _on_version(params)
        return Call(function, service, operation, table, read, write, conditional)


# --- the scenario -----------------------------------------------------------------------------------
@dataclass
class Row:
    event: str
    function: str
    calls: Counter[tuple[str, str, str]] = field(default_factory=Counter)  # (service, table, operation)
    state_reads: int = 0
    state_writes: int = 0
    conditional_writes: int = 0
    sent: int = 0
    handles_event: bool = False  # the function that handles the event (not the webhook/API front door)

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    def ops(self, service: str, table: str = "") -> str:
        items = sorted((op, n) for (s, t, op), n in self.calls.items() if s == service and t == table)
        return ", ".join(f"{op} {n}" for op, n in items) or "-"

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "function": self.function,
            "calls": {f"{s}{':' + t if t else ''}.{op}": n for (s, t, op), n in sorted(self.calls.items())},
            "total": self.total,
            "state_reads": self.state_reads,
            "state_writes": self.state_writes,
            "conditional_state_writes": self.conditional_writes,
            "messages_sent": self.sent,
        }


def _script() -> Any:
    from promptpipe.adapters.scripted_llm import ScriptedLLM

    return ScriptedLLM(
        [
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
    )


class Scenario:
    """One participant on a fresh ``LocalEnvironment``; each step is one measured event."""

    def __init__(self, meter: CallMeter) -> None:
        from promptpipe.local.environment import LocalEnvironment, local_settings

        self.meter = meter
        self.llm = _script()
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
        meter.idempotency_table = self.env.settings.idempotency_table_name
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
        self.llm.assert_exhausted()
        if self.sent != EXPECTED_SENT:
            raise RuntimeError(f"unexpected messages per event: {self.sent}")


EVENT_FUNCTIONS = {
    "greeting": "worker",
    "plain reply turn": "worker",
    "turn with 4 tool calls": "worker",
    "daily prompt delivery": "scheduled-prompt",
    "auto-feedback firing": "timers",
    "reminder firing": "timers",
}
# Messages the participant receives per event: the reply; the prompt and the intensity poll; none
# (auto-feedback only moves the conversation to FEEDBACK); the reminder.
EXPECTED_SENT = {
    "greeting": 1,
    "plain reply turn": 1,
    "turn with 4 tool calls": 1,
    "daily prompt delivery": 2,
    "auto-feedback firing": 0,
    "reminder firing": 1,
}
FUNCTION_ORDER = ("enrollment", "webhook", "worker", "scheduled-prompt", "timers")


def collect() -> tuple[list[Row], list[Call]]:
    meter = CallMeter(main_table="", idempotency_table="")
    meter.install()
    scenario = Scenario(meter)
    try:
        scenario.run()
    finally:
        scenario.close()
    rows: list[Row] = []
    harness: list[Call] = []
    for event, calls in meter.calls.items():
        by_function: dict[str, Row] = {}
        for call in calls:
            if call.function == HARNESS:
                harness.append(call)
                continue
            row = by_function.setdefault(call.function, Row(event, call.function))
            row.calls[(call.service, call.table, call.operation)] += 1
            row.state_reads += call.state_read
            row.state_writes += call.state_write
            row.conditional_writes += call.conditional_on_version
        for function in sorted(by_function, key=FUNCTION_ORDER.index):
            row = by_function[function]
            row.handles_event = EVENT_FUNCTIONS[event] == function
            if row.handles_event:
                row.sent = scenario.sent[event]
            rows.append(row)
    if meter.outside:
        raise RuntimeError(f"{meter.outside} AWS calls were made outside any measured step")
    return rows, harness


# --- output -----------------------------------------------------------------------------------------
def _markdown(header: list[str], lines: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    out = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"]
    out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    out += ["| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |" for line in lines]
    return out


def render(rows: list[Row], harness: list[Call]) -> str:
    header = [
        "event",
        "function",
        "DynamoDB main table",
        "DynamoDB idempotency table",
        "SQS",
        "Scheduler",
        "total",
        "state reads",
        "state writes (cond.)",
    ]
    lines = []
    for row in rows:
        function = row.function if row.handles_event else f"({row.function})"
        writes = f"{row.state_writes} ({row.conditional_writes})"
        lines.append(
            [
                row.event,
                function,
                row.ops("dynamodb", "main"),
                row.ops("dynamodb", "idempotency"),
                row.ops("sqs"),
                row.ops("scheduler"),
                str(row.total),
                str(row.state_reads),
                writes,
            ]
        )
    out = ["AWS API calls per event (LocalEnvironment: moto, real handlers, ScriptedLLM)", ""]
    out += _markdown(header, lines)
    out += [
        "",
        "Rows in (parentheses): the front door of the event (participants API, webhook), not the function",
        "that handles it. state writes (cond.): writes of the flow-state item (how many conditional on version).",
    ]
    counts = Counter((c.service, c.operation) for c in harness)
    listed = ", ".join(f"{s}.{op} {n}" for (s, op), n in sorted(counts.items()))
    out.append(f"Not counted, the harness during these events (SQS event-source polling, scheduler pump): {listed}.")
    out += ["", "Target: one state read and one conditional state write per event, whatever the tool calls."]
    for row in rows:
        if row.handles_event:
            ok = row.state_reads == 1 and row.state_writes == 1 and row.conditional_writes == 1
            out.append(
                f"  {row.event:24s} {row.function:17s} reads {row.state_reads}, writes {row.state_writes} "
                f"(conditional {row.conditional_writes}), messages sent {row.sent}: {'OK' if ok else 'MISSED'}"
            )
    return "\n".join(out)


def target_met(rows: list[Row]) -> bool:
    handling = [r for r in rows if r.handles_event]
    return len(handling) == len(EVENT_FUNCTIONS) and all(
        r.state_reads == 1 and r.state_writes == 1 and r.conditional_writes == 1 for r in handling
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    prepare_environment()
    rows, harness = collect()
    if args.json:
        print(json.dumps({"rows": [r.to_json() for r in rows], "target_met": target_met(rows)}, indent=2))
    else:
        print(render(rows, harness))
    return 0 if target_met(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
