"""The offline intake is robust to the path (docs/offline-coach.md, "Robust to the path"): built intake
conversations perturbed by ``scripts/corpus/perturb.py`` (two fact messages merged into one, an
acknowledgement before an answer) still end as a capable model ends them, with no false praise, no
non-fact saved and no claim contradicted. A seeded third of the built intakes keeps the test short; the
variants are the same from run to run, so the figure is stable. The feedback weeks too (docs/offline-coach.md,
"The feedback week, robust to the path": a report merged with what helped, what got in the way or a
request; a question joined to a report), on a third of the built weeks."""

from __future__ import annotations

from typing import Any

import pytest

from scripts.corpus.model import load_split
from scripts.corpus.offline import ParityFigures, figures_of
from scripts.corpus.perturb import variants

pytestmark = pytest.mark.slow

GATED_KINDS = ("merge", "ack")
EVERY = 3  # one built intake conversation in three
# Reached on this third: merge 27/36 and ack 36/38 (before the reading of every field: 6/36 and 32/38).
SHARE_GATE = {"merge": 0.70, "ack": 0.90}
WEEK_KINDS = ("fb_merge", "fb_question")
WEEK_GATE = {"fb_merge": 0.85, "fb_question": 0.85}


@pytest.fixture(scope="module")
def played() -> dict[str, tuple[ParityFigures, list[str]]]:
    from promptpipe.adapters.offline_coach import OfflineCoach
    from scripts.corpus.player import Player

    intakes = [c for c in load_split("built") if not c.feedback_week][::EVERY]
    weeks = [c for c in load_split("built") if c.feedback_week][::EVERY]
    found: dict[str, tuple[ParityFigures, list[str]]] = {}
    for kind in (*GATED_KINDS, *WEEK_KINDS):
        played_on = weeks if kind in WEEK_KINDS else intakes
        outcomes: list[Any] = Player(lambda _cursor: OfflineCoach()).play_all(variants(played_on, kind))
        found[kind] = figures_of(outcomes)
    return found


@pytest.mark.parametrize("kind", (*GATED_KINDS, *WEEK_KINDS))
def test_perturbed_conversations_end_as_with_a_capable_model(
    played: dict[str, tuple[ParityFigures, list[str]]], kind: str
) -> None:
    figures, problems = played[kind]
    if kind in WEEK_KINDS:
        ended, of, least = figures.week_completed, figures.week_conversations, 10
    else:
        ended, of, least = figures.intake_completed, figures.intake_conversations, 30
    assert of >= least
    assert ended / of >= {**SHARE_GATE, **WEEK_GATE}[kind], figures.line() + "\n" + "\n".join(problems)


@pytest.mark.parametrize("kind", (*GATED_KINDS, *WEEK_KINDS))
def test_perturbed_intakes_keep_the_invariants(played: dict[str, tuple[ParityFigures, list[str]]], kind: str) -> None:
    figures, problems = played[kind]
    counts = (figures.false_praise, figures.non_facts_saved, figures.claims_contradicted)
    assert counts == (0, 0, 0), "\n".join(p for p in problems if "end:" not in p)
