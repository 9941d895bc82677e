"""More outcomes read for everything they carry (docs/offline-coach.md, "Outcomes read for everything they
carry"): a yes that goes on with what was done, a day said before the yes, a miss said for tonight; a done
that was hard (what made it hard is what got in the way, never what helped, and no motivator is saved);
what motivated them as what helped; companions said with a diminutive; "ill" typed for "I'll" is no
illness; a plan for tomorrow is no barrier and no request to move the prompt. Phrasings no corpus
conversation uses, English and Spanish (a few French), with their near misses."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.adapters.offline_coach.feedback_answers import classify_barrier, motivator_in
from promptpipe.rules.feedback_requests import asks_for_another_time
from promptpipe.rules.outcome import read_outcome
from promptpipe.rules.report_details import company, hard_going, planned_tweak, said_as_plan
from tests.support.offline_coach_requests import PRAISE, PROMPT, calls, feedback, then

TWEAK_OFFERED = (
    "No worries — missing a day is part of building any habit. One small tweak for next time: make it even "
    "smaller so it fits on a busy day. Does that sound doable?"
)


@pytest.mark.parametrize(
    "said",
    [
        "yeah got 15 minutes in on the bike",
        "yup, took the stairs the whole way",
        "yes!! finished the chapter",
        "sí, ya me preparé el té",
        "tonight yes, finally",
        "hoy sí, aunque tarde",
        "esta vez sí 🙌",
    ],
)
def test_a_yes_that_goes_on_with_what_was_done_is_a_done_when_asked(said: str) -> None:
    assert read_outcome(said, asked=True) == "done"


@pytest.mark.parametrize(
    "said",
    ["yes please", "yeah, sounds fine", "sí, aquí ando", "yes, what time tomorrow?", "yeah, worked late again 😩"],
)
def test_a_yes_of_agreement_or_a_question_is_no_report(said: str) -> None:
    assert read_outcome(said, asked=True) == "no_report"


@pytest.mark.parametrize(
    "said", ["not tonight, the baby was up", "pas ce matin, trop de monde", "nope not this evening"]
)
def test_a_miss_said_for_a_part_of_today_is_a_miss(said: str) -> None:
    assert read_outcome(said, asked=True) == "not_done"


@pytest.mark.parametrize(
    ("said", "hard"),
    [
        ("did it but honestly it was tough, the gym was packed", "the gym was packed"),
        ("finished, not easy with a migraine", "not easy with a migraine"),
        ("lo hice pero estuvo pesado, hacía mucho calor", "hacía mucho calor"),
        ("sí, me costó muchísimo", "me costó muchísimo"),
        ("did it, really struggled", "really struggled"),
    ],
)
def test_a_done_that_was_hard_says_what_made_it_hard(said: str, hard: str) -> None:
    assert hard_going(said) == hard


@pytest.mark.parametrize(
    "said",
    ["did it, wasn't hard at all", "done, easy peasy", "lo hice, no fue difícil", "listo. ¿cuánto dura el programa?"],
)
def test_a_done_that_was_not_hard_says_nothing_hard(said: str) -> None:
    assert hard_going(said) == ""


def test_a_hard_done_saves_the_barrier_and_no_motivator_and_is_counted() -> None:
    request = feedback("did it but it was rough, my shins were aching", PROMPT)
    response = OfflineCoach().complete(request)
    (name, args), *recorded = calls(response)
    assert name == "save_user_profile"
    assert args == {"last_successful_prompt": PROMPT, "last_barrier": "my shins were aching"}
    results = ("Saved.", *("Recorded." for _ in recorded))
    reply = OfflineCoach().complete(then(request, response, *results)).content or ""
    assert "hard day" in reply and "helped" not in reply


def test_a_hard_done_with_a_known_kind_saves_the_kind() -> None:
    (name, args), *_ = calls(OfflineCoach().complete(feedback("yes but it was hard, I was exhausted", PROMPT)))
    assert name == "save_user_profile" and args["last_barrier"] == "too tired" and "last_motivator" not in args


@pytest.mark.parametrize(
    ("said", "motivator"),
    [
        ("done, watching my step count go up motivated me", "watching my step count go up"),
        ("lo hice, me motivaba pensar en mi abuela", "pensar en mi abuela"),
        ("what pushed me was the playlist my friend made", "the playlist my friend made"),
        ("mi compa me animó a salir", "mi compa"),
    ],
)
def test_what_motivated_them_is_what_helped(said: str, motivator: str) -> None:
    assert motivator_in(said) == motivator


def test_companions_said_with_a_diminutive_or_a_nickname() -> None:
    assert company("fui con mi gatita al patio") == "mi gatita"
    assert company("caminé con mis sobrinitos") == "mis sobrinitos"
    assert company("went round the block with my kiddo") == "my kiddo"
    assert company("with my morning tea") == ""
    assert company("salí con mi hermanitaa") == "mi hermanitaa"


def test_because_typed_in_a_hurry_still_gives_the_reason() -> None:
    assert motivator_in("done, becuase my alarm went off on time") == "my alarm went off on time"
    assert motivator_in("done, bcause the gym was empty") == "the gym was empty"


def test_ill_typed_for_i_will_is_no_illness() -> None:
    assert classify_barrier("nah, ill try again after work tmrw")[0] == "not specified"
    assert classify_barrier("no, I was ill all weekend")[0] == "too tired"
    assert classify_barrier("no, agotado del viaje")[0] == "too tired"


def test_a_plan_for_tomorrow_is_no_barrier() -> None:
    assert said_as_plan("hoy no 😞 mañana lo vuelvo a intentar")
    assert classify_barrier("hoy no 😞 mañana lo vuelvo a intentar")[0] == "not specified"
    assert not said_as_plan("the bus never came")


def test_a_plan_for_tomorrow_with_a_thing_of_their_own_is_a_tweak_not_a_new_time() -> None:
    assert planned_tweak("mañana le pego una nota al espejo") == "le pego una nota al espejo"
    assert planned_tweak("mañana lo vuelvo a intentar") == "lo vuelvo a intentar"
    assert not asks_for_another_time("mañana le pongo un recordatorio en el cel")
    assert asks_for_another_time("¿me lo pones a las 9?")
    response = OfflineCoach().complete(feedback("mañana le pego una nota al espejo", TWEAK_OFFERED, replied=True))
    assert calls(response) == [("save_user_profile", {"last_tweak": "le pego una nota al espejo"})]


def test_thanks_for_the_prompts_is_no_report_and_no_praise() -> None:
    response = OfflineCoach().complete(feedback("ty for the nudges, really appreciate it 🙏", PROMPT))
    assert response.tool_calls == []
    assert not any(word in (response.content or "").lower() for word in PRAISE)
