"""AWS API calls per event, by service and operation, and the size of the flow-state item.

Run: ``python -m scripts.bench.calls`` (``make bench``). Add ``--json`` for machine-readable rows,
``--days 1,7,30`` to choose the simulated days of the item-size figure.

Everything runs in one process on ``LocalEnvironment`` (moto, the real Lambda handlers, the scheduler
pump, a ``ScriptedLLM``), one scripted participant through nine events, each measured in isolation:

1. the greeting (enrollment through the participants API, then the worker's greeting turn);
2. a plain reply turn (signed Twilio webhook, then the worker; the model answers with text);
3. a turn with four tool calls (save_user_profile, generate_habit_prompt + the generator's call,
   scheduler create, transition_state, then text);
4. the daily prompt delivery (the pump fires the recurring schedule the tool created);
5. the auto-feedback firing (five minutes later);
6. the reminder firing (five hours after the prompt; nobody answered);
7. a turn whose model calls transition_state with a 30-minute delay (a one-shot is armed);
8. the delayed transition firing;
9. STOP (the webhook pauses the participant and confirms; the worker deletes their schedules, queued
   for it because the webhook has no Scheduler rights).

How calls are counted: a hook is appended to botocore's ``BUILTIN_HANDLERS`` before any boto3
session exists, so every client (the app's, moto's own) carries it. It listens to
``before-parameter-build``, which botocore emits once per API call with the call's parameters;
botocore's own retries are not API calls of ours and are not counted. Each call is attributed to the
Lambda function whose module is on the call stack (``functions.inbound.worker`` …). Calls made by no
function are the harness: the SQS event-source polling (``ReceiveMessage``/``DeleteMessage``, done by
the Lambda service in AWS) and the scheduler pump (``ListSchedules``/``GetSchedule``, done by
EventBridge Scheduler in AWS); they are reported on one line and left out of the figures.

The target (docs/architecture.md#state): the function handling each event makes exactly two DynamoDB
calls — one ``Query`` (the state) and one ``TransactWriteItems`` conditional on ``version`` — plus, for
STOP, the webhook's phone-claim ``GetItem`` that every inbound message costs; and only the scheduler
calls that the event's effects need (``EXPECTED_SCHEDULER``). The script exits 1 when any of this is
missed.

The item size: one participant (offline coach) lives 30 days on a fresh ``LocalEnvironment`` (intake,
then a daily answer in a fixed rotation, one missed day in five), and the flow-state item is read
back after days 1, 7 and 30 and sized as DynamoDB sizes items (``dynamodb_item_size``: UTF-8 bytes of
attribute names and string values, numbers by significant digits, 3 bytes per map and 1 per map
element). Target: at most 8 KB after 30 days; the per-attribute breakdown shows what dominates.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import moto  # noqa: F401  (before any handler module: their import-time clients must be intercepted)

from scripts.bench.call_meter import CATALOG, HARNESS, Call, CallMeter
from scripts.bench.item_size import (
    ITEM_TARGET_BYTES,
    ItemSize,
    _markdown,
    dynamodb_item_size,
    item_breakdown,
    render_sizes,
)
from scripts.bench.scenario import PHONE, START, ZONE, Scenario, prepare_environment

DEFAULT_DAYS = (1, 7, 30)


@dataclass
class Row:
    event: str
    function: str
    calls: Counter[tuple[str, str, str]] = field(default_factory=Counter)  # (service, table, operation)
    state_reads: int = 0
    state_writes: int = 0
    conditional_writes: int = 0
    write_units: int = 0  # on the participant's items (not the flow catalog)
    event_item_bytes: int = 0
    sent: int = 0
    handles_event: bool = False  # the function that handles the event (not the webhook/API front door)

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    def counts(self, service: str) -> Counter[str]:
        """Calls per operation on ``service``; for DynamoDB, the participant's items only (not the
        flow catalog, read once a minute per process at most and seeded once per deployment)."""
        found: Counter[str] = Counter()
        for (s, t, op), n in self.calls.items():
            if s == service and t != CATALOG:
                found[op] += n
        return found

    def ops(self, service: str, table: str | None = None, *, exclude: str | None = None) -> str:
        items = sorted(
            (op, n)
            for (s, t, op), n in self.calls.items()
            if s == service and (table is None or t == table) and t != exclude
        )
        return ", ".join(f"{op} {n}" for op, n in items) or "-"

    def dynamodb_calls(self) -> int:
        return sum(self.counts("dynamodb").values())

    def scheduler_calls(self) -> int:
        return sum(self.counts("scheduler").values())

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "function": self.function,
            "calls": {f"{s}{':' + t if t else ''}.{op}": n for (s, t, op), n in sorted(self.calls.items())},
            "total": self.total,
            "dynamodb_calls": self.dynamodb_calls(),
            "scheduler_calls": self.scheduler_calls(),
            "state_reads": self.state_reads,
            "state_writes": self.state_writes,
            "conditional_state_writes": self.conditional_writes,
            "write_units": self.write_units,
            "event_item_bytes": self.event_item_bytes,
            "messages_sent": self.sent,
        }


EVENT_FUNCTIONS = {
    "greeting": "worker",
    "plain reply turn": "worker",
    "turn with 4 tool calls": "worker",
    "daily prompt delivery": "scheduled-prompt",
    "auto-feedback firing": "timers",
    "reminder firing": "timers",
    "turn with a delayed transition": "worker",
    "delayed transition firing": "timers",
    "STOP": "webhook",
}

STATE_CALLS = Counter({"Query": 1, "TransactWriteItems": 1})

# DynamoDB calls of the function handling each event: the state's Query and conditional transaction;
# the webhook also looks the sender's phone claim up (GetItem) before it knows whose state to load.
EXPECTED_DYNAMODB = {event: STATE_CALLS for event in EVENT_FUNCTIONS} | {"STOP": STATE_CALLS + Counter({"GetItem": 1})}
# A participant's message is in the record from the worker's first receive, before the model: one
# PutItem per inbound message (docs/reliability.md, "The record under faults"; the turn's commit
# removes it in its own transaction, no call more).
INBOUND_ACCEPTED = Counter({"PutItem": 1})
ACCEPTING = ("plain reply turn", "turn with 4 tool calls", "turn with a delayed transition")

# Scheduler calls the event's effects need, and why.
EXPECTED_SCHEDULER: dict[str, tuple[Counter[str], str]] = {
    "greeting": (Counter(), "none"),
    "plain reply turn": (Counter(), "none"),
    "turn with 4 tool calls": (Counter({"CreateSchedule": 1}), "the daily prompt's cron"),
    "daily prompt delivery": (Counter({"CreateSchedule": 2}), "reminder and auto-feedback one-shots"),
    "auto-feedback firing": (Counter(), "none (it fired: the scheduler deletes it)"),
    "reminder firing": (Counter(), "none (it fired: the scheduler deletes it)"),
    "turn with a delayed transition": (Counter({"CreateSchedule": 1}), "the transition one-shot"),
    "delayed transition firing": (Counter(), "none (it fired: the scheduler deletes it)"),
    "STOP": (Counter({"DeleteSchedule": 1}), "the daily prompt's cron (pause), by the worker"),
}

FUNCTION_ORDER = ("enrollment", "webhook", "worker", "scheduled-prompt", "timers")


def collect(*, extended: bool = True) -> tuple[list[Row], list[Call]]:
    meter = CallMeter(main_table="")
    meter.install()
    scenario = Scenario(meter, extended=extended)
    try:
        scenario.run()
    finally:
        scenario.close()
        meter.paused = True
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
            row.write_units += call.write_units
            row.event_item_bytes += call.event_item_bytes
        if EVENT_FUNCTIONS[event] not in by_function:
            by_function[EVENT_FUNCTIONS[event]] = Row(event, EVENT_FUNCTIONS[event])
        for function in sorted(by_function, key=FUNCTION_ORDER.index):
            row = by_function[function]
            row.handles_event = EVENT_FUNCTIONS[event] == function
            if row.handles_event:
                row.sent = scenario.sent[event]
            rows.append(row)
    if meter.outside:
        raise RuntimeError(f"{meter.outside} AWS calls were made outside any measured step")
    return rows, harness


def outcome_write(messages: int) -> Counter[str]:
    """The one write, after sending, of the delivery outcomes of an event's messages (docs/architecture.md,
    "Delivery outcomes"): a TransactWriteItems of the outcomes' updates and, for each message the
    provider accepted (every one here), the pointer from its provider id that a later delivered or
    read report follows (docs/reliability.md, "The record under faults"). An UpdateItem alone only
    for a single message not sent (no pointer), which these events do not have."""
    if messages == 0:
        return Counter()
    return Counter({"TransactWriteItems": 1})


def send_rule_reads(messages: int) -> Counter[str]:
    """The send rule reads the participant again before each message of an event after the first
    (a STOP committed while the first went out is honoured): one GetItem each."""
    return Counter({"GetItem": messages - 1}) if messages > 1 else Counter()


def expected_dynamodb(row: Row) -> Counter[str]:
    accepted = INBOUND_ACCEPTED if row.event in ACCEPTING else Counter()
    return EXPECTED_DYNAMODB[row.event] + accepted + outcome_write(row.sent) + send_rule_reads(row.sent)


def row_misses(row: Row) -> list[str]:
    """Why the function handling an event missed the DynamoDB target (empty: it met it)."""
    misses = []
    dynamodb = row.counts("dynamodb")
    if dynamodb != expected_dynamodb(row):
        misses.append(f"DynamoDB {dict(dynamodb)} != {dict(expected_dynamodb(row))}")
    if (row.state_reads, row.state_writes, row.conditional_writes) != (1, 1, 1):
        misses.append("not one state read and one conditional state write")
    return misses


def scheduler_extra(row: Row, rows: list[Row]) -> str:
    """Scheduler calls of the event, whichever function made them, other than its effects need (""
    when none); reported, not failed. STOP's are the worker's: the webhook queues them."""
    scheduler: Counter[str] = Counter()
    for other in rows:
        if other.event == row.event:
            scheduler += other.counts("scheduler")
    needed = EXPECTED_SCHEDULER[row.event][0]
    if scheduler == needed:
        return ""
    return f"scheduler {dict(scheduler)} where the effects need {dict(needed)}"


def target_met(rows: list[Row]) -> bool:
    handling = [r for r in rows if r.handles_event]
    events = {r.event for r in handling}
    return len(handling) == len(events) and all(not row_misses(r) for r in handling)


# Day N's answer to the daily prompt, in rotation (None: no answer; the reminder comes).
DAILY_ANSWERS = ("1", "Done", "Next time, I was too busy", None, "more")

INTAKE = (
    "Hi! I'd like to exercise more.",
    "I want to feel more energetic during the day.",
    "Around 7:30am works for me.",
    "After my morning coffee.",
)


def measure_item_sizes(days: tuple[int, ...] = DEFAULT_DAYS) -> list[ItemSize]:
    """One participant (offline coach) for ``max(days)`` days; the flow-state item after each of ``days``."""
    from zoneinfo import ZoneInfo

    from promptpipe.adapters.aws import aws_client
    from promptpipe.local.demo import send_sms
    from promptpipe.local.environment import LocalEnvironment, local_settings
    from promptpipe.models.state import StateData

    settings = local_settings(offline_coach=True, openai_api_key=None)
    env = LocalEnvironment(start=START, seed=1, settings=settings, notified_pump=True)
    sizes: list[ItemSize] = []
    try:
        enrolled = env.api("POST", "/conversation/participants", json_body={"phone_number": PHONE, "timezone": ZONE})
        pid = enrolled.body["result"]["id"]
        counter = 0
        for text in INTAKE:
            env.advance(timedelta(minutes=1))
            counter += 1
            send_sms(env, PHONE, text, f"SMsize{counter:05d}")
        client = aws_client("dynamodb", env.settings)
        zone = ZoneInfo(ZONE)
        first_day = START.astimezone(zone).date()
        for day in range(1, max(days) + 1):
            local = datetime.combine(first_day + timedelta(days=day), datetime.min.time(), tzinfo=zone)
            answer = DAILY_ANSWERS[(day - 1) % len(DAILY_ANSWERS)]
            if answer is not None:
                env.advance_to(local.replace(hour=9).astimezone(UTC))
                counter += 1
                send_sms(env, PHONE, answer, f"SMsize{counter:05d}")
            env.advance_to((local + timedelta(days=1)).astimezone(UTC))
            if day in days:
                item = client.get_item(
                    TableName=env.settings.table_name,
                    Key={"pk": {"S": f"PARTICIPANT#{pid}"}, "sk": {"S": "FLOW#conversation"}},
                    ConsistentRead=True,
                )["Item"]
                loaded = env.app.store.load(pid)
                sizes.append(
                    ItemSize(
                        day=day,
                        bytes=dynamodb_item_size(item),
                        version=loaded.flow.version,
                        recent_events=len(loaded.recent_events),
                        history_messages=len(StateData(dict(loaded.flow.state_data)).history()),
                        breakdown=item_breakdown(item),
                    )
                )
    finally:
        env.close()
    return sizes


def render(rows: list[Row], harness: list[Call]) -> str:
    header = [
        "event",
        "function",
        "DynamoDB",
        "DynamoDB (flow catalog)",
        "SQS",
        "Scheduler",
        "total",
        "state reads",
        "state writes (cond.)",
        "write units",
        "EVENT# item bytes",
    ]
    lines = []
    for row in rows:
        function = row.function if row.handles_event else f"({row.function})"
        writes = f"{row.state_writes} ({row.conditional_writes})"
        lines.append(
            [
                row.event,
                function,
                row.ops("dynamodb", exclude=CATALOG),
                row.ops("dynamodb", CATALOG),
                row.ops("sqs"),
                row.ops("scheduler"),
                str(row.total),
                str(row.state_reads),
                writes,
                str(row.write_units),
                str(row.event_item_bytes) if row.event_item_bytes else "-",
            ]
        )
    out = ["AWS API calls per event (LocalEnvironment: moto, real handlers, ScriptedLLM)", ""]
    out += _markdown(header, lines)
    out += [
        "",
        "Rows in (parentheses): the front door of the event (participants API, webhook), not the function",
        "that handles it. state writes (cond.): writes of the flow-state item (how many conditional on version).",
        "write units: DynamoDB write capacity units of the participant's items (1 per started KB of each item,",
        "doubled in a transaction; a transaction's ConditionCheck of META counted as 2). EVENT# item bytes: the",
        "claimed event id, written in the same transaction (docs/architecture.md, event ids).",
        "Flow catalog: the controller's flow definitions (pk FLOW#…), read at most once a minute per process and",
        "seeded once per deployment — here on the process's first event; not part of any event's own cost.",
    ]
    counts = Counter((c.service, c.operation) for c in harness)
    listed = ", ".join(f"{s}.{op} {n}" for (s, op), n in sorted(counts.items()))
    out.append(f"Not counted, the harness during these events (SQS event-source polling, scheduler pump): {listed}.")
    out += [
        "",
        "Target: exactly Query 1 + TransactWriteItems 1 (conditional on version) in the function handling the",
        "event (STOP: + the webhook's phone-claim GetItem), + one write of its messages' delivery outcomes when",
        "it sent any (one TransactWriteItems: the outcomes, each with its provider-id pointer), + one PutItem per",
        "inbound message (in the record before the model), + one GetItem per message of the event after its first",
        "(the send rule reads the participant again), and only the scheduler calls its effects need.",
    ]
    for row in rows:
        if row.handles_event:
            misses = row_misses(row)
            need = EXPECTED_SCHEDULER[row.event]
            scheduler = ", ".join(f"{op} {n}" for op, n in sorted(need[0].items())) or "0"
            verdict = "OK" if not misses else "MISSED: " + "; ".join(misses)
            extra = scheduler_extra(row, rows)
            out.append(
                f"  {row.event:31s} {row.function:17s} DynamoDB {sum(row.counts('dynamodb').values())} "
                f"(reads {row.state_reads}, cond. writes {row.conditional_writes}), sent {row.sent}: {verdict}"
            )
            out.append(
                f"  {'':31s} {'':17s} scheduler needed: {scheduler} [{need[1]}]"
                + (f"; EXTRA: {extra}" if extra else "")
            )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--days", default=",".join(map(str, DEFAULT_DAYS)), help="days of the item-size figure")
    args = parser.parse_args(argv)
    days = tuple(sorted({int(d) for d in args.days.split(",") if d.strip()}))
    prepare_environment()
    rows, harness = collect()
    sizes = measure_item_sizes(days) if days else []
    calls_ok = target_met(rows)
    size_ok = not sizes or sizes[-1].bytes <= ITEM_TARGET_BYTES
    if args.json:
        print(
            json.dumps(
                {
                    "rows": [r.to_json() for r in rows],
                    "target_met": calls_ok,
                    "item_sizes": [s.to_json() for s in sizes],
                    "item_size_target_met": size_ok,
                },
                indent=2,
            )
        )
    else:
        print(render(rows, harness))
        if sizes:
            print(render_sizes(sizes))
    # The DynamoDB/scheduler target fails the run; the item size is reported (its budget is the
    # engine's: docs/benchmarks.md says what dominates when it is over).
    return 0 if calls_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
