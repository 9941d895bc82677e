"""Outcome reports read for everything they carry (docs/offline-coach.md, "Outcomes read for everything
they carry"): a done with no "done" word, who it was done with, the change they will try (the schedule
kept), what got in the way without the words of the miss, part of a day never praised, a thanks after
what helped was asked saved as nothing, a miss with a time proposed; in the intake, a two-word reason
beside the habit. Phrasings no corpus conversation uses."""

from __future__ import annotations

from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.adapters.offline_coach.intake_answers import parse_intake_message
from promptpipe.adapters.offline_coach.text import DOMAIN, MOTIVATION
from promptpipe.rules.feedback_requests import asks_for_another_time
from tests.support.offline_coach_requests import LISTED_8PM, PRAISE, PROMPT, calls, feedback, text_of, then

TWEAK_OFFERED = (
    "No worries — missing a day is part of building any habit. One small tweak for next time: make it even "
    "smaller so it fits on a busy day. Does that sound doable?"
)
HELPED_ASKED = "Nice work — you did it! What helped you make it happen today?"


def test_the_habit_judged_to_be_working_answers_the_prompt_as_a_done() -> None:
    response = OfflineCoach().complete(feedback("ty, this is really helping", PROMPT))
    assert calls(response) == [("save_user_profile", {"last_successful_prompt": PROMPT})]


def test_the_habit_judged_to_be_working_after_a_tweak_is_no_done() -> None:
    response = OfflineCoach().complete(feedback("ty, this is really helping", TWEAK_OFFERED, replied=True))
    assert not any(args.get("last_successful_prompt") for _, args in calls(response))


def test_who_it_was_done_with_is_what_helped() -> None:
    request = feedback("went w my bf after work", PROMPT)
    (name, args), *_ = calls(OfflineCoach().complete(request))
    assert name == "save_user_profile"
    assert args == {"last_successful_prompt": PROMPT, "last_motivator": "doing it with my bf"}


def test_the_change_they_will_try_is_the_tweak_and_moves_nothing() -> None:
    request = feedback("i think i'll keep the bottle on my desk", TWEAK_OFFERED, replied=True)
    response = OfflineCoach().complete(request)
    assert calls(response) == [("save_user_profile", {"last_tweak": "keep the bottle on my desk"})]
    reply = OfflineCoach().complete(then(request, response, "Saved.")).content or ""
    assert reply.startswith("Great — let's try that") and not any(word in reply.lower() for word in PRAISE)


def test_a_plan_that_names_a_time_of_day_is_a_tweak_not_a_new_schedule() -> None:
    response = OfflineCoach().complete(feedback("maybe I'll go before lunch next week", TWEAK_OFFERED, replied=True))
    assert [name for name, _ in calls(response)] == ["save_user_profile"]


def test_a_miss_saves_what_got_in_the_way_without_the_words_of_the_miss() -> None:
    (name, args), *_ = calls(OfflineCoach().complete(feedback("no pude, se fue la luz", PROMPT)))
    assert name == "save_user_profile" and args["last_barrier"] == "se fue la luz"


def test_part_of_a_day_with_a_reason_is_never_praised() -> None:
    request = feedback("did 2 of the 3 sets, my knee hurt", PROMPT)
    response = OfflineCoach().complete(request)
    (name, args), *_ = calls(response)
    assert name == "save_user_profile" and "last_successful_prompt" not in args and args["last_barrier"]
    reply = OfflineCoach().complete(then(request, response, "Saved.")).content or ""
    assert not any(word in reply.lower() for word in PRAISE)


def test_a_thanks_after_what_helped_was_asked_saves_nothing() -> None:
    assert "welcome" in text_of(feedback("thank u so much", HELPED_ASKED, replied=True)).lower()


def test_a_filler_beside_a_done_is_not_what_helped() -> None:
    (name, args), *_ = calls(OfflineCoach().complete(feedback("yes!! at last", PROMPT)))
    assert name == "save_user_profile" and "last_motivator" not in args


def test_a_miss_with_a_time_proposed_saves_the_reason_then_moves_the_prompt() -> None:
    request = feedback("skipped, my shift ran over. could we try 9:30?", PROMPT)
    first = OfflineCoach().complete(request)
    (name, args), *_ = calls(first)
    assert name == "save_user_profile" and args["last_barrier"] == "my shift ran over"
    request = then(request, first, "Saved.")
    second = OfflineCoach().complete(request)
    assert calls(second) == [("scheduler", {"action": "list"})]
    third = OfflineCoach().complete(then(request, second, LISTED_8PM))
    assert ("scheduler", {"action": "create", "type": "fixed", "fixed_time": "21:30"}) in calls(third)


def test_a_miss_with_their_own_change_saves_it_as_the_tweak() -> None:
    request = feedback("didn't make it, traffic was insane. gonna leave my shoes in the car", PROMPT)
    response = OfflineCoach().complete(request)
    (name, args), *_ = calls(response)
    assert name == "save_user_profile"
    assert args == {"last_barrier": "traffic was insane", "last_tweak": "leave my shoes in the car"}
    reply = OfflineCoach().complete(then(request, response, "Saved.")).content or ""
    assert "let's try that" in reply and not any(word in reply.lower() for word in PRAISE)


def test_not_making_it_asks_for_no_change() -> None:
    assert not asks_for_another_time("couldn't make it today, long day")
    assert asks_for_another_time("can you make it 7 instead")


def test_a_two_word_reason_beside_the_habit_is_the_reason_and_a_time_or_a_shrug_is_not() -> None:
    assert parse_intake_message("yoga, stiff back", {}, DOMAIN) == {DOMAIN: "yoga", MOTIVATION: "stiff back"}
    assert MOTIVATION not in parse_intake_message("walk, every evening", {}, DOMAIN)
    assert MOTIVATION not in parse_intake_message("read, sounds good", {}, DOMAIN)
    assert MOTIVATION not in parse_intake_message("journal, no idea", {}, DOMAIN)
