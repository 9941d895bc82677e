"""Cold start per function: importing its handler module, in fresh processes (docs/architecture.md#cold-start).

Run: ``python -m scripts.bench.cold_start`` (``--runs N``, default 9; ``--json``;
``--compare DIR`` also measures the function modules of another checkout, e.g. the commit before a
change, in the same rounds: before and after from one run).

For every function module, for the ``floor`` (below) and for a bare ``import boto3``, each round starts one
fresh interpreter per target (targets interleaved, in a fixed order, so that drift on the machine
hits them alike) and times, inside the child, both wall time (``time.perf_counter``) and the child's
CPU time (``time.process_time``; on a busy machine wall time also counts waiting for a CPU):

- **import**: ``importlib.import_module(module)``, which also runs what the module does at import
  (Powertools resolver, processor, ...);
- **init**: then ``promptpipe.wiring.get_app()``, the composition root the first request builds
  (settings, the DynamoDB client and, where the function enqueues, the SQS client, the prompt
  library; what only some events need is built on first use), with the cyclic collector paused.

The child imports ``functions`` and ``promptpipe`` from the checkout measured (``PYTHONPATH``), never
from an installed copy. Tracing is off in the child, as outside Lambda (see docs/benchmarks.md for
what tracing costs in AWS).

Interpreter start-up is not included. One warm-up round is discarded so that every child finds the
bytecode caches written (a Lambda bundle ships without them unless compiled at build time; see
docs/benchmarks.md). The child has dummy credentials and a region, and a guard that refuses any
socket connection: a function must not touch the network before its first event. The table reports
the medians of the rounds, their ratio to the median of ``import boto3`` measured in the same run,
the ratio to the floor (a ratio is what carries over from this machine to Lambda) and whether ``openai`` was in
``sys.modules`` after import and after init (the webhook and enrollment functions must never import
it; docs/architecture.md#cold-start).

The floor is botocore, a DynamoDB and an SQS client, Powertools' HTTP resolver and Logger: what the
webhook's first event needs whatever code surrounds it. The ratio to the floor is paired: in each
round, the function's import + init CPU over the floor's CPU in that round (a burst of load on a
shared machine hits both); the verdict takes the median over the rounds, and the table prints their
spread (min-max).

The ``floor-paused`` row (not a target) builds the floor's clients as ``get_app()`` builds the
function's, with the cyclic collector paused and then ``gc.freeze``: the part of a function's gain
from that pause which any code would get (``promptpipe.collector``, the functions' own helper).

Targets (exit status 1 when one is missed): import + init CPU at most ``TARGETS[module]`` times the
floor (median of the paired ratios); ``openai`` never imported by the webhook or enrollment
function; no network connection attempted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BASELINE = "boto3"
XRAY = "aws_xray_sdk.core"  # timed after an untimed ``import boto3``: what Powertools' Tracer adds
# What the webhook's first event cannot do without, whatever the code around it: botocore, a DynamoDB
# and an SQS client, Powertools' HTTP resolver and Logger (the platform the function is built on).
FLOOR = "floor"
# The floor built as ``wiring.get_app()`` builds: its clients with the cyclic collector paused, then
# frozen. Not a target: it shows how much of a function's gain from that pause is the collector's
# pass over the platform's objects, which any code would save the same way (docs/benchmarks.md).
FLOOR_PAUSED = "floor-paused"
MODULES = (
    "functions.enrollment.handler",
    "functions.inbound.webhook",
    "functions.inbound.worker",
    "functions.scheduled_prompt.handler",
    "functions.timers.handler",
)
MUST_NOT_IMPORT_OPENAI = ("functions.enrollment.handler", "functions.inbound.webhook")
# Import + first-event init (CPU), as a multiple of the floor row measured in the same round:
# the two front-door functions answer people (Twilio and Meta retry on slowness), the three event
# functions run behind a queue or a schedule.
TARGETS = {
    "functions.enrollment.handler": 1.3,
    "functions.inbound.webhook": 1.3,
    "functions.inbound.worker": 1.5,
    "functions.scheduled_prompt.handler": 1.5,
    "functions.timers.handler": 1.5,
}
BEFORE = "before: "  # label prefix of the modules of the --compare checkout

# What the function's environment holds in AWS (CDK), with dummy values; no secret names, so
# nothing is fetched from Secrets Manager.
CHILD_ENVIRONMENT = {
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_EC2_METADATA_DISABLED": "true",
    "TABLE_NAME": "promptpipe",
    "TIMERS_FUNCTION_ARN": "arn:aws:lambda:us-east-1:000000000000:function:promptpipe-timers",
    "SCHEDULED_PROMPT_FUNCTION_ARN": "arn:aws:lambda:us-east-1:000000000000:function:promptpipe-scheduled-prompt",
    "SCHEDULER_ROLE_ARN": "arn:aws:iam::000000000000:role/promptpipe-scheduler",
    "INBOUND_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/000000000000/promptpipe-inbound.fifo",
    "MESSAGING_PROVIDER": "twilio",
    "TWILIO_ACCOUNT_SID": "AC00000000000000000000000000000000",
    "TWILIO_AUTH_TOKEN": "dummy-auth-token",
    "TWILIO_FROM_NUMBER": "+14155550000",
    "POWERTOOLS_SERVICE_NAME": "promptpipe",
    "POWERTOOLS_METRICS_NAMESPACE": "PromptPipe",
    "POWERTOOLS_LOG_LEVEL": "ERROR",
    "PYDANTIC_DISABLE_PLUGINS": "__all__",
}

# Runs in the child. Prints one JSON line.
CHILD = r"""
import importlib, json, socket, sys, time

attempts = []

def _refuse(self, address, *args):
    attempts.append(repr(address))
    raise OSError("network access during the cold-start benchmark")

socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
target = sys.argv[1]
if target == "aws_xray_sdk.core":
    import boto3  # noqa: F401  (not timed)
wall, cpu = time.perf_counter(), time.process_time()
if target in ("floor", "floor-paused"):
    import contextlib
    import botocore.session
    from aws_lambda_powertools import Logger
    from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

    if target == "floor-paused":
        from promptpipe.collector import collector_paused
    else:
        collector_paused = contextlib.nullcontext
    with collector_paused():
        session = botocore.session.get_session()
        session.create_client("dynamodb", region_name="us-east-1")
        session.create_client("sqs", region_name="us-east-1")
        APIGatewayHttpResolver(), Logger(service="floor")
else:
    importlib.import_module(target)
import_wall, import_cpu = time.perf_counter() - wall, time.process_time() - cpu
openai_after_import = "openai" in sys.modules
init_wall = init_cpu = None
if target.startswith("functions."):
    from promptpipe.wiring import get_app

    wall, cpu = time.perf_counter(), time.process_time()
    app = get_app()
    function = {
        "functions.inbound.worker": "worker",
        "functions.scheduled_prompt.handler": "scheduled_prompt",
        "functions.timers.handler": "timers",
    }.get(target)
    if function:
        try:  # what their first event builds besides (prompts, flows, Scheduler client; the engine: a turn)
            from promptpipe.wiring import warm_for_events
        except ImportError:  # an older checkout (--compare) built all of it in get_app()
            pass
        else:
            warm_for_events(app, function=function)
    init_wall, init_cpu = time.perf_counter() - wall, time.process_time() - cpu
print(json.dumps({
    "import_wall": import_wall * 1000,
    "import_cpu": import_cpu * 1000,
    "init_wall": init_wall and init_wall * 1000,
    "init_cpu": init_cpu and init_cpu * 1000,
    "openai_after_import": openai_after_import,
    "openai_after_init": "openai" in sys.modules,
    "network_attempts": attempts,
}))
"""
SERIES = ("import_wall", "import_cpu", "init_wall", "init_cpu")


@dataclass
class Result:
    target: str
    samples: dict[str, list[float]] = field(default_factory=lambda: {name: [] for name in SERIES})
    openai_after_import: set[bool] = field(default_factory=set)
    openai_after_init: set[bool] = field(default_factory=set)
    network_attempts: list[str] = field(default_factory=list)

    def median(self, kind: str, *, with_init: bool = False) -> float:
        """Median of ``kind`` ("wall" or "cpu") over the rounds, import alone or import + init."""
        imports = self.samples[f"import_{kind}"]
        if not with_init:
            return statistics.median(imports)
        return statistics.median(a + b for a, b in zip(imports, self.samples[f"init_{kind}"], strict=True))


def floor_ratios(results: dict[str, Result], module: str) -> list[float]:
    """Per round, import + init CPU of ``module`` over the floor's CPU in the same round (paired: a
    burst of load on the machine hits both alike)."""
    target, floor = results[module].samples, results[FLOOR].samples["import_cpu"]
    totals = (a + b for a, b in zip(target["import_cpu"], target["init_cpu"], strict=True))
    return [total / base for total, base in zip(totals, floor, strict=True)]


def floor_ratio(results: dict[str, Result], module: str) -> float:
    """The median of the paired per-round ratios: what the targets are checked against."""
    return statistics.median(floor_ratios(results, module))


def child_environment(repo: Path = REPO) -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(CHILD_ENVIRONMENT)
    env["PYTHONPATH"] = os.pathsep.join((str(repo / "shared"), str(repo)))
    return env


def _split(target: str, compare: Path | None) -> tuple[Path, str]:
    """(checkout, module) of a target label."""
    if target.startswith(BEFORE):
        assert compare is not None
        return compare, target.removeprefix(BEFORE)
    return REPO, target


def run_once(target: str, compare: Path | None = None) -> dict[str, Any]:
    repo, module = _split(target, compare)
    completed = subprocess.run(
        [sys.executable, "-c", CHILD, module],
        cwd=repo,
        env=child_environment(repo),
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"importing {target} failed:\n{completed.stderr}")
    return dict(json.loads(completed.stdout.strip().splitlines()[-1]))


def measure(runs: int, warmup: int = 1, compare: Path | None = None) -> dict[str, Result]:
    before = tuple(BEFORE + m for m in MODULES) if compare is not None else ()
    targets = (BASELINE, XRAY, FLOOR, FLOOR_PAUSED, *before, *MODULES)
    results = {t: Result(t) for t in targets}
    for round_index in range(warmup + runs):
        for target in targets:
            sample = run_once(target, compare)
            if round_index < warmup:
                continue
            result = results[target]
            for name in SERIES:
                if sample[name] is not None:
                    result.samples[name].append(sample[name])
            result.openai_after_import.add(sample["openai_after_import"])
            result.openai_after_init.add(sample["openai_after_init"])
            result.network_attempts += sample["network_attempts"]
    return results


def _flag(values: set[bool]) -> str:
    return "mixed" if len(values) > 1 else str(next(iter(values)))


def render(results: dict[str, Result], runs: int) -> str:
    boto = results[BASELINE]
    header = (
        "target",
        "limit",
        "import wall ms",
        "x boto3",
        "import CPU ms",
        "x boto3",
        "+init wall ms",
        "+init CPU ms",
        "x boto3 (CPU)",
        "x floor (CPU)",
        "spread",
        "openai imported",
        "network",
    )

    def ratio(result: Result, kind: str, *, with_init: bool = False) -> str:
        return f"{result.median(kind, with_init=with_init) / boto.median(kind):.2f}"

    lines = []
    fixed = (
        ("import boto3 (yardstick)", BASELINE),
        (f"{XRAY} (after boto3)", XRAY),
        ("floor of the webhook (see below)", FLOOR),
        ("floor, collector paused (see below)", FLOOR_PAUSED),
    )
    for label, target in fixed:
        if target not in results:
            continue
        r = results[target]
        paired = (a / b for a, b in zip(r.samples["import_cpu"], results[FLOOR].samples["import_cpu"], strict=True))
        # the floor's own variants read per round over the floor
        over_floor = f"{statistics.median(paired):.2f}" if target == FLOOR_PAUSED else "-"
        lines.append(
            (
                label,
                "-",
                f"{r.median('wall'):.0f}",
                ratio(r, "wall"),
                f"{r.median('cpu'):.0f}",
                ratio(r, "cpu"),
                "-",
                "-",
                "-",
                "1.00" if target == FLOOR else over_floor,
                "-",
                _flag(r.openai_after_import),
                "none" if not r.network_attempts else "ATTEMPTED",
            )
        )
    for module in [t for t in results if t.startswith(BEFORE)] + list(MODULES):
        r = results[module]
        lines.append(
            (
                module,
                "-" if module.startswith(BEFORE) else f"{TARGETS[module]:.1f}",
                f"{r.median('wall'):.0f}",
                ratio(r, "wall"),
                f"{r.median('cpu'):.0f}",
                ratio(r, "cpu"),
                f"{r.median('wall', with_init=True):.0f}",
                f"{r.median('cpu', with_init=True):.0f}",
                ratio(r, "cpu", with_init=True),
                f"{floor_ratio(results, module):.2f}",
                "{:.2f}-{:.2f}".format(*_extremes(floor_ratios(results, module))),
                f"{_flag(r.openai_after_import)} / {_flag(r.openai_after_init)}",
                "none" if not r.network_attempts else "ATTEMPTED",
            )
        )
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    out = [
        f"Cold start: medians of {runs} fresh processes per target (1 warm-up round discarded); "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load average {load:.1f} at the end",
        "",
        "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |",
        "|" + "|".join("-" * (w + 2) for w in widths) + "|",
    ]
    out += ["| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |" for line in lines]
    out += [
        "",
        "+init: import, then promptpipe.wiring.get_app() (what the first event builds); for the worker, "
        "scheduled-prompt and timers functions also warm_for_events(): what their first "
        "event builds (promptpipe.wiring.FIRST_EVENT_NEEDS).",
        "floor: botocore, a DynamoDB and an SQS client, Powertools' HTTP resolver and Logger: what the webhook's "
        "first event needs whatever the code around it.",
        "floor-paused: the floor with its clients built as get_app() builds (cyclic collector paused, then "
        "gc.freeze, promptpipe.collector); its x floor is per round over the floor. Not a target: what the "
        "pause saves on any code.",
        "openai imported: after import / after init. CPU: the child's process time (robust to a busy machine).",
        "x floor: per round, import + init CPU over the floor's CPU in the same round; the median over the "
        "rounds (the targets), and the spread (min-max) of those paired ratios.",
        f"{XRAY}: the X-Ray SDK that Powertools' Tracer loads; its recorder builds botocore clients at import.",
    ]
    for module in MUST_NOT_IMPORT_OPENAI:
        r = results[module]
        ok = r.openai_after_import == {False} and r.openai_after_init == {False}
        out.append(f"{module}: openai never imported: {'OK' if ok else 'FAILED'}")
    for module, limit in TARGETS.items():
        ratio_cpu = floor_ratio(results, module)
        out.append(
            f"{module}: import + init {ratio_cpu:.2f}x the floor (CPU, median of paired rounds), "
            f"limit {limit:.1f}x: {'OK' if ratio_cpu <= limit else 'MISSED'}"
        )
    return "\n".join(out)


def _extremes(values: list[float]) -> tuple[float, float]:
    return min(values), max(values)


def init_ratio(results: dict[str, Result], module: str) -> float:
    """Median import + init CPU of ``module`` over the median CPU of ``import boto3``."""
    return results[module].median("cpu", with_init=True) / results[BASELINE].median("cpu")


def requirements_met(results: dict[str, Result]) -> bool:
    no_openai = all(
        results[m].openai_after_import == {False} and results[m].openai_after_init == {False}
        for m in MUST_NOT_IMPORT_OPENAI
    )
    no_network = not any(r.network_attempts for r in results.values())
    fast_enough = all(floor_ratio(results, module) <= limit for module, limit in TARGETS.items())
    return no_openai and no_network and fast_enough


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="fresh processes per target (at least 5)")
    parser.add_argument("--json", action="store_true", help="print raw samples as JSON")
    parser.add_argument("--compare", type=Path, help="another checkout whose function modules are measured too")
    args = parser.parse_args(argv)
    if args.runs < 5:
        parser.error("--runs must be at least 5")
    compare = args.compare.resolve() if args.compare else None
    results = measure(args.runs, compare=compare)
    if args.json:
        base = results[BASELINE]
        payload = {
            target: {
                **r.samples,
                "median_import_wall_ms": r.median("wall"),
                "median_import_cpu_ms": r.median("cpu"),
                "ratio_to_boto3_wall": r.median("wall") / base.median("wall"),
                "ratio_to_boto3_cpu": r.median("cpu") / base.median("cpu"),
                "openai_after_import": sorted(r.openai_after_import),
                "openai_after_init": sorted(r.openai_after_init),
                "network_attempts": r.network_attempts,
            }
            for target, r in results.items()
        }
        print(json.dumps(payload, indent=2))
    else:
        print(render(results, args.runs))
    return 0 if requirements_met(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
