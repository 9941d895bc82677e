"""The IAM table of docs/architecture.md ("The stack: rights and alarms"), rendered from the
synthesized stack: each function's role, read statement by statement (``granted`` of
test_iam_derived.py), in the table's words.

    .venv/bin/python -m tests.infra.iam_table      # prints the table of the default deployment

tests/infra/test_iam_table.py fails when the table in the docs differs from this rendering.
"""

from __future__ import annotations

import tempfile
from collections import defaultdict
from pathlib import Path

from infra import constants as c
from tests.infra.synth import Synth, synthesize
from tests.infra.test_iam_derived import Need, granted

HEADER = (
    "| function | table (partition-key prefix) | index | queue | schedules | secrets |",
    "|---|---|---|---|---|---|",
)
_TABLE_ORDER = (
    "GetItem",
    "BatchGetItem",
    "Query",
    "PutItem",
    "ConditionCheckItem",
    "UpdateItem",
    "DeleteItem",
    "BatchWriteItem",
)
_QUEUE_ORDER = ("SendMessage", "ReceiveMessage", "DeleteMessage", "GetQueueAttributes")
_SCHEDULE_ORDER = ("CreateSchedule", "UpdateSchedule", "DeleteSchedule", "GetSchedule")
NONE = "—"


def _ordered(actions: set[str], order: tuple[str, ...]) -> list[str]:
    unknown = sorted(actions - set(order))
    assert not unknown, f"add {unknown} to the table's order in tests/infra/iam_table.py"
    return [a for a in order if a in actions]


def _table(needs: set[Need]) -> str:
    prefixes: dict[str, set[str]] = defaultdict(set)
    for need in needs:
        if need.resource == "table":
            prefixes[need.action.removeprefix("dynamodb:")].add(need.key)
    groups: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for action, keys in prefixes.items():
        groups[tuple(sorted(keys))].add(action)
    cells = [
        f"{', '.join(_ordered(actions, _TABLE_ORDER))} ({', '.join(f'`{k}`' for k in keys)})"
        for keys, actions in sorted(groups.items(), key=lambda g: (-len(g[0]), g[0]))
    ]
    return "; ".join(cells) or NONE


def _index(needs: set[Need]) -> str:
    found = sorted({n.action.removeprefix("dynamodb:") for n in needs if n.resource.startswith("table/index/")})
    return ", ".join(found) or NONE


def _queue(needs: set[Need]) -> str:
    inbound = {n.action.removeprefix("sqs:") for n in needs if n.resource == "inbound-queue"}
    cells = [", ".join(_ordered(inbound, _QUEUE_ORDER))] if inbound else []
    if any(n.resource == "scheduler-dlq" for n in needs):
        cells.append("SendMessage (scheduler DLQ)")
    return "; ".join(cells) or NONE


def _schedules(needs: set[Need]) -> str:
    scoped = {n.action.removeprefix("scheduler:") for n in needs if n.resource == "schedule-group"}
    cells = [", ".join(a.removesuffix("Schedule") for a in _ordered(scoped, _SCHEDULE_ORDER))] if scoped else []
    if Need("scheduler:ListSchedules", "*") in needs:
        cells.append("List (on `*`)")
    if Need("iam:PassRole", "scheduler-role") in needs:
        cells.append("PassRole (the scheduler's role)")
    return "; ".join(cells) or NONE


def _secrets(needs: set[Need]) -> str:
    names = {n.resource.rsplit("/", 1)[-1] for n in needs if n.resource.startswith("secret:")}
    return ", ".join(sorted(names, key=lambda name: (name != "openai", name))) or NONE


def render_table(synth: Synth) -> list[str]:
    rows = list(HEADER)
    for spec in c.ALL_FUNCTIONS:
        needs = granted(synth, spec.key)
        cells = (spec.key, _table(needs), _index(needs), _queue(needs), _schedules(needs), _secrets(needs))
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def documented_table(markdown: str) -> list[str]:
    """The table under "The stack: rights and alarms" in docs/architecture.md, as its lines."""
    section = markdown[markdown.index("## The stack: rights and alarms") :]
    lines = section.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| function |"))
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("|"))
    return lines[start:end]


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        print("\n".join(render_table(synthesize(Path(folder)))))


if __name__ == "__main__":
    main()
