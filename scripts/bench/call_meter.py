"""Every AWS API call of the process counted, by event, Lambda function, service and operation
(``CallMeter``; how: ``scripts/bench/calls.py``)."""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import botocore.handlers
import moto  # noqa: F401  (before any handler module: their import-time clients must be intercepted)

from scripts.bench.item_size import dynamodb_item_size

FUNCTION_MODULES = {
    "functions.enrollment.handler": "enrollment",
    "functions.inbound.webhook": "webhook",
    "functions.inbound.worker": "worker",
    "functions.scheduled_prompt.handler": "scheduled-prompt",
    "functions.timers.handler": "timers",
}

HARNESS = "harness"

CATALOG = "flow catalog"


@dataclass(frozen=True, order=True)
class Call:
    function: str  # a FUNCTION_MODULES label, or HARNESS
    service: str  # botocore service name: dynamodb, sqs, scheduler, …
    operation: str
    table: str  # "main" | another table's name | "" (not DynamoDB)
    state_read: bool = False
    state_write: bool = False
    conditional_on_version: bool = False
    write_units: int = 0  # write capacity units the call consumes (see ``write_units``)
    event_item_bytes: int = 0  # size of the claimed event id's item (EVENT#…) it writes


def write_units(operation: str, params: dict[str, Any]) -> int:
    """Write capacity units as DynamoDB bills them: 1 per started KB of each item written; doubled in
    a transaction. A transaction's ``ConditionCheck`` (of META, under 1 KB here) is counted as 2,
    a ``Delete`` as 2 per item (its size is not in the request)."""
    if operation == "TransactWriteItems":
        total = 0
        for action in params.get("TransactItems", []):
            put = action.get("Put")
            total += 2 * math.ceil(dynamodb_item_size(put["Item"]) / 1024) if put else 2
        return total
    if operation == "PutItem":
        return math.ceil(dynamodb_item_size(params["Item"]) / 1024)
    if operation in ("UpdateItem", "DeleteItem"):
        return 1
    return 0


def _event_item_bytes(params: dict[str, Any]) -> int:
    puts = [a["Put"]["Item"] for a in params.get("TransactItems", []) if "Put" in a]
    return sum(dynamodb_item_size(i) for i in puts if str(i.get("sk", {}).get("S", "")).startswith("EVENT#"))


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


def _catalog_keys(params: dict[str, Any]) -> bool:
    """A call on the flow catalog's items (``pk = FLOW#<flow id>``), not on a participant's."""
    keys = [params.get("Key"), params.get("Item")]
    keys += [
        body.get("Key") or body.get("Item") for action in params.get("TransactItems", []) for body in action.values()
    ]
    keys.append({"pk": params.get("ExpressionAttributeValues", {}).get(":pk", {})})  # a Query's partition
    return any(str((k or {}).get("pk", {}).get("S", "")).startswith("FLOW#") for k in keys)


def _on_version(condition: dict[str, Any]) -> bool:
    names = condition.get("ExpressionAttributeNames", {})
    expression = condition.get("ConditionExpression", "")
    return "version" in expression or any(v == "version" for v in names.values())


class CallMeter:
    """Records every AWS API call of the process, tagged with the current event and function."""

    def __init__(self, main_table: str) -> None:
        self.main_table = main_table
        self.event: str | None = None
        self.calls: dict[str, list[Call]] = {}
        self.outside = 0  # calls made outside any measured event (there should be none)
        self.paused = False

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
        if self.paused:
            return
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
        if names == {self.main_table}:
            return CATALOG if _catalog_keys(params) else "main"
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
        units = write_units(operation, params) if table == "main" else 0
        claimed = _event_item_bytes(params) if table == "main" else 0
        return Call(function, service, operation, table, read, write, conditional, units, claimed)
