"""The feedback week read path-independently (docs/offline-coach.md, "The feedback week, robust to the
path"): a report with a why, a question or a request in the same message, in either order, gets each
part handled; what helped is read by who or what did it; a thanks after a yes changes nothing. Phrasings
no corpus conversation uses."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.rules.feedback_report import poll_number, report_parts, smaller_version, what_helped_clause
from promptpipe.rules.outcome import read_outcome
from tests.support.offline_coach_requests import LISTED_8PM, PRAISE, PROMPT, calls, feedback, text_of, then

PAUSED = "Daily prompts paused for 5 day(s): none is sent until Monday 09 March (2026-03-09 08:00 …)"


@pytest.mark.parametrize(
    ("said", "outcome", "facts", "requests", "questions"),
    [
        ("walked 10 min. my dad came along", "done", ("my dad came along",), (), ()),
        ("the rain kept me in. nah", "not_done", ("the rain kept me in.",), (), ()),
        ("finished 🎉 do you guys read these?", "done", (), (), ("do you guys read these?",)),
        ("skipped it, can you text at 6 instead", "not_done", (), ("can you text at 6 instead",), ()),
        ("1. pause it 5 days pls", "done", (), ("pause it 5 days pls",), ()),
        ("c'est fait, merci", "done", (), (), ()),
    ],
)
def test_a_report_is_cut_into_its_outcome_and_what_comes_with_it(
    said: str, outcome: str, facts: tuple[str, ...], requests: tuple[str, ...], questions: tuple[str, ...]
) -> None:
    parts = report_parts(said, asked=True)
    assert parts is not None
    assert (parts.outcome, parts.facts, parts.requests, parts.questions) == (outcome, facts, requests, questions)


@pytest.mark.parametrize(
    "said", ["walked the dog", "no texts this weekend, off to the lake", "no me mandes nada, ando de viaje", "1 2 3"]
)
def test_one_clause_or_a_no_about_the_messages_is_no_report_with_more(said: str) -> None:
    assert report_parts(said, asked=True) is None


def test_what_helped_is_read_by_who_or_what_did_it() -> None:
    assert what_helped_clause("my neighbour came with me") == "my neighbour came with me"
    assert what_helped_clause("putting shoes by the door helps") == "putting shoes by the door"
    said = "lo que me ayudó fue dejar el libro en la almohada"
    assert what_helped_clause(said) == "dejar el libro en la almohada"
    assert what_helped_clause("mon frère m'a accompagné") == "mon frère m'a accompagné"
    assert what_helped_clause("it helped") == what_helped_clause("the bus was late") == ""


def test_a_smaller_version_and_a_thanks_after_a_yes() -> None:
    assert smaller_version("only a quick one today") == "a quick one"
    assert smaller_version("une version plus rapide serait mieux") == "une version plus rapide"
    assert smaller_version("quick question") == ""
    assert read_outcome("yup, cheers... thanks!", asked=True) == "done"
    assert read_outcome("yup thanks", asked=False) == "no_report"  # not asked: agreement, not a report


def test_a_report_with_its_why_after_it_saves_the_why_as_the_motivator() -> None:
    response = OfflineCoach().complete(feedback("walked 10 min. my dad came along", PROMPT, replied=False))
    (name, args), *_ = calls(response)
    assert name == "save_user_profile"
    assert args["last_successful_prompt"] == PROMPT and args["last_motivator"] == "my dad came along"


def test_a_miss_with_a_question_saves_the_barrier_and_answers() -> None:
    request = feedback("no, the rain kept me in. are you a bot?", PROMPT)
    response = OfflineCoach().complete(request)
    (name, args), *_ = calls(response)
    assert name == "save_user_profile" and "rain kept me in" in args["last_barrier"]
    reply = OfflineCoach().complete(then(request, response, "Saved.")).content or ""
    assert "automated" in reply.lower() or "bot" in reply.lower()
    assert not any(word in reply.lower() for word in PRAISE)


def test_a_done_with_a_pause_is_recorded_then_paused() -> None:
    request = feedback("1. pause it 5 days pls", PROMPT)
    first = OfflineCoach().complete(request)
    assert calls(first) == [("save_user_profile", {"last_successful_prompt": PROMPT})]
    request = then(request, first, "Saved.")
    second = OfflineCoach().complete(request)
    assert calls(second) == [("scheduler", {"action": "pause", "days": 5})]
    reply = OfflineCoach().complete(then(request, second, PAUSED)).content or ""
    assert "until Monday 09 March" in reply


def test_a_miss_with_another_time_saves_the_reason_then_moves_the_prompt() -> None:
    request = feedback("skipped it, dinner ran long. can you text at 9 instead", PROMPT)
    first = OfflineCoach().complete(request)
    (name, args), *_ = calls(first)
    assert name == "save_user_profile" and "dinner ran long" in args["last_barrier"]
    request = then(request, first, "Saved.")
    second = OfflineCoach().complete(request)
    assert calls(second) == [("scheduler", {"action": "list"})]
    third = OfflineCoach().complete(then(request, second, LISTED_8PM))
    assert ("scheduler", {"action": "create", "type": "fixed", "fixed_time": "21:00"}) in calls(third)


def test_after_what_helped_was_asked_a_yes_it_did_is_no_second_done() -> None:
    reply = text_of(feedback("yes it did, nearly tripped on it", "Did leaving the shoes out help?", replied=True))
    assert not any(word in reply.lower() for word in PRAISE)


def test_not_yet_beside_a_thanks_is_no_miss() -> None:
    reply = text_of(feedback("not yet, thanks for checking", PROMPT))
    assert "rush" in reply.lower() and not any(word in reply.lower() for word in PRAISE)


def test_the_polls_number_typed_with_a_thanks_is_the_answer() -> None:
    assert [poll_number(said) for said in ("1 thx!", "2.", "1, merci", "12", "1 glass")] == [
        "done",
        "not_done",
        "done",
        None,
        None,
    ]
    response = OfflineCoach().complete(feedback("1 gracias", PROMPT))
    assert calls(response) == [("save_user_profile", {"last_successful_prompt": PROMPT})]


def test_a_done_with_a_question_answers_it_then_asks_what_helped() -> None:
    request = feedback("finished 🎉 do you guys read these?", PROMPT)
    response = OfflineCoach().complete(request)
    reply = OfflineCoach().complete(then(request, response, "Saved.")).content or ""
    assert reply.endswith("What helped you make it happen today?")
    helped = feedback("the timer app", reply, replied=True)
    assert calls(OfflineCoach().complete(helped)) == [("save_user_profile", {"last_motivator": "the timer app"})]


@pytest.mark.parametrize("said", ["later today", "no, later today", "al rato lo hago, gracias", "plus tard ce soir"])
def test_a_plan_for_later_today_is_neither_a_success_nor_a_miss(said: str) -> None:
    response = OfflineCoach().complete(feedback(said, PROMPT))
    assert response.tool_calls == [] and not any(word in (response.content or "").lower() for word in PRAISE)
