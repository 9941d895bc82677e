"""The intake rules: save what the message says, then (profile complete) prompt → schedule → feedback.

The intake's reading of one message (what was asked, what was said beside it, a suggestion taken, a
question, a complaint or a choice handed over in between) and the reply it decides; the pure readings
it calls live in ``intake_answers`` and ``reading``, its words in ``intake_words``, its acknowledgements
in ``intake_acks``, the offer of the daily prompt and its answer in ``intake_offer``, the set-up in
``intake_setup``."""

from __future__ import annotations

import itertools
import re

from promptpipe.adapters.offline_coach.answers import answer_question, rephrase
from promptpipe.adapters.offline_coach.faq import answer_faq
from promptpipe.adapters.offline_coach.intake_acks import IntakeAcks
from promptpipe.adapters.offline_coach.intake_answers import names_a_fact, parse_anchor, parse_intake_message
from promptpipe.adapters.offline_coach.intake_defaults import IntakeDefaults
from promptpipe.adapters.offline_coach.intake_detours import (
    IntakeDetours,
    asks_who_the_coach_is,
    beside_the_yes,
    facts_past_the_yes,
    hands_over_the_time,
    hesitates,
    is_impatience,
    is_lost,
    sends_it_now,
    time_beside_send_it,
    yes_then_question,
)
from promptpipe.adapters.offline_coach.intake_moments import moment_said, routine_moment
from promptpipe.adapters.offline_coach.intake_new_habit import fields_since, second_intake_start
from promptpipe.adapters.offline_coach.intake_offer import IntakeOffer
from promptpipe.adapters.offline_coach.intake_window import random_window, read_window
from promptpipe.adapters.offline_coach.intake_words import (
    _DAYPART_ANCHOR,
    _DECLINED,
    _DECLINED_VALUE,
    _EASY_DEFAULTS,
    _OFF_TOPIC,
    _PROPOSE_ROUTINE,
    _SUGGESTIONS,
    _VAGUE_WORDS,
    _beside_the_question,
)
from promptpipe.adapters.offline_coach.phrases import clock, say
from promptpipe.adapters.offline_coach.reading import (
    accepts,
    asked_for,
    common_question,
    declines,
    suggestion,
    suggestion_sentence,
)
from promptpipe.adapters.offline_coach.spoken import as_words, with_clause_breaks
from promptpipe.adapters.offline_coach.text import (
    _GREETINGS,
    _NON_ANSWERS,
    ANCHOR,
    DOMAIN,
    HOLDING_REPLY,
    INTAKE_ORDER,
    MOTIVATION,
    SAVE,
    TIME,
    _clean,
    _is_hint,
)
from promptpipe.adapters.offline_coach.times import (
    beside_a_suggestion,
    normalise_time,
    parse_asked_time,
    parse_clock_time,
    parse_vague_time,
    propose_time,
    settle_half_of_day,
)
from promptpipe.adapters.offline_coach.turn import Turn, _Step
from promptpipe.models.llm import ChatMessage
from promptpipe.rules.intake_requests import asks_for_a_send_time, beside_the_send_request, defers
from promptpipe.rules.message_reading import MessageReading, hands_over, plain, read_message, shrugs
from promptpipe.rules.reason_filler import reason_without_filler
from promptpipe.rules.word_patterns import DAYPARTS, any_word

_DAYPART = any_word(*DAYPARTS)


# "honestly no idea, just seems good": a shrug inside an answer that gives nothing to save.
_WHY_NOT = re.compile(r"^\W*(?:why not|porque no|por que no|pourquoi pas)\W*$")


class IntakeRules(IntakeOffer, IntakeAcks, IntakeDefaults, IntakeDetours):
    """Intake: save what the message says, then (profile complete) prompt → schedule → FEEDBACK."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self.known = {name: turn.context.get(name, "") for name in INTAKE_ORDER}
        second = second_intake_start(turn.history)  # a new habit from the feedback week: its answers only
        self.known = fields_since(turn.history, second, self.known) if second is not None else self.known
        # What the coach's last message asked: the reply is read against it (a default it suggested, the
        # field that default stands for: "How about “to feel a bit better every day”?" asked why).
        self.asked = self._suggested_field() or asked_for(turn.last_assistant, turn.steer_node)
        # The words read for facts: the whole message, or what it says beside a question it also asks.
        self.said = turn.user
        self.asked_too: MessageReading | None = None
        # "idk you choose", "whatever works", "tú decide": the choice is the coach's, for the pending field.
        # "just send it whenever": the choice of what is pending is handed over too.
        # "just send it", "can u just send the reminder": every field still open is the coach's to fill.
        self.sends_now = sends_it_now(turn.user)
        self.handed_over = (hands_over(turn.user) and not parse_intake_message(turn.user, self.known, None)) or (
            hands_over_the_time(turn.user)  # "just send it whenever": never a routine ("when…") or an answer
            or (self.sends_now and not re.search(r"\d", turn.user))
        )

    def profile(self) -> dict[str, str]:
        """The context block's values plus what this loop saved successfully."""
        profile = dict(self.known)
        for call in self.turn.called(SAVE):
            if call.ok:
                profile.update({k: v for k, v in call.args.items() if k in profile and isinstance(v, str) and v})
        return profile

    def expected(self) -> str | None:
        if self.asked in self.known and (not self.known[self.asked] or self.asked == self._suggested_field()):
            return self.asked  # a question still open, or a time suggested in place of the one given
        steered = self.steered(self.known)
        if steered is not None:
            return steered
        return next((name for name in INTAKE_ORDER if not self.known[name]), None)

    def steered(self, profile: dict[str, str]) -> str | None:
        """The field the flow controller says to pursue, when it names one still missing."""
        return next((f for f in self.turn.steer_fields if not self._has(f, profile)), None)

    def _has(self, name: str, profile: dict[str, str]) -> bool:
        if name in profile:
            return bool(profile[name])
        saved = any(c.ok and c.args.get(name) for c in self.turn.called(SAVE))
        return saved or bool(self.turn.context.get(name))

    def decide(self) -> tuple[_Step, str]:
        turn = self.turn
        failed = next((c for c in turn.calls if c.failed), None)
        if failed is not None:
            return self._error_reply(failed), f"intake: {failed.name} failed; telling the participant"
        if _is_hint(turn.user) and not turn.calls:
            return self._greeting(), "intake: greeting hint"
        if turn.steer_mode in ("HANDOFF", "PAUSED"):
            return HOLDING_REPLY, "intake: the flow controller is waiting for a person"
        # A request before the set-up is done: a stop or a pause (promised for the set-up), another part of the day.
        stop = (self._stop_reply() or self._another_part_of_the_day() or self._yes_asking()) if not turn.calls else None
        if stop is not None:
            return stop
        reading = read_message(turn.user)
        reading = self._answer_in_a_question(reading)
        if self.handed_over:
            reading, chosen = self._hand_over(reading)
            if chosen:
                return [(SAVE, chosen)], f"intake: the choice handed over; a default for {', '.join(chosen)}"
        if not turn.calls and reading.kind in ("greeting", "question", "complaint", "later"):
            return self._not_a_fact(reading), f"intake: a {reading.kind}, not a fact; the pending question again"
        if not turn.calls and reading.kind == "fact" and self._understood_only():
            return self._pending(self.profile()), "intake: an acknowledgement of the coach's answer; the question again"
        if self.asked == "schedule" and self.prompt_given():
            offer = self._answer_offer()
            if offer is not None:
                return offer
        if not turn.calls and reading.kind == "yes" and not suggestion(turn.last_assistant) and not self.prompt_given():
            # "ok", "vale", "got it" with nothing suggested: heard, and the question still open is asked
            # again (not the controller's next one, which the script of a real conversation never answers).
            return self._still_pending(), "intake: an acknowledgement; the pending question again"
        # Only a fact is saved as one; a yes saves only the suggestion it accepts.
        reads_as_fact = (
            reading.kind == "fact"
            or reading.request in ("change_time", "new_habit")
            or (reading.kind == "yes" and bool(suggestion(turn.last_assistant)))
        )
        if reads_as_fact and not turn.called(SAVE) and SAVE in turn.tools:
            learned = self._learned()
            if learned:
                return [(SAVE, learned)], f"intake: learned {', '.join(learned)}"
        profile = self.profile()
        time = normalise_time(profile[TIME]) if profile[TIME] else None
        if profile[ANCHOR] and time and not self.steered(profile):
            return self._complete(time)
        return self._ask_next(profile), "intake: asking for the next missing field"

    def _yes_asking(self) -> tuple[_Step, str] | None:
        """A yes to the offer with a question after it ("ok! what if i forget?"): set up, the question answered
        in the confirmation."""
        if self.asked == "schedule" and self.prompt_given() and yes_then_question(self.turn.user):
            return self._answer_offer()
        return None

    def _hand_over(self, reading: MessageReading) -> tuple[MessageReading, dict[str, str]]:
        """ "whatever works" to "How about 6pm?" or to the offer takes it (a yes); to a question, a default
        for the field still open, to save (the words said are never saved)."""
        turn = self.turn
        if suggestion(turn.last_assistant) or (self.asked == "schedule" and self.prompt_given()):
            return MessageReading("yes"), {}
        if turn.calls or SAVE not in turn.tools:
            return reading, {}
        profile = self.profile()
        return reading, self._learned() if self.sends_now else self._chosen_default(profile)

    def _answer_in_a_question(self, reading: MessageReading) -> MessageReading:
        """A question that is an answer said with a rising voice ("um i guess meditation?"), or that
        comes with one ("wait is this free? anyway i want to learn more": the answer is read, the
        question answered after it), reads as a fact."""
        text = self.turn.user
        if reading.kind == "fact" and asks_who_the_coach_is(text):  # "vous êtes qui exactement"
            return MessageReading("question", topic="who")
        if reading.kind == "question" and reading.topic == "other" and names_a_fact(text):
            return MessageReading("fact")
        beside = _beside_the_question(text) if reading.kind == "question" else ""
        if beside and not is_impatience(beside):  # "¿cuántas preguntas son? tengo prisa": the question only
            self.said, self.asked_too = beside, reading
            return MessageReading("fact")
        if reading.kind == "yes" and self.asked == MOTIVATION and _WHY_NOT.match(plain(text)):
            return MessageReading("later", topic="shrug")  # "why not" to "why does it matter?": no reason given
        if reading.kind == "fact" and hesitates(text):  # "lo tengo que pensar": no answer yet
            return MessageReading("later")
        if reading.kind in ("fact", "question") and defers(text):  # "i'll let you know", "te aviso": one to come
            return MessageReading("later")
        if reading.kind in ("fact", "complaint") and is_lost(text):  # "im confused what do u need from me"
            return MessageReading("question", topic="rephrase")
        return reading

    # -- a message that is no answer: greeting, question, complaint, "let me think" -----------------
    def _pending(self, profile: dict[str, str]) -> str:
        """The question still open: the coach's own last one (a suggestion, the schedule offer, a
        field), else the next one to ask."""
        last = self.turn.last_assistant
        if suggestion(last):
            return suggestion_sentence(last)
        time = normalise_time(profile[TIME]) if profile[TIME] else None
        if self.prompt_given() and time:
            return say("offer", self.turn.language, time=clock(time, self.turn.language))
        if self.asked in INTAKE_ORDER and not profile[self.asked]:
            return self._question(profile, self.asked)
        return self._question(profile)

    def _still_pending(self) -> str:
        """The question still open after an acknowledgement, the question last (what is answered next); an
        "ok" to the reason asked again gets the default reason to take with one word."""
        profile = self.profile()
        if self.asked == MOTIVATION and not profile[MOTIVATION] and any(m.role == "user" for m in self.turn.history):
            return say("suggest_no_problem", self.turn.language, value=self._default(MOTIVATION))
        return f"{say('ack_lead', self.turn.language)} {self._pending(profile)}"

    def _not_a_fact(self, reading: MessageReading) -> str:
        profile = self.profile()
        pending = self._pending(profile)
        language = self.turn.language
        if reading.kind == "greeting":
            return f"{say('hello', language)} {pending}"
        if (
            reading.kind == "later"
            and reading.topic == "shrug"
            and language == "en"
            and not suggestion(self.turn.last_assistant)
        ):
            missing = self.asked if self.asked in INTAKE_ORDER and not profile[self.asked] else None
            missing = missing or self.steered(profile) or next((n for n in INTAKE_ORDER if not profile[n]), None)
            routine = self._routine_said_for_the_time() if missing == ANCHOR else ""
            if routine:  # the routine they named for the time, before any default of ours
                return f"No problem. {_PROPOSE_ROUTINE['en'].format(routine=routine)}"
            if missing in _SUGGESTIONS or missing == MOTIVATION:  # a default they can take with one word
                return say("suggest_no_problem", language, value=self._default(missing))
            return f"No problem — small and simple is perfect. {pending}"
        if reading.kind == "later":
            return f"{say('no_rush', language)} {pending}"
        if reading.kind == "complaint":
            return f"{say('sorry_simple', language)} {self._easier_way(profile, pending)}"
        if reading.topic == "rephrase":
            return rephrase(self.turn.last_assistant, self.asked, profile, language)
        return f"{answer_faq(reading.topic or 'other', self.turn.study, language)} {pending}"

    def _easier_way(self, profile: dict[str, str], pending: str) -> str:
        """A default they can take with one word, for the question still open (the coach's own suggestion,
        when one is pending: it is already the easy way)."""
        if suggestion(self.turn.last_assistant):
            return pending
        time = normalise_time(profile[TIME]) if profile[TIME] else None
        if self.prompt_given() and time:
            return say("easy_yes_daily", self.turn.language, time=clock(time, self.turn.language))
        missing = self.asked if self.asked in INTAKE_ORDER and not profile[self.asked] else None
        missing = missing or self.steered(profile) or next((n for n in INTAKE_ORDER if not profile[n]), None)
        if missing in _EASY_DEFAULTS:
            return say("suggest_default", self.turn.language, value=self._default(missing))
        return pending

    # -- a reply read against the last question ---------------------------------------------------
    def _learned(self) -> dict[str, str]:
        """What the message gives to save, the reason without its filler; with "just send it at 7pm", the
        fields still open by default beside it."""
        learned = {n: reason_without_filler(v) if n == MOTIVATION else v for n, v in self._learn().items()}
        if self.sends_now:
            # Asking to skip the questions answers none of them but the habit and the time: the words beside it
            # ("ugh", "too many questions man") are never the reason or the routine.
            learned = {n: v for n, v in learned.items() if n in (DOMAIN, TIME)}
            time = None if learned.get(TIME) or self.profile()[TIME] else time_beside_send_it(self.turn.user)
            learned |= {TIME: time} if time else {}
            return self._rest_by_default({**self.profile(), **learned}) | learned
        return learned

    def _learn(self) -> dict[str, str]:
        """The facts the message gives, read against what was asked: an acceptance of the coach's
        own suggestion saves it; a vague time asked for gets a concrete suggestion instead."""
        text, expected = self.said, self.expected()
        if expected == MOTIVATION and _DECLINED.match(text):  # the reason is theirs to keep: that is recorded
            return {MOTIVATION: _DECLINED_VALUE.get(self.turn.language, _DECLINED_VALUE["en"])}
        suggested, reading = suggestion(self.turn.last_assistant), read_message(text)
        if suggested and (accepts(text) or reading.kind == "yes" or self.handed_over or beside_the_yes(text)):
            time = normalise_time(suggested) if re.search(r"\d", suggested) else None
            if time:  # the time suggested, in place of an earlier one; a fact said beside the yes too
                taken = {TIME: time} if time != normalise_time(self.known[TIME] or "-") else {}
                beside = parse_intake_message(beside_the_yes(text), {**self.known, **taken}, None)
                return taken | {n: v for n, v in beside.items() if n != TIME and not self.known[n]}
            offered = suggested.strip("“”")
            defaults = ((n, _EASY_DEFAULTS[n]) for n in (DOMAIN, MOTIVATION, ANCHOR))
            field = next((n for n, v in defaults if offered in (v.strip("“”"), self._default(n).strip("“”"))), ANCHOR)
            own = facts_past_the_yes(text, field, self.known)  # "ok. journaling, to clear my head": the reason too
            value = own.pop(field, "") or suggested.strip("“”")  # "fine. yoga"
            return {field: value} | own if not time and not self.known[field] else {}
        swapped = self._another_time_among_other_facts(text, expected)
        if swapped:  # "can we do 6:45 instead, 8 is when i leave. its for my mood"
            return swapped
        # A time suggested in place of the one given ("How about 7pm?"): "yeah 7 is good" is read as a time.
        known = {**self.known, TIME: ""} if self._suggested_field() == TIME else self.known
        sends_at = asks_for_a_send_time(text)  # "can u text me at 8": the time asked, whatever the question
        learned = parse_intake_message(self._unrefused(text), known, TIME if sends_at else expected)  # no "that's when"
        if reading.request == "change_time" or sends_at:  # "can u switch it to the evening, like 8": no reason
            learned = {n: v for n, v in learned.items() if n not in (DOMAIN, MOTIVATION)}
        own_clause = beside_the_send_request(text) if sends_at else ""
        if own_clause and read_message(own_clause).kind == "fact":  # "flossing, text me at 9": the habit is kept
            learned |= {n: v for n, v in parse_intake_message(own_clause, self.known, expected).items() if n != TIME}
        suggested_time = normalise_time(suggested) if suggested and re.search(r"\d", suggested) else None
        habit, reason = (
            " ".join(learned.get(n) or self.known[n] for n in f) for f in ((DOMAIN, ANCHOR), (MOTIVATION,))
        )
        if suggested_time and learned.get(TIME):  # "earlier, like 6:45" to "How about 8am?" is the morning
            learned[TIME] = beside_a_suggestion(learned[TIME], suggested_time, text, habit=habit, reason=reason)
        elif learned.get(TIME) and parse_clock_time(as_words(text)):  # "around 10" after "stretch at night": 10pm
            earlier = self._said_of_when()
            learned[TIME] = settle_half_of_day(learned[TIME], text, earlier=earlier, habit=habit, reason=reason)
        if learned.get(TIME) and self.asked in (DOMAIN, MOTIVATION) and parse_clock_time(as_words(text)) is None:
            learned.pop(TIME)  # "stretching before bed": a moment, not yet a time; the time is asked for
        window = random_window(self.turn.history, text) if read_window(text) else None
        if window:  # "between 6 and 9pm then", after asking for a time that varies: the window's start
            learned[TIME] = window[0]
        if self.proposal():  # a vague time is confirmed before it is saved; the rest is saved now
            learned.pop(TIME, None)
            if learned.get(ANCHOR) and _DAYPART_ANCHOR.match(learned[ANCHOR]) and not _DAYPART.search(text):
                learned.pop(ANCHOR)  # "after work" said for the time is a time ("mornings before work": routine)
        return learned

    def _said_of_when(self) -> str:
        """Their earlier words, bar their reasons ("migraines l'après-midi" says nothing of when)."""
        reason = self.known[MOTIVATION].lower()
        said = (
            (m.content or "").lower()
            for q, m in itertools.pairwise(self.turn.history)
            if m.role == "user" and not _is_hint(m.content or "") and asked_for(q.content or "") != MOTIVATION
        )
        return " ".join(m.replace(reason, " ") if reason else m for m in said)

    def proposal(self) -> str:
        """A concrete time to suggest when they answered "what time?" with a vague one."""
        text = self.turn.user
        if self.known[TIME] or parse_asked_time(text) is not None or "?" in text:
            return ""
        vague = parse_vague_time(text, loose=True)
        # Asked for a time, or a reply that is nothing but a time of day ("afternoon sometime").
        only_a_time = not re.search(r"[a-z]", _VAGUE_WORDS.sub("", text.lower()))
        if self.asked == ANCHOR or (
            self.asked != TIME and not (vague and only_a_time and not suggestion(self.turn.last_assistant))
        ):
            return ""  # "after lunch" for the anchor is the anchor
        if not vague and self.asked == TIME:  # "en rentrant du boulot" for the time: the routine's usual moment
            return routine_moment(with_clause_breaks(text))
        return (propose_time(text) or vague or "") if vague else ""

    def _ask_next(self, profile: dict[str, str]) -> str:
        saved = next((c for c in self.turn.called(SAVE) if c.ok), None)
        ack = self._chosen_line() or self._acknowledge(saved.args if saved else {})
        said = _clean(self.turn.user).lower()
        time = normalise_time(profile[TIME]) if profile[TIME] else None
        pending = self._offer(time) if self.prompt_given() and time else self._question(profile)
        if self.proposal() and not profile[TIME]:
            lead = f"{ack} " if ack else ""
            language = self.turn.language
            return f"{lead}{say('suggest_time', language, time=clock(self.proposal(), language))}"
        if saved and self.asked_too is not None and self.asked_too.topic not in (None, "rephrase"):
            answer = answer_faq(self.asked_too.topic or "other", self.turn.study, self.turn.language)
            return f"{answer} {ack} {pending if self.prompt_given() and time else self._question(profile)}".strip()
        question = common_question(self.turn.user) if not saved else None
        if question == "rephrase":
            return rephrase(self.turn.last_assistant, self.asked, profile, self.turn.language)
        if question or self._off_topic():
            answer = (
                answer_question(question, profile, time, schedule_set=False, study=self.turn.study)
                if question
                else _OFF_TOPIC
            )
            # The question they had not answered yet is asked again (not the controller's next one).
            if self.asked in INTAKE_ORDER and not profile[self.asked] and not self.prompt_given():
                pending = self._question(profile, self.asked)
            return f"{answer} {pending}"
        if not ack and self.prompt_given() and time:
            return pending
        if not ack and said in _GREETINGS:
            ack = "Hi!"
        elif not ack and (any(said.startswith(n) for n in _NON_ANSWERS) or shrugs(said)):
            # the question they shrugged at gets the default, not the controller's next one
            unanswered = self.asked if self.asked in INTAKE_ORDER and not profile[self.asked] else None
            missing = unanswered or self.steered(profile) or next((n for n in INTAKE_ORDER if not profile[n]), None)
            if missing in _SUGGESTIONS or missing == MOTIVATION:  # a default they can take with one word
                return say("suggest_no_problem", self.turn.language, value=self._default(missing))
            ack = "No problem — small and simple is perfect."
        elif not ack and self.expected() == TIME and said and not self.prompt_given():
            ack = say("no_time_caught", self.turn.language)
        # a time asked for the messages answers none of the questions: the one still open is asked again
        open_ = self.asked if asks_for_a_send_time(self.turn.user) and self.asked in INTAKE_ORDER else None
        return f"{ack} {self._question(profile, open_ if open_ and not profile[open_] else None)}".strip()

    def _routine_said_for_the_time(self) -> str:
        """A routine the participant named when asked for the time ("after lunch", "antes de dormir"),
        which the coach answered with a concrete time: the anchor to suggest."""
        history = self.turn.history
        for index in range(len(history) - 1, 0, -1):
            message, before = history[index], history[index - 1]
            if message.role != "assistant" or before.role != "user":
                continue
            offered = suggestion(message.content or "")
            if offered and re.search(r"\d", offered):
                routine, _ = parse_anchor(before.content or "")
                return routine or moment_said(before.content or "")  # "at lunchtime", "first thing"
        return ""

    def _time_still_proposed(self, profile: dict[str, str]) -> str:
        """A time to propose again when the time is asked: the coach's last proposal, if the answer after it
        neither refused nor replaced it ("How about 12:30pm?" "after i eat"); else, when the time question
        was just asked and not answered, the time of the routine already known ("at lunchtime": 12:30)."""
        said = [*self.turn.history[-6:], ChatMessage(role="user", content=self.turn.user)]
        for question, answer in reversed(list(itertools.pairwise(said))):  # the last few exchanges, latest first
            offered = suggestion(question.content or "") if question.role == "assistant" else ""
            if answer.role == "user" and offered and re.search(r"\d", offered):
                reply = answer.content or ""
                refused = declines(reply) or parse_clock_time(reply) is not None or "?" in reply
                return "" if refused else normalise_time(offered) or ""
        anchor = profile[ANCHOR]
        if anchor and asked_for(self.turn.last_assistant) == TIME:
            return propose_time(anchor) or parse_vague_time(anchor, loose=True) or ""
        return ""

    def _off_topic(self) -> bool:
        """A question of theirs that none of the rules can answer ("what's the weather tomorrow?")."""
        return "?" in self.turn.user and not self.turn.called(SAVE)

    def _question(self, profile: dict[str, str], missing: str | None = None) -> str:
        missing = missing or self.steered(profile) or next((name for name in INTAKE_ORDER if not profile[name]), None)
        language = self.turn.language
        if missing == DOMAIN:
            return say("ask_domain", language)
        if missing == MOTIVATION:
            return say("ask_motivation", language, habit=profile[DOMAIN] or say("this_habit", language))
        if missing == TIME:
            proposed = self._time_still_proposed(profile)
            if proposed:  # "How about 12:30pm?" answered with the routine instead: the proposal stands
                return say("suggest_time", language, time=clock(proposed, language))
            return say("ask_time", language)
        if missing == ANCHOR:
            routine = self._routine_said_for_the_time()
            if routine:  # "after lunch" said when asked the time: the routine, to confirm with one word
                return _PROPOSE_ROUTINE.get(language, _PROPOSE_ROUTINE["en"]).format(routine=routine)
            return say("ask_anchor", language)
        if missing:  # a field the flow definition added
            return f"One more thing before we start: could you tell me your {missing.replace('_', ' ')}?"
        return "Anything else you'd like me to know before we start?"
