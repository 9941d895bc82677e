"""The intake's reader on forms no corpus conversation uses (docs/offline-coach.md, "A reader before an
answerer"): a question known by its form (an interrogative past a filler, a question mark anywhere), a
shrug, a yes with its letters stretched, an acknowledgement of the coach's own answer, times in words and
in texting forms, the half of the day a routine gives, a counter-offer to a suggested time, and the
routine said for the time offered back as the anchor. The phrasings here are deliberately not the
corpus's: they check that each reading holds beyond the messages it was built on."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach, StudyFacts, answer_faq
from promptpipe.adapters.offline_coach.habit_prompt import _field
from promptpipe.adapters.offline_coach.intake_answers import names_a_fact, parse_intake_message
from promptpipe.adapters.offline_coach.reading import suggestion
from promptpipe.adapters.offline_coach.times import parse_clock_time, parse_vague_time, same_half_of_day
from promptpipe.flow.context import intake_context
from promptpipe.models.llm import ChatMessage, ChatRequest
from promptpipe.models.profile import UserProfile
from promptpipe.rules.language import detect_language
from promptpipe.rules.message_reading import TOPICS, read_message
from promptpipe.rules.normalise import squeeze_repeats
from tests.unit.test_offline_coach_reading import TOOLS, intake, reply

DOMAIN, MOTIVATION, TIME, ANCHOR = "habit_domain", "motivational_frame", "preferred_time", "prompt_anchor"


@pytest.mark.parametrize(
    ("said", "topic"),
    [
        ("ok but who are you", "who"),
        ("sorry who's this", "who"),
        ("hmm how did you even get this number", "number"),
        ("quién te pasó mi número", "number"),
        ("wait why do u need that", "why_asked"),
        ("por qué me preguntas eso", "why_asked"),
        ("pourquoi cette question ?", "why_asked"),
        ("how often will you text me", "what_sent"),
        ("me vas a escribir todos los días?", "what_sent"),
        ("is this a scam", "who"),
        ("btw how long is this whole thing", "how_long"),
        ("what happens to my data", "other"),
    ],
)
def test_a_question_is_known_by_its_form_not_only_by_its_mark(said: str, topic: str) -> None:
    assert topic in TOPICS
    assert read_message(said).kind == "question"
    assert read_message(said).topic == topic


@pytest.mark.parametrize(
    "said", ["when i get home", "when the kids leave for school", "quand je rentre", "como a las 8", "how about 7"]
)
def test_an_interrogative_word_that_opens_an_answer_asks_nothing(said: str) -> None:
    assert read_message(said).kind != "question"


def test_the_poll_answers_own_question_mark_is_not_theirs() -> None:
    assert read_message("Q: Did you do it? A: Done").kind == "fact"


@pytest.mark.parametrize("said", ["idk", "no idea tbh", "dunno", "hmm not sure", "ni idea", "je sais pas", "nooo sé"])
def test_a_shrug_alone_is_no_answer(said: str) -> None:
    reading = read_message(said)
    assert reading.kind == "later" and reading.topic == "shrug"


@pytest.mark.parametrize("said", ["okkkk", "yesssss 🙌🏿", "siiiii", "valeeee", "dale daleee", "suree", "parfaiiit"])
def test_a_stretched_yes_is_a_yes(said: str) -> None:
    assert read_message(said).kind == "yes"


def test_squeeze_repeats_keeps_one_or_two() -> None:
    assert squeeze_repeats("yesss") == "yes"
    assert squeeze_repeats("goood", keep=2) == "good"
    assert squeeze_repeats("coffee 777") == "coffee 777"  # doubles and digits stay


def test_a_complaint_in_other_words() -> None:
    assert read_message("do i really have to answer all this").kind == "complaint"
    assert read_message("trop de questions là").kind == "complaint"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8 and a half", "08:30"),
        ("around noon i guess", "12:00"),
        ("6:15p", "18:15"),
        ("9a before the kids wake", "09:00"),
        ("a eso de las 7 de la tarde", "19:00"),
        ("tipo 9 de la noche", "21:00"),
        ("diez de la noche", "22:00"),
        ("à sept heures du matin", "07:00"),
        ("sept heures et demie du soir", "19:30"),
        ("vers midi et demi", "12:30"),
        ("at 7 before work", "07:00"),
        ("6:30 antes del trabajo", "06:30"),
        ("for two weeks", None),
    ],
)
def test_times_in_words_and_texting_forms(text: str, expected: str | None) -> None:
    assert parse_clock_time(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("por las mañanas", "08:00"), ("en la tarde", "15:00"), ("antes de acostarme", "21:00"), ("le soir", "21:00")],
)
def test_day_parts_in_spanish_and_french(text: str, expected: str) -> None:
    assert parse_vague_time(text, loose=True) == expected


def test_manana_alone_is_tomorrow_not_a_morning() -> None:
    assert parse_vague_time("mañana te digo", loose=True) is None


def test_a_french_hour_keeps_its_24_hour_clock() -> None:
    assert same_half_of_day("10:00", "19:00", "vers 10h") == "10:00"
    assert same_half_of_day("06:45", "08:00", "earlier, like 6:45") == "06:45"


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("oh ok. meditation", {DOMAIN: "mindfulness"}),
        ("ah vale. leer más", {DOMAIN: "leer más"}),
        ("got it. i'd like to stretch", {DOMAIN: "stretching"}),
    ],
)
def test_an_acknowledgement_that_opens_an_answer_is_not_the_answer(said: str, expected: dict[str, str]) -> None:
    assert parse_intake_message(said, {}, DOMAIN) == expected


def test_a_shrug_before_a_reason_leaves_the_reason() -> None:
    learned = parse_intake_message("dunno, to have more patience with my kids", {DOMAIN: "meditation"}, MOTIVATION)
    assert learned == {MOTIVATION: "have more patience with my kids"}


def test_a_spanish_run_on_says_when_too() -> None:
    said = "me gustaría caminar cada tarde a las 6 y media cuando salgo del trabajo porque quiero bajar de peso"
    learned = parse_intake_message(said, {}, DOMAIN)
    assert learned[TIME] == "18:30" and learned[ANCHOR] == "cuando salgo del trabajo"
    assert learned[MOTIVATION] == "quiero bajar de peso" and learned[DOMAIN] == "caminar"


def test_once_opens_a_routine_but_not_a_frequency() -> None:
    assert parse_intake_message("8pm once the baby sleeps", {DOMAIN: "reading", MOTIVATION: "calm"}, TIME) == {
        TIME: "20:00",
        ANCHOR: "once the baby sleeps",
    }
    assert ANCHOR not in parse_intake_message("once a day at 8pm", {DOMAIN: "reading", MOTIVATION: "calm"}, TIME)


ANSWER_THEN_ASK = (
    "You gave it when you signed up for Habit coach; it is used only for these messages. Questions about it: the "
    "study team. Why does walking matter to you? What would it give you?"
)
WALKING = UserProfile(habit_domain="walking")


def test_understanding_the_coachs_answer_saves_nothing_and_asks_again() -> None:
    answer = reply(OfflineCoach().complete(intake("ah i see, the study. cool", WALKING, ANSWER_THEN_ASK)))
    assert answer == "Why does walking matter to you? What would it give you?"


def test_an_acknowledgement_with_an_answer_is_the_answer() -> None:
    ask = "That's fine. What's something you already do every day that we can attach it to — like your morning coffee?"
    response = OfflineCoach().complete(intake("oh right, my morning coffee", WALKING, ask))
    assert response.tool_calls  # the example taken as theirs is an answer


def test_the_why_asked_answer_in_three_languages() -> None:
    assert "skip it" in answer_faq("why_asked", StudyFacts())
    assert "saltártelo" in answer_faq("why_asked", StudyFacts(), "es")
    assert "passer" in answer_faq("why_asked", StudyFacts(), "fr")


@pytest.mark.parametrize(
    ("reply_text", "value"),
    [
        ("How about 8am — would that work?", "8am"),
        ("¿Qué tal a las 21:30?", "21:30"),
        ("Et à 19h, ça vous irait ?", "19h"),
        ("¿Qué tal “antes de dormir”? Responde sí, o dime la tuya.", "antes de dormir"),
        ("Et “après le dîner” ? Répondez oui, ou dites-moi la vôtre.", "après le dîner"),
    ],
)
def test_a_suggestion_is_read_back_in_three_languages(reply_text: str, value: str) -> None:
    assert suggestion(reply_text) == value


def _conversation(*turns: tuple[str, str], user: str, profile: UserProfile) -> ChatRequest:
    context = intake_context(profile, "Name: Alex\nGender: \nEthnicity: \nBackground: ")
    history = [ChatMessage(role=role, content=text) for role, text in turns]
    return ChatRequest(
        purpose="intake",
        messages=[
            ChatMessage(role="system", content="intake system prompt"),
            ChatMessage(role="system", content=context),
            *history,
            ChatMessage(role="user", content=user),
        ],
        tools=TOOLS,
    )


def test_a_counter_offer_keeps_the_half_of_the_day_of_the_suggestion() -> None:
    request = _conversation(
        ("assistant", "What time of day would you like your daily prompt? For example 8am or 7:30pm."),
        ("user", "mornings"),
        ("assistant", "How about 8am — would that work?"),
        user="a bit earlier, 6:30",
        profile=UserProfile(habit_domain="yoga", motivational_frame="calm"),
    )
    saved = OfflineCoach().complete(request).tool_calls
    assert [(c.name, c.parsed_arguments()) for c in saved] == [("save_user_profile", {TIME: "06:30"})]


def test_the_routine_said_for_the_time_is_offered_back_as_the_anchor() -> None:
    profile = UserProfile(habit_domain="walking", motivational_frame="energy", preferred_time="17:30")
    request = _conversation(
        ("user", "after work"),
        ("assistant", "How about 5:30pm — would that work?"),
        ("user", "ok"),
        ("assistant", "5:30pm works. What's something you already do every day that we can attach it to?"),
        user="hmm",
        profile=profile,
    )
    answer = reply(OfflineCoach().complete(request))
    assert "How about “after work”? Just reply yes, or tell me yours." in answer
    accepted = _conversation(
        ("user", "after work"),
        ("assistant", "How about 5:30pm — would that work?"),
        ("user", "ok"),
        ("assistant", "How about “after work”? Just reply yes, or tell me yours."),
        user="yep",
        profile=profile,
    )
    saved = OfflineCoach().complete(accepted).tool_calls
    assert [(c.name, c.parsed_arguments()) for c in saved] == [("save_user_profile", {ANCHOR: "after work"})]


def test_a_spanish_day_part_gets_a_proposal_in_spanish() -> None:
    ask = "¿A qué hora del día quieres tu mensaje diario? Por ejemplo 8:00 o 19:30."
    answer = reply(OfflineCoach().complete(intake("por las tardes", UserProfile(habit_domain="caminar"), ask)))
    assert answer.endswith("¿Qué tal a las 15:00? ¿Te va bien?"), answer


@pytest.mark.parametrize(
    ("said", "time", "anchor"),
    [
        ("8 when I get off work", "20:00", "when I get off work"),
        ("9 once everyone is in bed", "21:00", "once everyone is in bed"),
        ("a las 7 después del trabajo", "19:00", "después del trabajo"),
        ("around 8 when i get home", "20:00", "when i get home"),
        ("maybe 6 before work", "06:00", "before work"),
    ],
)
def test_an_hour_then_its_routine_and_the_half_of_the_day_the_routine_gives(said: str, time: str, anchor: str) -> None:
    assert parse_intake_message(said, {DOMAIN: "walking", MOTIVATION: "energy"}, ANCHOR) == {TIME: time, ANCHOR: anchor}


@pytest.mark.parametrize(
    ("said", "kind"), [("nah not really", "no"), ("that works for me 👍", "yes"), ("noonish", "fact")]
)
def test_more_yes_and_no_forms(said: str, kind: str) -> None:
    assert read_message(said).kind == kind
    assert parse_clock_time("noonish") == "12:00"


@pytest.mark.parametrize(
    "said", ["what do i have to do", "how does this work?", "¿cómo funciona?", "comment ça marche ?"]
)
def test_how_it_works_is_answered_with_what_it_sends(said: str) -> None:
    assert read_message(said).topic == "what_sent"


@pytest.mark.parametrize(
    ("said", "language"), [("méditer", "fr"), ("pour mieux dormir", "fr"), ("para dormir mejor", "es")]
)
def test_small_signs_of_french(said: str, language: str) -> None:
    assert detect_language(said) == language


@pytest.mark.parametrize(
    ("said", "names"),
    [("um i guess meditation?", True), ("after dinner?", True), ("seriously?", False), ("is it free?", False)],
)
def test_an_answer_said_with_a_rising_voice(said: str, names: bool) -> None:
    assert names_a_fact(said) is names


def test_a_rising_answer_is_saved_and_a_question_is_not() -> None:
    ask = "What's one small habit you'd like to build — maybe moving more, sleeping better or reading?"
    saved = OfflineCoach().complete(intake("um i guess yoga?", UserProfile(), ask)).tool_calls
    assert [(c.name, c.parsed_arguments()) for c in saved] == [("save_user_profile", {DOMAIN: "yoga"})]
    assert reply(OfflineCoach().complete(intake("seriously?", UserProfile(), ask))).endswith("reading?")


def test_an_acknowledgement_before_a_run_on_is_no_reason() -> None:
    said = "oh ok cool so i want to stretch more because my back hurts all the time"
    learned = parse_intake_message(said, {}, DOMAIN)
    assert learned == {DOMAIN: "stretching", MOTIVATION: "my back hurts all the time"}


def test_a_question_beside_an_answer_saves_the_answer_and_answers_the_question() -> None:
    why = "Reading — great choice. Why does reading matter to you? What would it give you?"
    response = OfflineCoach().complete(intake("wait is this free? anyway i want to learn more", READING, why))
    assert [(c.name, c.parsed_arguments()) for c in response.tool_calls] == [
        ("save_user_profile", {MOTIVATION: "i want to learn more"})
    ]
    response = OfflineCoach().complete(intake("i want to learn more. is this free?", READING, why))
    assert [(c.name, c.parsed_arguments()) for c in response.tool_calls] == [
        ("save_user_profile", {MOTIVATION: "i want to learn more"})
    ]


READING = UserProfile(habit_domain="reading")


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        (
            "quiero leer, todas las noches, a las 9 y media, cuando me acuesto, para desconectarme",
            {DOMAIN: "leer", MOTIVATION: "desconectarme", TIME: "21:30", ANCHOR: "cuando me acuesto"},
        ),
        (
            "quiero correr en la mañana antes de irme a trabajar como a las 6 porque me siento cansado",
            {
                DOMAIN: "correr en la mañana",
                MOTIVATION: "me siento cansado",
                TIME: "06:00",
                ANCHOR: "antes de irme a trabajar",
            },
        ),
    ],
)
def test_spanish_run_ons_with_commas_or_none(said: str, expected: dict[str, str]) -> None:
    assert parse_intake_message(said, {}, DOMAIN) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("seven thirty in the morning", "07:30"),
        ("at eight fifteen", "08:15"),
        ("six forty-five am", "06:45"),
        ("half past seven", "07:30"),
        ("hacia las 8 y media, al llegar a casa", "20:30"),
    ],
)
def test_english_hours_and_minutes_in_words(text: str, expected: str) -> None:
    assert parse_clock_time(text) == expected


def test_a_moment_said_with_the_habit_is_not_yet_a_time() -> None:
    ask = "What's one small habit you'd like to build — maybe moving more, sleeping better or reading?"
    saved = OfflineCoach().complete(intake("stretching before bed", UserProfile(), ask)).tool_calls
    assert [(c.name, c.parsed_arguments()) for c in saved] == [
        ("save_user_profile", {DOMAIN: "stretching", ANCHOR: "before bed"})
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("between 7 and 8 in the morning", "07:00"),
        ("entre las 7 y las 8 de la noche", "19:00"),
        ("entre 7h et 8h", "07:00"),
        ("between 7:30 and 8 pm", "19:30"),
    ],
)
def test_a_window_is_read_as_its_start(text: str, expected: str) -> None:
    assert parse_clock_time(text) == expected


@pytest.mark.parametrize(
    ("said", "recorded"),
    [
        ("skip", "(rather not say)"),
        ("i'd rather not say", "(rather not say)"),
        ("none of your business lol", "(rather not say)"),
        ("prefiero no contestar", "(prefiere no decirlo)"),  # recorded in the participant's language
    ],
)
def test_a_declined_reason_is_recorded_as_declined_not_as_their_words(said: str, recorded: str) -> None:
    why = "Walking — great choice. Why does walking matter to you? What would it give you?"
    saved = OfflineCoach().complete(intake(said, WALKING, why)).tool_calls
    assert [(c.name, c.parsed_arguments()) for c in saved] == [("save_user_profile", {MOTIVATION: recorded})]


def test_a_declined_reason_is_not_quoted_in_the_first_prompt() -> None:
    assert _field("Motivation: (rather not say)", "Motivation") == ""
    assert _field("Motivation: (prefiere no decirlo)", "Motivation") == ""
    assert _field("Motivation: more energy", "Motivation") == "more energy"
