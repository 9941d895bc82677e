"""The corpus figures of docs/pipeline.md: ``python -m scripts.corpus_report``.

Plays every conversation of ``tests/data/conversations/`` with the competent-model stand-in through
the real pipeline (``scripts/corpus_player.py``) and prints the figures — conversations, participant
messages, stranded turns, forced turns, conversations completed — then one line per problem.
``--json`` prints the figures and the problems as JSON.

``--offer-all`` is the check of the corpus itself: every turn is offered the module's whole tool set
with ``tool_choice=auto`` (the intent rules are bypassed), so a conversation that still fails has a
wrong annotation or expectation, not a rule that strands it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from scripts.scenario import prepare_environment


def offer_every_tool() -> None:
    """Replace the intent stage with "every tool of the module, auto" (``--offer-all`` only)."""
    from promptpipe.flow import modules
    from promptpipe.flow.intent import Intent

    def every_tool(self: Any, *_args: Any, **_kwargs: Any) -> Intent:
        return Intent("every_tool", tuple(self.tools), source="unsure")

    modules.ConversationModule.decide_intent = every_tool  # type: ignore[method-assign]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.corpus_report", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the figures and problems as JSON")
    parser.add_argument("--offer-all", action="store_true", help="offer every tool on every turn (checks the corpus)")
    parser.add_argument("--only", nargs="+", default=[], metavar="ID", help="play only these conversations")
    args = parser.parse_args(argv)
    prepare_environment()
    if args.offer_all:
        offer_every_tool()

    from scripts.corpus_model import load_corpus
    from scripts.corpus_player import CorpusFigures, Player
    from scripts.corpus_standin import CompetentStandIn

    conversations = [c for c in load_corpus() if not args.only or c.id in args.only]
    player = Player(CompetentStandIn)
    outcomes = [player.play(conversation, number) for number, conversation in enumerate(conversations)]
    figures = CorpusFigures.of(outcomes)
    problems = [line for outcome in outcomes for line in outcome.failure_lines()]
    if args.json:
        print(json.dumps({"figures": asdict(figures), "problems": problems}, indent=2, ensure_ascii=False))
    else:
        print(figures.line())
        for line in problems:
            print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
