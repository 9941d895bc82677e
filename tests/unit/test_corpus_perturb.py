"""The perturbations of built intake conversations (scripts/corpus/perturb.py; docs/offline-coach.md,
"Robust to the path"): each variant keeps the conversation's expected end, changes only the path, and
is the same from run to run."""

from __future__ import annotations

import pytest

from scripts.corpus.model import Call, Conversation, Expected, Turn, load_split
from scripts.corpus.perturb import KINDS, gives_a_fact, main, merged, perturb, reordered, variants


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
    for kind in KINDS:
        first, again = variants(built, kind), variants(built, kind)
        assert [says(v) for v in first] == [says(v) for v in again]
        for variant in first:
            original = next(c for c in built if variant.id == f"{c.id}-p-{kind}")
            assert variant.expect == original.expect and variant.turns != original.turns
    assert variants(built, "question", seed=1) != variants(built, "question", seed=2)
    week = next(c for c in load_split("built") if c.feedback_week)
    assert all(perturb(week, kind) is None for kind in KINDS)
    with pytest.raises(ValueError, match="no perturbation"):
        perturb(conversation(), "shuffle")


def test_only_the_built_split_can_be_perturbed() -> None:
    with pytest.raises(SystemExit):
        main(["--split", "held_out"])
