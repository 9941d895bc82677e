"""The intake's set-up of the daily prompt, once the profile is complete: the first prompt, the schedule
(proposed with the prompt, set up only on the participant's yes: ``intake_offer``),
the hand-over to FEEDBACK, and the replies that say so only as the tools' results say it (docs/offline-
coach.md, "Never claiming what did not happen")."""

from __future__ import annotations

import re

from promptpipe.adapters.offline_coach.answers import answer_question
from promptpipe.adapters.offline_coach.faq import answer_faq
from promptpipe.adapters.offline_coach.habit_prompt import LOCAL_QUESTIONS
from promptpipe.adapters.offline_coach.intake_detours import pause_asked, paused_set_up, yes_then_question
from promptpipe.adapters.offline_coach.intake_new_habit import replace_earlier_schedule, second_intake_start
from promptpipe.adapters.offline_coach.intake_window import random_window, window_done, window_offer
from promptpipe.adapters.offline_coach.phrases import clock, say
from promptpipe.adapters.offline_coach.reading import common_question, is_schedule_offer
from promptpipe.adapters.offline_coach.text import GENERATE, SAVE, SCHEDULER, TIME, TRANSITION
from promptpipe.adapters.offline_coach.turn import LoopCall, Turn, _error_reason, _Step
from promptpipe.models.llm import ChatMessage
from promptpipe.rules.message_reading import read_message

SCHEDULE_FAILED = "I couldn't set up your daily prompt just now"  # the next message tries again


class IntakeSetUp:
    """The set-up steps and their replies; ``IntakeRules`` decides when they are taken."""

    turn: Turn
    handed_over: bool  # the participant handed the choice of a field over ("you pick")

    def prompt_given(self) -> bool:
        """The first prompt was offered with the daily schedule (the coach's own offer in history), and the
        offer is still open (no set-up was confirmed after it)."""
        return bool(self._since_the_offer()) and not self.set_up_before()

    def set_up_before(self) -> bool:
        """The offer was agreed to and the set-up confirmed (an intake re-entered to repair a field)."""
        done = tuple(
            say(key, lang, when="", time="")[:12]
            for key in ("done_first", "done_set", "all_set")
            for lang in ("en", "es", "fr")
        )
        return any(m.role == "assistant" and (m.content or "").startswith(done) for m in self._since_the_offer()[1:])

    def _since_the_offer(self) -> list[ChatMessage]:
        """The history from the coach's latest offer on (empty with none)."""
        history = self.turn.history
        start = second_intake_start(history) or 0  # a second intake: its own offer, not the first's
        offers = [i for i in range(start, len(history)) if history[i].role == "assistant"]
        offers = [i for i in offers if is_schedule_offer(history[i].content or "")]
        return history[offers[-1] :] if offers else []

    def _schedule(self, time: str, *, accepted: bool) -> tuple[_Step, str]:
        turn = self.turn
        window = random_window(turn.history, turn.user)
        if not turn.called(SCHEDULER, action="create") and SCHEDULER in turn.tools:
            args = {"action": "create", "type": "fixed", "fixed_time": time}
            if window:  # they asked for a time that varies: a random moment of the window they gave
                args = {
                    "action": "create",
                    "type": "random",
                    "random_start_time": window[0],
                    "random_end_time": window[1],
                }
            if second_intake_start(turn.history) is not None:  # a new habit: its schedule replaces the earlier
                steps = replace_earlier_schedule(turn, args)
                if steps is not None:
                    return steps, "intake: a new habit's schedule in place of the earlier one"
            return [(SCHEDULER, args)], "intake: daily schedule at the preferred time"
        if not turn.called(SCHEDULER, action="create"):
            if accepted:
                return "Great — I'll set that up in a moment. Could you say “yes” once more?", "intake: no scheduler"
            return self._offer(time), "intake: offering the daily schedule"
        created = any(c.ok for c in turn.called(SCHEDULER, action="create"))
        days = pause_asked(turn) if created and not turn.called(SCHEDULER, action="pause") else None
        if days:  # a pause asked for during the intake, made once there is a schedule to pause
            return [(SCHEDULER, {"action": "pause", "days": days})], f"intake: pausing for {days} day(s), as asked"
        if not turn.called(TRANSITION) and TRANSITION in turn.tools:
            args = {"target_state": "FEEDBACK", "reason": "intake complete: first prompt given, daily schedule set"}
            return [(TRANSITION, args)], "intake: done; moving to FEEDBACK"
        if window:
            lead = f"{say('first_try', turn.language, prompt=self._prompt_text())} " if not accepted else ""
            return f"{lead}{window_done(window, turn.language)}", "intake: a random daily window set"
        if accepted:
            return self._confirmation(time), "intake: the offer accepted; confirming the plan"
        return self._summary(time), "intake: summarising the set-up"

    def _offer(self, time: str) -> str:
        asks = "|".join(map(re.escape, ("Would that feel doable?", *LOCAL_QUESTIONS)))
        prompt = re.sub(rf"\s*(?:{asks})$", "", self._prompt_text() or self._offered_prompt())
        language = self.turn.language
        lead = f"{say('first_try', language, prompt=prompt)} " if prompt else ""
        return f"{lead}{self._offer_question(time)}"

    def _offer_question(self, time: str) -> str:
        """The offer's own question: the daily prompt at ``time``, or at a random moment of a window."""
        language = self.turn.language
        window = random_window(self.turn.history, self.turn.user)
        if window:
            return window_offer(window, language)
        return say("offer", language, time=clock(time, language))

    def _offered_prompt(self) -> str:
        offer = next((m.content or "" for m in reversed(self.turn.history) if is_schedule_offer(m.content or "")), "")
        match = re.search(r"“([^”]+)”", offer)
        return match[1] if match else ""

    def _confirmation(self, time: str) -> str:
        created = next((c for c in self.turn.called(SCHEDULER, action="create") if c.ok), None)
        result = created.result or "" if created else ""
        when = re.search(r"arrives (today|tomorrow)", result)
        language, at = self.turn.language, clock(time, self.turn.language)
        paused = paused_set_up(self.turn, time)
        if paused:
            return f"{say('all_set', language)} {paused} {say('reply_anytime', language)}"
        if "already exists" in result:
            return f"{say('already_set', language, time=at)} {say('reply_anytime', language)}"
        first = (
            say("done_first", language, when=say(when[1], language), time=at)
            if when
            else say("done_set", language, time=at)
        )
        answer = self._answer_beside_the_yes()
        return f"{first} {answer} {say('reply_anytime', language)}".replace("  ", " ")

    def _answer_beside_the_yes(self) -> str:
        """The answer to a question asked with the yes ("ok! what if i forget?"); "" with none, or when the
        confirmation already answers it ("what time will it come?")."""
        asked = yes_then_question(self.turn.user)
        kind = common_question(asked) if asked else None
        if not asked or kind == "when_texts":
            return ""
        if kind and self.turn.language == "en":
            return answer_question(kind, {}, None, schedule_set=True, study=self.turn.study)
        return answer_faq(read_message(asked).topic or "other", self.turn.study, self.turn.language)

    def _prompt_text(self) -> str:
        generated = next((c for c in self.turn.called(GENERATE) if c.ok), None)
        return (generated.result or "").split("\n", 1)[0].strip() if generated else ""

    def _schedule_sentence(self, time: str) -> str:
        created = next((c for c in self.turn.called(SCHEDULER, action="create") if c.ok), None)
        if created is None:
            return ""
        result = created.result or ""
        language, at = self.turn.language, clock(time, self.turn.language)
        if "already exists" in result:
            return say("already_set", language, time=at)
        when = re.search(r"arrives (today|tomorrow)", result)
        start = say("first_arrives", language, when=say(when[1], language)) if when else ""
        return say("daily_from", language, time=at, start=start)

    def _summary(self, time: str) -> str:
        prompt, language = self._prompt_text(), self.turn.language
        chosen = self._chosen_line()
        parts = [chosen] if chosen else []
        parts.append(say("first_try", language, prompt=prompt) if prompt else say("all_set", language))
        schedule = paused_set_up(self.turn, time) or self._schedule_sentence(time)
        if schedule:
            parts.append(schedule)
        parts.append(say("reply_anytime", language))
        return " ".join(parts)

    def _error_reply(self, failed: LoopCall) -> str:
        reason = _error_reason(failed.result)
        if failed.name == SAVE:
            return f"Sorry — I couldn't save that just now ({reason}). Could you send it again in a moment?"
        if failed.name == GENERATE:
            return (
                f"I have what I need, but I couldn't create your habit prompt just now ({reason}). "
                "Send me any message and I'll try again."
            )
        prompt = self._prompt_text()
        lead = f"Here's your first one-minute habit to try: “{prompt}” " if prompt else ""
        if failed.name == SCHEDULER:
            return f"{lead}But {SCHEDULE_FAILED} ({reason}). Send me any message and I'll try again."
        return f"{lead}I couldn't finish setting things up on my side ({reason}), so I may check in again soon."

    def _chosen_line(self) -> str:
        """ "I'll pick: 8am." — the one line that says what the coach chose when the choice was handed over."""
        saved = next((c for c in self.turn.called(SAVE) if c.ok), None)
        if not self.handed_over or saved is None:
            return ""
        language = self.turn.language
        shown = [clock(str(value), language) if name == TIME else f"“{value}”" for name, value in saved.args.items()]
        return say("chosen", language, value=", ".join(shown))
