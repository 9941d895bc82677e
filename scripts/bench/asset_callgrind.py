"""Cold start inside the built Lambda assets as a count of instructions (callgrind): independent of
the machine's load, unlike the CPU times of ``scripts.bench.asset_import``.

Run: ``python -m scripts.bench.asset_sizes --keep /tmp/assets`` (no ``LAMBDA_PYTHON``: assets without
bytecode), then
``python -m scripts.bench.asset_callgrind /tmp/assets --python ~/.pyenv/versions/3.12.1/bin/python3.12``
(``--compare DIR``: the assets of another checkout; ``--module M``: only these functions; ``--json``).

Each asset directory is copied and compiled as the bundler compiles it (``infra.bundling.compile_asset``);
then, once per target, ``valgrind --tool=callgrind`` runs ``scripts.bench.cold_start``'s child with the
asset's Python (same dummy environment, same socket guard, import + ``get_app()`` + the event
functions' ``warm_for_events``), and the total of instructions it reports is read. The interpreter's
start-up (``python -c pass`` under the same tool) is subtracted from every figure; the ratio is the
function's count over the floor's (botocore, a DynamoDB and an SQS client, Powertools' HTTP resolver
and Logger) in the same asset. One run each: the count moves by well under 1 % between runs (hash
randomisation is fixed with ``PYTHONHASHSEED=0``).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from infra.bundling import compile_asset
from scripts.bench.asset_import import _assets, _copy, asset_of
from scripts.bench.cold_start import CHILD, FLOOR, MODULES, child_environment

COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def instructions(python: str, asset: Path, code: str, *arguments: str) -> int:
    """Instructions callgrind counts for ``python -c code arguments`` run in ``asset``."""
    env = {
        **child_environment(asset),
        "PYTHONPATH": str(asset),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
    }
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", python, "-c", code, *arguments],
        env=env,
        cwd=asset,
        capture_output=True,
        text=True,
        check=False,
    )
    found = COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"{arguments} in {asset} failed:\n{done.stderr[-3000:]}")
    if code == CHILD and json.loads(done.stdout.strip().splitlines()[-1])["network_attempts"]:
        raise RuntimeError(f"{arguments} tried the network")
    return int(found.group(1))


def count(python: str, directory: Path, modules: list[str], work: Path) -> dict[str, dict[str, int]]:
    """Per asset of ``directory``: start-up, floor and each function's count, start-up subtracted."""
    figures: dict[str, dict[str, int]] = {}
    assets = _assets(argparse.ArgumentParser(), directory)
    for asset in assets:
        wanted = [m for m in modules if asset_of(m, assets) == asset]
        if not wanted:
            continue
        compiled = _copy(asset, work / directory.name / asset.name)
        compile_asset(compiled, python)
        startup = instructions(python, compiled, "pass")
        row = {"startup": startup, FLOOR: instructions(python, compiled, CHILD, FLOOR) - startup}
        for module in wanted:
            row[module] = instructions(python, compiled, CHILD, module) - startup
        figures[asset.name] = row
    return figures


def _table(title: str, figures: dict[str, dict[str, int]], before: dict[str, dict[str, int]] | None) -> None:
    print(title)
    print("| function | asset | M instructions | floor M (same asset) | x floor |" + (" vs before |" if before else ""))
    print("|---" * (6 if before else 5) + "|")
    for asset, row in figures.items():
        for module in (m for m in MODULES if m in row):
            count, floor = row[module], row[FLOOR]
            line = f"| {module} | {asset} | {count / 1e6:,.0f} | {floor / 1e6:,.0f} | {count / floor:.2f} |"
            if before:
                then = next((r[module] for r in before.values() if module in r), None)
                line += f" {(count / then - 1) * 100:+.1f} % |" if then else " - |"
            print(line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assets", type=Path, help="the directory scripts.bench.asset_sizes --keep built")
    parser.add_argument("--python", required=True, help="a Python of the Lambda runtime's version")
    parser.add_argument("--compare", type=Path, help="assets of another checkout")
    parser.add_argument("--module", action="append", choices=MODULES, help="only these functions")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    modules = args.module or list(MODULES)
    with tempfile.TemporaryDirectory(prefix="promptpipe-callgrind-") as work:
        before = count(args.python, args.compare, modules, Path(work) / "before") if args.compare else None
        now = count(args.python, args.assets, modules, Path(work) / "now")
    if args.json:
        print(json.dumps({"now": now, "before": before}, indent=1))
        return 0
    if before:
        _table(f"before: {args.compare}: instructions of import + first-event init (start-up subtracted)", before, None)
    _table(f"{args.assets}: instructions of import + first-event init (start-up subtracted)", now, before)
    return 0


if __name__ == "__main__":
    sys.exit(main())
