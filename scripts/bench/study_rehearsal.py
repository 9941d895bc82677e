"""The study rehearsal's cost, and its checks: wall and CPU time and peak resident memory of
``promptpipe simulate --study FILE --export DIR`` (docs/studies.md#a-rehearsal; the issue's bound: 200
participants over 28 days in at most 5 minutes and 1 GB on a 2-core machine).

    PYTHONPATH=shared:. .venv/bin/python -m scripts.bench.study_rehearsal --participants 200 --days 28 --check
    PYTHONPATH=shared:. .venv/bin/python -m scripts.bench.study_rehearsal --participants 20 --days 7 --stack moto

Prints one line of figures: the rehearsal and its de-identified export (``--stack memory``, the
default, or ``moto``), CPU as user + system time, the peak as the process's ``ru_maxrss`` (the whole
run, stack included). ``--check`` then runs the study's checks (docs/studies.md) on the export
(``promptpipe.local.rehearsal_checks``), and the same rehearsal once more, unmeasured, to compare
the arms it draws (or, with ``--same-as DIR``, reads the export of the same command run alongside);
it exits 1 when a check fails. ``--no-export``: the rehearsal alone (the figures
of the first measurements).
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import sys
import tempfile
import time
import warnings
from pathlib import Path

# As the promptpipe command runs it: no metrics, logs or traces of the handlers (cli/commands.py).
os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")

from promptpipe.local.rehearsal_checks import DICTIONARY, Expected, arms_hash, check_export, check_same_arms
from promptpipe.local.rehearsal_export import finish_rehearsal
from promptpipe.local.study_rehearsal import ReplyModel, StudyRun, run_study_rehearsal
from promptpipe.usecases.studies import parse_study

EXAMPLE = Path(__file__).resolve().parents[2] / "prompts" / "studies" / "example-mrt.json"
EFFECTS = {"framing_a": 0.1, "framing_b": 0.05}
TARGET_SECONDS, TARGET_BYTES = 300.0, 2**30


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)


def rehearse(args: argparse.Namespace, *, progress: bool) -> StudyRun:
    return run_study_rehearsal(
        parse_study(args.study.read_text(encoding="utf-8")),
        args.participants,
        args.days,
        seed=args.seed,
        replies=ReplyModel(effects=EFFECTS),
        progress=(lambda text: print(f"… {text}", file=sys.stderr)) if progress else None,
        stack=args.stack,
    )


def export(run: StudyRun, out: Path) -> list[str]:
    lines, _ = finish_rehearsal(run.env, run.study, run.decisions, out)
    return lines


def same_seed_export(args: argparse.Namespace, scratch: Path) -> Path:
    """The export of the same rehearsal: ``--same-as DIR`` once its dictionary (written last) is
    there, else run again here."""
    if args.same_as is not None:
        while not (args.same_as / DICTIONARY).exists():
            time.sleep(5)
        return Path(args.same_as)
    again = rehearse(args, progress=False)
    try:
        export(again, scratch)
    finally:
        again.close()
    return scratch


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--days", type=int, default=28)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--study", type=Path, default=EXAMPLE)
    parser.add_argument("--stack", choices=("memory", "moto"), default="memory")
    parser.add_argument("--export", type=Path, default=None, metavar="DIR", help="where to write (default: a temp dir)")
    parser.add_argument("--no-export", action="store_true", help="measure the rehearsal alone")
    parser.add_argument("--check", action="store_true", help="run the study's checks (and the same seed once more)")
    parser.add_argument(
        "--same-as",
        type=Path,
        default=None,
        metavar="DIR",
        help="with --check: compare the arms with the export of the same command in DIR (run alongside, in another "
        "process; waited for) instead of running the rehearsal again here",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    logging.disable(logging.INFO)  # the handlers' INFO lines would dominate the measure
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory(prefix="rehearsal-") as scratch:
        out = args.export or Path(scratch) / "export"
        wall0, cpu0 = time.perf_counter(), cpu_seconds()
        run = rehearse(args, progress=not args.quiet)
        rows = len(run.decisions)
        wall1, cpu1 = time.perf_counter(), cpu_seconds()
        report = [] if args.no_export else export(run, out)
        wall2, cpu2 = time.perf_counter(), cpu_seconds()
        peak = peak_bytes()
        expected = Expected(
            participants=args.participants,
            days_lived=args.days,
            duration_days=run.study.duration_days,
            effects=EFFECTS,
            phones=run.phones,
            names=run.names,
            region=run.env.settings.default_phone_region,
        )
        study = run.study
        run.close()
        del run
        for line in report:
            print(line)
        wall, cpu = wall2 - wall0, cpu2 - cpu0
        print(
            f"study rehearsal {args.participants} x {args.days} days ({args.stack} stack): {rows} decisions; "
            f"wall {wall:.1f} s (rehearsal {wall1 - wall0:.1f} + export {wall2 - wall1:.1f}), "
            f"CPU user+sys {cpu:.1f} s (rehearsal {cpu1 - cpu0:.1f} + export {cpu2 - cpu1:.1f}), "
            f"peak resident memory {peak / 2**20:.0f} MB; load average {os.getloadavg()[0]:.1f}"
        )
        met = cpu <= TARGET_SECONDS and peak <= TARGET_BYTES
        print(
            f"target {TARGET_SECONDS:.0f} s and {TARGET_BYTES / 2**20:.0f} MB: "
            f"{'met' if met else 'NOT met'} on CPU time and peak memory"
            f" ({'met' if wall <= TARGET_SECONDS else 'not met'} on wall time, which counts the machine's other work)"
        )
        if not args.check or args.no_export:
            return 0
        checks = check_export(out, study, expected)
        checks.append(check_same_arms(arms_hash(out), arms_hash(same_seed_export(args, Path(scratch) / "again"))))
        for check in checks:
            print(check.line())
        print(
            "a redelivered daily-prompt event draws the same arm and makes one row: "
            "tests/e2e/test_study_rehearsal.py (moto and memory stacks)"
        )
        return 0 if all(check.passed for check in checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
