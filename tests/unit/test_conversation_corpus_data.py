"""The conversation corpus itself (``tests/data/conversations``): big enough, varied as people write,
and every annotated call is one the real tools accept as given (their JSON schemas)."""

from __future__ import annotations

import re

import jsonschema
import pytest

from promptpipe.flow.tools import profile_save, prompt_generator, scheduler, state_transition
from scripts.corpus_model import NEXT_PROMPT, Conversation, Turn, load_corpus

CORPUS = load_corpus()
SCHEMAS = {
    "save_user_profile": profile_save.ProfileSaveTool().definition.parameters,
    "generate_habit_prompt": prompt_generator.PromptGeneratorTool().definition.parameters,
    "scheduler": scheduler.definition(10).parameters,
    "transition_state": state_transition.StateTransitionTool().definition.parameters,
}
PLACEHOLDER = re.compile(r"\{[a-z_]+\}")


def _messages() -> list[str]:
    return [turn.say for conversation in CORPUS for turn in conversation.turns]


def test_the_corpus_is_big_enough() -> None:
    assert len(CORPUS) >= 40
    assert len(_messages()) >= 250
    assert all(len(c.turns) >= 2 for c in CORPUS), "multi-turn conversations only"


@pytest.mark.parametrize(
    "text",
    ["yes", "ok", "sure 👍", "yep", "sounds good", "si", "k", "👍", "dinner", "9ish", "noon", "after work", "7.30"],
)
def test_people_answer_in_their_own_words(text: str) -> None:
    assert text in {m.lower() for m in _messages()}


def test_it_covers_spanish_typos_questions_and_the_feedback_week() -> None:
    messages = [m.lower() for m in _messages()]
    spanish = [c for c in CORPUS if c.greeting.startswith("¡Hola")]
    feedback_weeks = [c for c in CORPUS if c.feedback_week]
    assert len(spanish) >= 4 and any(c.feedback_week for c in spanish)
    assert len(feedback_weeks) >= 7
    assert {"yse", "i wanna strech more"} <= set(messages)  # typos
    assert "can i change the time later?" in messages  # a capability question ...
    assert "move it to 7pm" in messages  # ... next to an action request
    assert any("stop the reminders" in m for m in messages)
    assert sum(1 for m in messages if m.endswith("?")) >= 10


@pytest.mark.parametrize("conversation", CORPUS, ids=lambda c: c.id)
def test_every_call_matches_the_tool_schema(conversation: Conversation) -> None:
    for number, turn in enumerate(conversation.turns, 1):
        for call in (c for round_ in turn.rounds for c in round_):
            schema = SCHEMAS[call.tool]
            unknown = set(call.args) - set(schema["properties"])
            assert not unknown, f"turn {number}: {call.tool} has no field {unknown}"
            jsonschema.validate(call.args, schema)
            for value in (v for v in call.args.values() if isinstance(v, str)):
                assert set(PLACEHOLDER.findall(value)) <= {"{schedule_id}", "{last_prompt}"}, f"turn {number}"


@pytest.mark.parametrize("conversation", CORPUS, ids=lambda c: c.id)
def test_a_reply_shows_a_habit_prompt_only_when_the_turn_generates_one(conversation: Conversation) -> None:
    for number, turn in enumerate(conversation.turns, 1):
        assert set(PLACEHOLDER.findall(turn.reply)) <= {"{habit_prompt}"}, f"turn {number}"
        if "{habit_prompt}" in turn.reply:
            assert "generate_habit_prompt" in turn.needed_tools, f"turn {number}"


def test_the_expected_end_is_consistent() -> None:
    for conversation in CORPUS:
        expect = conversation.expect
        if expect.schedule is not None:
            assert "preferred_time" in expect.profile, conversation.id
        if conversation.feedback_week:
            assert expect.schedule is not None or any(
                "delete" in str(c.args) for t in conversation.turns for r in t.rounds for c in r
            ), conversation.id


def test_the_ids_are_unique_and_the_format_is_checked() -> None:
    assert len({c.id for c in CORPUS}) == len(CORPUS)
    with pytest.raises(ValueError, match="wait must be"):
        Turn(say="hi", reply="hello", wait="soon")
    with pytest.raises(ValueError, match="either calls"):
        Turn.model_validate(
            {"say": "x", "reply": "y", "calls": [{"tool": "scheduler"}], "rounds": [[{"tool": "scheduler"}]]}
        )
    assert Turn(say="1", reply="ok", wait=NEXT_PROMPT).wait_delta() is None
