"""Where a function's first-event init goes: CPU ms of each step, in one fresh process per round.

Run: ``python -m scripts.bench.cold_start_parts [module]`` (default ``functions.inbound.webhook``;
``--runs N``, default 3). After importing the module (not timed), it times in order: importing
``botocore.session``, the settings, the first DynamoDB client, the SQS client, importing the sent
ledger adapter, and the rest of ``get_app()``; then what import and init leave to the first events
(not in ``scripts.bench.cold_start``'s figures): parsing a first phone number (``phonenumbers`` is imported
by it), building the validators of the webhook's first text (the inbound message and the queue
event), and building every other model of the code base still unbuilt (``LazyModel``), an upper
bound no single event reaches. Same child environment and socket guard as
``scripts.bench.cold_start``; the figures are for reading next to its table (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

from scripts.bench.cold_start import REPO, child_environment

CHILD = r"""
import importlib, json, socket, sys, time

def _refuse(self, address, *args):
    raise OSError("network access during the benchmark")

socket.socket.connect = _refuse
importlib.import_module(sys.argv[1])
parts = {}

def timed(label, step):
    start = time.process_time()
    step()
    parts[label] = (time.process_time() - start) * 1000

timed("import botocore.session", lambda: importlib.import_module("botocore.session"))
from promptpipe.settings import get_settings
timed("settings", get_settings)
from promptpipe.adapters import aws
timed("first client (DynamoDB)", lambda: aws.aws_client("dynamodb", get_settings()))
timed("second client (SQS)", lambda: aws.aws_client("sqs", get_settings()))
timed("import adapters.sent_ledger", lambda: importlib.import_module("promptpipe.adapters.sent_ledger"))
from promptpipe.wiring import get_app
timed("rest of get_app()", get_app)

from pydantic import BaseModel
from promptpipe.rules.phone import canonicalize_phone

timed("first phone number parsed", lambda: canonicalize_phone("+14155550100"))

def build(models):
    for model in models:
        model.model_rebuild()

def unbuilt():
    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)
    return [
        cls for cls in set(subclasses(BaseModel))
        if cls.__module__.startswith(("promptpipe.", "functions.")) and not cls.__pydantic_complete__
    ]

from promptpipe.models.events import TurnEvent
from promptpipe.models.messaging import InboundMessage
timed("webhook's first text: models", lambda: build([InboundMessage, TurnEvent]))
timed("every other model", lambda: build(unbuilt()))
print(json.dumps(parts))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module", nargs="?", default="functions.inbound.webhook")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    samples: dict[str, list[float]] = {}
    for _ in range(args.runs):
        done = subprocess.run(
            [sys.executable, "-c", CHILD, args.module],
            cwd=REPO,
            env=child_environment(),
            capture_output=True,
            text=True,
            check=True,
        )
        for label, value in json.loads(done.stdout.strip().splitlines()[-1]).items():
            samples.setdefault(label, []).append(value)
    print(f"{args.module}: first-event init, CPU ms, median of {args.runs} fresh processes")
    for label, values in samples.items():
        print(f"  {label:32} {statistics.median(values):6.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
