"""Time to validate flow definitions whose ``factAliases`` form a long chain or one cycle, and whose
gates form a long chain (docs/reliability.md, "Fault suite"). Prints the size, the time and the
step counts of alias resolution and reachability.

    PYTHONPATH=shared .venv/bin/python scripts/bench/flow_validation.py [--sizes 1000,3000]
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from promptpipe.controller.definition import FlowDefinition, Reachability, parse_text, resolve_aliases


def alias_flow(length: int, *, cycle: bool) -> dict[str, Any]:
    aliases = {f"a{i}": f"a{i + 1}" for i in range(length)}
    if cycle:
        aliases[f"a{length}"] = "a0"
    return {
        "id": "aliases",
        "primaryGoal": {"type": "GATE", "gate": "G"},
        "gates": {"G": {"satisfiedBy": {"metricsAll": [f"a{length}"]}}},
        "factAliases": aliases,
        "nodes": [{"id": "n", "produces": ["a0"]}],
    }


def gate_flow(length: int) -> dict[str, Any]:
    nodes = [{"id": f"n{i}", "requires": [f"G{i}"], "produces": [f"f{i + 1}"]} for i in range(length)]
    nodes.append({"id": "start", "produces": ["f0"]})
    gates = {f"G{i}": {"satisfiedBy": {"metricsAll": [f"f{i}"]}} for i in range(length)}
    gates["DONE"] = {"satisfiedBy": {"metricsAll": [f"f{length}"]}}
    return {"id": "gates", "primaryGoal": {"type": "GATE", "gate": "DONE"}, "gates": gates, "nodes": nodes}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,3000")
    args = parser.parse_args()
    print(f"{'flow':<18} {'bytes':>7} {'seconds':>8} {'alias steps':>11} {'reach steps':>11}  valid")
    for size in (int(s) for s in args.sizes.split(",")):
        for name, raw in (
            (f"alias chain {size}", alias_flow(size, cycle=False)),
            (f"alias cycle {size}", alias_flow(size, cycle=True)),
            (f"gate chain {size}", gate_flow(size)),
        ):
            text = json.dumps(raw)
            started = time.perf_counter()
            definition, _problems = parse_text(text)
            seconds = time.perf_counter() - started
            flow = FlowDefinition.model_validate(raw)
            reach = Reachability(flow)
            reach.run()
            alias_steps = resolve_aliases(flow.fact_aliases).steps
            valid = definition is not None
            print(f"{name:<18} {len(text):>7} {seconds:>8.3f} {alias_steps:>11} {reach.steps:>11}  {valid}")


if __name__ == "__main__":
    main()
