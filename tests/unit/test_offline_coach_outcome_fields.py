"""The offline coach saves the outcome fields a feedback reply carries, as the model path does
(docs/offline-coach.md, "Outcome fields in the feedback week"): the done and what helped, the done said as
thanks or a judgement (only once a prompt was delivered), the done and what got in the way, a miss with its
barrier and a plan (nothing moved), part of it (no count). Phrasings other than the built corpus's, in
English, Spanish and French."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach
from tests.support.offline_coach_requests import LISTED_8PM, PRAISE, PROMPT, calls, feedback, then


def _saved(said: str, *, delivered: int = 1) -> dict[str, str]:
    response = OfflineCoach().complete(feedback(said, PROMPT, delivered=delivered))
    saves = [args for name, args in calls(response) if name == "save_user_profile"]
    assert all(name in ("save_user_profile", "record_outcome") for name, _ in calls(response)), calls(response)
    return saves[0] if saves else {}


def _reply(said: str, *, delivered: int = 1) -> tuple[list[str], str]:
    """The tools called for ``said`` and the reply once they answered (a listed schedule, a save)."""
    request = feedback(said, PROMPT, delivered=delivered)
    response = OfflineCoach().complete(request)
    if not response.tool_calls:
        return [], response.content or ""
    results = [LISTED_8PM if call.name == "scheduler" else "Saved." for call in response.tool_calls]
    reply = OfflineCoach().complete(then(request, response, *results)).content or ""
    return [call.name for call in response.tool_calls], reply


@pytest.mark.parametrize(
    ("said", "helper"),
    [
        ("did 12 lunges!! my husband timed me", "my husband timed me"),
        ("read like 4 pages, having my reading lamp on already really helps", "having my reading lamp on already"),
        ("fit it in before work, the alarm on my phone works wonders", "the alarm on my phone"),
        ("swam 15 min, the new goggles made it way easier", "the new goggles"),
        ("nadé 15 min, con la playlist nueva se me hizo rápido", "con la playlist nueva"),
        ("salí a correr 2 km con mi primo, se pasó volando", "mi primo"),
        ("j'ai médité 5 min, le casque m'a facilité la tâche", "le casque"),
    ],
)
def test_a_done_with_who_or_what_helped_saves_both(said: str, helper: str) -> None:
    saved = _saved(said)
    assert saved["last_successful_prompt"] == PROMPT
    assert helper in saved["last_motivator"]
    assert "last_barrier" not in saved


@pytest.mark.parametrize(
    "said", ["keeping my water bottle in the car helps so much", "dejar la ropa lista la noche anterior me ayuda"]
)
def test_what_helped_said_to_the_daily_prompt_is_a_done_too(said: str) -> None:
    saved = _saved(said)
    assert saved["last_successful_prompt"] == PROMPT and saved["last_motivator"]


@pytest.mark.parametrize(
    ("said", "in_the_way"),
    [
        ("did it but the toddler was screaming the whole time", "toddler"),
        ("finished, though my shift ran long", "shift"),
        ("thx, rough one w the deadline tho", "deadline"),
        ("lo logré, aunque con el dolor de rodilla fue complicadísimo", "rodilla"),
        ("gracias!! hoy estuvo pesadísimo con la mudanza", "mudanza"),
        ("c'est fait, mais avec le boulot c'était serré", "boulot"),
    ],
)
def test_a_done_or_a_thanks_with_what_got_in_the_way_saves_the_done_and_the_barrier(said: str, in_the_way: str) -> None:
    saved = _saved(said)
    assert saved["last_successful_prompt"] == PROMPT
    assert in_the_way in saved["last_barrier"]
    assert "last_motivator" not in saved  # what made it hard never helped


@pytest.mark.parametrize(
    "said", ["ty!! its really working for me", "gracias, de verdad me está funcionando", "merci, ça m'aide beaucoup"]
)
def test_a_done_said_as_thanks_counts_only_once_a_prompt_was_delivered(said: str) -> None:
    assert _saved(said)["last_successful_prompt"] == PROMPT
    # Before any prompt: nothing saved or recorded (at most the schedule listed for the plan), nothing
    # praised, no check-in on the habit
    tools, before = _reply(said, delivered=0)
    assert set(tools) <= {"scheduler"}
    assert not any(word in before.lower() for word in PRAISE)
    assert "how did" not in before.lower() and "did you" not in before.lower()


@pytest.mark.parametrize(
    ("said", "in_the_way"),
    [
        ("nah, stuck at the office till 8. tomorrow fs", "office"),
        ("no alcancé, el tráfico estuvo horrible, mañana sí o sí", "tráfico"),
    ],
)
def test_a_miss_with_its_barrier_and_a_plan_saves_the_barrier_and_moves_nothing(said: str, in_the_way: str) -> None:
    response = OfflineCoach().complete(feedback(said, PROMPT))
    names = [name for name, _ in calls(response)]
    assert "scheduler" not in names
    (saved,) = [args for name, args in calls(response) if name == "save_user_profile"]
    assert in_the_way in saved["last_barrier"] and "last_successful_prompt" not in saved


@pytest.mark.parametrize("said", ["did about half, the dog needed to go out", "solo la mitad, llegaron visitas"])
def test_part_of_it_saves_the_barrier_and_counts_nothing(said: str) -> None:
    response = OfflineCoach().complete(feedback(said, PROMPT))
    assert [name for name, _ in calls(response)] == ["save_user_profile"]
    saved = calls(response)[0][1]
    assert saved["last_barrier"] and "last_successful_prompt" not in saved
    assert not any(word in _reply(said)[1].lower() for word in PRAISE)


@pytest.mark.parametrize(
    "said",
    ["ty, this is def working 🙏 do you text on weekends?", "gracias, me está sirviendo bastante. ¿hasta cuándo es?"],
)
def test_a_done_said_as_a_judgement_with_a_question_is_recorded_and_the_question_answered(said: str) -> None:
    assert _saved(said)["last_successful_prompt"] == PROMPT
    assert _reply(said)[1]  # the question gets an answer in the same reply


@pytest.mark.parametrize(
    "said", ["appreciate it, it's been good for me", "thx these msgs r helping a lot", "this actually helps ty"]
)
def test_the_texts_judged_to_help_are_a_done_and_the_thanks_is_never_what_helped(said: str) -> None:
    saved = _saved(said)
    assert saved["last_successful_prompt"] == PROMPT
    assert "last_motivator" not in saved


@pytest.mark.parametrize("said", ["finished the stretches, my wife did them too", "went w a coworker so it was easier"])
def test_someone_doing_it_too_is_saved_as_what_helped(said: str) -> None:
    saved = _saved(said)
    assert saved["last_successful_prompt"] == PROMPT and saved["last_motivator"]
