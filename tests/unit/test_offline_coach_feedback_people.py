"""The offline coach's feedback on messages as people text them (docs/offline-coach.md, "Feedback as
people write it"): what is recorded, what is saved, what the schedule tools are asked to do."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.rules.message_reading import read_message
from tests.support.offline_coach_requests import LISTED_8PM, PRAISE, PROMPT, calls, feedback, text_of, then

DOABLE = "Great — one stretch while the coffee brews. Does that sound doable?"
LISTED_730AM = "Active daily schedules:\n1. every day at 07:20 (America/Toronto), 10 min before 07:30 (internal id: s1)"
PAUSED_A_WEEK = (
    "Daily prompts paused for 7 day(s): none is sent until Tuesday 08 December (2026-12-08 19:05 America/Toronto), "
    "when they resume by themselves at their usual time."
)
PAUSED_TO_MONDAY = PAUSED_A_WEEK.replace("7 day(s)", "6 day(s)").replace("Tuesday 08", "Monday 07")


def test_a_thumbs_up_to_the_daily_prompt_is_a_done_but_not_to_a_tweak() -> None:
    response = OfflineCoach().complete(feedback("👍", PROMPT, replied=True))
    assert calls(response) == [("save_user_profile", {"last_successful_prompt": PROMPT})]
    agreed = text_of(feedback("👍", DOABLE, replied=True))
    assert not any(word in agreed.lower() for word in PRAISE)


def test_a_count_is_one_done_and_the_reason_is_the_motivator() -> None:
    response = OfflineCoach().complete(feedback("did it twice today!! bc my sister joined", PROMPT))
    assert calls(response) == [
        ("save_user_profile", {"last_successful_prompt": PROMPT, "last_motivator": "my sister joined"})
    ]


def test_a_done_with_a_question_is_recorded_and_answered() -> None:
    request = feedback("done. btw how long does this study last?", PROMPT)
    response = OfflineCoach().complete(request)
    assert calls(response) == [("save_user_profile", {"last_successful_prompt": PROMPT})]
    reply = OfflineCoach().complete(then(request, response, "Saved.")).content or ""
    assert "How many weeks" in reply


def test_part_of_it_saves_what_got_in_the_way_and_praises_nothing() -> None:
    request = feedback("half of it, got interrupted by a call", PROMPT)
    response = OfflineCoach().complete(request)
    (name, args), *_ = calls(response)
    assert (name, args["last_barrier"]) == ("save_user_profile", "got interrupted by a call")
    assert "last_successful_prompt" not in args
    reply = OfflineCoach().complete(then(request, response, "Saved.")).content or ""
    assert not any(word in reply.lower() for word in PRAISE)


def test_a_bare_kinda_is_asked_about() -> None:
    assert "What got in the way" in text_of(feedback("kinda", PROMPT))


def test_a_pause_until_a_weekday_learns_today_from_the_tools_result() -> None:
    request = feedback("pause till monday pls, family stuff", "See you tomorrow!")
    first = OfflineCoach().complete(request)
    assert calls(first) == [("scheduler", {"action": "pause", "days": 7})]
    # A week from now is a Tuesday, so today is: Monday is 6 days away
    request = then(request, first, PAUSED_A_WEEK)
    second = OfflineCoach().complete(request)
    assert calls(second) == [("scheduler", {"action": "pause", "days": 6})]
    reply = OfflineCoach().complete(then(request, second, PAUSED_TO_MONDAY)).content or ""
    assert "until Monday 07 December" in reply


def test_a_pause_in_french_is_confirmed_in_french() -> None:
    request = feedback("pause 2 jours stp", "À demain !")
    response = OfflineCoach().complete(request)
    assert calls(response) == [("scheduler", {"action": "pause", "days": 2})]
    reply = OfflineCoach().complete(then(request, response, PAUSED_A_WEEK.replace("7 day", "2 day"))).content
    assert (reply or "").startswith("C'est fait : tes messages quotidiens sont en pause")


def test_a_day_part_asked_for_is_proposed_and_moved_on_yes() -> None:
    proposal = text_of(feedback("mornings might be better tbh", DOABLE))
    assert proposal == "Sure. How about 8am — would that work?"
    assert calls(OfflineCoach().complete(feedback("ok", proposal))) == [("scheduler", {"action": "list"})]


def test_a_day_part_refused_saves_the_barrier_asks_the_time_and_the_answer_keeps_its_own_half() -> None:
    request = feedback("mornings don't work for me, always rushing to the bus", PROMPT)
    response = OfflineCoach().complete(request)
    assert calls(response) == [
        ("save_user_profile", {"last_barrier": "mornings don't work for me, always rushing to the bus"})
    ]
    asked = OfflineCoach().complete(then(request, response, "Saved.")).content or ""
    assert asked == "Sure. What time would suit you better? For example 7pm."
    request = feedback("after dinner maybe 7:30", asked)
    listed = OfflineCoach().complete(request)
    moved = OfflineCoach().complete(then(request, listed, LISTED_730AM))
    assert ("scheduler", {"action": "create", "type": "fixed", "fixed_time": "19:30"}) in calls(moved)


def test_an_errand_touches_no_schedule() -> None:
    response = OfflineCoach().complete(feedback("need to stop at the pharmacy first, will do it after", PROMPT))
    assert all(name != "scheduler" for name, _ in calls(response))
    assert read_message("need to stop at the pharmacy first, will do it after").request is None


def test_a_limit_the_schedule_keeps_is_said_in_the_listed_time() -> None:
    request = feedback("no reminders after 9pm", "See you tomorrow!")
    response = OfflineCoach().complete(request)
    reply = OfflineCoach().complete(then(request, response, LISTED_8PM)).content or ""
    assert "8pm, so nothing changes" in reply


@pytest.mark.parametrize(
    ("said", "last", "listed", "created"),
    [
        # another time in answer to a Spanish proposal keeps the proposal's half of the day
        ("a las 6", "Claro. ¿Qué tal a las 3pm? ¿Te va bien?", LISTED_730AM, "18:00"),
        # a shift moves the listed time by that much
        ("can you send it an hour later?", PROMPT, LISTED_8PM, "21:00"),
        ("30 min earlier pls", PROMPT, LISTED_8PM, "19:30"),
    ],
)
def test_the_new_time_is_created_after_listing(said: str, last: str, listed: str, created: str) -> None:
    request = feedback(said, last)
    first = OfflineCoach().complete(request)
    assert calls(first) == [("scheduler", {"action": "list"})]
    moved = OfflineCoach().complete(then(request, first, listed))
    assert ("scheduler", {"action": "create", "type": "fixed", "fixed_time": created}) in calls(moved)


def test_a_report_of_doing_it_later_moves_nothing() -> None:
    response = OfflineCoach().complete(feedback("did it an hour later than usual", PROMPT))
    assert calls(response) == [("save_user_profile", {"last_successful_prompt": PROMPT})]


def test_no_texts_for_a_week_is_a_pause_and_a_limit_is_not() -> None:
    response = OfflineCoach().complete(feedback("i'm traveling next week, no texts pls", PROMPT))
    assert calls(response) == [("scheduler", {"action": "pause", "days": 7})]
    response = OfflineCoach().complete(feedback("no more texts after 9pm pls", PROMPT))
    assert all(args.get("action") not in ("pause", "delete") for _, args in calls(response))


def test_a_new_habit_in_french_goes_back_to_the_intake() -> None:
    response = OfflineCoach().complete(feedback("je veux une nouvelle habitude", PROMPT))
    assert [name for name, _ in calls(response)] == ["transition_state"]


def test_spanish_and_french_get_their_own_replies() -> None:
    assert text_of(feedback("la verdad que hoy estuvo raro el día", PROMPT)).startswith("¡Gracias por contarme!")
    assert text_of(feedback("ok merci", DOABLE.replace("doable", "faisable"), replied=True)).startswith("Super")
    response = OfflineCoach().complete(feedback("sí", "¡Gracias por contarme! ¿Cómo te fue hoy con tu hábito?"))
    assert calls(response) == [("save_user_profile", {"last_successful_prompt": PROMPT})]


# -- forms the rules were not built on (built/12_feedback_unseen_forms.yaml, committed first) ---------
ASKED_BARRIER_EN = "Part of it still counts as showing up! What got in the way today?"


def test_a_count_short_of_the_whole_praises_nothing_and_its_barrier_is_no_done() -> None:
    partial = text_of(feedback("2 of 3 glasses", PROMPT))
    assert "got in the way" in partial and not any(word in partial.lower() for word in PRAISE)
    response = OfflineCoach().complete(feedback("ran out of time before my 9am meeting", ASKED_BARRIER_EN))
    saved = calls(response)
    assert [name for name, _ in saved] == ["save_user_profile"]
    assert "last_barrier" in saved[0][1] and "last_successful_prompt" not in saved[0][1]


@pytest.mark.parametrize(
    ("said", "created"),
    [
        ("tu peux le décaler à 21h ?", "21:00"),
        ("a las 7 mejor, así salgo antes del trabajo", "19:00"),  # the evening of the listed 8pm
        ("can you push it an hour? dinner runs late these days", "21:00"),
        ("adelántalo media hora porfa", "19:30"),
    ],
)
def test_a_verb_of_change_on_the_prompt_moves_it(said: str, created: str) -> None:
    request = feedback(said, "Great! What helped?", replied=True)
    first = OfflineCoach().complete(request)
    assert calls(first) == [("scheduler", {"action": "list"})]
    moved = OfflineCoach().complete(then(request, first, LISTED_8PM))
    assert ("scheduler", {"action": "create", "type": "fixed", "fixed_time": created}) in calls(moved)


def test_an_errand_in_spanish_touches_no_schedule_and_what_helped_takes_no_request() -> None:
    response = OfflineCoach().complete(feedback("tengo que pasar a la farmacia primero, al rato lo hago", PROMPT))
    assert all(name != "scheduler" for name, _ in calls(response))
    helped = OfflineCoach().complete(feedback("can you push it an hour?", "Nice! What helped you today?"))
    assert all("last_motivator" not in args for _, args in calls(helped))


def test_a_done_with_can_i_change_the_time_moves_nothing_and_the_next_time_answers_it() -> None:
    response = OfflineCoach().complete(feedback("did it. btw can I change the time?", PROMPT))
    assert [name for name, _ in calls(response)] == ["save_user_profile"]
    assert "last_successful_prompt" in calls(response)[0][1]
    answer = "Nice work — you did it! Yes — any time. Just text me the new time (like “7pm from now on”)."
    request = feedback("maybe 6:30", answer, replied=True)
    first = OfflineCoach().complete(request)
    assert calls(first) == [("scheduler", {"action": "list"})]
    moved = OfflineCoach().complete(then(request, first, LISTED_8PM))
    assert ("scheduler", {"action": "create", "type": "fixed", "fixed_time": "18:30"}) in calls(moved)


@pytest.mark.parametrize(("said", "asked"), [("sí pero tarde, como a las 10", PROMPT), ("ya quedó", PROMPT)])
def test_a_spanish_done_in_other_words_is_recorded(said: str, asked: str) -> None:
    response = OfflineCoach().complete(feedback(said, asked))
    assert calls(response) == [("save_user_profile", {"last_successful_prompt": PROMPT})]


def test_being_away_offers_a_pause_and_a_yes_to_it_pauses_for_what_it_said() -> None:
    offer = text_of(feedback("I'm away this weekend", PROMPT, replied=True))
    assert offer == "Want me to pause your daily prompts for 2 days while you're away?"
    response = OfflineCoach().complete(feedback("yes pls", offer, replied=True))
    assert calls(response) == [("scheduler", {"action": "pause", "days": 2})]
    offer_es = text_of(feedback("estoy de viaje hasta el jueves", PROMPT, replied=True))
    assert "hasta el jueves" in offer_es
    response = OfflineCoach().complete(feedback("sí", offer_es, replied=True))
    assert calls(response) == [("scheduler", {"action": "pause", "days": 7})]  # then shortened to the day


@pytest.mark.parametrize(
    ("said", "reply"),
    [
        ("not on weekends pls", "only send your prompt every day (8pm)"),
        ("no mensajes después de las 10", "llega hacia las 8pm, así que nada cambia"),
        ("nothing after 9pm", "comes around 8pm, so nothing changes"),
    ],
)
def test_a_limit_lists_then_moves_nothing(said: str, reply: str) -> None:
    request = feedback(said, PROMPT, replied=True)
    first = OfflineCoach().complete(request)
    assert calls(first) == [("scheduler", {"action": "list"})]
    answer = OfflineCoach().complete(then(request, first, LISTED_8PM))
    assert answer.tool_calls == [] and reply in (answer.content or "")


def test_a_lone_hour_that_is_better_keeps_the_half_of_the_listed_time() -> None:
    request = feedback("7 works better", PROMPT, replied=True)
    first = OfflineCoach().complete(request)
    moved = OfflineCoach().complete(then(request, first, LISTED_8PM))
    assert ("scheduler", {"action": "create", "type": "fixed", "fixed_time": "19:00"}) in calls(moved)


@pytest.mark.parametrize("said", ["not yet, will do it tonight", "todavía no, al rato", "más tarde porfa"])
def test_not_yet_and_later_record_nothing_and_touch_no_schedule(said: str) -> None:
    reply = text_of(feedback(said, PROMPT))
    assert not any(word in reply.lower() for word in PRAISE)


@pytest.mark.parametrize(("said", "reply"), [("🙏", "You're welcome!"), ("gracias!!", "¡De nada!")])
def test_thanks_get_a_welcome_not_a_check_in(said: str, reply: str) -> None:
    assert text_of(feedback(said, "Nice work! What helped?", replied=True)).startswith(reply)


def test_a_question_of_when_before_the_first_prompt_lists_the_schedule() -> None:
    request = feedback("what time will it come?", "Great! Your daily prompt comes every day around 8pm.", delivered=0)
    first = OfflineCoach().complete(request)
    assert calls(first) == [("scheduler", {"action": "list"})]
    answer = OfflineCoach().complete(then(request, first, LISTED_8PM)).content or ""
    assert answer == "Your daily prompt comes every day around 8pm."


def test_a_limit_on_the_evening_in_french_pauses_nothing() -> None:
    request = feedback("arrête de m'envoyer des messages le soir", PROMPT, replied=True)
    first = OfflineCoach().complete(request)
    assert calls(first) == [("scheduler", {"action": "list"})]
    answer = OfflineCoach().complete(then(request, first, LISTED_8PM))
    # answered in French, with a time proposed and nothing paused
    assert answer.tool_calls == [] and (answer.content or "").rstrip().endswith("Par exemple 17h.")


def _play(said: str) -> list[tuple[str, dict[str, object]]]:
    """Every tool call of one turn, each answered (the schedule listed at 8pm)."""
    request, made = feedback(said, PROMPT), []
    for _ in range(5):
        response = OfflineCoach().complete(request)
        step = calls(response)
        if not step:
            break
        made += step
        results = [LISTED_8PM if args.get("action") == "list" else "ok" for _, args in step]
        request = then(request, response, *results)
    return made


def test_a_report_with_a_change_of_time_records_then_moves() -> None:
    made = _play("done! can we move it to 7 tho")
    assert made[0] == ("save_user_profile", {"last_successful_prompt": PROMPT})
    assert ("scheduler", {"action": "create", "type": "fixed", "fixed_time": "19:00"}) in made


def test_a_report_of_another_time_moves_nothing() -> None:
    assert _play("did it at 7pm instead") == [("save_user_profile", {"last_successful_prompt": PROMPT})]


def test_a_question_of_when_inside_a_miss_or_a_complaint_gets_the_listed_time() -> None:
    assert _play("ugh forgot, what time do you send it again?") == [("scheduler", {"action": "list"})]


def test_what_is_not_understood_after_the_report_is_asked_about_and_changes_nothing() -> None:
    reply = text_of(feedback("3 days in a row!! my cat watches me lol", "Great! What helped?", replied=True))
    assert reply.endswith("?") and not any(word in reply.lower() for word in PRAISE)
