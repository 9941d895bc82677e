"""Cold start per function: importing its handler module, in fresh processes (issue 6 item 2, DESIGN §7).

Run: ``python -m scripts.bench_cold_start`` (``--runs N``, default 7; ``--json``).

For every function module, and for a bare ``import boto3`` as the yardstick, each round starts one
fresh interpreter per target (targets interleaved, in a fixed order, so that drift on the machine
hits them alike) and times, inside the child with ``time.perf_counter``:

- **import**: ``importlib.import_module(module)``, which also runs what the module does at import
  (Powertools resolver, processor, idempotency persistence layer and its boto3 client);
- **init**: then ``promptpipe.wiring.get_app()``, the composition root the first request builds
  (settings, the DynamoDB/Scheduler/SQS clients, the messenger, the prompt library).

Interpreter start-up is not included. One warm-up round is discarded so that every child finds the
bytecode caches written (a Lambda bundle ships without them unless compiled at build time; see
docs/benchmarks.md). The child has dummy credentials and a region, and a guard that refuses any
socket connection: a function must not touch the network before its first event. The table reports
the median of the rounds, the ratio of that median to the median of ``import boto3`` measured in the
same run, and whether ``openai`` was in ``sys.modules`` after import and after init (the webhook and
enrollment functions must never import it; DESIGN §7).
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

REPO = Path(__file__).resolve().parent.parent
BASELINE = "boto3"
XRAY = "aws_xray_sdk.core"  # timed after an untimed ``import boto3``: what Powertools' Tracer adds
MODULES = (
    "functions.enrollment.handler",
    "functions.inbound.webhook",
    "functions.inbound.worker",
    "functions.scheduled_prompt.handler",
    "functions.timers.handler",
)
MUST_NOT_IMPORT_OPENAI = ("functions.enrollment.handler", "functions.inbound.webhook")

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
    "IDEMPOTENCY_TABLE_NAME": "promptpipe-idempotency",
    "INBOUND_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/000000000000/promptpipe-inbound.fifo",
    "MESSAGING_PROVIDER": "twilio",
    "TWILIO_ACCOUNT_SID": "AC00000000000000000000000000000000",
    "TWILIO_AUTH_TOKEN": "dummy-auth-token",
    "TWILIO_FROM_NUMBER": "+14155550000",
    "POWERTOOLS_SERVICE_NAME": "promptpipe",
    "POWERTOOLS_METRICS_NAMESPACE": "PromptPipe",
    "POWERTOOLS_LOG_LEVEL": "ERROR",
}

# Runs in the child. Prints one JSON line.
CHILD = r"""
import json, socket, sys, time

attempts = []

def _refuse(self, address, *args):
    attempts.append(repr(address))
    raise OSError("network access during the cold-start benchmark")

socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
target = sys.argv[1]
if target == "aws_xray_sdk.core":
    import boto3  # noqa: F401  (not timed)
started = time.perf_counter()
if target in ("boto3", "aws_xray_sdk.core"):
    import importlib

    importlib.import_module(target)
else:
    import importlib

    importlib.import_module(target)
imported = time.perf_counter()
openai_after_import = "openai" in sys.modules
init_ms = None
if target.startswith("functions."):
    from promptpipe.wiring import get_app

    get_app()
    init_ms = (time.perf_counter() - imported) * 1000
print(json.dumps({
    "import_ms": (imported - started) * 1000,
    "init_ms": init_ms,
    "openai_after_import": openai_after_import,
    "openai_after_init": "openai" in sys.modules,
    "network_attempts": attempts,
}))
"""


@dataclass
class Result:
    target: str
    import_ms: list[float] = field(default_factory=list)
    init_ms: list[float] = field(default_factory=list)
    openai_after_import: set[bool] = field(default_factory=set)
    openai_after_init: set[bool] = field(default_factory=set)
    network_attempts: list[str] = field(default_factory=list)

    @property
    def median_import(self) -> float:
        return statistics.median(self.import_ms)

    @property
    def median_total(self) -> float:
        return statistics.median(a + b for a, b in zip(self.import_ms, self.init_ms, strict=True))


def child_environment() -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(CHILD_ENVIRONMENT)
    return env


def run_once(target: str) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, "-c", CHILD, target],
        cwd=REPO,
        env=child_environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"importing {target} failed:\n{completed.stderr}")
    return dict(json.loads(completed.stdout.strip().splitlines()[-1]))


def measure(runs: int, warmup: int = 1) -> dict[str, Result]:
    targets = (BASELINE, XRAY, *MODULES)
    results = {t: Result(t) for t in targets}
    for round_index in range(warmup + runs):
        for target in targets:
            sample = run_once(target)
            if round_index < warmup:
                continue
            result = results[target]
            result.import_ms.append(sample["import_ms"])
            if sample["init_ms"] is not None:
                result.init_ms.append(sample["init_ms"])
            result.openai_after_import.add(sample["openai_after_import"])
            result.openai_after_init.add(sample["openai_after_init"])
            result.network_attempts += sample["network_attempts"]
    return results


def _flag(values: set[bool]) -> str:
    return "mixed" if len(values) > 1 else str(next(iter(values)))


def render(results: dict[str, Result], runs: int) -> str:
    base = results[BASELINE].median_import
    header = (
        "target",
        "import ms (median)",
        "min",
        "x boto3",
        "import+init ms",
        "x boto3",
        "openai after import",
        "openai after init",
        "network",
    )

    def network(result: Result) -> str:
        return "none" if not result.network_attempts else "ATTEMPTED"

    lines = []
    for label, target in (("import boto3 (yardstick)", BASELINE), (f"{XRAY}, after boto3", XRAY)):
        r = results[target]
        lines.append(
            (
                label,
                f"{r.median_import:.0f}",
                f"{min(r.import_ms):.0f}",
                f"{r.median_import / base:.2f}",
                "-",
                "-",
                _flag(r.openai_after_import),
                "-",
                network(r),
            )
        )
    for module in MODULES:
        r = results[module]
        lines.append(
            (
                module,
                f"{r.median_import:.0f}",
                f"{min(r.import_ms):.0f}",
                f"{r.median_import / base:.2f}",
                f"{r.median_total:.0f}",
                f"{r.median_total / base:.2f}",
                _flag(r.openai_after_import),
                _flag(r.openai_after_init),
                network(r),
            )
        )
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    out = [
        f"Cold start: median of {runs} fresh processes per target (after 1 discarded warm-up round); "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs",
        "",
        "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |",
        "|" + "|".join("-" * (w + 2) for w in widths) + "|",
    ]
    out += ["| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |" for line in lines]
    out += [
        "",
        "init = promptpipe.wiring.get_app() after the import (what the first event builds).",
        f"{XRAY}: the X-Ray SDK that Powertools' Tracer loads; its recorder builds botocore clients at import.",
    ]
    for module in MUST_NOT_IMPORT_OPENAI:
        r = results[module]
        ok = r.openai_after_import == {False} and r.openai_after_init == {False}
        out.append(f"{module}: openai never imported: {'OK' if ok else 'FAILED'}")
    return "\n".join(out)


def requirements_met(results: dict[str, Result]) -> bool:
    no_openai = all(
        results[m].openai_after_import == {False} and results[m].openai_after_init == {False}
        for m in MUST_NOT_IMPORT_OPENAI
    )
    no_network = not any(r.network_attempts for r in results.values())
    return no_openai and no_network


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh processes per target (at least 5)")
    parser.add_argument("--json", action="store_true", help="print raw samples as JSON")
    args = parser.parse_args(argv)
    if args.runs < 5:
        parser.error("--runs must be at least 5")
    results = measure(args.runs)
    if args.json:
        payload = {
            target: {
                "import_ms": r.import_ms,
                "init_ms": r.init_ms,
                "median_import_ms": r.median_import,
                "ratio_to_boto3": r.median_import / results[BASELINE].median_import,
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
