"""The offline coach's parity gate (docs/offline-coach.md, "Parity with the corpus"): the conversation
corpus played through the real pipeline with the offline coach as the model (no model key). At least
90 % of the intake conversations end as a capable model ends them (profile, daily schedule,
sub-state, no hand-off), and no reply praises doing the habit before a daily prompt was delivered or
for a message that did not say it was done."""

from __future__ import annotations

from typing import Any

import pytest

from scripts.corpus.offline import ParityFigures, figures_of, play_offline

pytestmark = pytest.mark.slow

INTAKE_SHARE_GATE = 0.90


@pytest.fixture(scope="module")
def played() -> tuple[list[Any], ParityFigures, list[str]]:
    outcomes = play_offline()
    figures, problems = figures_of(outcomes)
    return outcomes, figures, problems


def test_intake_conversations_end_as_with_a_capable_model(played: tuple[list[Any], ParityFigures, list[str]]) -> None:
    _outcomes, figures, problems = played
    assert figures.intake_conversations >= 30
    assert figures.intake_share >= INTAKE_SHARE_GATE, figures.line() + "\n" + "\n".join(problems)


def test_no_false_praise(played: tuple[list[Any], ParityFigures, list[str]]) -> None:
    _outcomes, figures, problems = played
    assert figures.false_praise == 0, "\n".join(p for p in problems if "end:" not in p)


def test_one_word_answers_reach_the_schedule(played: tuple[list[Any], ParityFigures, list[str]]) -> None:
    # "dinner" as the anchor and "sure" to the offer; "lunch" and "ok"; "despues del desayuno" and "si"
    by_id = {o.conversation.id: o for o in played[0]}
    for conversation_id, at in (("dinner-one-word-anchor", "19:00"), ("water-ok", "12:00"), ("es-caminar-si", "09:00")):
        state = by_id[conversation_id].state
        assert [s["fixed_time"] for s in state["schedules"]] == [at], conversation_id
        assert state["sub_state"] == "FEEDBACK" and state["profile"]["prompt_anchor"], conversation_id


def test_stop_and_time_change_go_through_the_scheduler(played: tuple[list[Any], ParityFigures, list[str]]) -> None:
    by_id = {o.conversation.id: o for o in played[0]}
    assert by_id["week-stop-the-reminders"].state["schedules"] == []
    moved = by_id["week-move-it-to-7pm"].state
    assert [s["fixed_time"] for s in moved["schedules"]] == ["19:00"]
    assert moved["profile"]["preferred_time"] == "19:00"
