"""The offline coach confirms the daily set-up before it makes it (docs/offline-coach.md, "The set-up
confirmed before it is made"): the first prompt comes with a proposal of the daily time, and the schedule
is created only on the participant's yes (or a yes with another time: at that time). A hesitation, a
question, a no or another time alone after the proposal creates nothing."""

from __future__ import annotations

import re

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse
from promptpipe.models.profile import UserProfile
from tests.support.offline_coach_requests import OFFER, PROMPT, READY, calls, intake, then

CREATE = ("scheduler", {"action": "create", "type": "fixed", "fixed_time": "08:30"})
DECLINED = "No problem — nothing is scheduled. Whenever you'd like a daily prompt, just say “yes” and I'll set it up."


def after_the_prompt(request: ChatRequest) -> ChatResponse:
    """The routine "after breakfast" saved, the first prompt generated: the coach's next step."""
    coach = OfflineCoach()
    step = coach.complete(request)
    assert calls(step) == [("save_user_profile", {"prompt_anchor": "after breakfast"})]
    request = then(request, step, "Profile saved.")
    step = coach.complete(request)
    assert calls(step) == [("generate_habit_prompt", {"delivery_mode": "immediate"})]
    return coach.complete(then(request, step, PROMPT))


def test_the_turn_that_completes_the_profile_gives_the_prompt_and_proposes_no_schedule_yet() -> None:
    # Given the last fact of the intake
    asked = "What's something you already do every day around 8:30am that we can attach it to?"
    step = after_the_prompt(intake("after breakfast", READY.model_copy(update={"prompt_anchor": ""}), asked))
    # Then the first prompt and the proposal, with no scheduler call and no hand-over to FEEDBACK
    assert calls(step) == []
    assert step.content == OFFER


@pytest.mark.parametrize(
    "said",
    [
        "let me think about it",
        "hmm not sure yet",
        "can I decide tomorrow?",
        "hold on let me check my calendar first",
        "déjame pensarlo",
        "mmm no sé todavía",
        "je vais y réfléchir",
    ],
)
def test_a_hesitation_after_the_proposal_saves_and_schedules_nothing_and_asks_again(said: str) -> None:
    step = OfflineCoach().complete(intake(said, READY, OFFER))
    assert calls(step) == []
    assert re.search(r"8(?::|h)30", step.content or "")  # the proposal, asked again


def test_a_question_after_the_proposal_is_answered_and_the_proposal_asked_again() -> None:
    step = OfflineCoach().complete(intake("will it come on weekends too?", READY, OFFER))
    assert calls(step) == []
    assert (step.content or "").endswith("8:30am?")


@pytest.mark.parametrize("said", ["yes", "ok fine lets do it", "sure, go ahead", "sí va", "oui d'accord", "👍"])
def test_a_yes_after_the_proposal_creates_the_schedule_then_hands_over(said: str) -> None:
    coach = OfflineCoach()
    request = intake(said, READY, OFFER)
    step = coach.complete(request)
    assert calls(step) == [CREATE]
    request = then(request, step, "Daily habit prompt scheduled: every day at 08:20. The first one arrives tomorrow.")
    step = coach.complete(request)
    assert calls(step)[0][0] == "transition_state"


def test_a_yes_after_a_hesitation_creates_the_schedule() -> None:
    request = intake("ok yeah lets do it", READY, OFFER)
    messages = [
        *request.messages[:2],
        ChatMessage(role="assistant", content=OFFER),
        ChatMessage(role="user", content="hmm not sure yet"),
        ChatMessage(
            role="assistant",
            content="No rush — take your time. Whenever you're ready: Shall I send you "
            "one like it every day around 8:30am?",
        ),
        request.messages[-1],
    ]
    step = OfflineCoach().complete(request.model_copy(update={"messages": messages}))
    assert calls(step) == [CREATE]


@pytest.mark.parametrize("said", ["no thanks, i dont want daily texts", "no gracias, por ahora no"])
def test_a_no_keeps_no_schedule_and_the_intake_open(said: str) -> None:
    step = OfflineCoach().complete(intake(said, READY, OFFER))
    assert calls(step) == []
    assert "nothing is scheduled" in (step.content or "") or "no programo nada" in (step.content or "")


def test_a_yes_after_a_no_sets_it_up() -> None:
    request = intake("ok yes", READY, OFFER)
    messages = [
        *request.messages[:2],
        ChatMessage(role="assistant", content=OFFER),
        ChatMessage(role="user", content="no thanks"),
        ChatMessage(role="assistant", content=DECLINED),
        request.messages[-1],
    ]
    step = OfflineCoach().complete(request.model_copy(update={"messages": messages}))
    assert calls(step) == [CREATE]


def test_another_time_in_answer_to_the_proposal_is_agreement_at_that_time() -> None:
    coach = OfflineCoach()
    request = intake("make it 8 instead", READY, OFFER)
    step = coach.complete(request)
    assert calls(step) == [("save_user_profile", {"preferred_time": "08:00"})]
    step = coach.complete(then(request, step, "Profile saved."))
    assert calls(step) == [("scheduler", {"action": "create", "type": "fixed", "fixed_time": "08:00"})]


@pytest.mark.parametrize("said", ["yep", "sure", "👍"])
def test_a_yes_to_the_suggested_routine_that_completes_the_profile_sets_it_up_with_the_prompt(said: str) -> None:
    # "How about “after breakfast”?" — "yep": the last piece of the plan, agreed; the set-up comes with the prompt
    coach = OfflineCoach()
    suggested = "8:30am works. How about “after breakfast”? Just reply yes, or tell me yours."
    request = intake(said, READY.model_copy(update={"prompt_anchor": ""}), suggested)
    step = coach.complete(request)
    assert calls(step) == [("save_user_profile", {"prompt_anchor": "after breakfast"})]
    request = then(request, step, "Profile saved.")
    step = coach.complete(request)
    assert calls(step) == [("generate_habit_prompt", {"delivery_mode": "immediate"})]
    request = then(request, step, PROMPT)
    step = coach.complete(request)
    assert calls(step) == [CREATE]
    request = then(request, step, "Daily habit prompt scheduled: every day at 08:20. The first one arrives tomorrow.")
    step = coach.complete(request)
    assert calls(step)[0][0] == "transition_state"
    told = coach.complete(then(request, step, "The conversation is now in FEEDBACK.")).content or ""
    assert PROMPT in told and "every day around 8:30am — the first one arrives tomorrow" in told  # the prompt shown


def test_a_routine_changed_after_the_proposal_is_saved_and_the_proposal_asked_again() -> None:
    coach = OfflineCoach()
    request = intake("wait actually after my shower, not after breakfast", READY, OFFER)
    step = coach.complete(request)
    assert [name for name, _ in calls(step)] == ["save_user_profile"]
    step = coach.complete(then(request, step, "Profile saved."))
    assert calls(step) == []
    assert (step.content or "").endswith("every day around 8:30am?")


def build(user: str, profile: UserProfile, history: list[tuple[str, str]]) -> ChatRequest:
    request = intake(user, profile, history[0][1])
    before = [ChatMessage(role=role, content=text) for role, text in history]  # type: ignore[arg-type]
    return request.model_copy(update={"messages": [*request.messages[:2], *before, request.messages[-1]]})


def test_an_intake_reentered_after_a_confirmed_set_up_finishes_without_a_new_proposal() -> None:
    # Given a set-up agreed and confirmed, then an intake re-entered to repair the routine
    history = [
        ("assistant", OFFER),
        ("user", "yes"),
        ("assistant", "Done! Your first prompt comes tomorrow around 8:30am, then every day at that time."),
        ("user", "hi"),
        ("assistant", "What's something you already do every day that we can attach it to?"),
    ]
    step = after_the_prompt(build("after breakfast", READY.model_copy(update={"prompt_anchor": ""}), history))
    # Then the set-up it had is made again with no new proposal (the yes was given)
    assert calls(step) == [CREATE]
