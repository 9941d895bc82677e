"""The corpus gate (docs/pipeline.md, "The conversation corpus"): every conversation of the built split
``tests/data/conversations/built/`` played by the competent-model stand-in through the real pipeline
(local stack: participants API, signed Twilio webhooks, the SQS worker, the scheduler pump) ends as
expected, and no turn is stranded (a needed tool not offered) or forced (``tool_choice=required``
with nothing to do). The held-out split (``held_out/``) is reported by ``make corpus``, not gated
(docs/offline-coach.md, "The two splits")."""

from __future__ import annotations

import pytest

from scripts.corpus_model import NEXT_PROMPT, load_corpus
from scripts.corpus_player import ConversationOutcome, CorpusFigures, Player
from scripts.corpus_standin import CompetentStandIn

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def outcomes() -> list[ConversationOutcome]:
    return Player(CompetentStandIn).play_all(load_corpus())


def test_every_conversation_ends_as_expected_with_no_stranded_or_forced_turn(
    outcomes: list[ConversationOutcome],
) -> None:
    # Given the corpus, played through the real pipeline by a model that calls only offered tools
    figures = CorpusFigures.of(outcomes)

    # Then nothing went wrong in any conversation, and the failure names each conversation and turn
    problems = [line for outcome in outcomes for line in outcome.failure_lines()]
    assert problems == [], f"{figures.line()}\n" + "\n".join(problems)
    assert (figures.stranded, figures.forced, figures.unanswered) == (0, 0, 0)
    assert figures.completed == figures.passed == figures.conversations >= 40
    assert figures.messages >= 250


def test_the_feedback_week_follows_delivered_prompts_and_the_end_state_is_real(
    outcomes: list[ConversationOutcome],
) -> None:
    # Every feedback-week message that waits for a daily prompt had one delivered before it
    for outcome in outcomes:
        waits = sum(1 for turn in outcome.conversation.turns if turn.wait == NEXT_PROMPT)
        assert outcome.prompts_delivered >= waits, outcome.conversation.id
    assert sum(o.prompts_delivered for o in outcomes if o.conversation.feedback_week) >= 10

    # The end state the gate compares comes from the participants API: spot-check two conversations
    by_id = {o.conversation.id: o for o in outcomes}
    moved = by_id["week-move-it-to-7pm"].state
    assert [s["fixed_time"] for s in moved["schedules"]] == ["19:00"]
    assert moved["profile"]["preferred_time"] == "19:00" and moved["sub_state"] == "FEEDBACK"
    stopped = by_id["week-stop-the-reminders"].state
    assert stopped["schedules"] == [] and stopped["profile"]["last_motivator"]
