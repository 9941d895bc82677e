"""The offline intake finishes on conversations as people write them (docs/offline-coach.md, "Intakes that
finish"): an anchor read by its structure whatever was asked, reasons short and long, a choice handed
over taken as an easier way on (a default, said in one line, the words never saved), hesitation that is
no yes, a question about how many are left answered, and small talk that is no fact. The phrasings here
are deliberately not the corpus's (built/14_intake_finishes.yaml)."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.adapters.offline_coach.intake_answers import parse_intake_message
from promptpipe.adapters.offline_coach.spoken import with_clause_breaks
from promptpipe.models.llm import ChatResponse
from promptpipe.models.profile import UserProfile
from promptpipe.rules.message_reading import hands_over, read_message
from tests.unit.test_offline_coach_reading import intake, reply

DOMAIN, MOTIVATION, TIME, ANCHOR = "habit_domain", "motivational_frame", "preferred_time", "prompt_anchor"
HABIT = {DOMAIN: "walking"}
ASK_TIME = "That's a great reason. What time of day would you like your daily prompt? For example 8am or 7:30pm."
ASK_ANCHOR = (
    "7:15am works. What's something you already do every day that we can attach it to — like your morning coffee "
    "or brushing your teeth?"
)
ASK_DOMAIN = (
    "What's one small habit you'd like to build — maybe moving more, sleeping better, drinking more water or reading?"
)


def saved(response: ChatResponse) -> dict[str, str]:
    return {k: v for c in response.tool_calls if c.name == "save_user_profile" for k, v in c.parsed_arguments().items()}


@pytest.mark.parametrize(
    ("said", "asked", "anchor"),
    [
        ("as soon as I'm out of the shower", TIME, "as soon as I'm out of the shower"),
        ("right after I walk the dog", MOTIVATION, "right after I walk the dog"),
        ("when I sit down at my desk", ANCHOR, "when I sit down at my desk"),  # "at my desk" is no time
        ("nada más despertarme", TIME, "nada más despertarme"),
        ("después de lavar los platos", MOTIVATION, "después de lavar los platos"),
        ("en sortant du bureau", TIME, "en sortant du bureau"),
    ],
)
def test_an_anchor_is_read_by_its_structure_whatever_was_asked(said: str, asked: str, anchor: str) -> None:
    learned = parse_intake_message(said, HABIT, asked)
    assert learned.get(ANCHOR, "").lower() == anchor.lower()
    assert MOTIVATION not in learned  # a routine alone is no reason


@pytest.mark.parametrize(
    ("said", "time", "anchor"),
    [
        ("6:45ish with my first cup of tea", "06:45", "with my first cup of tea"),  # the first cup: the morning
        ("5:50 when the alarm goes off", "05:50", "when the alarm goes off"),
        ("10:40 at night before I switch off the lamp", "22:40", "before I switch off the lamp"),
    ],
)
def test_a_time_and_its_routine_in_one_answer_keep_both(said: str, time: str, anchor: str) -> None:
    learned = parse_intake_message(said, HABIT, TIME)
    assert (learned.get(TIME), learned.get(ANCHOR)) == (time, anchor)


@pytest.mark.parametrize(
    ("said", "asked"),
    [
        ("for my knees", TIME),
        ("my physio said so", ANCHOR),
        ("por mi familia", TIME),
        ("mi médica me lo recomendó", ANCHOR),
    ],
)
def test_a_reason_said_by_its_structure_is_the_reason_whatever_was_asked(said: str, asked: str) -> None:
    assert parse_intake_message(said, HABIT, asked).get(MOTIVATION) == said


def test_a_reasons_cue_and_a_hedge_after_it_are_no_part_of_it() -> None:
    assert parse_intake_message("cuz it clears my head", HABIT, MOTIVATION).get(MOTIVATION) == "it clears my head"
    assert parse_intake_message("to sleep better i think", HABIT, MOTIVATION).get(MOTIVATION) == "sleep better"


@pytest.mark.parametrize("said", ["por la mañana", "for my lunch break at noon"])
def test_a_moment_after_por_or_for_is_no_reason(said: str) -> None:
    assert MOTIVATION not in parse_intake_message(said, HABIT, TIME)


@pytest.mark.parametrize(
    "said",
    ["dealer's choice", "up to u honestly", "ugh whatever you think", "decide tú", "como quieras", "comme tu veux"],
)
def test_a_choice_handed_over_is_known(said: str) -> None:
    assert hands_over(said)


@pytest.mark.parametrize("said", ["whatever, 7pm", "i don't care about the weather", "anytime after 6"])
def test_an_answer_beside_a_shrug_is_no_hand_over(said: str) -> None:
    assert not hands_over(said)


def test_the_time_handed_over_is_chosen_from_the_routine_and_said_in_one_line() -> None:
    known = UserProfile(habit_domain="walking", motivational_frame="energy", prompt_anchor="after dinner")
    first = OfflineCoach().complete(intake("up to u", known, ASK_TIME))
    assert saved(first) == {TIME: "20:00"}  # after dinner: the evening, not a morning default


def test_the_anchor_handed_over_fits_the_time_of_day() -> None:
    evening = UserProfile(habit_domain="walking", motivational_frame="energy", preferred_time="19:30")
    assert saved(OfflineCoach().complete(intake("dealer's choice", evening, ASK_ANCHOR))) == {ANCHOR: "after dinner"}
    spanish = UserProfile(habit_domain="caminar", motivational_frame="energía", preferred_time="22:00")
    chosen = saved(OfflineCoach().complete(intake("como quieras", spanish, "¿Qué haces ya cada día a esa hora?")))
    assert chosen == {ANCHOR: "antes de dormir"}


def test_the_habit_handed_over_saves_a_default_never_the_words() -> None:
    response = OfflineCoach().complete(intake("ugh whatever you think", UserProfile(), ASK_DOMAIN))
    assert saved(response) == {DOMAIN: "a 2-minute walk"}


def test_a_choice_handed_over_to_a_suggestion_takes_it() -> None:
    known = UserProfile(habit_domain="walking", motivational_frame="energy")
    response = OfflineCoach().complete(intake("up to u", known, "Got it. How about 5:30pm — would that work?"))
    assert saved(response) == {TIME: "17:30"}


@pytest.mark.parametrize(
    "said", ["hmm gotta think on it", "not sure yet tbh", "déjame pensarlo bien", "je vais y penser"]
)
def test_hesitation_at_a_suggestion_saves_nothing_and_asks_again(said: str) -> None:
    known = UserProfile(habit_domain="walking", motivational_frame="energy")
    answer = reply(OfflineCoach().complete(intake(said, known, "How about 9:30pm — would that work?")))
    assert answer.endswith("?")


@pytest.mark.parametrize(
    ("said", "kind"),
    [
        ("hello! hope your week is going well", "greeting"),
        ("hola, ¿cómo estás?", "greeting"),
        ("coucou, tu vas bien ?", "greeting"),
        ("how many more questions?", "question"),
        ("combien de questions encore ?", "question"),
    ],
)
def test_small_talk_is_no_fact_and_how_many_is_answered(said: str, kind: str) -> None:
    assert read_message(said).kind == kind
    answer = reply(OfflineCoach().complete(intake(said, UserProfile(habit_domain="walking"), ASK_TIME)))
    assert answer.endswith("For example 8am or 7:30pm.") or answer.endswith("19h30.") or answer.endswith("19:30.")


@pytest.mark.parametrize(
    ("said", "as_typed"),
    [
        ("6:15 uh right after the school run", "6:15 right after the school run"),  # the time's own routine
        ("caminar eh para despejarme", "caminar, para despejarme"),
        ("lire euh avant de dormir", "lire, avant de dormir"),
        ("pilates and to feel less achy", "pilates, to feel less achy"),
        ("yoga when i get home my neck hurts", "yoga when i get home, my neck hurts"),
        ("walk for my back is what the doc said", "walk for my back is what the doc said"),  # "for my back" goes on
        ("rock and roll", "rock and roll"),  # an "and" inside a phrase stays
        ("read aftre brushing my teeht", "read after brushing my teeth"),  # two letters swapped, put back
    ],
)
def test_a_run_on_is_read_with_the_commas_it_was_spoken_without(said: str, as_typed: str) -> None:
    assert with_clause_breaks(said) == as_typed


def test_a_spoken_run_on_keeps_each_answer() -> None:
    learned = parse_intake_message("pilates um to feel less achy um 7:40 before i start work", {}, DOMAIN)
    assert (learned.get(MOTIVATION), learned.get(TIME), learned.get(ANCHOR)) == (
        "feel less achy",
        "07:40",
        "before i start work",
    )


def test_the_anchor_handed_over_before_any_time_brings_the_time_that_goes_with_it() -> None:
    known = UserProfile(habit_domain="méditer", motivational_frame="me calmer")
    response = OfflineCoach().complete(intake("peu importe", known, "Qu'est-ce que vous faites déjà chaque jour ?"))
    assert saved(response) == {ANCHOR: "après mon café du matin", TIME: "08:00"}


@pytest.mark.parametrize("said", ["cuántos días dura esto", "ça coûte combien", "y eso es gratis", "do i have to pay"])
def test_a_question_typed_without_its_mark_is_still_a_question(said: str) -> None:
    assert read_message(said).kind == "question"
    assert read_message("to pay less at the dentist").kind == "fact"  # a reason that names a cost


@pytest.mark.parametrize(
    "said", ["could you move it to the evening, like 9", "can you change the time to 8", "¿me lo cambias a las 7?"]
)
def test_a_request_for_another_time_asked_why_saves_no_reason(said: str) -> None:
    """Asked why, a request to change the time carries a time at most: never the habit or the reason."""
    from tests.unit.test_offline_coach_reading import ASK_WHY

    response = OfflineCoach().complete(intake(said, UserProfile(habit_domain="walking"), ASK_WHY))
    assert MOTIVATION not in saved(response) and DOMAIN not in saved(response)
