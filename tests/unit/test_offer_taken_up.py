"""The offer of the daily prompt taken up without a yes word (docs/offline-coach.md, "Confirmed before
it is made"): the first prompt answered with thanks, a verdict, a will to try it, or having done it,
agrees to the offer beside it; a hesitation, a no, a question or a complaint does not."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach.intake_offer import takes_the_prompt_up


@pytest.mark.parametrize(
    "said",
    [
        "sounds doable!",
        "ok i'll try it tomorrow",
        "did it just now, easy",
        "thanks!",
        "gracias!",
        "ok lo intento mañana",
        "je vais essayer demain",
        "fait ce matin, 10 minutes !",
        "walked 10 min just now",
    ],
)
def test_the_first_prompt_taken_up_agrees_to_the_offer(said: str) -> None:
    assert takes_the_prompt_up(said)


@pytest.mark.parametrize(
    "said",
    [
        "thanks, let me think about it",
        "sounds hard tbh",
        "will it come on weekends?",
        "no thanks",
        "hmm not sure",
        "déjame pensarlo",
        "this is too much",
    ],
)
def test_a_hesitation_a_no_a_question_or_a_complaint_does_not(said: str) -> None:
    assert not takes_the_prompt_up(said)


@pytest.mark.parametrize("said", ["sounds doable!", "gracias!", "fait ce matin, 10 minutes !"])
def test_the_prompt_taken_up_creates_the_schedule(said: str) -> None:
    from promptpipe.adapters.offline_coach import OfflineCoach
    from tests.support.offline_coach_requests import OFFER, READY, calls, intake
    from tests.unit.test_offline_coach_confirm_setup import CREATE

    assert calls(OfflineCoach().complete(intake(said, READY, OFFER))) == [CREATE]


def test_a_pause_asked_at_the_offer_sets_it_up_then_pauses_it() -> None:
    from promptpipe.adapters.offline_coach import OfflineCoach
    from tests.support.offline_coach_requests import OFFER, READY, calls, intake, then
    from tests.unit.test_offline_coach_confirm_setup import CREATE

    coach = OfflineCoach()
    request = intake("my son is sick, can we pause for 2 days?", READY, OFFER)
    step = coach.complete(request)
    assert calls(step) == [CREATE]
    step = coach.complete(then(request, step, "Daily habit prompt scheduled: every day at 08:30."))
    assert calls(step) == [("scheduler", {"action": "pause", "days": 2})]
