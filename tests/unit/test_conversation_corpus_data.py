"""The conversation corpus itself (``tests/data/conversations``): big enough, varied as people write,
and every annotated call is one the real tools accept as given (their JSON schemas); a role
(``record_outcome``, ``opt_out``) its role schema. Both splits: the built one and the held-out one
(at least 40 conversations, a quarter of them not in English, no id shared with the built split)."""

from __future__ import annotations

import re

import jsonschema
import pytest

from promptpipe.flow.tools import profile_save, prompt_generator, scheduler, state_transition
from scripts.corpus.model import (
    BUILT,
    CORPUS_DIR,
    CORPUS_ROOT,
    HELD_OUT,
    NEXT_PROMPT,
    ROLE_SCHEMAS,
    SPLITS,
    Conversation,
    Expected,
    Turn,
    load_corpus,
    load_split,
    selected,
)

CORPUS = load_corpus()
HELD = load_split(HELD_OUT)
SCHEMAS = {
    "save_user_profile": profile_save.ProfileSaveTool().definition.parameters,
    "generate_habit_prompt": prompt_generator.PromptGeneratorTool().definition.parameters,
    "scheduler": scheduler.definition(10).parameters,
    "transition_state": state_transition.StateTransitionTool().definition.parameters,
    **ROLE_SCHEMAS,
}
NOT_ENGLISH_GREETING = ("¡Hola", "Bonjour")
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


@pytest.mark.parametrize("conversation", CORPUS + HELD, ids=lambda c: c.id)
def test_every_call_matches_the_tool_schema(conversation: Conversation) -> None:
    for number, turn in enumerate(conversation.turns, 1):
        for call in (c for round_ in turn.rounds for c in round_):
            schema = SCHEMAS[call.tool]
            unknown = set(call.args) - set(schema["properties"])
            assert not unknown, f"turn {number}: {call.tool} has no field {unknown}"
            jsonschema.validate(call.args, schema)
            for value in (v for v in call.args.values() if isinstance(v, str)):
                assert set(PLACEHOLDER.findall(value)) <= {"{schedule_id}", "{last_prompt}"}, f"turn {number}"


@pytest.mark.parametrize("conversation", CORPUS + HELD, ids=lambda c: c.id)
def test_a_reply_shows_a_habit_prompt_only_when_the_turn_generates_one(conversation: Conversation) -> None:
    for number, turn in enumerate(conversation.turns, 1):
        assert set(PLACEHOLDER.findall(turn.reply)) <= {"{habit_prompt}"}, f"turn {number}"
        if "{habit_prompt}" in turn.reply:
            assert "generate_habit_prompt" in turn.needed_tools, f"turn {number}"


def test_the_expected_end_is_consistent() -> None:
    for conversation in CORPUS + HELD:
        expect = conversation.expect
        if expect.schedule is not None:
            assert "preferred_time" in expect.profile, conversation.id
        if conversation.feedback_week and not expect.opted_out:
            assert expect.schedule is not None or any(  # no schedule: deleted, or paused
                c.args.get("action") in ("delete", "pause") for t in conversation.turns for r in t.rounds for c in r
            ), conversation.id
        if expect.done is not None:  # a done count needs prompts to be done
            assert expect.done <= sum(t.wait == NEXT_PROMPT for t in conversation.turns), conversation.id


def test_the_ids_are_unique_and_the_format_is_checked() -> None:
    assert len({c.id for c in CORPUS}) == len(CORPUS)
    with pytest.raises(ValueError, match="wait must be"):
        Turn(say="hi", reply="hello", wait="soon")
    with pytest.raises(ValueError, match="either calls"):
        Turn.model_validate(
            {"say": "x", "reply": "y", "calls": [{"tool": "scheduler"}], "rounds": [[{"tool": "scheduler"}]]}
        )
    assert Turn(say="1", reply="ok", wait=NEXT_PROMPT).wait_delta() is None


def test_the_splits_are_directories_and_the_built_one_is_the_default() -> None:
    assert {p.name for p in CORPUS_ROOT.iterdir() if p.is_dir()} == set(SPLITS)
    assert not list(CORPUS_ROOT.glob("*.yaml")), "every conversation file belongs to a split"
    assert CORPUS_DIR == CORPUS_ROOT / BUILT
    assert [c.id for c in selected()] == [c.id for c in CORPUS] == [c.id for c in load_split(BUILT)]
    assert [c.id for c in selected(["held-revoke"], HELD_OUT)] == ["held-revoke"]
    with pytest.raises(ValueError, match="no corpus split"):
        load_split("everything")


def test_the_held_out_split_is_big_varied_and_new() -> None:
    assert len(HELD) >= 40
    not_english = [c for c in HELD if c.greeting.startswith(NOT_ENGLISH_GREETING)]
    assert len(not_english) * 4 >= len(HELD)
    assert {c.timezone for c in not_english} > {"Europe/Paris"}  # Spanish and French
    assert not {c.id for c in HELD} & {c.id for c in CORPUS}, "an id in both splits"
    assert not {t.say for c in HELD for t in c.turns if len(t.say) > 20} & set(_messages()), "a built message"
    messages = {t.say for c in HELD for t in c.turns}
    # What the issue names: no anchor keyword, typed outcomes, odd opt-out forms, sentences with "stop"
    assert {"12:30, on my lunch break", "8:15 with my first coffee", "vers 7h30 après mon café"} <= messages
    assert {"Done, 20 pushups", "listo", "finished my stretches 💪", "nah didn't get to it"} <= messages
    assert {"Stop.", "ＳＴＯＰ", "STOP\u200b", "opt out", "Revoke", "ya no me mandes mensajes por favor"} <= messages
    assert any("stop by the gym" in m for m in messages)
    ends = [c.expect for c in HELD]
    assert sum(e.done is not None for e in ends) >= 10 and sum(bool(e.opted_out) for e in ends) >= 10
    assert sum(e.after is not None and e.after.daily_prompts == 0 for e in ends) >= 8
    assert sum(t.max_model_calls == 0 for c in HELD for t in c.turns) >= 7


def test_the_new_fields_are_checked() -> None:
    with pytest.raises(ValueError, match="String should match pattern"):
        Expected.model_validate({"sub_state": "FEEDBACK", "schedule": "sometime"})
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        Expected.model_validate({"sub_state": "FEEDBACK", "after": {"days": 0, "daily_prompts": 0}})
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        Turn(say="STOP", reply="-", max_model_calls=-1)
    assert Expected(sub_state="INTAKE", schedule="any").schedule == "any"
