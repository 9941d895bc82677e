"""How long the console's participants list takes to render for N participants on the local stack.

Run: ``python -m scripts.bench.console [--participants 1000] [--repeat 3]``. Everything runs in one
process: ``LocalEnvironment`` (moto DynamoDB, the real API handler), N participants enrolled through
the participants API (each gets its greeting), then ``Console.list_page`` rendered through
``InProcessTransport`` — the same API calls ``promptpipe console`` makes against ``promptpipe serve``,
without the HTTP hop. Prints the API calls one render makes and the best, median and worst render
time. ``--compare DIR``: the same, in the same run, on another checkout (e.g. ``git worktree add
/tmp/before 114ef8f``), run with that checkout's code first. Exits 1 when this tree's best render
is over ``--target-ms`` (1,000 ms: the list of 1,000 participants in under a second). The figure is
recorded in docs/benchmarks.md ("The console's list").
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime

from promptpipe.console.app import Console
from promptpipe.coordinator.client import PAGE_SIZE, CoordinatorClient
from promptpipe.local.api_transport import InProcessTransport
from promptpipe.local.environment import LocalEnvironment, local_settings
from promptpipe.local.failures import quiet_function_logs


class CountingTransport(InProcessTransport):
    calls = 0

    def request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        CountingTransport.calls += 1
        return super().request(*args, **kwargs)


def main() -> None:
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")  # the functions' metric lines off stdout
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--query", default="", help="the list's query string, e.g. page=2 or needs=1")
    parser.add_argument("--compare", metavar="DIR", help="another checkout: run this script's there first")
    parser.add_argument("--target-ms", type=float, default=1000.0, help="exit 1 when the best render is over it")
    args = parser.parse_args()
    if args.compare:
        print(f"== {args.compare}", flush=True)
        command = [sys.executable, "-m", "scripts.bench.console", "--participants", str(args.participants)]
        command += ["--repeat", str(args.repeat), "--query", args.query]
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(["shared", "."])}  # that checkout's code
        subprocess.run(command, cwd=args.compare, env=environment, check=False)  # its verdict is printed
        print("== this tree", flush=True)
    settings = local_settings(offline_coach=True, openai_api_key=None)
    with (
        quiet_function_logs(verbose=False),
        LocalEnvironment(start=datetime(2026, 3, 2, 13, 0, tzinfo=UTC), settings=settings) as env,
    ):
        started = time.perf_counter()
        for n in range(args.participants):
            answer = env.api(
                "POST", "/conversation/participants", json_body={"phone_number": f"+1416555{n:04d}", "name": f"P{n}"}
            )
            assert answer.status == 201, answer.body
        print(f"enrolled {args.participants} participants in {time.perf_counter() - started:.1f} s")
        console = Console(CoordinatorClient(CountingTransport(env)))
        for page_size in (100, PAGE_SIZE):  # 100: the API's largest page before it took 1,000
            CountingTransport.calls = 0
            started = time.perf_counter()
            listed = sum(1 for _ in console.client.iter_participants(page_size=page_size))
            print(
                f"listing the {listed} participant records alone, pages of {page_size}: "
                f"{CountingTransport.calls} API calls, {time.perf_counter() - started:.3f} s"
            )
        if hasattr(console.client, "participant_rows"):
            CountingTransport.calls = 0
            started = time.perf_counter()
            rows = console.client.participant_rows(limit=50)
            print(
                f"the list's rows alone (one page of {len(rows.rows)} of {rows.total}): "
                f"{CountingTransport.calls} API call, {time.perf_counter() - started:.3f} s"
            )
        query = dict(part.split("=", 1) for part in args.query.split("&") if "=" in part)
        times = []
        for _ in range(args.repeat):
            CountingTransport.calls = 0
            started = time.perf_counter()
            page = console.list_page(query)
            times.append(time.perf_counter() - started)
        print(
            f"list of {args.participants} participants: {CountingTransport.calls} API calls, {len(page) // 1024} KiB; "
            f"render best {min(times):.3f} s, median {statistics.median(times):.3f} s, worst {max(times):.3f} s"
        )
    if min(times) * 1000 > args.target_ms:
        print(f"best render {min(times) * 1000:.0f} ms, over the {args.target_ms:.0f} ms target: MISSED")
        sys.exit(1)
    print(f"best render {min(times) * 1000:.0f} ms, within the {args.target_ms:.0f} ms target: OK")


if __name__ == "__main__":
    main()
