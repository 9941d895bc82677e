"""The rehearsal's cost: wall time, CPU and peak resident memory of ``promptpipe simulate`` at a
size, and the projection to a study of 200 participants over 28 days (docs/studies.md, "A
rehearsal"; the target: at most 5 minutes and 1 GB on a 2-core machine).

    .venv/bin/python -m scripts.bench.rehearsal --participants 200 --days 28
    .venv/bin/python -m scripts.bench.rehearsal --participants 20 --days 7 --profile 25

A scaled run projects linearly: time per participant-day times 5,600, and the memory after intake
plus its growth per participant-day times 5,600 (the growth is what a longer run adds; the intake
part scales with the participants only, so the projection over-counts it a little).
``--profile N`` runs under cProfile and prints the N functions with the most cumulative and the most
own time.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import sys
import time
import warnings

# As `promptpipe simulate` runs (cli/commands.py): no JSON logs, metrics or traces of the functions.
os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
warnings.filterwarnings("ignore", message="No application metrics to publish")

from promptpipe.local.simulate import run_simulation  # noqa: E402

TARGET_PARTICIPANTS, TARGET_DAYS = 200, 28
TARGET_SECONDS, TARGET_BYTES = 300.0, 2**30


def peak_resident_bytes() -> int:
    """The process's peak resident set size (Linux reports KiB)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=TARGET_PARTICIPANTS)
    parser.add_argument("--days", type=int, default=TARGET_DAYS)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="print the top N functions (cProfile)")
    parser.add_argument("--profile-out", default=None, metavar="FILE", help="with --profile: also save the stats")
    args = parser.parse_args(argv)

    profiler = cProfile.Profile() if args.profile else None
    wall0 = time.perf_counter()
    if profiler:
        profiler.enable()
    report = run_simulation(args.participants, args.days, seed=args.seed)
    if profiler:
        profiler.disable()
    wall = time.perf_counter() - wall0
    peak = peak_resident_bytes()
    participant_days = args.participants * args.days
    target_pd = TARGET_PARTICIPANTS * TARGET_DAYS
    for line in report.lines():
        print(line)
    print(
        f"rehearsal {args.participants} x {args.days}: wall {wall:.1f} s ({1000 * wall / participant_days:.1f} ms per "
        f"participant-day), CPU {report.cpu_seconds:.1f} s, peak resident memory {peak / 2**20:.0f} MB"
    )
    if participant_days != target_pd:
        per_pd = report.memory_per_participant_day or 0.0
        base = report.rss_after_intake or 0
        projected_wall = wall * target_pd / participant_days
        # The run is one thread: on an idle machine its wall time is about its CPU time; on a shared
        # one the wall time measures the neighbours too, so both are projected.
        projected_cpu = report.cpu_seconds * target_pd / participant_days
        projected_bytes = base + per_pd * target_pd
        print(
            f"projected {TARGET_PARTICIPANTS} x {TARGET_DAYS}: wall {projected_wall:.0f} s, CPU {projected_cpu:.0f} s "
            f"(target {TARGET_SECONDS:.0f} s), resident memory {projected_bytes / 2**20:.0f} MB "
            f"(target {TARGET_BYTES / 2**20:.0f} MB)"
        )
    else:
        ok = wall <= TARGET_SECONDS and peak <= TARGET_BYTES
        print(f"target {TARGET_SECONDS:.0f} s and {TARGET_BYTES / 2**20:.0f} MB: {'met' if ok else 'NOT met'}")
    if profiler:
        if args.profile_out:
            profiler.dump_stats(args.profile_out)
        stats = pstats.Stats(profiler, stream=sys.stdout)
        stats.sort_stats("cumulative").print_stats(args.profile)
        stats.sort_stats("tottime").print_stats(args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
