"""The study rehearsal's cost: wall and CPU time and peak resident memory of
``promptpipe simulate --study`` (docs/studies.md#a-rehearsal; the issue's bound: 200 participants over
28 days in at most 5 minutes and 1 GB on a 2-core machine).

    PYTHONPATH=shared:. .venv/bin/python -m scripts.bench.study_rehearsal --participants 200 --days 28

Prints one line of figures; the peak is the process's ``ru_maxrss`` (the whole run, stack included).
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import sys
import time
import warnings
from pathlib import Path

# As the promptpipe command runs it: no metrics, logs or traces of the handlers (cli/commands.py).
os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")

from promptpipe.local.study_rehearsal import ReplyModel, run_study_rehearsal
from promptpipe.usecases.studies import parse_study

EXAMPLE = Path(__file__).resolve().parents[2] / "prompts" / "studies" / "example-mrt.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--days", type=int, default=28)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--study", type=Path, default=EXAMPLE)
    args = parser.parse_args(argv)
    logging.disable(logging.INFO)  # the handlers' INFO lines would dominate the measure
    warnings.simplefilter("ignore")
    study = parse_study(args.study.read_text(encoding="utf-8"))
    wall0, cpu0 = time.perf_counter(), time.process_time()
    run = run_study_rehearsal(
        study,
        args.participants,
        args.days,
        seed=args.seed,
        replies=ReplyModel(effects={"framing_a": 0.1, "framing_b": 0.05}),
        progress=lambda text: print(f"… {text}", file=sys.stderr),
    )
    rows = len(run.decisions)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    run.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    print(
        f"study rehearsal {args.participants} x {args.days} days: {rows} decisions; wall {wall:.1f} s, "
        f"CPU {cpu:.1f} s, peak resident memory {peak / 2**20:.0f} MB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
