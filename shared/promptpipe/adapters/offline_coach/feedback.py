"""The feedback rules: record how the habit went, repair or change the plan when asked."""

from __future__ import annotations

import re
from dataclasses import replace

from promptpipe.adapters.offline_coach import times as clock
from promptpipe.adapters.offline_coach.answers import answer_question, rephrase
from promptpipe.adapters.offline_coach.faq import answer_faq
from promptpipe.adapters.offline_coach.feedback_answers import (
    _DONE_CANON,
    _INTENSITY_CANON,
    ASKED_BARRIER,
    ASKED_HELPED,
    SMALLEST,
    asked_for_a_time,
    asks_for_a_new_time,
    classify_barrier,
    hard_barrier,
    motivator_in,
    says_done,
    says_yes_and_how,
    what_helped_and_asked,
    what_made_it_easy,
)
from promptpipe.adapters.offline_coach.feedback_schedule import ScheduleRequests
from promptpipe.adapters.offline_coach.habit_prompt import _second_person
from promptpipe.adapters.offline_coach.intake_new_habit import switch_habit
from promptpipe.adapters.offline_coach.phrases import in_every_language, say
from promptpipe.adapters.offline_coach.reading import (
    accepts,
    common_question,
    is_formula,
    unclear_stop,
)
from promptpipe.adapters.offline_coach.text import (
    ANCHOR,
    DOMAIN,
    RECORD,
    SAVE,
    SCHEDULER,
    TRANSITION,
    _clean,
    _is_hint,
    _substantive,
    _words,
)
from promptpipe.adapters.offline_coach.turn import LoopCall, Turn, _error_reason, _Step
from promptpipe.rules.avoided_day_part import when_wanted, without_avoided_day_part
from promptpipe.rules.feedback_reading import (
    asks_for_another_time,
    asks_when,
    is_partial,
    new_habit,
    not_yet,
    pause_request,
)
from promptpipe.rules.feedback_report import poll_number, report_parts, smaller_version
from promptpipe.rules.intent_patterns import NEW_HABIT
from promptpipe.rules.message_reading import MessageReading, read_message
from promptpipe.rules.outcome import read_outcome
from promptpipe.rules.outcome_fields import thanks_on_a_hard_day
from promptpipe.rules.report_details import carries_a_why, planned_tweak, says_it_helps, tweak_in

# The daily prompt's Done question, the reminder and the coach's own "did you …?": a yes answers them.
_ASKED_DONE = re.compile(
    r"Did you do it\?|quick update|did you (?:get a chance to )?(?:try|do) it|how did|pudiste probarlo|c[oó]mo te fue|"
    r"as-tu pu|comment s'est pass",
    re.I,
)
# A clause beside a done that judges the day or thanks, rather than saying what helped ("it's actually helping").
_JUDGEMENT = re.compile(
    r"^(?:it'?s|it was|that was|felt|feels|fue|estuvo|c'?[eé]tait|c'est|appreciate|thx|ty|thanks?|thank you|cheers|"
    r"ta|tysm|gracias|merci)\b",
    re.I,
)


class FeedbackRules(ScheduleRequests):
    """Feedback: record what helped or got in the way, encourage, adjust the schedule on request."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn

    def decide(self) -> tuple[_Step, str]:
        turn = self.turn
        text = turn.user
        failed = next((c for c in turn.calls if c.failed), None)
        if failed is not None:
            return self._error_reply(failed), f"feedback: {failed.name} failed; telling the participant"
        if "Profile status: missing" in turn.context_text and TRANSITION in turn.tools:
            return self._repair()
        reading = read_message(text)
        first = self._new_habit_or_unread(reading) or self._report_and_more()
        if first is not None:
            return first
        wants_pause = reading.request == "pause" or pause_request(text) is not None
        if not turn.calls and unclear_stop(text) and not asks_for_a_new_time(text) and not wants_pause:
            return say("stop_which", self.lang), "feedback: an unclear stop request; asking which"
        requested = self._report_first() or (self._request(reading) if SCHEDULER in turn.tools else None)
        requested = requested or self._what_helped_then_a_question()
        if requested is not None:
            return requested
        question = common_question(text)
        if reading.kind in ("greeting", "complaint", "later") and not turn.calls:
            return self._not_a_report(reading.kind), f"feedback: a {reading.kind}, not a report"
        asked_too = (
            reading.kind == "question" and reading.topic not in (None, "rephrase") and question is None
        ) and not asks_when(text)
        if (asked_too or question not in (None, "when_texts")) and self.delivered and says_done(text):
            # "done. btw how long does this last?": the report is recorded, the question answered
            # the common-question answers are English only: another language gets the study's FAQ in it
            topic = reading.topic or "other"
            in_english = bool(question) and self.lang == "en"
            answer = self._answer(question or "") if in_english else answer_faq(topic, turn.study, self.lang)
            return self._done(text, then=answer)
        if asked_too:
            return self._faq(reading.topic or "other"), "feedback: a question about the study or the coach"
        wanted = when_wanted(text)  # "a mediodía estoy muy liada" names noon to leave, not to move to
        new_time = clock.parse_clock_time(wanted) or clock.parse_vague_time(wanted)
        # "I did it at 7pm instead" reports on the habit; it does not ask for a new time.
        if (
            new_time
            and asks_for_a_new_time(text)
            and not says_done(text)
            and question is None
            and SCHEDULER in turn.tools
        ):
            return self._change_time(new_time)
        if question == "when_texts" and SCHEDULER in turn.tools:
            return self._when()
        if question == "change_time_later" and SCHEDULER in turn.tools:  # "can I change the time?": which time?
            return say("ask_new_time", self.lang), "feedback: asked whether the time can change; asking for it"
        if question is not None:
            return self._answer(question), f"feedback: the common question {question}"
        if _is_hint(text):
            return "Welcome back! How did your habit go today?", "feedback: greeting hint"
        intensity = _INTENSITY_CANON.search(text)
        if intensity:
            return self._intensity_reply(intensity[1].lower()), "feedback: intensity answer"
        return self._outcome(text)

    def _new_habit_or_unread(self, reading: MessageReading) -> tuple[_Step, str] | None:
        text = self.turn.user
        if (
            reading.request == "new_habit" or NEW_HABIT.search(text) or new_habit(text)
        ) and TRANSITION in self.turn.tools:
            return self._new_habit()
        if is_formula(text):  # =HYPERLINK("…","Done") reports nothing a person said
            return (
                "Sorry, I couldn't read that. Did you get to today's habit? Reply 1 for Done or 2 for Next time.",
                "feedback: a formula, not a report",
            )
        return None

    # -- done / not done ------------------------------------------------------------------------
    def _asked_done(self) -> bool:
        """The open question is whether they did it: the daily prompt (or its reminder) is the last
        thing said and waits for an answer, or the coach asked "did you …?"."""
        last = self.turn.last_assistant
        awaiting = self.turn.context.get("replied to the latest daily prompt") == "not yet"
        prompt = self.turn.context.get("last habit prompt", "")
        # after its "you're welcome" to a thanks for the prompt, the prompt's question is still open
        welcomed = last.strip() in in_every_language("welcome")
        return (
            awaiting
            or welcomed
            or bool(prompt and last.strip() == prompt.strip())
            or _ASKED_DONE.search(last) is not None
        )

    def _outcome(self, text: str) -> tuple[_Step, str]:
        canonical = _DONE_CANON.search(text)
        asked_done = self._asked_done()
        last = self.turn.last_assistant
        if not self.delivered:
            # Nothing delivered yet: nothing to praise or to ask about; a "yes" accepts the plan.
            return self._plan(), "feedback: no daily prompt delivered yet; the plan as the schedule says"
        if not_yet(text) and not canonical:  # "not yet, will do it tonight": no miss presumed
            return say("not_yet", self.lang), "feedback: not yet; nothing recorded"
        reading = read_outcome(text, asked=asked_done)  # the one reader (rules/outcome.py)
        reading = (poll_number(text) if asked_done else None) or reading  # "1 ty": the poll's Done, typed
        if canonical:
            done = canonical[1].lower() == "done"
        elif accepts(text) and not asked_done and not says_done(text):
            return self._agreed(), "feedback: agreement with the last suggestion (not a report)"
        elif any(a in last for a in ASKED_HELPED) and (helped := what_helped_and_asked(text, reading)):
            # "… ¿cuenta si lo hago en dos ratos?": answered, by the study team's FAQ when nothing else knows
            then = (self._answer_to(helped[1]) or answer_faq("other", self.turn.study, self.lang)) if helped[1] else ""
            reply = f"{say('helped', self.lang)} {then}".strip()
            return self._save_then({"last_motivator": helped[0]}, reply, "feedback: what helped")
        elif (tweak := planned_tweak(text)) and (reading == "no_report" or not asked_done):
            # "maybe I'll do it before lunch tomorrow": the change they will try; the schedule is kept
            return self._save_then({"last_tweak": _words(tweak, 15)}, say("agreed_tweak", self.lang), "feedback: tweak")
        elif any(a in last for a in ASKED_BARRIER) and _substantive(text) and reading != "done":
            return self._not_done(text, follow_up=True)
        elif is_partial(text):
            return self._partial(text)
        elif reading != "no_report":
            done = reading == "done"
        elif says_yes_and_how(text) or (asked_done and (says_it_helps(text) or thanks_on_a_hard_day(text))):
            done = True  # "thanks, it's helping", "thanks! hard with the travel though"
        elif easy := what_made_it_easy(text):
            if asked_done:  # "keeping a bottle on my desk helps a lot", to the prompt: a done, and what helped
                return self._done(text, why=easy)
            return self._save_then({"last_motivator": _words(easy, 15)}, say("helped", self.lang), "feedback: why easy")
        else:
            return self._generic(text), "feedback: no outcome recognised"
        return self._done(text) if done else self._not_done(text, follow_up=False)

    def _what_helped_then_a_question(self) -> tuple[_Step, str] | None:
        """ "the podcast! is this a bot?" after "what helped?": what helped is saved, then the question answered."""
        asked_helped = any(a in self.turn.last_assistant for a in ASKED_HELPED)
        return (
            self._outcome(self.turn.user)
            if asked_helped and what_helped_and_asked(self.turn.user, "no_report")
            else None
        )

    def _report_and_more(self) -> tuple[_Step, str] | None:
        """A report with more in the same message, in any order ("done! can we move it to 7?", "nope
        forgot. is this a bot?", "the dog staring at me. Done", "hecho, pero pausa una semana"): the
        outcome is recorded with what helped or got in the way, a question is answered in the same reply,
        and a request is then carried out in its own words."""
        turn = self.turn
        # only in answer to the daily prompt (or "did you …?"): after "what helped?" the message answers that
        if not self.delivered or _DONE_CANON.search(turn.user) or not self._asked_done():
            return None
        parts = report_parts(turn.user, asked=True)
        wanted = without_avoided_day_part(turn.user)  # "switch to the morning? by the evening i forget": no report
        if wanted != turn.user and report_parts(wanted, asked=True) is None:
            return None
        if parts is None or asks_when(turn.user) or is_partial(turn.user):  # "got 2 of 3 done, …": part of it
            return None  # "ugh forgot, what time do you send it again?": the listed time (_report_first)
        if parts.requests and (turn.called(SAVE) or turn.called(RECORD)) and SCHEDULER in turn.tools:
            # the report is on the record: the request is read as if said alone, with a time said beside it
            timed = [fact for fact in parts.facts if re.search(r"\d", fact)]
            return FeedbackRules(replace(turn, user=" ".join((*parts.requests, *timed)))).decide()
        answer = self._answer_to(" ".join(parts.questions)) if parts.questions else ""
        if parts.outcome == "done":
            # beside a request, the other words are the request's reason, not what helped
            facts = () if parts.requests else parts.facts
            why = " ".join(f for f in facts if not re.search(r"\d", f) and not _JUDGEMENT.match(f) and carries_a_why(f))
            return self._done(turn.user, then=answer, why=why)
        return self._not_done(", ".join((parts.report, *parts.facts)), follow_up=False, then=answer)

    def _answer_to(self, asked: str) -> str:
        """The answer to a question asked beside a report (the common questions in English, else the
        study's FAQ in the participant's language); "" for one that needs the schedule listed."""
        reading, question = read_message(asked), common_question(asked)
        if question == "when_texts" or (question is None and reading.topic in (None, "rephrase")):
            return ""
        if question and self.lang == "en":
            return self._answer(question)
        return answer_faq(reading.topic or "other", self.turn.study, self.lang)

    def _done(self, text: str, then: str = "", why: str = "") -> tuple[_Step, str]:
        args: dict[str, str] = {}
        last_prompt = self.turn.context.get("last habit prompt", "")
        if last_prompt:
            args["last_successful_prompt"] = last_prompt
        # "did it but it was hard, my knees were sore": what made it hard got in the way; it never helped
        hard = hard_barrier(text) if not _DONE_CANON.search(text) else ""
        if hard:
            args["last_barrier"] = hard
        motivator = (motivator_in(text, self.lang) or _clean(why)) if not (_DONE_CANON.search(text) or hard) else ""
        if motivator:
            args["last_motivator"] = _words(motivator, 15)
        if smaller := smaller_version(text):  # "did a short one": the smaller version is the tweak that worked
            args["last_tweak"] = smaller
        count = re.match(r"(\d+)", self.turn.context.get("prompts completed", ""))
        so_far = f" That's {count[1]} done so far." if count and int(count[1]) > 0 and self.lang == "en" else ""
        if hard:
            follow = f"{then} {say('hard_day', self.lang)}".strip()
        elif then:  # the answer, then what helped when it is not said yet (the next message may say it)
            follow = then if motivator else f"{then} {say('ask_helped', self.lang)}"
        elif motivator and self.lang == "en":
            follow = f"Great to hear that {_second_person(motivator)} helped."
        elif motivator:
            follow = say("helped", self.lang)
        else:
            follow = say("ask_helped", self.lang)
        reply = f"{say('done', self.lang)}{so_far} {follow}"
        return self._save_then(args, reply, "feedback: done", record=True)

    def _not_done(self, text: str, *, follow_up: bool, then: str = "") -> tuple[_Step, str]:
        barrier, tweak = classify_barrier(text)
        if follow_up and barrier == "not specified":
            barrier = _words(_clean(text), 15)
        lang = self.lang
        tweak = tweak if lang == "en" else SMALLEST  # the one tweak the Spanish and French replies say
        theirs = tweak_in(text)  # "forgot, gonna set an alarm": their own change is the tweak
        args = {"last_barrier": barrier, "last_tweak": _words(theirs or tweak, 15)}
        if theirs:
            reply = f"{say('miss', lang)} {say('agreed_tweak', lang)}"
        elif follow_up:
            reply = say("tweak_agreed_next", lang, tweak=tweak)
        else:
            ask = f" {say('ask_barrier', lang)}" if barrier == "not specified" else ""
            reply = f"{say('miss', lang)} {say('tweak', lang, tweak=tweak)}{ask}"
        reply = f"{reply} {then}" if then else reply
        return self._save_then(args, reply, "feedback: not done; barrier and tweak")

    def _partial(self, text: str) -> tuple[_Step, str]:
        """ "half of it, got interrupted by a call": part of it (no count either way: the engine's poll
        stays open), and what got in the way when it says; a bare "kinda" is asked about."""
        rest = re.split(r",|\bbut\b|\bpero\b|\bmais\b", text, maxsplit=1)
        said = _clean(rest[1]) if len(rest) > 1 else ""
        if not _substantive(said) or len(said.split()) < 2:
            reply = f"{say('partial', self.lang)} {say('ask_barrier', self.lang)}"
            return reply, "feedback: part of it; asking what got in the way"
        barrier, tweak = classify_barrier(said)
        tweak = tweak if self.lang == "en" else SMALLEST
        if barrier == "not specified":
            barrier = _words(said, 15)
        reply = f"{say('partial', self.lang)} {say('tweak', self.lang, tweak=tweak)}"
        return self._save_then({"last_barrier": barrier, "last_tweak": tweak}, reply, "feedback: part of it")

    # -- other intents ----------------------------------------------------------------------------
    def _intensity_reply(self, answer: str) -> str:
        level = self.turn.context.get("intensity", "normal")
        key = {"increase": "intensity_up", "decrease": "intensity_down", "keep current": "intensity_keep"}
        return say(key.get(answer, "intensity_set"), self.lang, level=level)

    def _repair(self) -> tuple[_Step, str]:
        if not self.turn.called(TRANSITION):
            args = {"target_state": "INTAKE", "reason": "profile incomplete: needs repair"}
            return [(TRANSITION, args)], "feedback: profile incomplete; back to intake"
        missing = self.turn.context_text.split("Profile status: missing", 1)[1]
        if "prompt_anchor" in missing.split(".")[0]:
            question = (
                "What's something you already do every day that your habit can follow — like your morning coffee?"
            )
        else:
            question = "What time of day would you like your daily prompt? For example 8am or 7:30pm."
        return f"Before your next prompt I need one more detail. {question}", "feedback: asking for the repair"

    def _new_habit(self) -> tuple[_Step, str]:
        return switch_habit(self.turn, self.lang)  # the habit it names saved, back to the intake

    # -- requests: pause, resume, stop, a new time, a limit -----------------------------------------
    def _report_first(self) -> tuple[_Step, str] | None:
        """ "done! can we move it to 7 tho": the report is recorded first; the change follows in the loop.
        "ugh forgot, what time do you send it again?": a question of when gets the listed time."""
        text = self.turn.user
        if self.delivered and says_done(text) and asks_for_another_time(text) and not self.turn.called(SAVE):
            return self._done(text)
        answers_when = asked_for_a_time(self.turn.last_assistant)  # "cuando salgo del trabajo" to "what time?"
        if asks_when(text) and SCHEDULER in self.turn.tools and not says_done(text) and not answers_when:
            return self._when()
        return None

    def _not_a_report(self, kind: str) -> str:
        if kind == "complaint":
            return say("sorry_options", self.lang)
        if kind == "later":
            return say("no_rush_report", self.lang)
        if not self.delivered:
            return say("hi_not_yet", self.lang)
        return say("hi_latest", self.lang)

    def _faq(self, topic: str) -> str:
        ask = say("ask_latest" if self.delivered else "ask_more", self.lang)
        return f"{answer_faq(topic, self.turn.study, self.lang)} {ask}"

    def _error_reply(self, failed: LoopCall) -> str:
        reason = _error_reason(failed.result)
        if failed.name == SCHEDULER:
            return f"Sorry — I couldn't update your daily schedule just now ({reason}). Could you try again later?"
        if failed.name == TRANSITION:
            return f"Sorry — something went wrong on my side ({reason}). Could you send that again?"
        return f"Thanks for letting me know! (I couldn't save that note just now: {reason}.)"

    def _agreed(self) -> str:
        last = self.turn.last_assistant
        if "doable" in last or "tweak" in last.lower() or "factible" in last or "faisable" in last:
            return say("agreed_tweak", self.lang)
        return say("agreed", self.lang)

    def _answer(self, question: str) -> str:
        profile = {DOMAIN: self.turn.context.get(DOMAIN, ""), ANCHOR: ""}
        if question == "rephrase":
            return rephrase(self.turn.last_assistant, None, profile, self.lang)
        last = self.turn.context.get("last habit prompt", "")
        if question == "my_habit" and last:
            return f"Your habit is {profile[DOMAIN] or 'the one we picked'}; your latest prompt was: “{last}”"
        return answer_question(question, profile, None, schedule_set=True)

    def _generic(self, text: str) -> str:
        thanks = (
            r"(?:thanks|thank you|thank u|thx|ty|tysm|cheers|ok|okay|great|cool|sounds good|will do|gracias|merci)\b"
        )
        if re.match(thanks, _clean(text), re.I) or re.fullmatch(r"[\s🙏🤗❤️♥️😊🙂]+", text):
            return say("welcome", self.lang)
        if text.rstrip().endswith("?"):
            return say("good_question", self.lang)
        if self.turn.context.get("replied to the latest daily prompt") == "yes":
            return say("shared", self.lang)
        return say("shared_ask", self.lang)
