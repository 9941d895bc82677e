"""Cold start inside a built Lambda asset, with and without bytecode: what ``bench_cold_start`` leaves out.

Run: ``python -m scripts.asset_sizes --keep /tmp/assets`` (with no ``LAMBDA_PYTHON``: an asset
without bytecode), then
``python -m scripts.bench_asset_import /tmp/assets/enrollment-webhook-timers --python python3.12``
(``--runs N``, default 5; ``--module M``, repeatable, default the webhook and the enrollment API).

Lambda's ``/var/task`` is read-only and the assets carry no ``.pyc`` files, so Python compiles every
module it imports at every cold start. This times import + ``wiring.get_app()`` (CPU, fresh
processes, the benchmark's dummy environment) of each module with the asset's Python version twice:
from a copy without bytecode, with ``PYTHONDONTWRITEBYTECODE`` (what Lambda does), and from a copy
compiled as the bundler compiles it (``infra.bundling.compile_asset``: the dependencies bytecode
only, our code beside its sources). The Python given must be the runtime's version (the wheels are
built for it).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from infra.bundling import compile_asset
from scripts.bench_cold_start import child_environment

CHILD = """
import importlib, sys, time
start = time.process_time()
importlib.import_module(sys.argv[1])
from promptpipe.wiring import get_app
get_app()
print((time.process_time() - start) * 1000)
"""
DEFAULT_MODULES = ("functions.inbound.webhook", "functions.enrollment.handler")


def _copy(asset: Path, into: Path) -> Path:
    shutil.copytree(asset, into, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return into


def _time(python: str, asset: Path, module: str, *, bytecode: bool) -> float:
    env = {**child_environment(asset), "PYTHONPATH": str(asset)}
    if not bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run([python, "-c", CHILD, module], env=env, cwd=asset, capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("asset", type=Path, help="a built asset directory (scripts.asset_sizes --keep)")
    parser.add_argument("--python", required=True, help="a Python of the Lambda runtime's version")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--module", action="append", help="function module (repeatable)")
    args = parser.parse_args(argv)
    if any(path.parent.name != "__pycache__" for path in args.asset.rglob("*.pyc")):
        parser.error(f"{args.asset} is compiled already: build it without LAMBDA_PYTHON (scripts.asset_sizes --keep)")
    with tempfile.TemporaryDirectory(prefix="promptpipe-asset-") as work:
        plain = _copy(args.asset, Path(work) / "plain")
        compiled = _copy(args.asset, Path(work) / "compiled")
        compile_asset(compiled, args.python)  # as the bundler ships it
        print(f"import + get_app() CPU ms in {args.asset.name}, median of {args.runs} fresh processes ({args.python})")
        print("| module | no bytecode (as in Lambda) | compiled beforehand |")
        print("|---|---|---|")
        for module in args.module or DEFAULT_MODULES:
            without = [_time(args.python, plain, module, bytecode=False) for _ in range(args.runs)]
            with_ = [_time(args.python, compiled, module, bytecode=False) for _ in range(args.runs)]
            print(f"| {module} | {statistics.median(without):.0f} | {statistics.median(with_):.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
