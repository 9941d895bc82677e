"""Truthful answers to the common questions (``reading.common_question``), from what the request
shows of the participant's state, and the last question said another way ("what do you mean?")."""

from __future__ import annotations

from promptpipe.adapters.offline_coach.faq import StudyFacts, answer_faq
from promptpipe.adapters.offline_coach.phrases import say
from promptpipe.adapters.offline_coach.reading import asked_for, last_question
from promptpipe.adapters.offline_coach.text import ANCHOR, DOMAIN, MOTIVATION, TIME
from promptpipe.adapters.offline_coach.times import friendly_time


def answer_question(
    kind: str, profile: dict[str, str], time: str | None, *, schedule_set: bool, study: StudyFacts | None = None
) -> str:
    """One or two sentences; ``profile`` holds the context block's fields, ``time`` the preferred
    time as HH:MM when known, ``schedule_set`` whether a daily schedule exists, ``study`` what the
    study's settings say of it (``faq.StudyFacts``)."""
    habit = profile.get(DOMAIN, "")
    at = f" around {friendly_time(time)}" if time else ""
    if kind == "change_time_later":
        return "Yes — any time. Just text me the new time (like “7pm from now on”) and I'll move your daily prompt."
    if kind == "stop_later":
        return (
            "Yes — whenever you like, text “stop the reminders” and I'll stop your daily prompts "
            "(or reply STOP to stop all messages)."
        )
    if kind == "my_habit":
        if not habit:
            return "We haven't picked your habit yet."
        anchor = profile.get(ANCHOR, "")
        return f"Your habit is {habit}" + (f", right {anchor}." if anchor else ".")
    if kind == "when_texts":
        if schedule_set and time:
            return f"Your daily prompt comes every day{at}."
        if time:
            return f"Your daily prompt isn't set up yet; you asked for{at}."
        return "We haven't picked a time yet."
    if kind == "miss_a_day":
        return "Nothing bad happens: I'll ask how it went, and we'll make it easier for the next day."
    if kind in ("how_long", "bot"):  # the FAQ's answer, with the study's facts when the caller has them
        return answer_faq(kind, study or StudyFacts())
    if kind == "weekdays":
        return "For now the prompt comes every day; on the days you'd rather skip, just let it pass."
    if kind == "random_time":
        return "Yes — I can also send it at a random moment within a window you pick, like between 6 and 9pm."
    return "Good question!"


_REPHRASED = {
    DOMAIN: "I mean: which small thing would you like to do every day? For example a 2-minute walk, a glass "
    "of water or reading one page.",
    MOTIVATION: "I mean: what would {habit} do for you? For example more energy, less stress or better sleep.",
    TIME: "I mean: at what time should I text you each day? For example 8am or 7:30pm.",
    ANCHOR: "I mean: something you already do every day, so the habit can come right after it — like "
    "“after I brush my teeth” or “when I get home from work”. What could yours follow?",
    "schedule": "I mean: should I text you a short prompt like that every day{at}? Just say yes or no.",
}


# The intake's own questions, asked again in the conversation's language when it has no rewording there.
_ASKED_AGAIN = {DOMAIN: "ask_domain", MOTIVATION: "ask_motivation", TIME: "ask_time", ANCHOR: "ask_anchor"}


def rephrase(last_reply: str, asked: str | None, profile: dict[str, str], language: str = "en") -> str:
    """The coach's last question said another way (or repeated when it is not one of its own), in the
    conversation's ``language``: the rewordings are English; another language gets its own question again."""
    kind = asked or asked_for(last_reply)
    if language != "en":
        if kind in _ASKED_AGAIN:
            habit = profile.get(DOMAIN) or say("this_habit", language)
            return f"{say('sorry_simple', language)} {say(_ASKED_AGAIN[kind], language, habit=habit)}"
        question = last_question(last_reply)
        return f"{say('sorry_simple', language)} {question}".strip()
    if kind in _REPHRASED:
        time = profile.get(TIME, "")
        at = f" around {friendly_time(time)}" if time else ""
        return _REPHRASED[kind].format(habit=profile.get(DOMAIN) or "this habit", at=at)
    question = last_question(last_reply)
    return f"Sorry, I wasn't clear. {question}" if question else "Sorry, I wasn't clear. How is your habit going?"
