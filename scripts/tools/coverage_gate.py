"""Fail when line or branch coverage is under its threshold (``make test``; docs/reliability.md#coverage).

Run: ``python -m scripts.tools.coverage_gate build/coverage.json --line 95 --branch 90``, on the JSON report
pytest-cov writes (``--cov-report=json:build/coverage.json``). coverage.py's own ``fail_under`` checks
one combined figure; the gate holds the two separately.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path


def figures(report: dict) -> tuple[float, float]:
    totals = report["totals"]
    line = 100.0 * totals["covered_lines"] / totals["num_statements"] if totals["num_statements"] else 100.0
    branch = 100.0 * totals["covered_branches"] / totals["num_branches"] if totals["num_branches"] else 100.0
    return line, branch


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--line", type=float, required=True, help="minimum line coverage, percent")
    parser.add_argument("--branch", type=float, required=True, help="minimum branch coverage, percent")
    args = parser.parse_args(argv)
    line, branch = figures(json.loads(args.report.read_text()))
    # floor to one decimal: 94.99 % is not 95 %
    line, branch = math.floor(line * 10) / 10, math.floor(branch * 10) / 10
    ok = line >= args.line and branch >= args.branch
    print(
        f"coverage of shared/promptpipe and functions/: lines {line:.1f} % (gate {args.line:g} %), "
        f"branches {branch:.1f} % (gate {args.branch:g} %): {'ok' if ok else 'UNDER THE GATE'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
