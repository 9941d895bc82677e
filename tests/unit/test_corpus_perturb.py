"""The perturbations of built intake conversations (scripts/corpus/perturb.py; docs/offline-coach.md,
"Robust to the path"): each variant keeps the conversation's expected end, changes only the path, and
is the same from run to run."""

from __future__ import annotations

import random

import pytest

from scripts.corpus.model import Call, Conversation, Expected, Turn, load_split
from scripts.corpus.perturb import (
    KINDS,
    WEEK_ACKS,
    WEEK_KINDS,
    WEEK_QUESTIONS,
    WEEK_THANKS,
    gives_a_fact,
    lowered,
    main,
    merged,
    perturb,
    perturb_week,
    reordered,
    run_on,
    variants,
    with_a_typo,
    without_accents,
)


def save(**fields: str) -> Call:
    return Call(tool="save_user_profile", args=fields)


def conversation(cid: str = "walk") -> Conversation:
    return Conversation(
        id=cid,
        title="walking",
        turns=[
            Turn(say="walk more", calls=[save(habit_domain="walking")], reply="Why?"),
            Turn(say="more energy", calls=[save(motivational_frame="more energy")], reply="When?"),
            Turn(say="7pm", calls=[save(preferred_time="19:00")], reply="After what?"),
            Turn(say="after dinner", calls=[save(prompt_anchor="after dinner")], reply="Every day at 7pm?"),
            Turn(
                say="yes",
                calls=[Call(tool="scheduler", args={"action": "create", "type": "fixed", "fixed_time": "19:00"})],
                reply="Done!",
            ),
        ],
        expect=Expected(
            sub_state="FEEDBACK",
            profile=["habit_domain", "motivational_frame", "preferred_time", "prompt_anchor"],
            schedule="19:00",
        ),
    )


def says(variant: Conversation | None) -> list[str]:
    assert variant is not None
    return [turn.say for turn in variant.turns]


def keep_the_end(built: list[Conversation], kinds: tuple[str, ...]) -> None:
    """Each kind's variants are the same from run to run, change the path and keep the expected end."""
    for kind in kinds:
        first, again = variants(built, kind), variants(built, kind)
        assert [says(v) for v in first] == [says(v) for v in again]
        for variant in first:
            original = next(c for c in built if variant.id == f"{c.id}-p-{kind}")
            assert variant.expect == original.expect and variant.turns != original.turns


def test_a_fact_message_is_one_the_corpus_saves_a_fact_for_and_reads_as_one() -> None:
    turns = conversation().turns
    assert [gives_a_fact(t) for t in turns] == [True, True, True, True, False]  # "yes" schedules
    assert not gives_a_fact(Turn(say="yes", calls=[save(preferred_time="19:00")], reply="ok"))  # a yes to a suggestion
    assert not gives_a_fact(Turn(say="hi", reply="Hi!", not_a_fact="greeting"))


def test_merge_joins_two_fact_messages_and_keeps_both_calls() -> None:
    joined = merged(conversation().turns[2], conversation().turns[3])
    assert joined.say == "7pm after dinner"
    calls = [c.args for r in joined.rounds for c in r]
    assert calls == [{"preferred_time": "19:00"}, {"prompt_anchor": "after dinner"}]
    assert joined.replies is None and joined.max_model_calls is None
    variant = perturb(conversation(), "merge")
    assert variant is not None and len(variant.turns) == 4 and variant.turns[-1].say == "yes"
    assert " ".join(says(variant)) == " ".join(t.say for t in conversation().turns)  # the same words, in order


def test_a_greeting_comes_first_marked_as_no_fact_in_the_conversations_language() -> None:
    variant = perturb(conversation(), "greeting")
    assert variant is not None and variant.turns[0].not_a_fact == "greeting"
    assert says(variant)[1:] == [t.say for t in conversation().turns]
    spanish = perturb(conversation("es-caminar"), "greeting")
    assert spanish is not None and spanish.turns[0].say in ("hola", "buenas")


def test_a_question_comes_mid_intake_and_an_acknowledgement_before_a_fact() -> None:
    question = perturb(conversation(), "question")
    assert question is not None
    inserted = [t for t in question.turns if t.not_a_fact == "question"]
    assert len(inserted) == 1 and question.turns.index(inserted[0]) >= 1 and inserted[0].say.endswith("?")
    ack = perturb(conversation(), "ack")
    assert ack is not None and len(ack.turns) == 6
    at = next(i for i, t in enumerate(ack.turns) if t.say in ("ok", "okay", "got it"))
    assert at >= 1 and gives_a_fact(ack.turns[at + 1])


@pytest.mark.parametrize(
    ("said", "reversed_"),
    [
        ("yoga at 7am", "at 7am, yoga"),
        ("7pm after dinner", "after dinner, 7pm"),
        ("9pm after the kids go down", "after the kids go down, 9pm"),
        ("después de comer como a las 3", "como a las 3, después de comer"),
        ("le soir après le dîner vers 21h", "vers 21h, le soir après le dîner"),
        ("cook at home more", None),  # no time, no routine: not the simple form
        ("I want to walk 10 min every day at 12:15 right after lunch, to get my steps up", None),
    ],
)
def test_reorder_swaps_a_simple_x_at_t_and_skips_the_rest(said: str, reversed_: str | None) -> None:
    assert reordered(said) == reversed_


def test_reorder_changes_the_first_simple_fact_message_only() -> None:
    variant = perturb(conversation(), "reorder")
    assert variant is None  # no simple form in it
    simple = conversation()
    simple.turns[2] = Turn(say="7pm after dinner", calls=[save(preferred_time="19:00")], reply="ok")
    assert says(perturb(simple, "reorder"))[2] == "after dinner, 7pm"


def test_variants_are_deterministic_keep_the_end_and_skip_feedback_weeks() -> None:
    built = [c for c in load_split("built") if not c.feedback_week][:30]
    keep_the_end(built, KINDS)
    assert variants(built, "question", seed=1) != variants(built, "question", seed=2)
    week = next(c for c in load_split("built") if c.feedback_week)
    assert all(perturb(week, kind) is None for kind in KINDS)
    with pytest.raises(ValueError, match="no perturbation"):
        perturb(conversation(), "shuffle")


def test_a_typo_swaps_two_neighbouring_letters_of_one_long_word_of_a_fact_message() -> None:
    rng = random.Random(1)
    for _ in range(20):
        typed = with_a_typo("after dinner", rng)
        assert typed is not None and typed != "after dinner" and sorted(typed) == sorted("after dinner")
        assert typed[0] == "a" and " d" in typed  # a word's first letter stays
    assert with_a_typo("7pm ok", rng) is None
    variant = perturb(conversation(), "typo")
    assert variant is not None
    changed = [(a, b) for a, b in zip(says(variant), [t.say for t in conversation().turns], strict=True) if a != b]
    assert len(changed) == 1 and sorted(changed[0][0]) == sorted(changed[0][1])


def test_lower_keeps_a_times_punctuation_only() -> None:
    texted = {"Ok, 7:30. After lunch!": "ok 7:30 after lunch", "¿Sí? a las 7.30 p.m.": "sí a las 7.30 pm"}
    assert {said: lowered(said) for said in texted} == texted
    assert lowered("What's this?") == "what's this"  # an apostrophe is part of the word


def test_a_run_on_joins_two_fact_messages_with_a_filler_and_keeps_both_calls() -> None:
    joined = run_on(conversation().turns[2], conversation().turns[3], " um ")
    assert joined.say == "7pm um after dinner"
    assert [c.args for r in joined.rounds for c in r] == [
        {"preferred_time": "19:00"},
        {"prompt_anchor": "after dinner"},
    ]
    variant = perturb(conversation("es-caminar"), "runon")
    assert variant is not None and len(variant.turns) == 4
    assert any(f" {join} " in say for say in says(variant) for join in ("eh", "y", "este"))


def test_accents_are_left_out_of_spanish_and_french_only() -> None:
    assert without_accents("después del café, à 19h, niño") == "despues del cafe, a 19h, nino"
    assert perturb(conversation(), "accents") is None  # English
    spanish = conversation("es-caminar")
    spanish.turns[3] = Turn(say="después de cenar", calls=[save(prompt_anchor="después de cenar")], reply="¿Sí?")
    assert says(perturb(spanish, "accents"))[3] == "despues de cenar"
    assert perturb(conversation("es-walk"), "accents") is None  # nothing to leave out


def test_an_impatient_message_comes_before_a_fact_marked_as_a_complaint() -> None:
    variant = perturb(conversation(), "impatient")
    assert variant is not None and len(variant.turns) == 6
    at = next(i for i, t in enumerate(variant.turns) if t.not_a_fact == "complaint")
    assert at >= 1 and gives_a_fact(variant.turns[at + 1])


def test_only_the_built_split_can_be_perturbed() -> None:
    with pytest.raises(SystemExit):
        main(["--split", "held_out"])


# --- the feedback week ---------------------------------------------------------------------------------


def week(cid: str = "fb-walk") -> Conversation:
    """A short intake, then two daily prompts: "did it" with what helped after it, then "nope, forgot"."""
    intake = conversation(cid).turns
    done = Call(tool="record_outcome", args={"outcome": "done"})
    return Conversation(
        id=cid,
        title="a week",
        turns=[
            *intake,
            Turn(say="did it", wait="next_prompt", calls=[save(last_successful_prompt="{last_prompt}"), done],
                 reply="What helped?"),
            Turn(say="my roommate joined me", calls=[save(last_motivator="roommate")], reply="Nice."),
            Turn(say="nope, forgot", wait="next_prompt", reply="What's a cue?",
                 calls=[save(last_barrier="forgot"), Call(tool="record_outcome", args={"outcome": "not_done"})]),
        ],
        expect=Expected(sub_state="FEEDBACK", profile=["last_motivator", "last_barrier"], schedule="19:00", done=1),
    )  # fmt: skip


def test_a_report_and_its_why_merge_or_swap_and_keep_both_calls() -> None:
    merged_ = perturb_week(week(), "fb_merge")
    assert merged_ is not None and says(merged_)[5:] == ["did it. my roommate joined me", "nope, forgot"]
    tools = [c.tool for r in merged_.turns[5].rounds for c in r]
    assert tools == ["save_user_profile", "record_outcome", "save_user_profile"]
    assert merged_.turns[5].wait == "next_prompt"
    swapped = perturb_week(week(), "fb_swap")
    assert swapped is not None and says(swapped)[5] == "my roommate joined me. did it"
    # with no why after a report, the report's own two clauses are swapped
    alone = week()
    del alone.turns[6]
    assert says(perturb_week(alone, "fb_swap"))[-1] == "forgot, nope"
    assert perturb_week(alone, "fb_merge") is None


def test_thanks_questions_acks_and_settling_talk_join_the_week_in_its_language() -> None:
    thanks = perturb_week(week(), "fb_thanks")
    assert thanks is not None and any(s.endswith(WEEK_THANKS["en"]) for s in says(thanks)[5:])
    question = perturb_week(week("fb-es-caminar"), "fb_question")
    assert question is not None and any(s.endswith(WEEK_QUESTIONS["es"]) for s in says(question))
    ack = perturb_week(week(), "fb_ack")
    assert ack is not None and len(ack.turns) == 9
    at = next(i for i, t in enumerate(ack.turns) if t.say in WEEK_ACKS["en"])
    assert at > 5 and (at == 8 or ack.turns[at + 1].wait == "next_prompt")
    settle = perturb_week(week(), "fb_settle")
    assert settle is not None and settle.turns[5].wait == "2m" and settle.turns[6].say == "did it"


def test_typos_and_stripped_accents_change_the_words_not_the_end() -> None:
    typed = perturb_week(week(), "fb_typo")
    assert typed is not None and says(typed) != says(week()) and typed.expect == week().expect
    assert without_accents("¿cuánto dura? llegué, fatiguée, ñ") == "cuanto dura? llegue, fatiguee, n"
    assert perturb_week(week(), "fb_accents") is None  # English: nothing to strip
    spanish = week("fb-es-walk")
    spanish.turns[6] = spanish.turns[6].model_copy(update={"say": "llegué cansada"})
    assert says(perturb_week(spanish, "fb_accents"))[6] == "llegue cansada"


def test_week_variants_are_deterministic_and_skip_intakes() -> None:
    keep_the_end([c for c in load_split("built") if c.feedback_week][:30], WEEK_KINDS)
    assert perturb_week(conversation(), "fb_merge") is None
    with pytest.raises(ValueError, match="no perturbation"):
        perturb_week(week(), "merge")
