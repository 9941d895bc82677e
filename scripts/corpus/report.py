"""The corpus figures of docs/pipeline.md: ``python -m scripts.corpus.report``.

Plays both splits of ``tests/data/conversations/`` (``built``: the gate of ``make test``; ``held_out``:
reported, not gated — docs/offline-coach.md, "The two splits") with the competent-model stand-in
through the real pipeline (``scripts/corpus/player.py``) and prints, per split, the figures —
conversations, participant messages, stranded turns, forced turns, conversations completed and passed
(completed with no turn problem) — then one line per problem; for the held-out split also one
PASS/FAIL line per conversation. ``--split`` plays one split; ``--json`` prints it all as JSON.

``--baseline REV`` plays this corpus, with these scripts, against the code of git revision ``REV``
(exported to a temporary directory and run in a subprocess): the "before" figures of another rule set.

``--offer-all`` is the check of the corpus itself: every turn is offered the module's whole tool set
with ``tool_choice=auto`` (the intent rules are bypassed), so a conversation that still fails has a
wrong annotation or expectation, not a rule that strands it.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scripts.corpus.model import SPLITS


def offer_every_tool() -> None:
    """Replace the intent stage with "every tool of the module, auto" (``--offer-all`` only)."""
    from promptpipe.flow import modules
    from promptpipe.flow.intent import Intent

    def every_tool(self: Any, *_args: Any, **_kwargs: Any) -> Intent:
        return Intent("every_tool", tuple(self.tools), source="unsure")

    modules.ConversationModule.decide_intent = every_tool  # type: ignore[method-assign]


ROOT = Path(__file__).resolve().parents[2]


def prepare_environment() -> None:
    """The scenario's environment, from the scenario of the tree this runs in."""
    # A --baseline tree may come from before scripts/ had families (scripts/scenario.py then).
    try:
        scenario = importlib.import_module("scripts.bench.scenario")
    except ModuleNotFoundError:
        scenario = importlib.import_module("scripts.scenario")
    scenario.prepare_environment()


def run_baseline(revision: str, argv: Sequence[str]) -> int:
    """This report, with this corpus and these scripts, against the code of ``revision``."""
    archive = subprocess.run(["git", "archive", "--format=tar", revision], cwd=ROOT, check=True, capture_output=True)
    with tempfile.TemporaryDirectory(prefix="corpus-baseline-") as tmp:
        tree = Path(tmp)
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(tree, filter="data")
        # The corpus brings its scripts with it (an older revision may not have them yet).
        shutil.copytree(ROOT / "scripts" / "corpus", tree / "scripts" / "corpus", dirs_exist_ok=True)
        shutil.copytree(
            ROOT / "tests" / "data" / "conversations", tree / "tests" / "data" / "conversations", dirs_exist_ok=True
        )
        env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(tree / "shared"), str(tree)))}
        print(f"rules of {revision}:", flush=True)
        command = [sys.executable, "-m", "scripts.corpus.report", *argv]
        return subprocess.run(command, cwd=tree, env=env, check=False).returncode


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.corpus.report", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the figures and problems as JSON")
    parser.add_argument("--offer-all", action="store_true", help="offer every tool on every turn (checks the corpus)")
    parser.add_argument("--only", nargs="+", default=[], metavar="ID", help="play only these conversations")
    parser.add_argument("--baseline", metavar="REV", help="play against the code of git revision REV")
    parser.add_argument("--split", choices=(*SPLITS, "all"), default="all", help="which split to play (default: both)")
    args = parser.parse_args(argv)
    if args.baseline:
        rest = [*(["--json"] if args.json else []), *(["--offer-all"] if args.offer_all else [])]
        rest += ["--split", args.split]
        return run_baseline(args.baseline, [*rest, *(["--only", *args.only] if args.only else [])])
    prepare_environment()
    if args.offer_all:
        offer_every_tool()

    from scripts.corpus.model import selected
    from scripts.corpus.player import Player, print_splits
    from scripts.corpus.standin import CompetentStandIn

    splits = SPLITS if args.split == "all" else (args.split,)
    player = Player(CompetentStandIn)
    played = {split: player.play_all(selected(args.only, split)) for split in splits}
    print_splits(played, as_json=args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
