"""The feedback requests that change or read the daily schedule (docs/offline-coach.md, "Feedback as
people write it"): another time, a shift of it, a pause (until a weekday too), resume, stop, a limit on
when, and the plan as the listed schedule says it. Each lists, or acts, through the ``scheduler`` tool
and then says only what its result confirms."""

from __future__ import annotations

import re
from typing import Any

from promptpipe.adapters.offline_coach import times as clock
from promptpipe.adapters.offline_coach.feedback_answers import (
    OFFERED_PAUSE,
    asked_for_a_time,
    local_day,
    pause_length,
    proposed_time,
    says_done,
    says_not_done,
)
from promptpipe.adapters.offline_coach.phrases import clock as clock_in
from promptpipe.adapters.offline_coach.phrases import in_every_language, say
from promptpipe.adapters.offline_coach.reading import SUGGEST_LEAD, suggestion
from promptpipe.adapters.offline_coach.text import RECORD, SAVE, SCHEDULER, _clean, _words
from promptpipe.adapters.offline_coach.time_changes import away_from, requested_time, time_for_change
from promptpipe.adapters.offline_coach.turn import LoopCall, Turn, _result_json, _Step
from promptpipe.rules.avoided_day_part import avoided_half, when_wanted, without_a_deadline, without_avoided_day_part
from promptpipe.rules.feedback_reading import (
    Language,
    asks_for_another_time,
    asks_when,
    away_for,
    days_until,
    language,
    limits_the_days,
    limits_the_hours,
    pause_request,
    reason_clause,
    resumes,
    runs_an_errand,
    shift_minutes,
    time_preference,
)
from promptpipe.rules.language import tells_no_language
from promptpipe.rules.message_reading import MessageReading
from promptpipe.rules.report_details import proposes_a_time

ASK_NEW_TIME = "What time would suit you better?"
_WEEKDAY_INDEX = {
    day: i for i, day in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
}


_LIMIT_BOUND = re.compile(
    r"\b(?:after|before|past|later than|earlier than|despu[eé]s de|antes de|apr[eè]s|avant)\s+(?:las?\s+|the\s+)?"
    r"(\d{1,2}(?::\d{2})?)\s*([ap]\.?m\.?|h)?",
    re.I,
)


# A message that is only an hour ("6:15", "like 5?", "7ish").
_BARE_HOUR = re.compile(r"\W*(?:at |around |like |maybe |about )?\d{1,2}(?:[:.h][0-5]\d)?(?: ?ish)?\W*", re.I)


_ONE_WAY = re.compile(r"\b(?:later|earlier|sooner|m[aá]s tarde|m[aá]s temprano|plus tard|plus t[oô]t)\b", re.I)
# A day-part asked for becomes a proposal of the middle of its usual window.
_DAYPART_TIMES = {"morning": "08:00", "afternoon": "15:00", "evening": "19:00", "night": "21:00"}


class ScheduleRequests:
    """The schedule side of ``FeedbackRules`` (its ``turn``; replies in the participant's language)."""

    turn: Turn

    @property
    def lang(self) -> Language:
        """The conversation's language (rules/language.py: a "👍", a "2" or a "si" in a Spanish
        conversation is answered in Spanish), else the feedback reader's reading of the message."""
        conversation = self.turn.language  # the message itself first, when it tells clearly
        if conversation in ("es", "fr"):
            return "es" if conversation == "es" else "fr"
        if self.turn.own_language == "en" and tells_no_language(self.turn.user):
            return "en"  # "ya", "si", "dale" in a conversation written in English: no switch to Spanish
        return language(self.turn.user)

    def _at(self, hhmm: str) -> str:
        """A time as the participant's people write it in a statement: "8pm" (English, Spanish), "20h"."""
        return clock_in(hhmm, "fr") if self.lang == "fr" else clock.friendly_time(hhmm)

    def _change_time(self, new_time: str, *, answered: bool = False) -> tuple[_Step, str]:
        """Replace the schedule with one at ``new_time``. ``answered``: the time answers the coach's own
        question or proposal, whose half of the day it already has (not the replaced time's)."""
        turn = self.turn
        listed = next((c for c in turn.called(SCHEDULER, action="list") if c.ok), None)
        if listed is None:
            return [(SCHEDULER, {"action": "list"})], "feedback: time change; listing schedules"
        listed_times = re.findall(r"min before (\d{2}:\d{2})", listed.result or "")
        if listed_times and not answered:
            # "actually make it 9" after 8pm is 9pm; "6 is too soon … 7:15?" after 6pm is 7:15pm
            # the part of the day avoided is the reason, not the time ("en la noche tipo 9, al mediodía ando a mil")
            wanted = without_avoided_day_part(turn.user)
            new_time = time_for_change(wanted, listed_times[0]) or new_time
        new_time = away_from(new_time, avoided_half(turn.user), without_avoided_day_part(turn.user))
        if listed_times[:1] == [new_time] and not turn.called(SCHEDULER, action="create"):
            # the time it already comes at ("¿se puede cambiar la hora? a mediodía estoy liada"): which one is asked
            return say("ask_new_time", self.lang), "feedback: the time named is the current one; asking which"
        if not turn.called(SCHEDULER, action="create"):
            steps: list[tuple[str, dict[str, Any]]] = [
                (SCHEDULER, {"action": "delete", "schedule_id": schedule_id})
                for schedule_id in self._schedule_ids(listed.result or "")
            ]
            steps.append((SCHEDULER, {"action": "create", "type": "fixed", "fixed_time": new_time}))
            if SAVE in turn.tools:
                steps.append((SAVE, {"preferred_time": new_time}))
            return steps, "feedback: replacing the schedule"
        created = next(c for c in turn.called(SCHEDULER, action="create"))
        when = re.search(r"arrives (today|tomorrow)", created.result or "")
        start = f" {say('start_' + when[1], self.lang)}" if when else ""
        return say("moved", self.lang, time=self._at(new_time), start=start), "feedback: time changed"

    @staticmethod
    def _schedule_ids(result: str) -> list[str]:
        data = _result_json(result)
        if isinstance(data, dict) and isinstance(data.get("schedule_ids"), list):
            return [str(i) for i in data["schedule_ids"]]
        return re.findall(r"internal id: ([^\s)]+)\)", result)

    def _shift(self, minutes: int) -> tuple[_Step, str]:
        """The listed time moved by ``minutes``; with nothing listed, the new time is asked for."""
        listed = self._listed()
        if listed is None:
            return [(SCHEDULER, {"action": "list"})], "feedback: a shift of the time; listing schedules"
        current = re.findall(r"min before (\d{2}):(\d{2})", listed.result or "")
        if not current:
            return say("ask_new_time", self.lang), "feedback: a shift with no schedule; asking the time"
        total = (int(current[0][0]) * 60 + int(current[0][1]) + minutes) % (24 * 60)
        return self._change_time(f"{total // 60:02d}:{total % 60:02d}", answered=True)

    def _pause(self, days: int | None, weekday: int | None = None) -> tuple[_Step, str]:
        if days is None and weekday is None:
            return say("pause_how_long", self.lang), "feedback: pause without a length"
        paused = [c for c in self.turn.called(SCHEDULER, action="pause") if c.ok]
        if not paused:
            # Until a weekday: the coach has no calendar, so it pauses for a week first; the result names
            # the weekday a week from now, which is today's, and the pause is then shortened to the day.
            return [(SCHEDULER, {"action": "pause", "days": days or 7})], f"feedback: pausing for {days or 7} day(s)"
        result = paused[-1].result or ""
        back = re.search(r"until (\w+) (\d{2} \w+)", result)
        if weekday is not None and len(paused) == 1 and back and back[1].lower() in _WEEKDAY_INDEX:
            wanted = days_until(weekday, _WEEKDAY_INDEX[back[1].lower()])
            if wanted != 7:
                return [(SCHEDULER, {"action": "pause", "days": wanted})], f"feedback: pausing until day {weekday}"
        lang = self.lang
        day = local_day(f"{back[1]} {back[2]}", lang) if back else ""
        until = say("pause_until", lang, day=day) if back else say("pause_for", lang, days=str(days))
        return say("paused", self.lang, back=until), "feedback: paused"

    def _resume(self) -> tuple[_Step, str]:
        resumed = next((c for c in self.turn.called(SCHEDULER, action="resume") if c.ok), None)
        if resumed is None:
            return [(SCHEDULER, {"action": "resume"})], "feedback: resuming"
        said = self.turn.user
        asked = (
            clock.parse_clock_time(when_wanted(said)) or clock.parse_clock_time(without_avoided_day_part(said))
            if asks_for_another_time(said)
            else None
        )
        if asked:  # "ya regresé. ahora mándalo a las 8 de la noche": resumed, then moved
            return self._change_time(asked)
        times = re.findall(r"min before (\d{2}:\d{2})", resumed.result or "")
        if "Nothing is paused" in (resumed.result or ""):
            return say("not_paused", self.lang), "feedback: not paused"
        at = f" {say('every_day', self.lang, time=self._at(times[0]))}" if times else ""
        return say("resumed", self.lang, at=at), "feedback: resumed"

    def _limit(self) -> tuple[_Step, str]:
        """ "no more texts after 9pm": answered, nothing moved; when the prompt already comes inside the
        limit that is said, otherwise the new time is asked for."""
        listed = self._listed()
        if listed is None:
            return [(SCHEDULER, {"action": "list"})], "feedback: a limit on when; listing schedules"
        current = re.findall(r"min before (\d{2}:\d{2})", listed.result or "")
        bound = _LIMIT_BOUND.search(self.turn.user)  # "después de las 10": the hour after the limit word
        limit = clock.parse_clock_time(self.turn.user) or clock.parse_asked_time(
            f"at {bound[1]}{bound[2] or ''}" if bound else self.turn.user
        )
        if current and limit:  # "nothing after 10" with an evening prompt is 10pm
            limit = clock.same_half_of_day(limit, current[0], self.turn.user) or limit
        after = re.search(r"\b(?:after|past|later than|despu[eé]s de|apr[eè]s)\b", self.turn.user, re.I)
        if current and limit and (current[0] < limit if after else current[0] > limit):
            return (
                say("limit_kept", self.lang, time=self._at(current[0])),
                "feedback: a limit the schedule already keeps",
            )
        phrase = self._schedule_phrase()
        now = say("limit_now", self.lang, when=phrase) if phrase else ""
        return say("limit_ask", self.lang, now=now), "feedback: a limit on when; asking for the time"

    def _days_limit(self) -> tuple[_Step, str]:
        """ "not on weekends": the daily schedule cannot skip days, so that is said (with the listed time)
        and a pause offered as the way; nothing is deleted or moved."""
        if SCHEDULER in self.turn.tools and self._listed() is None:
            return [(SCHEDULER, {"action": "list"})], "feedback: a limit on days; listing schedules"
        now = self._listed_time()
        at = f" ({clock.friendly_time(now)})" if now else ""
        return say("days_limit", self.lang, at=at), "feedback: a limit on days; explained, nothing changed"

    def _plan(self) -> _Step:
        """The plan as the stored schedule says it (listed, not remembered from earlier replies: a
        time changed since, or a first prompt whose moment passed, is never claimed)."""
        if SCHEDULER in self.turn.tools and self._listed() is None:
            return [(SCHEDULER, {"action": "list"})]
        when = self._schedule_phrase()
        if when is None:
            return say("plan_none", self.lang)
        return say("plan", self.lang, when=when)

    def _schedule_phrase(self) -> str | None:
        """ "every day around 8am" from the listed schedule; ``None`` when none is listed (or no list)."""
        listed = self._listed()
        if listed is None:
            return "every day at the time we picked" if SCHEDULER not in self.turn.tools else None
        paused = re.search(r"paused until (\d{4}-\d{2}-\d{2})", listed.result or "")
        if paused:  # "(then: daily at … min before 19:00)": the time it comes back at, not a prompt that comes
            return say("after_pause", self.lang, until=paused[1])
        now = self._listed_time()
        windows = re.findall(r"for the (\d{2}:\d{2})-(\d{2}:\d{2}) window", listed.result or "")
        if now:
            return say("every_day", self.lang, time=self._at(now))
        if windows:
            start, end = (self._at(t) for t in windows[0])
            return say("every_day_window", self.lang, start=start, end=end)
        return None

    def _limit_or_absence(self, reading: MessageReading) -> tuple[_Step, str] | None:
        """A limit on when ("nothing after 9pm", "not on weekends"), which moves nothing; being away ("I'm
        away this weekend"), which gets a pause offered; a yes to that offer, which pauses for what it said."""
        text, last = self.turn.user, self.turn.last_assistant
        if reading.request == "limit" or limits_the_hours(text):
            return self._limit()
        if limits_the_days(text):  # "not on weekends": explained, the daily schedule kept
            return self._days_limit()
        if reading.kind == "yes" and any(offer in last for offer in OFFERED_PAUSE):
            offered = pause_request(last)  # the coach's own offer names the length it meant
            if offered is not None:
                return self._pause(offered.days, offered.weekday)
        away = away_for(text)
        if away is not None:  # nothing paused unasked
            length = pause_length(self.lang, away.days, away.weekday)
            return say("offer_pause", self.lang, length=length), "feedback: away; a pause offered"
        return None

    def _corrected_time(self, text: str) -> str | None:
        """The time a correction gives ("no wait, 9:45", "mejor 6:20 pm, a las 6 voy en el metro"), apart from
        the one the prompt comes at now, in the half of the day it comes in unless the correction says."""
        now = self._listed_time()
        time = requested_time(text, now) or clock.parse_asked_time(text)
        return clock.same_half_of_day(time, now, text) if time and now else time

    def _near_now(self, time: str) -> str:
        """A bare hour, with no proposal to take its half from, in the half of the day the prompt comes in now
        ("6:15" to move a 7am prompt is 6:15am): not before 6am, and never the time it already comes at."""
        now = self._listed_time()
        near = clock.same_half_of_day(time, now, "") if now and _BARE_HOUR.fullmatch(self.turn.user) else None
        return near if near and "06:00" <= near != now else time

    def _listed_time(self) -> str | None:
        """The time the daily prompt comes at, once listed ("HH:MM"); ``None`` before the list."""
        listed = self._listed()
        found = re.search(r"min before (\d{2}:\d{2})", listed.result or "") if listed else None
        return found[1] if found else None

    def _listed(self) -> LoopCall | None:
        return next((c for c in self.turn.called(SCHEDULER, action="list") if c.ok), None)

    def _when(self) -> tuple[_Step, str]:
        listed = self._listed()
        if listed is None:
            return [(SCHEDULER, {"action": "list"})], "feedback: when do prompts come; listing schedules"
        now = self._listed_time()
        windows = re.findall(r"for the (\d{2}:\d{2})-(\d{2}:\d{2}) window", listed.result or "")
        if now:
            when = say("every_day", self.lang, time=self._at(now))
            return say("when", self.lang, when=when), "feedback: schedule listed"
        if windows:
            start, end = (self._at(t) for t in windows[0])
            when = say("every_day_window", self.lang, start=start, end=end)
            return say("when", self.lang, when=when), "feedback: window listed"
        return say("when_none", self.lang), "feedback: none"

    def _stop(self) -> tuple[_Step, str]:
        listed = self._listed()
        if listed is None:
            return [(SCHEDULER, {"action": "list"})], "feedback: stop requested; listing schedules"
        ids = self._schedule_ids(listed.result or "")
        if ids and not self.turn.called(SCHEDULER, action="delete"):
            return [(SCHEDULER, {"action": "delete", "schedule_id": i}) for i in ids], "feedback: deleting schedules"
        return say("stopped", self.lang), "feedback: schedules stopped"

    @property
    def delivered(self) -> int:
        """Daily prompts delivered so far (the context block's "prompts completed: X of Y delivered")."""
        match = re.search(r"of (\d+) delivered", self.turn.context.get("prompts completed", ""))
        return int(match[1]) if match else 0

    def _save_then(self, args: dict[str, str], reply: str, why: str, *, record: bool = False) -> tuple[_Step, str]:
        calls: list[tuple[str, dict[str, Any]]] = []
        if args and not self.turn.called(SAVE) and SAVE in self.turn.tools:
            calls.append((SAVE, args))
        if record and not self.turn.called(RECORD) and RECORD in self.turn.tools:
            calls.append((RECORD, {"done": True}))  # counted once per prompt by the engine's one recorder
        return (calls, why) if calls else (reply, why)

    def _request(self, reading: MessageReading) -> tuple[_Step, str] | None:
        turn, text = self.turn, self.turn.user
        if limits_the_hours(text) and reading.request != "stop":  # "arrête … le soir": when, not a pause
            return self._limit()
        pause = pause_request(text)
        if reading.request == "pause" or (pause is not None and reading.request != "resume"):
            return self._pause(reading.days or (pause.days if pause else None), pause.weekday if pause else None)
        if reading.request == "resume" or resumes(text):
            return self._resume()
        if reading.request == "stop":
            return self._stop()
        limited = self._limit_or_absence(reading)
        if limited is not None:
            return limited
        shift = shift_minutes(text)
        if shift is not None and not says_done(text):  # "an hour later", "30 min earlier"
            return self._shift(shift)
        proposed = proposed_time(turn.last_assistant) or (
            suggestion(turn.last_assistant) if SUGGEST_LEAD in turn.last_assistant else ""
        )
        text = without_avoided_day_part(text)  # "after dinner, like 8? lunch is a zoo": the lunch is the reason
        text = without_a_deadline(text)  # "could we do earlier? im out the door by 7": 7 bounds it, it is not it
        if proposed and reading.kind == "yes":
            time = clock.normalise_time(proposed)
            return self._change_time(time, answered=True) if time else None
        # "Anything you'd like to change?", "I'll pick: 8am", "Done — … around 6:30pm": a time alone is the new one
        open_to = _open_to_a_new_time(turn.last_assistant)
        if open_to and corrects_the_time(text) and (corrected := self._corrected_time(text)):
            return self._change_time(corrected, answered=True)  # "no wait, 9:45": a correction, never a miss
        offered = open_to and only_a_time(text)
        asked = (
            offered
            or asked_for_a_time(turn.last_assistant)
            or any(question in turn.last_assistant for question in in_every_language("stop_which"))
        )
        if asked and reading.kind in ("fact", "request") and (time := clock.parse_asked_time(text)):
            # another time in answer to a proposal keeps its half of the day ("how about 3pm?" "a las 6")
            before = clock.normalise_time(proposed) if proposed else None
            # a time alone after the coach's own (picked, just moved) keeps that time's half of the day
            before = before or (self._listed_time() if offered else None)
            kept = clock.same_half_of_day(time, before, text) if before else self._near_now(time)
            return self._change_time(kept or time, answered=True)
        wanted = when_wanted(text)  # "a mediodía estoy muy liada": noon is left, never moved to
        said = clock.parse_clock_time(wanted)
        if asked and said is None and (routine_time := clock.propose_time(wanted)):  # "después del curro"
            return say(
                "propose", self.lang, time=clock.friendly_time(routine_time)
            ), "feedback: a routine's time proposed"
        # A verb of change whose object is the prompt or its time ("tu peux le décaler à 21h ?", "a las 7
        # mejor"); a verb whose object is a place ("pasar a la farmacia") asks for nothing.
        # "can I change the time?" asks what is possible: answered, nothing moves yet.
        change = (
            (reading.topic != "change_time_later" or said is not None)  # "¿se puede cambiar la hora a las 6?"
            and not asks_when(text)
            and (
                asks_for_another_time(text)
                or proposes_a_time(text)  # "can we try 12:30?"
                or (reading.request == "change_time" and not runs_an_errand(text))
            )
        )
        # "7 works better", "9 is too late … 8?"
        said = said or (clock.parse_asked_time(wanted) or requested_time(wanted) if change else None)
        if change and said and (not says_done(text) or asks_for_another_time(text)):
            return self._change_time(said)
        preference = time_preference(text)
        if said or (not change and preference is None):
            return None
        # A day-part asked for is a proposal to confirm; one refused, or none, asks which time.
        part_time = _DAYPART_TIMES[preference.wanted] if preference and preference.wanted else None
        vague = part_time if preference else clock.propose_time(text) or clock.parse_vague_time(text, loose=True)
        if preference is None and _ONE_WAY.search(text):
            vague = None  # "más tarde porfa": later than now, which no day-part says; the time is asked for
        refusing = next((c for c in re.split(r"(?<=[.?!;])\s+", text) if (p := time_preference(c)) and p.refused), text)
        barrier = reason_clause(text) or (
            refusing if says_not_done(text) or (preference and preference.refused) else ""
        )
        args = {"last_barrier": _words(_clean(barrier), 15)} if barrier and self.delivered else {}
        if vague:
            reply = say("propose", self.lang, time=clock.friendly_time(vague))
            return self._save_then(args, reply, "feedback: a new time of day proposed")
        return self._save_then(args, say("ask_new_time", self.lang), "feedback: asking for the new time")


# What may stand beside a time given alone: a please, a "then", a yes ("10pm pls", "a las 10 entonces").
_BESIDE_A_TIME = re.compile(
    r"(?:pls|plz|please|porfa|por favor|stp|svp|then|instead|ok|okay|yes|yeah|si|sí|entonces|mejor|better|"
    r"ugh|fine|alright|sure|well|hmm+|so|pues|bueno|vale|dale|va|mm+|"
    r"works|thanks|thx|gracias|merci|plut[oô]t|lol|maybe|like|around|ish)",
    re.I,
)


def _open_to_a_new_time(last: str) -> bool:
    """The coach's last words leave the time open to another: "Anything you'd like to change — the time, …?",
    the time it picked itself ("I'll pick: 8am …"), or the time it just moved to ("Done — … around 6:30pm")."""
    leads = [template.split("{")[0] for key in ("chosen", "moved") for template in in_every_language(key)]
    return last in in_every_language("shared") or any(last.startswith(lead) for lead in leads)


# A correction's opening: "no wait", "hmm no sorry, leave it at 7", "no espera, mejor", "non, plutôt".
_CORRECTION_LEAD = re.compile(
    r"^\W*(?:no+|nah|nope|wait|actually|sorry|hm+|oops|ugh|oh|espera|perd[oó]n|mejor|en realidad|non|attends|"
    r"plut[oô]t|leave it|keep it|d[eé]jalo)\b",
    re.I,
)


def corrects_the_time(text: str) -> bool:
    """A correction with a time in it, said right after the coach set one ("no wait, 9:45")."""
    return bool(_CORRECTION_LEAD.match(text)) and re.search(r"\d", text) is not None


def only_a_time(text: str) -> bool:
    """ "10pm", "a las 10 porfa", "12:30 then": a time, with nothing beside it but a please or a "then"."""
    beside = re.findall(r"[^\W\d_]+", clock.without_times(text))
    return clock.parse_asked_time(text) is not None and all(_BESIDE_A_TIME.fullmatch(word) for word in beside)
