"""Cost of the flow controller per intake turn: load the runtime JSON, decide, record the outcome,
begin the turn, dump the JSON — on the bundled intake flow. Prints microseconds per turn.

    PYTHONPATH=shared python scripts/bench/controller.py [--turns 20000]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from promptpipe.controller.definition import parse_definition
from promptpipe.controller.engine import begin_turn, decide, record_outcome
from promptpipe.controller.runtime import RuntimeState, Status

INTAKE = Path(__file__).resolve().parents[2] / "prompts" / "flows" / "intake.json"
REPLIES = [["habit_domain"], [], ["motivational_frame"], ["preferred_time"], [], ["prompt_anchor"]]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=20000)
    args = parser.parse_args()
    flow = parse_definition(json.loads(INTAKE.read_text()))
    text = RuntimeState.start(flow.id, flow.version).to_json()
    turns = 0
    sizes: list[int] = []
    started = time.perf_counter()
    while turns < args.turns:
        for facts in REPLIES:
            runtime = RuntimeState.from_json(text)
            runtime, _ = record_outcome(flow, runtime, facts, [])
            decision = decide(flow, runtime)
            if decision.status is not Status.OK:
                text = RuntimeState.start(flow.id, flow.version).to_json()
                break
            text = begin_turn(flow, runtime, decision).to_json()
            sizes.append(len(text))
            turns += 1
    elapsed = time.perf_counter() - started
    print(f"turns={turns} total={elapsed:.2f}s per_turn={elapsed / turns * 1e6:.0f}us max_json_bytes={max(sizes)}")


if __name__ == "__main__":
    main()
