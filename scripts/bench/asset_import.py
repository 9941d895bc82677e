"""Cold start inside the built Lambda assets, compiled as they ship, each function against the floor
built in the same asset.

Run: ``python -m scripts.bench.asset_sizes --keep /tmp/assets`` (with no ``LAMBDA_PYTHON`` and no
``python3.12`` on the PATH: assets without bytecode), then
``python -m scripts.bench.asset_import /tmp/assets --python ~/.pyenv/versions/3.12.1/bin/python3.12``
(``--runs N``, default 9; ``--uncompiled``: also time each function from a copy without bytecode;
``--compare DIR``: the assets of another checkout, measured in the same rounds, interleaved).

Lambda's ``/var/task`` is read-only: a function runs from the bytecode its asset ships, or compiles
every module it imports at every cold start. Each asset directory (one per dependency closure) is
copied and compiled as the bundler compiles it (``infra.bundling.compile_asset``); then, in paired
rounds of fresh processes with the asset's Python, each function's import + first-event init CPU is
timed with ``scripts.bench.cold_start``'s child (same dummy environment, same socket guard, the
event functions' ``warm_for_events`` included), and so is the floor of that benchmark (botocore, a
DynamoDB and an SQS client, Powertools' HTTP resolver and Logger) from the same asset: the ratio is
per round, function over floor, and the table gives its median. The Python given must be the
runtime's version (the wheels are built for it).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from infra.bundling import compile_asset
from scripts.bench.cold_start import CHILD, FLOOR, MODULES, child_environment


def _copy(asset: Path, into: Path) -> Path:
    shutil.copytree(asset, into, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return into


def _cpu(python: str, asset: Path, target: str) -> float:
    """Import + init CPU ms of ``target`` (a function module or the floor) in a fresh process."""
    env = {**child_environment(asset), "PYTHONPATH": str(asset), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [python, "-c", CHILD, target], env=env, cwd=asset, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{target} in {asset} failed:\n{done.stderr}")
    sample = json.loads(done.stdout.strip().splitlines()[-1])
    if sample["network_attempts"]:
        raise RuntimeError(f"{target} tried the network: {sample['network_attempts']}")
    return float(sample["import_cpu"] + (sample["init_cpu"] or 0.0))


# Each function module's key in ``infra.bundling.FUNCTION_EXTRAS``, which names its asset directory.
FUNCTION_KEYS = {
    "functions.enrollment.handler": "enrollment",
    "functions.inbound.webhook": "webhook",
    "functions.inbound.worker": "worker",
    "functions.scheduled_prompt.handler": "scheduled-prompt",
    "functions.timers.handler": "timers",
}


def asset_of(module: str, assets: list[Path]) -> Path:
    """The asset directory holding ``module`` (``scripts.bench.asset_sizes --keep`` names each after its
    functions' keys, e.g. ``enrollment-webhook-timers``)."""
    found = [asset for asset in assets if FUNCTION_KEYS[module] in asset.name]
    if len(found) != 1:
        raise ValueError(f"no single asset for {module} among {[a.name for a in assets]}")
    return found[0]


def _measure(
    python: str, assets: list[Path], compiled: dict[Path, Path], plain: dict[Path, Path], *, record: bool, into: Result
) -> None:
    """One round: the floor of each asset, then each function of that asset, all from fresh processes."""
    for asset in assets:
        floor = _cpu(python, compiled[asset], FLOOR)
        for module in (m for m in MODULES if asset_of(m, assets) == asset):
            spent = _cpu(python, compiled[asset], module)
            uncompiled = _cpu(python, plain[asset], module) if asset in plain else 0.0
            if record:
                into.cpu[module].append(spent)
                into.ratios[module].append(spent / floor)
                into.without[module].append(uncompiled)
        if record:
            into.floors[asset].append(floor)


class Result:
    def __init__(self, assets: list[Path]) -> None:
        self.floors: dict[Path, list[float]] = {asset: [] for asset in assets}
        self.cpu: dict[str, list[float]] = {module: [] for module in MODULES}
        self.ratios: dict[str, list[float]] = {module: [] for module in MODULES}
        self.without: dict[str, list[float]] = {module: [] for module in MODULES}


def _table(title: str, assets: list[Path], result: Result, uncompiled: bool) -> None:
    print(title)
    header = "| function | asset | CPU ms | floor CPU ms (same asset) | x floor (median of rounds) |"
    print(header + (" no bytecode CPU ms |" if uncompiled else ""))
    print("|---" * (6 if uncompiled else 5) + "|")
    for module in MODULES:
        asset = asset_of(module, assets)
        row = (
            f"| {module} | {asset.name} | {statistics.median(result.cpu[module]):.0f} | "
            f"{statistics.median(result.floors[asset]):.0f} | {statistics.median(result.ratios[module]):.2f} |"
        )
        print(row + (f" {statistics.median(result.without[module]):.0f} |" if uncompiled else ""))


def _assets(parser: argparse.ArgumentParser, directory: Path) -> list[Path]:
    assets = sorted(p for p in directory.iterdir() if (p / "functions").is_dir())
    if any(path.parent.name != "__pycache__" for asset in assets for path in asset.rglob("*.pyc")):
        parser.error(
            f"{directory} is compiled already: build it without a Python 3.12 (scripts.bench.asset_sizes --keep)"
        )
    return assets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assets", type=Path, help="the directory scripts.bench.asset_sizes --keep built")
    parser.add_argument("--python", required=True, help="a Python of the Lambda runtime's version")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--uncompiled", action="store_true", help="also time each function without bytecode")
    parser.add_argument("--compare", type=Path, help="assets of another checkout, measured in the same rounds")
    args = parser.parse_args(argv)
    sets = {"": _assets(parser, args.assets)}
    if args.compare is not None:
        sets = {"before: ": _assets(parser, args.compare), **{"": sets[""]}}
    results = {label: Result(assets) for label, assets in sets.items()}
    with tempfile.TemporaryDirectory(prefix="promptpipe-asset-") as work:
        compiled: dict[Path, Path] = {}
        plain: dict[Path, Path] = {}
        for index, assets in enumerate(sets.values()):
            for asset in assets:
                compiled[asset] = _copy(asset, Path(work) / str(index) / "compiled" / asset.name)
                compile_asset(compiled[asset], args.python)  # as the bundler ships it
                if args.uncompiled:
                    plain[asset] = _copy(asset, Path(work) / str(index) / "plain" / asset.name)
        for round_index in range(args.runs + 1):  # the first round warms the disk cache, discarded
            for label, assets in sets.items():  # interleaved: a burst of load hits both
                _measure(args.python, assets, compiled, plain, record=round_index > 0, into=results[label])
    for label, assets in sets.items():
        where = args.compare if label else args.assets
        _table(
            f"{label or ''}{where}: import + first-event init, CPU ms, compiled assets, median of {args.runs} "
            f"paired rounds of fresh processes ({args.python})",
            assets,
            results[label],
            args.uncompiled,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
