"""The offline coach's answers to a participant's questions about the study and the coach
(docs/offline-coach.md, "Questions"): who is this, is this a bot, how did you get my number, how long
does it take, what will you send, can I change the time, how do I stop. The study's facts come from
its settings (``StudyFacts.from_settings``); an answer never states what the study did not configure.
A question none of them answers is passed to the study team's contact, never guessed at."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NO_TEAM = "the study team"
DEFAULT_SENDS = "one short habit prompt a day, at the time you pick, and a quick check-in on how it went"


@dataclass(frozen=True)
class StudyFacts:
    """What the coach may say of the study: its name, who runs it, how to reach them, what it sends."""

    name: str = "Habit coach"
    team: str = ""
    contact: str = ""
    sends: str = ""

    @classmethod
    def from_settings(cls, settings: Any) -> StudyFacts:
        return cls(
            name=getattr(settings, "study_name", "") or cls.name,
            team=getattr(settings, "study_team", "") or "",
            contact=getattr(settings, "study_contact", "") or "",
            sends=getattr(settings, "study_sends", "") or "",
        )

    @property
    def who_runs_it(self) -> str:
        return self.team or NO_TEAM

    @property
    def reach(self) -> str:
        """How to reach a person: the contact when configured."""
        return f"{self.who_runs_it} at {self.contact}" if self.contact else self.who_runs_it


def answer_faq(topic: str, study: StudyFacts) -> str:
    """One or two sentences for ``topic`` (``rules.message_reading.TOPICS`` but ``rephrase``); in
    English, as every reply of the offline coach (the messages it reads may be in Spanish)."""
    if topic == "who":
        return (
            f"I'm the automated habit coach of {study.name}, the study you signed up for, run by "
            f"{study.who_runs_it}. I help you build one small daily habit."
        )
    if topic == "bot":
        return f"Yes, I'm an automated coach (no person types these replies); {study.who_runs_it} can read our chat."
    if topic == "number":
        return (
            f"You gave it when you signed up for {study.name}; it is used only for these messages. "
            f"Questions about it: {study.reach}."
        )
    if topic == "how_long":
        return (
            "About a minute a day to begin with — small enough to do on a busy day. How many weeks "
            f"{study.name} runs is set by {study.who_runs_it}: {study.reach} can tell you when it ends."
        )
    if topic == "what_sent":
        return f"I'll send {study.sends or DEFAULT_SENDS}."
    if topic == "change_time_later":
        return "Yes — any time. Just text me the new time (like “7pm from now on”) and I'll move your daily prompt."
    if topic == "stop_later":
        return "Whenever you like: reply STOP to stop all messages, or “pause for a week” to take a break."
    return f"I can't answer that one myself, but {study.reach} can."
