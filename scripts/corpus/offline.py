"""The offline coach's parity with the corpus (docs/offline-coach.md, "Parity with the corpus"):
``python -m scripts.corpus.offline`` (``make corpus-offline``).

Plays every conversation of a split of ``tests/data/conversations/`` (``built``, the one the gate of
``tests/e2e/test_offline_coach_corpus.py`` plays, then ``held_out``, reported only; ``--split`` for one)
through the real pipeline on the local stack (``scripts/corpus/player.py``) with the offline coach as
the model, and counts

* **ends as expected**: the end the corpus gives for a capable model (sub-state, profile fields,
  daily schedule, no hand-off) — for the intake conversations and the feedback-week ones apart;
* **false praise**: a coach reply that praises doing the habit ("you did it", "nice work", "well
  done", "great job") in a turn where no daily prompt had been delivered yet (the context block's
  "of N delivered" is 0, or the turn is still in intake), or where the message did not say it was
  done (the corpus gives no ``last_successful_prompt`` save for it: a capable model did not read it
  as done: neither a ``last_successful_prompt`` save nor a ``record_outcome`` call with ``done``);
* **non-facts saved**: a message the corpus marks ``not_a_fact`` (a greeting, a question, a complaint)
  whose words were saved into the profile (``scripts/corpus/facts.py``);
* **claims contradicted**: a reply's statement the stored state contradicts (a schedule time, "today"
  past its time, paused or stopped with a schedule live) or a check-in before any delivered prompt
  (``scripts/corpus/claims.py``); **ended gracefully**: as expected, or the last reply asks something;
* per language (``en``, ``es``, ``fr``: read from the conversation id, ``es-…``/``held-es-…``), the
  conversations ending as expected.

Stranded and forced turns are the competent-model stand-in's figures (``scripts.corpus.report``);
the offline coach calls only offered tools by construction, so they are not repeated here.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from scripts.bench.scenario import prepare_environment
from scripts.corpus.claims import claim_problems, ends_gracefully
from scripts.corpus.facts import non_facts_saved
from scripts.corpus.model import BUILT, SPLITS

PRAISE = re.compile(r"\b(?:you did it|nice work|well done|great job|congrat\w*|proud of you)\b", re.I)
_DELIVERED = re.compile(r"^- prompts completed: \d+ of (\d+) delivered$", re.M)
_LANGUAGE = re.compile(r"^(?:held-)?(es|fr)-|-(es|fr)-")


def language_of(conversation: Any) -> str:
    """The conversation's language, from its id (``es-caminar-si``, ``held-fr-cest-fait``): en by default."""
    match = _LANGUAGE.search(conversation.id)
    return (match[1] or match[2]) if match else "en"


def delivered_before(observation: Any) -> int:
    """Daily prompts delivered when the turn was answered, as the request's context block says
    (an intake request: none)."""
    for message in observation.request.messages:
        match = _DELIVERED.search(message.content or "") if message.role == "system" else None
        if match:
            return int(match[1])
    return 0


def says_done(turn: Any) -> bool:
    """The corpus's reading of the message: a capable model saves ``last_successful_prompt`` for it, or
    records the outcome as done."""
    return any(
        (call.tool == "save_user_profile" and "last_successful_prompt" in call.args)
        or (call.tool == "record_outcome" and call.args.get("outcome") == "done")
        for round_ in turn.rounds
        for call in round_
    )


def false_praise(outcome: Any) -> list[str]:
    """The turns of one played conversation whose reply praises what did not happen."""
    found = []
    for turn_outcome in outcome.turns:
        turn = outcome.conversation.turns[turn_outcome.index]
        for observation in turn_outcome.observations:
            reply = observation.response.content if observation.response is not None else None
            if observation.purpose not in ("intake", "feedback") or not reply or not PRAISE.search(reply):
                continue
            delivered = delivered_before(observation) if observation.purpose == "feedback" else 0
            if delivered == 0 or not says_done(turn):
                reason = "no daily prompt delivered yet" if delivered == 0 else "the message did not say done"
                where = f"{outcome.conversation.id} turn {turn_outcome.index + 1} {turn.say!r}"
                found.append(f"{where}: {reason}: {reply!r}")
    return found


@dataclass
class ParityFigures:
    intake_completed: int
    intake_conversations: int
    week_completed: int
    week_conversations: int
    false_praise: int
    non_facts_saved: int = 0
    claims_contradicted: int = 0  # contradicted claims and check-ins before a delivered prompt
    graceful: int = 0  # conversations that ended as expected or gracefully (the last reply asks)
    by_language: dict[str, tuple[int, int]] = field(default_factory=dict)  # language: (ended as expected, of)

    @property
    def intake_share(self) -> float:
        return self.intake_completed / self.intake_conversations if self.intake_conversations else 0.0

    def line(self) -> str:
        return (
            f"offline coach: intake conversations ending as expected {self.intake_completed}/"
            f"{self.intake_conversations} ({self.intake_share:.0%}), feedback-week {self.week_completed}/"
            f"{self.week_conversations}, all {self.intake_completed + self.week_completed}/"
            f"{self.intake_conversations + self.week_conversations}; false praise {self.false_praise}; "
            f"non-facts saved {self.non_facts_saved}; claims contradicted {self.claims_contradicted}; "
            f"ended as expected or gracefully {self.graceful}/{self.intake_conversations + self.week_conversations}; "
            "by language " + ", ".join(f"{lang} {done}/{of}" for lang, (done, of) in sorted(self.by_language.items()))
        )


def figures_of(outcomes: list[Any]) -> tuple[ParityFigures, list[str]]:
    intake = [o for o in outcomes if not o.conversation.feedback_week]
    week = [o for o in outcomes if o.conversation.feedback_week]
    praise = [line for o in outcomes for line in false_praise(o)]
    saved = [line for o in outcomes for line in non_facts_saved(o)]
    claims = [line for o in outcomes for line in claim_problems(o)]
    languages = sorted({language_of(o.conversation) for o in outcomes})
    by_language = {
        lang: (
            sum(o.completed for o in outcomes if language_of(o.conversation) == lang),
            sum(1 for o in outcomes if language_of(o.conversation) == lang),
        )
        for lang in languages
    }
    figures = ParityFigures(
        intake_completed=sum(o.completed for o in intake),
        intake_conversations=len(intake),
        week_completed=sum(o.completed for o in week),
        week_conversations=len(week),
        false_praise=len(praise),
        non_facts_saved=len(saved),
        claims_contradicted=len(claims),
        graceful=sum(ends_gracefully(o) for o in outcomes),
        by_language=by_language,
    )
    problems = [f"{o.conversation.id}: end: {p}" for o in outcomes for p in o.end_problems] + praise + saved + claims
    return figures, problems


def play_offline(only: Sequence[str] = (), split: str = BUILT) -> list[Any]:
    """Every conversation of a split (or those in ``only``) played with the offline coach."""
    from promptpipe.adapters.offline_coach import OfflineCoach
    from scripts.corpus.model import selected
    from scripts.corpus.player import Player

    return Player(lambda _cursor: OfflineCoach()).play_all(selected(only, split))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.corpus.offline", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the figures and problems as JSON")
    parser.add_argument("--only", nargs="+", default=[], metavar="ID", help="play only these conversations")
    parser.add_argument("--split", choices=(*SPLITS, "all"), default="all", help="which split to play (default: both)")
    args = parser.parse_args(argv)
    prepare_environment()
    from scripts.corpus.player import print_report

    for split in SPLITS if args.split == "all" else (args.split,):
        figures, problems = figures_of(play_offline(args.only, split))
        if not args.json:
            print(f"{split}:")
        print_report(figures, problems, as_json=args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
