"""Unzipped size of each function's Lambda asset, built exactly as ``cdk synth`` builds it.

Run: ``python -m scripts.bench.asset_sizes`` (needs the package index; ``--keep DIR`` keeps the assets).

For every distinct dependency closure in ``infra.bundling.FUNCTION_EXTRAS`` this runs the same
``PipLocalBundler`` the stack uses (pip, Linux wheels for the Lambda runtime, versions from
requirements.lock, code copied beside them, compiled when a Python of the runtime's version is here)
into a temporary directory and sums the file sizes.
Exits non-zero when the webhook or enrollment asset exceeds ``TARGET_MB`` (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import tempfile
from collections import defaultdict
from pathlib import Path

from infra.bundling import FUNCTION_EXTRAS, REPO_ROOT, PipLocalBundler, bytecode_python, runtime_requirements

TARGET_MB = 25.0
LIGHT_FUNCTIONS = ("webhook", "enrollment")


def tree_size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def largest(root: Path, count: int = 6) -> list[tuple[str, int]]:
    sizes = [(p.name, tree_size(p) if p.is_dir() else p.stat().st_size) for p in root.iterdir()]
    return sorted(sizes, key=lambda item: -item[1])[:count]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="build the assets under this directory and keep them")
    args = parser.parse_args(argv)
    closures: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for key, extras in FUNCTION_EXTRAS.items():
        closures[extras].append(key)
    base = args.keep or Path(tempfile.mkdtemp(prefix="promptpipe-assets-"))
    python = bytecode_python()
    print(f"bytecode: {'compiled with ' + python if python else 'none (no Python of the runtime version here)'}\n")
    sizes: dict[str, float] = {}
    print("| functions | extras | unzipped MB | largest entries (MB) |")
    print("|---|---|---|---|")
    for extras, keys in closures.items():
        out = base / "-".join(keys)
        out.mkdir(parents=True, exist_ok=True)
        PipLocalBundler(REPO_ROOT, runtime_requirements(REPO_ROOT, extras), bytecode=python).try_bundle(str(out))
        megabytes = tree_size(out) / 1e6
        top = ", ".join(f"{name} {size / 1e6:.1f}" for name, size in largest(out))
        print(f"| {', '.join(keys)} | {', '.join(extras) or '-'} | {megabytes:.1f} | {top} |")
        for key in keys:
            sizes[key] = megabytes
    missed = [key for key in LIGHT_FUNCTIONS if sizes[key] > TARGET_MB]
    verdict = f"MISSED {missed}" if missed else "met"
    print(f"\ntarget: {', '.join(LIGHT_FUNCTIONS)} <= {TARGET_MB:.0f} MB unzipped: {verdict}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
