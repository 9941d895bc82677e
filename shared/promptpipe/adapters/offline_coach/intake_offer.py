"""The intake's answer to its own offer of the daily prompt ("Shall I send you one like it every day
around 8:30am?"), and the step taken once the profile is complete: the first prompt, then the offer."""

from __future__ import annotations

import re
from collections.abc import Callable

from promptpipe.adapters.offline_coach.intake_setup import IntakeSetUp
from promptpipe.adapters.offline_coach.reading import accepts, common_question, declines
from promptpipe.adapters.offline_coach.text import ANCHOR, GENERATE, SAVE, TIME
from promptpipe.adapters.offline_coach.times import normalise_time, parse_asked_time, parse_clock_time, same_half_of_day
from promptpipe.adapters.offline_coach.turn import _Step


class IntakeOffer(IntakeSetUp):
    """The offer's steps; ``IntakeRules`` decides when they are taken (its ``profile`` and ``_ask_next``)."""

    known: dict[str, str]
    profile: Callable[[], dict[str, str]]
    _ask_next: Callable[[dict[str, str]], str]
    _question: Callable[..., str]

    def _answer_offer(self) -> tuple[_Step, str] | None:
        """The reply to "Shall I send you one like it every day around 8:30am?"."""
        turn, text = self.turn, self.turn.user
        earlier = normalise_time(self.known[TIME]) if self.known[TIME] else None
        new_time = same_half_of_day(parse_clock_time(text), earlier, text)
        if new_time and not turn.called(SAVE) and SAVE in turn.tools and new_time != self.known[TIME]:
            return [(SAVE, {TIME: new_time})], "intake: a different time for the offered schedule"
        profile = self.profile()
        time = normalise_time(profile[TIME]) if profile[TIME] else None
        restated = parse_asked_time(text) if new_time is None else None  # "sure, 8 is fine" to 8am
        same = restated is not None and same_half_of_day(restated, earlier, text) == time and not declines(text)
        taken = accepts(text) or self.handed_over  # "just send it", "lo que sea, mándalo"
        if time and (taken or same or turn.called(SAVE, **{TIME: new_time or "-"})):
            return self._schedule(time, accepted=True)
        if re.search(r"\b(?:another|different|something else|other one|else)\b", text, re.I) and not re.search(
            r"\btime\b", text, re.I
        ):
            if not turn.called(GENERATE) and GENERATE in turn.tools:
                return [(GENERATE, {"delivery_mode": "immediate"})], "intake: a different first prompt"
            if time and turn.called(GENERATE):
                return self._offer(time), "intake: offering the new prompt daily"
        if declines(text) and not common_question(text):
            return (
                "No problem — nothing is scheduled. Whenever you'd like a daily prompt, just say “yes” "
                "and I'll set it up.",
                "intake: the schedule offer declined",
            )
        return None

    def _greeting(self) -> str:
        hello = f"Hi {self.turn.name}!" if self.turn.name else "Hi there!"
        profile = self.profile()
        if profile[ANCHOR] and profile[TIME]:
            return f"{hello} Welcome back. Send me any message and I'll set up your first habit prompt."
        intro = "I'm your habit coach. Together we'll build one tiny daily habit that fits into your day."
        return f"{hello} {intro} {self._question(profile)}"

    def _complete(self, time: str) -> tuple[_Step, str]:
        turn = self.turn
        given = self.prompt_given()
        if not given and not turn.called(GENERATE) and GENERATE in turn.tools:
            return [(GENERATE, {"delivery_mode": "immediate"})], "intake: profile complete; first prompt"
        if given and not turn.calls:  # the offer stands: answer what they asked, offer again
            return self._ask_next(self.profile()), "intake: the schedule offer is still open"
        # The schedule is set up in the turn that gives the first prompt when the turn offers the
        # scheduler (the set-up the system prompt describes); otherwise it is offered and set up on yes.
        return self._schedule(time, accepted=False)
