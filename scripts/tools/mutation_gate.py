"""The mutation-score gate of the engine's core (``make mutation``; docs/reliability.md#mutation-testing).

Run: ``python -m scripts.tools.mutation_gate [--run] [MODULE ...]``.

mutmut (configured in pyproject.toml, ``[tool.mutmut]``) copies the tree into ``mutants/``, mutates the
core modules and runs, for each mutant, the unit tests that call the mutated function (it records
which ones on its first pass). It runs in build/mutation/, where src/ links to shared/ (mutmut only
knows ./, src/ and source/ as source roots). With ``--run`` this script runs mutmut over the modules
(resumable: results stay in build/mutation/mutants/, and a later ``--run`` re-runs only the mutants
not killed yet; ``--fresh`` re-runs them all), then reads ``mutmut results --all true`` and
scores every module:

    score = (killed + timeout + accepted survivors) / (mutants checked)

Accepted survivors are listed with a one-line reason in tests/mutation/accepted_survivors.toml
(equivalent, unreachable, message text only). The gate fails when a module's score is under its
threshold (THRESHOLDS), when a module has mutants that were not checked, or when an accepted survivor
no longer exists (the baseline must follow the code).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# mutmut names a module by its path below ./, src/ or source/ only: it runs here, with src/ -> shared/.
STAGE = ROOT / "build" / "mutation"
LINKS = {"src": "shared", "tests": "tests", "functions": "functions", "prompts": "prompts", "scripts": "scripts"}
BASELINE = ROOT / "tests" / "mutation" / "accepted_survivors.toml"
PREFIX = "promptpipe."

# module (as mutmut names it, without PREFIX) -> minimum score in percent
THRESHOLDS: dict[str, float] = {
    "rules.tone": 90.0,
    "flow.questions": 90.0,
    "rules.scheduling": 90.0,
    "flow.session": 90.0,
    "flow.conversation": 90.0,
    "flow.tools.scheduler": 90.0,
    "flow.pipeline": 90.0,
    "flow.effects": 95.0,
    "controller.engine": 95.0,
    "controller.definition": 95.0,
    "controller.catalog": 95.0,
    "controller.problems": 95.0,
    "controller.runtime": 95.0,
    # What decides what is sent and recorded (docs/reliability.md, "The record under faults").
    "usecases.sending": 90.0,
    "usecases.write_once": 90.0,
    "flow.send_rule": 90.0,
    # What reads a message before anything else does: an opt-out in any form, a crisis (docs/compliance.md).
    "rules.opt_out": 90.0,
    "rules.safety_screen": 90.0,
    "rules.opt_words": 90.0,  # the opt-out words and replies, out of rules.opt_out (cold start)
}

KILLED = {"killed", "timeout", "segfault", "caught by type check"}
NOT_RUN = {"not checked", "skipped"}
_LINE = re.compile(r"^\s*(\S+): (.+)$")


@dataclass
class Score:
    module: str
    counts: Counter[str] = field(default_factory=Counter)
    accepted: int = 0
    survivors: list[str] = field(default_factory=list)

    @property
    def checked(self) -> int:
        return sum(n for status, n in self.counts.items() if status not in NOT_RUN)

    @property
    def killed(self) -> int:
        return sum(n for status, n in self.counts.items() if status in KILLED)

    @property
    def percent(self) -> float:
        return 100.0 * (self.killed + self.accepted) / self.checked if self.checked else 0.0

    @property
    def raw_percent(self) -> float:
        return 100.0 * self.killed / self.checked if self.checked else 0.0


def module_of(mutant: str) -> str | None:
    """``promptpipe.flow.effects.x_put__mutmut_3`` (or a method's ``xǁClassǁm__mutmut_3``) ->
    ``flow.effects``."""
    if not mutant.startswith(PREFIX):
        return None
    head = mutant[len(PREFIX) :].split(".x", maxsplit=1)[0]
    return head if head in THRESHOLDS else None


def prepare() -> None:
    """Lay out build/mutation: links to the repository's folders and a copy of pyproject.toml."""
    STAGE.mkdir(parents=True, exist_ok=True)
    for name, target in LINKS.items():
        link = STAGE / name
        if not link.is_symlink():
            link.symlink_to(ROOT / target, target_is_directory=True)
    (STAGE / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())


def mutmut(*args: str, capture: bool = False) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the mutants must win the import
    done = subprocess.run(
        [sys.executable, "-m", "mutmut", *args], cwd=STAGE, env=env, capture_output=capture, text=True, check=False
    )
    return done.stdout or ""


def load_results() -> dict[str, str]:
    out = mutmut("results", "--all", "true", capture=True)
    results: dict[str, str] = {}
    for line in out.splitlines():
        match = _LINE.match(line)
        if match:
            results[match.group(1)] = match.group(2).strip()
    return results


def load_baseline() -> dict[str, str]:
    if not BASELINE.exists():
        return {}
    return dict(tomllib.loads(BASELINE.read_text())["survivors"])


def score(results: dict[str, str], baseline: dict[str, str]) -> dict[str, Score]:
    scores = {name: Score(name) for name in THRESHOLDS}
    for mutant, status in results.items():
        module = module_of(mutant)
        if module is None:
            continue
        entry = scores[module]
        entry.counts[status] += 1
        if status not in KILLED and status not in NOT_RUN:
            if mutant in baseline:
                entry.accepted += 1
            else:
                entry.survivors.append(mutant)
    return scores


RERUN = {"not checked", "survived", "no tests", "skipped", "suspicious"}


def pending(results: dict[str, str], modules: list[str]) -> list[str]:
    """The mutants of ``modules`` still to run: never checked, or not killed by the tests of an
    earlier run (tests may have been added since). mutmut re-runs every mutant it is given by name or
    pattern, so a resumed run names these only; a killed mutant keeps its result."""
    return sorted(m for m, status in results.items() if module_of(m) in modules and status in RERUN)


def run_modules(modules: list[str], children: int, *, fresh: bool = False) -> None:
    """One mutmut run for all of them: its first pass (which tests call which function) runs once.
    The first run (or ``fresh``) names the modules; a later one only the mutants still pending."""
    results = {} if fresh else load_results()
    if fresh or not any(module_of(m) in modules for m in results):
        names = [f"{PREFIX}{module}.*" for module in modules]
    else:
        names = pending(results, modules)
    if names:
        mutmut("run", "--max-children", str(children), *names)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help=f"modules to gate (default: all of {sorted(THRESHOLDS)})")
    parser.add_argument("--run", action="store_true", help="run mutmut for each module first")
    parser.add_argument("--children", type=int, default=2, help="mutmut worker processes")
    parser.add_argument("--fresh", action="store_true", help="with --run: re-run every mutant, killed ones too")
    args = parser.parse_args(argv)
    modules = args.modules or list(THRESHOLDS)
    unknown = sorted(set(modules) - set(THRESHOLDS))
    if unknown:
        parser.error(f"unknown modules {unknown}")
    prepare()
    if args.run:
        run_modules(modules, args.children, fresh=args.fresh)
    results = load_results()
    baseline = load_baseline()
    stale = sorted(m for m in baseline if results.get(m) in KILLED or m not in results)
    scores = score(results, baseline)
    failed = False
    print("| module | mutants | killed | accepted | survived | score | threshold |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for module in modules:
        s = scores[module]
        not_run = sum(s.counts[status] for status in NOT_RUN)
        verdict = f"{s.percent:.1f} %"
        if not_run or not s.checked:
            verdict, failed = f"not run ({not_run} unchecked)", True
        elif s.percent < THRESHOLDS[module]:
            failed = True
        print(
            f"| {module} | {s.checked} | {s.killed} | {s.accepted} | {len(s.survivors)} | {verdict} |"
            f" {THRESHOLDS[module]:.0f} % |"
        )
    for module in modules:
        for mutant in scores[module].survivors:
            print(f"survived: {mutant} ({results[mutant]})")
    if stale:
        print(f"stale accepted survivors (killed or gone; remove them from {BASELINE.name}): {stale}")
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
