"""The intake's answer to its own offer of the daily prompt ("Shall I send you one like it every day
around 8:30am?"), and the step taken once the profile is complete: the first prompt, then the offer."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from promptpipe.adapters.offline_coach.intake_detours import asks_to_pause, yes_then_question
from promptpipe.adapters.offline_coach.intake_setup import SCHEDULE_FAILED, IntakeSetUp
from promptpipe.adapters.offline_coach.phrases import say
from promptpipe.adapters.offline_coach.reading import accepts, common_question, declines
from promptpipe.adapters.offline_coach.text import ANCHOR, GENERATE, SAVE, SCHEDULER, TIME
from promptpipe.adapters.offline_coach.time_changes import requested_time
from promptpipe.adapters.offline_coach.times import (
    normalise_time,
    parse_asked_time,
    parse_clock_time,
    same_half_of_day,
)
from promptpipe.adapters.offline_coach.turn import _Step
from promptpipe.rules.feedback_reading import asks_for_another_time
from promptpipe.rules.hesitation import hesitation
from promptpipe.rules.lexicon import THANKS
from promptpipe.rules.message_reading import plain, read_message
from promptpipe.rules.outcome import read_outcome

# Agreement said without a yes word: "np", "no problem", "love it", "sin problema", "pas de problème".
_AGREEMENT = re.compile(
    r"^\W*(?:np|no prob(?:lem)?|love it|sin problema|pas de probl[eè]me|"
    # "that'd be great", "i'm down", "say less", "órale", "de acuerdo", "looking forward to it"
    r"that'?d be (?:\w+ )?(?:great|nice|good|helpful|awesome|perfect|amazing)|"
    r"that would (?:be (?:\w+ )?(?:great|nice|good|helpful|awesome|perfect|amazing)|help)|"
    r"ye|yeh|i'?m down|down|say less|aight|ight|bet|de acuerdo|[oó]rale|por supuesto|muy bien|"
    r"looking forward(?: to it)?|can'?t wait)\W*$",
    re.I,
)


# Taking the first prompt up, said to it rather than to the offer beside it: thanks, a verdict on it, a
# will to try it, or having just done it ("sounds doable!", "i'll try it tomorrow", "gracias!", "lo
# intento", "je vais essayer"). Read on the plain form (no accents).
_TAKES_IT_UP = re.compile(
    rf"\b(?:{THANKS}|thank u|cheers|gracias|merci|"
    r"(?:sounds|looks|seems|feels) (?:\w+ )?(?:doable|easy|good|great|fine|manageable|nice|fun|simple)|"
    r"(?:i'?ll|i will|gonna|going to|will|can|lemme|let me) (?:try|do|give it a (?:go|shot|try))|will do|can do|on it|"
    r"(?:i )?(?:really )?like (?:it|this|that)|(?:will |i'?ll )?(?:try|do) my best|easy enough|"
    r"hopefully i (?:remember|do|will|can)|"
    r"(?:just )?did (?:it|that)|done|doable|"
    r"(?:lo|la) (?:intento|intentare|hago|hare|pruebo|probare)|voy a (?:intentar|probar)lo|"
    r"(?:suena|se ve|parece) (?:\w+ )?(?:facil|bien|factible|sencillo)|(?:ya )?lo hice|hecho|me gusta|"
    r"je vais (?:essayer|le faire|tester|tenter)|(?:ca a l'air|ca semble|c'est) (?:\w+ )?(?:faisable|facile|bien)|"
    r"je l'ai fait|c'est fait|ca me plait)\b"
)


def agrees(text: str) -> bool:
    """A yes in any form (``reading.accepts``), or agreement said without a yes word ("np")."""
    return accepts(text) or bool(_AGREEMENT.match(text))


def takes_the_prompt_up(text: str) -> bool:
    """The first prompt taken up without a word against the offer beside it: no no, no hesitation, no
    question, no complaint ("sounds doable!", "thanks!", "ok lo intento mañana"; not "thanks, let me
    think about it", "sounds hard tbh", "will it come on weekends?")."""
    reading = read_message(text)
    if reading.kind in ("no", "later", "question", "complaint", "request") or "?" in text or declines(text):
        return False
    if hesitation(text):
        return False
    # or done already ("fait ce matin, 10 minutes !", "walked 10 min just now"): the outcome reader's done
    return _TAKES_IT_UP.search(plain(text)) is not None or read_outcome(text, asked=False) == "done"


class IntakeOffer(IntakeSetUp):
    """The offer's steps; ``IntakeRules`` decides when they are taken (its ``profile`` and ``_ask_next``)."""

    known: dict[str, str]
    sends_now: bool  # "just send it": every field still open by default, the prompt and its schedule wanted now
    profile: Callable[[], dict[str, str]]
    _ask_next: Callable[[dict[str, str]], str]
    _question: Callable[..., str]
    _acknowledge: Callable[[dict[str, Any]], str]

    def _answer_offer(self) -> tuple[_Step, str] | None:
        """The reply to "Shall I send you one like it every day around 8:30am?"."""
        turn, text = self.turn, self.turn.user
        earlier = normalise_time(self.known[TIME]) if self.known[TIME] else None
        # "no, mejor 10", "ok pero 10": a bare hour is another time for the offer too (its half kept)
        said = parse_clock_time(text) or (parse_asked_time(text) if "?" not in text else None)
        said = said or (requested_time(text) if asks_for_another_time(text) else None)  # "yes but can we do 4 instead"
        new_time = same_half_of_day(said, earlier, text)
        if new_time and not turn.called(SAVE) and SAVE in turn.tools and new_time != self.known[TIME]:
            return [(SAVE, {TIME: new_time})], "intake: a different time for the offered schedule"
        profile = self.profile()
        time = normalise_time(profile[TIME]) if profile[TIME] else None
        restated = parse_asked_time(text) if new_time is None else None  # "sure, 8 is fine" to 8am
        same = restated is not None and same_half_of_day(restated, earlier, text) == time and not declines(text)
        # "just send it", "lo que sea, mándalo"; "sounds doable!", "thanks!": the prompt taken up, the offer with it
        # and a pause with its length: the daily prompt wanted, later (made at the set-up, ``pause_asked``)
        # and "start the texts" after a pause asked before the set-up: the daily prompt wanted, now
        taken = (
            agrees(text)
            or self.handed_over
            or self.sends_now
            or takes_the_prompt_up(text)
            or asks_to_pause(text) is not None
            or bool(yes_then_question(text))
            or read_message(text).request == "resume"
        )
        # another time, saved in this turn: agreement at that time ("make it 9", "yes but at 8")
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
            return say("offer_declined", turn.language), "intake: the schedule offer declined"
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
        retry = SCHEDULE_FAILED in turn.last_assistant  # "…couldn't set up your daily prompt… I'll try again"
        if given and not turn.calls and (retry or self._declined_yes()):  # or a yes to "…just say yes"
            return self._schedule(time, accepted=True)
        if given and not turn.calls:  # the offer stands: answer what they asked, offer again
            return self._ask_next(self.profile()), "intake: the schedule offer is still open"
        if turn.called(SCHEDULER, action="create"):  # made in an earlier round of this turn (with the prompt: shown)
            return self._schedule(time, accepted=not turn.called(GENERATE))
        # The schedule is proposed with the first prompt and set up only on the participant's yes (a
        # hesitation, a question or a no leaves none); a fact changed after the offer asks it again.
        if self.set_up_before():  # a field repaired after the set-up agreed to: the schedule kept, FEEDBACK again
            return self._schedule(time, accepted=False)
        if given:
            return self._reoffer(time), "intake: a fact changed after the offer; the offer asked again"
        # "yep" to the routine suggested: the plan it completes agreed; "just send it at 7pm": the plan asked for
        if agrees(turn.user) or self.handed_over or self.sends_now:
            return self._schedule(time, accepted=False)
        return self._offer(time), "intake: first prompt; the daily schedule proposed, set up on yes"

    def _reoffer(self, time: str) -> str:
        """The offer asked again after a change ("8am works. Shall I send you one like it every day around
        8am?"), with what the change saved acknowledged."""
        saved = next((c for c in self.turn.called(SAVE) if c.ok), None)
        ack = self._acknowledge(saved.args) if saved else ""
        return f"{ack} {self._offer_question(time)}".strip()

    def _declined_yes(self) -> bool:
        """A yes after the coach's "nothing is scheduled … just say yes and I'll set it up"."""
        last = self.turn.last_assistant
        declined = any(last.startswith(say("offer_declined", language)[:20]) for language in ("en", "es", "fr"))
        return declined and (agrees(self.turn.user) or self.handed_over)
