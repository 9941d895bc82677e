"""The intake's readers on messages as people text them (docs/offline-coach.md, "Times as people write
them", "Languages"): times in English, Spanish and French grammar, the routine said beside a time,
self-corrections, a habit changed with its reason, a time in a clause of its own, and the language."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach, StudyFacts, answer_faq
from promptpipe.adapters.offline_coach.intake_answers import parse_anchor, parse_intake_message
from promptpipe.adapters.offline_coach.phrases import clock, say
from promptpipe.adapters.offline_coach.reading import accepts, asked_for, is_schedule_offer
from promptpipe.adapters.offline_coach.times import parse_clock_time, without_times
from promptpipe.models.profile import UserProfile
from promptpipe.rules.language import conversation_language, detect_language
from promptpipe.rules.message_reading import TOPICS, read_message
from promptpipe.rules.word_patterns import any_word
from tests.unit.test_offline_coach_reading import intake

DOMAIN, MOTIVATION, TIME, ANCHOR = "habit_domain", "motivational_frame", "preferred_time", "prompt_anchor"


def test_a_minute_count_is_no_time() -> None:
    assert parse_clock_time("a 10 minute walk") is None


def test_without_times_keeps_what_else_the_sentence_says() -> None:
    assert without_times("on my lunch break at work around 12:30").startswith("on my lunch break at work")
    assert "12" not in without_times("à 12h30 pendant ma pause déjeuner")


@pytest.mark.parametrize(
    ("said", "anchor"),
    [
        ("vers 7h30 après le café", "après le café"),
        ("à 22h avant de dormir", "avant de dormir"),
        ("8h et demie en arrivant au bureau", "en arrivant au bureau"),
        ("a las 6 y cuarto de la tarde al salir del trabajo", "al salir del trabajo"),
        ("probably around 7 after i walk the dog wait no after i make coffee", "after i make coffee"),
    ],
)
def test_anchor_clauses_in_three_languages_and_the_one_said_last(said: str, anchor: str) -> None:
    assert parse_anchor(said)[0] == anchor


@pytest.mark.parametrize(
    ("said", "time", "anchor"),
    [
        ("on my lunch break at work around 12:30", "12:30", "on my lunch break at work"),
        ("dinner time around 6:30", "18:30", "at dinner time"),
        ("en la comida a las 2", "14:00", "en la comida"),
        ("à 12h30 pendant ma pause déjeuner", "12:30", "pendant ma pause déjeuner"),
        ("8:15 with my first coffee", "08:15", "with my first coffee"),
        ("12:30, on my lunch break", "12:30", "on my lunch break"),
        ("7:30 while the coffee brews", "07:30", "while the coffee brews"),
        ("au réveil vers 7h", "07:00", "au réveil"),
        ("en cuanto llego a casa a las 6", "18:00", "en cuanto llego a casa"),
    ],
)
def test_the_routine_beside_a_time_is_kept(said: str, time: str, anchor: str) -> None:
    learned = parse_intake_message(said, {DOMAIN: "walking", MOTIVATION: "energy"}, TIME)
    assert learned == {TIME: time, ANCHOR: anchor}


def test_a_time_with_no_routine_beside_it_saves_no_anchor() -> None:
    assert parse_intake_message("7am every day please", {DOMAIN: "yoga", MOTIVATION: "calm"}, TIME) == {TIME: "07:00"}


def test_a_time_in_its_own_clause_is_read_beside_the_reason() -> None:
    learned = parse_intake_message("my neck is killing me. 3pm works", {DOMAIN: "stretching"}, MOTIVATION)
    assert learned[TIME] == "15:00" and "neck" in learned[MOTIVATION]


def test_a_time_inside_the_reason_is_no_time() -> None:
    assert TIME not in parse_intake_message("I crash by 11 every morning", {DOMAIN: "water"}, MOTIVATION)


def test_a_run_on_keeps_the_habit_and_the_reason() -> None:
    said = "ok so i want to start walking in the mornings because my doctor said i need to move more"
    learned = parse_intake_message(said, {}, DOMAIN)
    assert learned[DOMAIN] == "walking" and learned[MOTIVATION].startswith("my doctor said")


def test_a_change_of_habit_is_the_habit_not_a_reason() -> None:
    known = {DOMAIN: "mindfulness"}
    assert parse_intake_message("actually no lets do journaling instead", known, MOTIVATION) == {DOMAIN: "journaling"}
    learned = parse_intake_message("hmm actually I'd rather do yoga, running hurts my knees", {DOMAIN: "running"}, None)
    assert learned == {DOMAIN: "yoga", MOTIVATION: "running hurts my knees"}


def test_once_a_day_is_no_routine_and_a_change_of_time_no_change_of_habit() -> None:
    assert parse_intake_message("walk once a day", {}, DOMAIN) == {DOMAIN: "walking"}
    learned = parse_intake_message("change the time to 8 so i can stretch", {DOMAIN: "walking"}, TIME)
    assert DOMAIN not in learned and learned[TIME] == "08:00"
    assert MOTIVATION not in parse_intake_message("to be honest, 7pm", {DOMAIN: "walking"}, TIME)


def test_a_reason_is_read_whatever_was_asked_while_none_is_known() -> None:
    assert parse_intake_message("to process my day", {DOMAIN: "journaling"}, TIME) == {MOTIVATION: "process my day"}
    assert parse_intake_message("relax after work", {DOMAIN: "reading"}, MOTIVATION) == {MOTIVATION: "relax after work"}


@pytest.mark.parametrize(
    "said",
    [
        "d'accord",
        "ça marche",
        "ça me va",
        "c'est parfait",
        "oui parfait",
        "sale pues",
        "órale",
        "va que va",
        "va, me parece bien",
        "that's fine",
        "sounds perfect",
        "okie",
        "👍🏾",
        "🙌",
        "💯",
    ],
)
def test_acceptances_in_three_languages_and_emoji(said: str) -> None:
    assert accepts(said)


@pytest.mark.parametrize("said", ["thanks!", "lol", "gracias", "merci"])
def test_thanks_or_laughter_alone_accepts_nothing(said: str) -> None:
    assert not accepts(said)


@pytest.mark.parametrize(
    ("said", "kind", "topic"),
    [
        ("hi who is this", "question", "who"),
        ("hola, quién eres?", "question", "who"),
        ("c'est combien de temps par jour ?", "question", "how_long"),
        ("vous êtes un robot ?", "question", "bot"),
        ("bonsoir", "greeting", None),
        ("no sé todavía, déjame pensarlo", "later", None),
        ("je vais y réfléchir", "later", None),
        ("à 12h30 pendant ma pause déjeuner", "fact", None),
        ("on my lunch break at 12:30", "fact", None),
    ],
)
def test_the_reader_before_the_answerer_in_three_languages(said: str, kind: str, topic: str | None) -> None:
    reading = read_message(said)
    assert (reading.kind, reading.topic) == (kind, topic)


def test_a_break_of_the_day_is_no_pause_request_but_a_pause_is() -> None:
    assert read_message("pendant ma pause déjeuner").request is None
    assert read_message("pause for a week please").request == "pause"


@pytest.mark.parametrize(
    ("said", "language"),
    [
        ("quiero caminar mas", "es"),
        ("a las 9", "es"),
        ("órale", "es"),
        ("vers 7h30 après le café", "fr"),
        ("ça marche", "fr"),
        ("right before bed, 10:30 or so", "en"),
        ("yoga", ""),
        ("👍", ""),
        ("7:30", ""),
    ],
)
def test_the_language_of_a_message(said: str, language: str) -> None:
    assert detect_language(said) == language


def test_a_message_that_tells_no_language_keeps_the_conversations() -> None:
    assert conversation_language(["bonjour", "yoga", "👍"]) == "fr"
    assert conversation_language(["yoga", "ok"]) == "en"


def test_the_intake_questions_in_spanish_and_french_are_recognised_as_asked() -> None:
    for language in ("es", "fr"):
        assert asked_for(say("ask_domain", language)) == DOMAIN
        assert asked_for(say("ask_motivation", language, habit="x")) == MOTIVATION
        assert asked_for(say("ask_time", language)) == TIME
        assert asked_for(say("ask_anchor", language)) == ANCHOR
    assert say("ask_time", "de") == say("ask_time", "en")  # no text of its own: English


def test_the_offer_is_recognised_in_every_language() -> None:
    for language in ("en", "es", "fr"):
        offer = say("offer", language, time=clock("07:30", language))
        assert is_schedule_offer(offer) and asked_for(offer) == "schedule", offer
    assert say("offer", "es", time=clock("07:30", "es")) == "¿Te envío uno así cada día a las 7:30?"


def test_times_are_said_as_people_of_the_language_write_them() -> None:
    assert (clock("19:30", "en"), clock("19:30", "es"), clock("19:30", "fr"), clock("08:00", "fr")) == (
        "7:30pm",
        "19:30",
        "19h30",
        "8h",
    )


def test_any_word_matches_whole_words_only() -> None:
    pattern = any_word("bed", "lunch(?:time)?")
    assert pattern.search("before BED") and pattern.search("lunchtime")
    assert not pattern.search("bedroom")


# --- through the coach: the reply in the participant's language -----------------------------------
def _intake(user: str, last_reply: str, profile: dict[str, str]) -> str:
    response = OfflineCoach().complete(intake(user, UserProfile(**profile), last_reply))
    assert response.tool_calls == []  # nothing saved: a greeting, a question, "let me think"
    return response.content or ""


def test_a_french_question_is_answered_in_french_and_the_pending_question_asked_again() -> None:
    answer = _intake(
        "c'est combien de temps par jour ?", say("ask_motivation", "fr", habit="méditer"), {DOMAIN: "méditer"}
    )
    assert answer.startswith("Environ une minute par jour") and answer.endswith("vous apporterait ?"), answer


def test_a_spanish_not_yet_is_answered_in_spanish_and_saves_nothing() -> None:
    answer = _intake("no sé todavía, déjame pensarlo", say("ask_time", "es"), {DOMAIN: "yoga", MOTIVATION: "calma"})
    assert answer == f"{say('no_rush', 'es')} {say('ask_time', 'es')}", answer


def test_a_french_or_spanish_routine_given_for_the_anchor_is_kept_as_said() -> None:
    known = {DOMAIN: "lire", MOTIVATION: "calme", TIME: "21:00"}
    assert parse_intake_message("je bois mon café", known, ANCHOR) == {ANCHOR: "je bois mon café"}


def test_a_french_reason_beside_the_habit() -> None:
    learned = parse_intake_message("marcher parce que mon médecin me l'a dit", {}, DOMAIN)
    assert learned == {DOMAIN: "marcher", MOTIVATION: "mon médecin me l'a dit"}


@pytest.mark.parametrize("language", ["es", "fr"])
def test_every_faq_answer_in_spanish_and_french_states_only_the_studys_facts(language: str) -> None:
    study = StudyFacts(name="Pasos", team="Equipo Salud", contact="+1 555 0100")
    answers = {topic: answer_faq(topic, study, language) for topic in TOPICS if topic != "rephrase"}
    assert len(set(answers.values())) == len(answers)  # one answer per topic
    assert "Pasos" in answers["who"] and "Equipo Salud" in answers["who"]
    assert "+1 555 0100" in answers["number"] and "+1 555 0100" in answers["other"]
    unset = answer_faq("who", StudyFacts(), language)
    assert ("equipo del estudio" if language == "es" else "l'équipe de l'étude") in unset
