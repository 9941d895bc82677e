"""The corpus gate (docs/pipeline.md, "The conversation corpus"): every conversation of the built split
``tests/data/conversations/built/`` played by the competent-model stand-in through the real pipeline
(local stack: participants API, signed Twilio webhooks, the SQS worker, the scheduler pump) ends as
expected, and no turn is stranded (a needed tool not offered) or forced (``tool_choice=required``
with nothing to do). The held-out split (``held_out/``) is reported by ``make corpus``, not gated
(docs/offline-coach.md, "The two splits")."""

from __future__ import annotations

import pytest

from scripts.corpus.model import NEXT_PROMPT, Conversation, load_corpus
from scripts.corpus.player import ConversationOutcome, CorpusFigures, Player
from scripts.corpus.standin import CompetentStandIn

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


STOP_AFTER_A_DONE_DAY = {
    "id": "assertions-stop-after-a-done-day",
    "title": "the richer end and turn assertions, against the real pipeline",
    "turns": [
        {
            "say": "walk, for more energy",
            "calls": [
                {
                    "tool": "save_user_profile",
                    "args": {
                        "habit_domain": "walking",
                        "motivational_frame": "more energy",
                        "prompt_anchor": "",
                        "preferred_time": "",
                    },
                }
            ],
            "reply": "Walking! When, and after what?",
        },
        {
            "say": "9am after breakfast",
            "calls": [
                {"tool": "save_user_profile", "args": {"preferred_time": "09:00", "prompt_anchor": "after breakfast"}},
                {"tool": "generate_habit_prompt", "args": {"delivery_mode": "immediate"}},
            ],
            "reply": "Try this: {habit_prompt} Every day at 9?",
        },
        {
            "say": "yes",
            "calls": [{"tool": "scheduler", "args": {"action": "create", "type": "fixed", "fixed_time": "09:00"}}],
            "reply": "Done, every day around 9.",
        },
        {"say": "1", "wait": NEXT_PROMPT, "reply": "Nice walk!"},
        {"say": "STOP", "wait": "3h", "max_model_calls": 0, "replies": 1, "reply": "(no model reads STOP)"},
    ],
    "expect": {
        "sub_state": "FEEDBACK",
        "profile": ["habit_domain", "preferred_time", "prompt_anchor"],
        "schedule": "any",
        "done": 1,
        "opted_out": True,
        "after": {"days": 2, "daily_prompts": 0},
    },
}


def test_the_done_count_the_opt_out_the_prompts_after_and_the_turn_limits_are_read_from_the_pipeline() -> None:
    # Given a conversation whose poll answer "1" is counted and whose STOP is a keyword no model reads
    conversation = Conversation.model_validate(STOP_AFTER_A_DONE_DAY)
    player = Player(CompetentStandIn)

    # When it is played, it passes: done 1, opted out, no prompt in the 2 days after, one confirmation
    outcome = player.play(conversation)
    assert outcome.passed, outcome.failure_lines()
    assert outcome.turns[-1].model_calls == 0 and outcome.turns[-1].replies == 1

    # And the same conversation with other expectations fails, naming each difference
    wrong = STOP_AFTER_A_DONE_DAY | {
        "expect": STOP_AFTER_A_DONE_DAY["expect"]
        | {"done": 2, "opted_out": False, "after": {"days": 2, "daily_prompts": 2}}
    }
    wrong["turns"] = [*wrong["turns"][:-1], wrong["turns"][-1] | {"replies": 2}]
    failed = player.play(Conversation.model_validate(wrong), 1)
    done, opted_out, after = failed.end_problems
    assert (done, after) == (
        "done count 1, expected 2",
        "0 daily prompt(s) in the 2 day(s) after the last message, expected 2",
    )
    assert opted_out.startswith("opted out True (status ") and opted_out.endswith("), expected False")
    assert failed.turns[-1].problems == ["1 message(s) sent in answer, 2 expected"]
