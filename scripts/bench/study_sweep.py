"""What one participant costs the daily study sweep, against the reserve it keeps before its deadline.

Run: ``PYTHONPATH=shared:. python -m scripts.bench.study_sweep [--participants 100] [--days 3]
[--deadline S] [--stack moto|memory]``.
Everything runs in one process on the local stack (moto DynamoDB and Scheduler, ``LocalEnvironment``)
with its injected clock: the example study (``prompts/studies/example-mrt.json``), N participants
enrolled through the participants API, the clock moved ``--days`` days on, then the timers function's
sweep as the stack's schedule sends it (``{"sweep": "study"}``) twice: the catch-up (every missing
day of every participant written) and the next day's (one day each). Each participant's share is
timed (wall and CPU), and so is the continuation a sweep schedules when it stops; on moto, the AWS
calls each participant makes are counted (``scripts/bench/call_meter.py``). Stock moto's transaction
copies the table it writes, so a participant's cost there grows with the table (docs/benchmarks.md,
"On stock moto"): ``--stack memory`` gives the engine's own cost, without emulated AWS.

The sweep checks the time left before each participant and stops while ``STUDY_SWEEP_RESERVE`` (10 s)
is left of the function's 30 s (docs/studies.md): the reserve must hold the slowest participant, the
continuation's one-shot and the handler's own end. The script prints the per-participant figures and
how many times the slowest fits in the reserve; it exits 1 when the slowest participant and the
continuation together take more than the reserve. ``--deadline S``: a third sweep with the time left
counted down from S seconds of real time, to see it stop and hand on its cursor. Recorded in
docs/benchmarks.md ("The daily study sweep").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from infra import constants as c
from promptpipe.local.environment import LocalEnvironment, local_settings
from promptpipe.local.failures import quiet_function_logs
from promptpipe.local.lambda_runtime import FakeLambdaContext
from promptpipe.usecases import studies
from promptpipe.usecases.studies import STUDY_SWEEP_RESERVE, load_study, with_study
from scripts.bench.call_meter import CallMeter

STUDIES = Path(__file__).resolve().parents[2] / "prompts" / "studies"
DEADLINE_SECONDS = float(c.TIMERS.timeout_s)  # the timers function's timeout (infra/constants.py)


class Timed:
    """Times each call of the wrapped function: (wall seconds, CPU seconds)."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function, self.samples = function, list[tuple[float, float]]()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return self.function(*args, **kwargs)
        finally:
            self.samples.append((time.perf_counter() - wall, time.process_time() - cpu))


class CountdownContext(FakeLambdaContext):
    """The Lambda context whose remaining time counts down in real time from ``seconds``."""

    def __init__(self, seconds: float) -> None:
        super().__init__(function_name="promptpipe-timers")
        self._ends = time.perf_counter() + seconds

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._ends - time.perf_counter()) * 1000))


def _figures(samples: list[tuple[float, float]]) -> dict[str, float]:
    walls = sorted(s[0] * 1000 for s in samples)
    cpus = sorted(s[1] * 1000 for s in samples)
    p95 = walls[min(len(walls) - 1, int(0.95 * len(walls)))]
    return {
        "n": len(samples),
        "wall_mean_ms": statistics.fmean(walls),
        "wall_median_ms": statistics.median(walls),
        "wall_p95_ms": p95,
        "wall_max_ms": walls[-1],
        "cpu_mean_ms": statistics.fmean(cpus),
        "cpu_max_ms": cpus[-1],
    }


def _sweep(handler: Callable[..., dict[str, Any]], context: Any) -> tuple[dict[str, Any], float]:
    event = json.loads(c.STUDY_SWEEP_INPUT)  # what the stack's schedule sends
    started = time.perf_counter()
    result = handler(event, context)
    return result, time.perf_counter() - started


def main() -> int:
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")  # the functions' metric lines off stdout
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=100)
    parser.add_argument("--days", type=int, default=3, help="days between enrolment and the first sweep")
    parser.add_argument("--deadline", type=float, default=0.0, help="a third sweep with S seconds left")
    parser.add_argument("--stack", choices=("moto", "memory"), default="moto", help="memory: no AWS emulated")
    args = parser.parse_args()

    settings = local_settings(offline_coach=True, openai_api_key=None)
    meter = CallMeter(settings.table_name)
    if args.stack == "moto":
        meter.install()  # before the first boto3 session
    start = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)
    with (
        quiet_function_logs(verbose=False),
        LocalEnvironment(start=start, settings=settings, stack=args.stack) as env,
    ):
        from functions.timers.handler import handler

        with_study(env.app, load_study(STUDIES, "example-mrt"))
        started = time.perf_counter()
        for n in range(args.participants):
            answer = env.api(
                "POST", "/conversation/participants", json_body={"phone_number": f"+1416555{n:04d}", "name": f"P{n}"}
            )
            assert answer.status == 201, answer.body
        print(f"enrolled {args.participants} participants in {time.perf_counter() - started:.1f} s", flush=True)

        per_participant = Timed(studies._sweep_participant)
        continuation = Timed(studies.continue_study_sweep)
        studies._sweep_participant = per_participant  # type: ignore[assignment]
        studies.continue_study_sweep = continuation  # type: ignore[assignment]
        runs: list[tuple[str, dict[str, Any], float, list[tuple[float, float]]]] = []
        for label, advance in (
            (f"catch-up ({args.days} days)", timedelta(days=args.days)),
            ("next day", timedelta(days=1)),
        ):
            env.clock.advance(advance)
            per_participant.samples = []
            with meter.measure(label):
                result, wall = _sweep(handler, FakeLambdaContext(function_name="promptpipe-timers"))
            runs.append((label, result, wall, list(per_participant.samples)))
        if args.deadline:
            env.clock.advance(timedelta(days=1))
            per_participant.samples = []
            result, wall = _sweep(handler, CountdownContext(args.deadline))
            runs.append((f"next day, {args.deadline:.0f} s left", result, wall, list(per_participant.samples)))

    reserve_ms = STUDY_SWEEP_RESERVE.total_seconds() * 1000
    slowest = 0.0
    for label, result, wall, samples in runs:
        figures = _figures(samples) if samples else {}
        slowest = max(slowest, figures.get("wall_max_ms", 0.0))
        print(
            f"{label}: {result['participants']} participants, {result['unavailable_rows']} rows written, "
            f"continued {result['continued']}; sweep {wall:.2f} s"
        )
        calls = Counter(f"{call.service}:{call.operation}" for call in meter.calls.get(label, []))
        if calls and result["participants"]:
            each = ", ".join(f"{name} {count / result['participants']:.2f}" for name, count in sorted(calls.items()))
            print(f"  AWS calls per participant: {each}")
        if figures:
            print(
                "  per participant: wall mean {wall_mean_ms:.1f} ms, median {wall_median_ms:.1f}, "
                "p95 {wall_p95_ms:.1f}, max {wall_max_ms:.1f}; CPU mean {cpu_mean_ms:.1f} ms, "
                "max {cpu_max_ms:.1f}".format(**figures)
            )
    handed_on = max((s[0] * 1000 for s in continuation.samples), default=0.0)
    if continuation.samples:
        print(f"continuation (one-shot scheduled): {handed_on:.1f} ms")
    worst = slowest + handed_on
    budget = DEADLINE_SECONDS * 1000 - reserve_ms
    print(
        f"reserve {reserve_ms / 1000:.0f} s of {DEADLINE_SECONDS:.0f} s: the slowest participant "
        f"({slowest:.1f} ms) plus the continuation ({handed_on:.1f} ms) fit {reserve_ms / max(worst, 1e-9):.0f} times; "
        f"the {budget / 1000:.0f} s before it sweep about {budget / max(slowest, 1e-9):.0f} participants at the slowest"
    )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.1f}")
    return 0 if worst < reserve_ms else 1


if __name__ == "__main__":
    sys.exit(main())
