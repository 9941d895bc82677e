"""SMS held to one segment (docs/behaviour.md#sms): the daily prompt with its combined question line,
replies to that line, the generator's limit and its rewrite, coach replies and "asked for more" —
through the real delivery and turn paths (memory harness), and WhatsApp left as it was."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from promptpipe.adapters.offline_coach.habit_prompt import build_habit_prompt
from promptpipe.adapters.offline_coach.rewrite import rewrite_within
from promptpipe.errors import LLMError
from promptpipe.flow import questions
from promptpipe.flow.delivery import FALLBACK_PROMPT
from promptpipe.flow.sms_fit import REWRITE_PURPOSE, SMS_REPLY_GUIDE, daily_prompt_room, fits_room
from promptpipe.models.llm import ChatRequest, ChatResponse
from promptpipe.models.llm_routes import LLMRoute
from promptpipe.models.messaging import OutboundKind, Question
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import DataKey
from promptpipe.rules.sms import asks_for_more, count_segments, fold_to_gsm7, prepare_sms
from promptpipe.settings import MessagingProvider, Settings
from tests.support import MemoryHarness
from tests.unit.test_delivery_and_timers import (
    MONDAY,
    StubLLM,
    at_local,
    deliver,
    given,
    profile,
    reply,
    sent,
    state,
)

SMS = Settings(messaging_provider=MessagingProvider.TWILIO, twilio_channel="sms")
WHATSAPP = Settings(messaging_provider=MessagingProvider.TWILIO, twilio_channel="whatsapp")
SHORT_PROMPT = "After coffee, stretch for one minute - it wakes you up."
LONG_PROMPT = (
    "After your morning coffee, take one full minute to stretch your arms, shoulders and back slowly \u2014 "
    "it loosens you up and helps you feel more energetic for the rest of the day. Would that feel doable?"
)
LONG_REPLY = (
    "That's a really thoughtful answer, thank you for sharing it with me. Building a habit takes time "
    "and small steps add up. Let's keep it simple for now and see how tomorrow goes. What time suits you?"
)
SHORT_REPLY = "Thanks! What time suits you?"


class SmsLLM(StubLLM):
    """Answers with the texts given: the generator's, the conversation's reply, and each rewrite."""

    def __init__(
        self, *, prompt: str = SHORT_PROMPT, reply: str = SHORT_REPLY, rewrites: list[str] | None = None
    ) -> None:
        super().__init__()
        self.prompt, self.reply, self.rewrites = prompt, reply, list(rewrites or [])
        self.during_generation: Callable[[], None] = lambda: None

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request.model_copy(deep=True))
        if request.purpose == "prompt_generator":
            self.during_generation()
            return ChatResponse(content=self.prompt)
        if request.purpose == REWRITE_PURPOSE:
            if not self.rewrites:
                raise LLMError("no rewrite scripted")
            return ChatResponse(content=self.rewrites.pop(0))
        return ChatResponse(content=self.reply)

    def of(self, purpose: str) -> list[ChatRequest]:
        return [r for r in self.requests if r.purpose == purpose]


def fits_one_gsm7_segment(text: str) -> bool:
    """Whether ``text`` goes as one GSM-7 segment: GSM-7 only and at most 160 septets."""
    count = count_segments(text)
    return count.encoding == "GSM-7" and count.segments <= 1


def marks(h: MemoryHarness, p: ConversationParticipant) -> dict[str, str]:
    return json.loads(state(h, p).get(DataKey.ANSWERED_QUESTIONS.value) or "{}")


# -- 1. the poll in the daily prompt's message ----------------------------------------------------


def test_on_sms_the_prompt_its_done_question_and_the_poll_go_as_one_gsm7_segment() -> None:
    h, p, daily = given(settings=SMS, llm=SmsLLM())
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    [prompt] = sent(h, p)  # no intensity poll of its own
    assert prompt.kind is OutboundKind.DAILY_PROMPT
    assert prompt.body_text == f"{SHORT_PROMPT}\nDid you do it? 1 Done, 2 Next time. Intensity: 3 less, 4 same, 5 more"
    assert fits_one_gsm7_segment(prompt.body_text) and prepare_sms(prompt.body_text).segments == 1
    sent_at = state(h, p)[DataKey.LAST_PROMPT_SENT_AT.value]
    assert marks(h, p) == {"intensity_asked": sent_at, questions.COMBINED_MARK: sent_at}


def test_on_whatsapp_the_poll_stays_a_message_of_its_own_and_the_prompt_is_not_held() -> None:
    llm = SmsLLM(prompt=LONG_PROMPT)
    h, p, daily = given(settings=WHATSAPP, llm=llm)
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    assert [m.kind for m in sent(h, p)] == [OutboundKind.DAILY_PROMPT, OutboundKind.INTENSITY_POLL]
    assert sent(h, p)[0].body == LONG_PROMPT  # as the model wrote it: no limit, no rewrite
    assert llm.of(REWRITE_PURPOSE) == []
    assert "characters" not in (llm.of("prompt_generator")[0].messages[-1].content or "")
    assert questions.COMBINED_MARK not in marks(h, p)


@pytest.mark.parametrize(
    ("typed", "done", "next_time", "intensity", "intensity_answered"),
    [
        ("done, 3", True, False, "low", True),
        ("yes 4", True, False, "normal", True),
        ("Done and 5", True, False, "high", True),
        ("4", False, False, "normal", True),
        ("done", True, False, "normal", False),
        ("not today", False, True, "normal", False),
        ("2, less", False, True, "low", True),
    ],
)
def test_a_reply_to_the_combined_line_answers_both_questions(
    typed: str, done: bool, next_time: bool, intensity: str, intensity_answered: bool
) -> None:
    llm = SmsLLM()
    h, p, daily = given(settings=SMS, llm=llm)
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    sent_at = state(h, p)[DataKey.LAST_PROMPT_SENT_AT.value]
    reply(h, p, typed, at=at_local(MONDAY, "10:00"))
    # The success count, the intensity and the answered marks say what the reply meant
    assert profile(h, p)["success_count"] == (1 if done else 0)
    assert profile(h, p)["intensity"] == intensity
    assert (marks(h, p).get("done") == sent_at) is (done or next_time)
    assert (marks(h, p).get("intensity") == sent_at) is intensity_answered
    # and the model was told the canonical answers, not the shorthand
    told = llm.requests[-1].messages[-1].content or ""
    assert ("A: Done" in told) is done and ("A: Next time" in told) is next_time


def test_combined_numbers_are_not_read_when_the_poll_went_on_its_own() -> None:
    h, p, daily = given(settings=WHATSAPP, llm=SmsLLM())
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    reply(h, p, "yes 4", at=at_local(MONDAY, "10:00"))
    assert profile(h, p)["success_count"] == 0 and "intensity" not in marks(h, p)


def test_the_merged_poll_is_decided_at_send_time_from_the_committed_state() -> None:
    # Given an SMS participant whose poll is due when the prompt is generated
    llm = SmsLLM()
    h, p, daily = given(settings=SMS, llm=llm)
    today = MONDAY.isoformat()

    def another_delivery_commits_todays_poll() -> None:
        session = h.app.sessions.open(p.id, "concurrent-delivery")
        session.apply("poll", lambda op: op.data.set(DataKey.LAST_INTENSITY_PROMPT_DATE, today))
        session.commit()

    # When another delivery commits today's poll while the model is writing this prompt
    llm.during_generation = another_delivery_commits_todays_poll
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    # Then the prompt goes with the Done question only: no poll inside it, none on its own
    [prompt] = sent(h, p)
    assert prompt.follow_up is None and "Intensity" not in prompt.body_text
    assert "Did you do it? Reply 1 for Done or 2 for Next time." in prompt.body_text
    assert questions.COMBINED_MARK not in marks(h, p)


# -- 2. the daily prompt held to one segment -------------------------------------------------------


def test_the_generator_is_told_the_room_left_by_the_questions() -> None:
    llm = SmsLLM()
    h, _, daily = given(settings=SMS, llm=llm)
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    room = daily_prompt_room(questions.DONE_QUESTION, questions.intensity_question("normal"))
    assert f"at most {room} characters" in (llm.of("prompt_generator")[0].messages[-1].content or "")


def test_a_prompt_too_long_for_one_segment_is_rewritten_by_the_model_with_the_limit() -> None:
    llm = SmsLLM(prompt=LONG_PROMPT, rewrites=["After coffee, stretch your back for a minute - it wakes you up."])
    h, p, daily = given(settings=SMS, llm=llm)
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    [rewrite] = llm.of(REWRITE_PURPOSE)
    room = daily_prompt_room(questions.DONE_QUESTION, questions.intensity_question("normal"))
    assert f"at most {room} characters" in (rewrite.messages[0].content or "")
    assert rewrite.messages[1].content == LONG_PROMPT.replace("\u2014", "-")
    [prompt] = sent(h, p)
    assert prompt.body == "After coffee, stretch your back for a minute - it wakes you up."
    assert fits_one_gsm7_segment(prompt.body_text)
    assert state(h, p)[DataKey.LAST_HABIT_PROMPT.value] == prompt.body


@pytest.mark.parametrize("rewrites", [[LONG_PROMPT], []], ids=["rewrite-still-long", "rewrite-fails"])
def test_a_prompt_that_cannot_be_fitted_is_replaced_by_the_fallback_which_fits(rewrites: list[str]) -> None:
    llm = SmsLLM(prompt=LONG_PROMPT, rewrites=rewrites)
    h, p, daily = given(settings=SMS, llm=llm)
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    [prompt] = sent(h, p)
    assert prompt.body == FALLBACK_PROMPT and prompt.follow_up is not None
    assert fits_one_gsm7_segment(prompt.body_text)


@pytest.mark.parametrize(
    ("written", "sent_as"),
    [
        ("Después de cenar, camina 5 minutos: ¡tú puedes!", "Después de cenar, camina 5 minutos: ¡tu puedes!"),
        ("Depois do almoço, faça uma caminhada à tarde.", "Depois do almoco, faca uma caminhada à tarde."),
        ("Après le café, étire-toi une minute.", "Après le café, étire-toi une minute."),
        ("Nach dem Essen: 5 Minuten gehen, schön!", "Nach dem Essen: 5 Minuten gehen, schön!"),
        ("Idź na spacer po obiedzie.", "Idz na spacer po obiedzie."),
        ("Прогулка 5 минут после ужина.", "Прогулка 5 минут после ужина."),
    ],
)
def test_fold_to_gsm7_keeps_gsm7_letters_and_folds_only_accents_it_lacks(written: str, sent_as: str) -> None:
    assert fold_to_gsm7(written) == sent_as


def test_a_spanish_prompt_goes_in_spanish_in_one_segment_not_as_the_fallback() -> None:
    llm = SmsLLM(prompt="Después de cenar, sal a caminar 5 minutos: ¡tú puedes, sí!")
    h, p, daily = given(settings=SMS, llm=llm)
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    [prompt] = sent(h, p)
    assert prompt.body == "Después de cenar, sal a caminar 5 minutos: ¡tu puedes, si!"
    assert llm.of(REWRITE_PURPOSE) == []  # folded, it fits: no second model call
    assert fits_one_gsm7_segment(prompt.body_text)


def test_a_prompt_in_a_script_gsm7_cannot_write_goes_in_that_script_not_as_the_fallback() -> None:
    russian = "Прогулка 5 минут после ужина."
    llm = SmsLLM(prompt=russian, rewrites=[russian])  # asked to rewrite, the model keeps the language
    h, p, daily = given(settings=SMS, llm=llm)
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    prompt = sent(h, p)[0]
    assert prompt.body == russian and prompt.body != FALLBACK_PROMPT
    assert len(llm.of(REWRITE_PURPOSE)) == 1


@pytest.mark.parametrize("level", questions.INTENSITY_LEVELS)
def test_the_fallback_prompt_fits_with_every_question_line(level: str) -> None:
    poll = questions.intensity_question(level)
    assert fits_room(FALLBACK_PROMPT, daily_prompt_room(questions.DONE_QUESTION, poll))
    assert fits_one_gsm7_segment(questions.with_question_text(FALLBACK_PROMPT, questions.DONE_QUESTION, poll))


@pytest.mark.parametrize("limit", [120, 90, 70, 50])
def test_the_offline_generator_writes_its_shorter_form_within_the_limit(limit: int) -> None:
    user = "\n".join(
        [
            "Habit domain: exercise",
            "Motivation: I want to feel more energetic every single day of the week",
            "Anchor routine: after I finish brushing my teeth in the morning",
            f"It is sent by SMS with its question after it: at most {limit} characters, plain text.",
        ]
    )
    text = build_habit_prompt(user, "Intensity: normal")
    assert len(text) <= limit and fits_one_gsm7_segment(text)
    assert text.endswith((".", "?"))  # a whole form, never a cut one


# -- 3. coach replies ------------------------------------------------------------------------------


def test_on_sms_a_long_reply_is_rewritten_within_one_segment() -> None:
    llm = SmsLLM(reply=LONG_REPLY, rewrites=["Thanks for sharing. Small steps add up. What time suits you?"])
    h, p, _ = given(settings=SMS, llm=llm)
    reply(h, p, "I think I can manage it most days", at=at_local(MONDAY, "10:00"))
    assert SMS_REPLY_GUIDE in [m.content for m in llm.requests[0].messages]  # the model is told the limit
    [rewrite] = llm.of(REWRITE_PURPOSE)
    assert "at most 160 characters" in (rewrite.messages[0].content or "") and rewrite.messages[1].content == LONG_REPLY
    [answer] = sent(h, p, OutboundKind.REPLY)
    assert answer.body == "Thanks for sharing. Small steps add up. What time suits you?"
    assert prepare_sms(answer.body_text).segments == 1


def test_a_rewrite_still_too_long_is_not_cut_the_shorter_whole_text_goes() -> None:
    longer = LONG_REPLY + " And one more thing to think about."
    llm = SmsLLM(reply=LONG_REPLY, rewrites=[longer])
    h, p, _ = given(settings=SMS, llm=llm)
    reply(h, p, "ok", at=at_local(MONDAY, "10:00"))
    assert [m.body for m in sent(h, p, OutboundKind.REPLY)] == [LONG_REPLY]


@pytest.mark.parametrize("typed", ["tell me more", "Why?", "Can you explain that?", "más detalles por favor"])
def test_on_sms_a_participant_who_asked_for_more_gets_the_long_reply(typed: str) -> None:
    llm = SmsLLM(reply=LONG_REPLY)
    h, p, _ = given(settings=SMS, llm=llm)
    reply(h, p, typed, at=at_local(MONDAY, "10:00"))
    assert [m.body for m in sent(h, p, OutboundKind.REPLY)] == [LONG_REPLY]
    assert llm.of(REWRITE_PURPOSE) == []
    assert SMS_REPLY_GUIDE not in [m.content for m in llm.requests[0].messages]


def test_on_whatsapp_replies_are_not_held_to_one_segment() -> None:
    llm = SmsLLM(reply=LONG_REPLY)
    h, p, _ = given(settings=WHATSAPP, llm=llm)
    reply(h, p, "I think I can manage it most days", at=at_local(MONDAY, "10:00"))
    assert [m.body for m in sent(h, p, OutboundKind.REPLY)] == [LONG_REPLY]
    assert llm.of(REWRITE_PURPOSE) == []
    assert all(SMS_REPLY_GUIDE not in (m.content or "") for m in llm.requests[0].messages)


@pytest.mark.parametrize(
    ("text", "more"),
    [
        ("tell me more", True),
        ("Can you explain?", True),
        ("why?", True),
        ("Why does that help", True),
        ("más detalles", True),
        ("mas detalles por favor", True),
        ("explícame", True),
        ("¿Por qué?", True),
        ("more info please", True),
        ("more", False),  # the intensity poll's word
        ("I want to do more", False),
        ("no more excuses", False),
        ("I don't know why I skipped", False),
        ("done, 3", False),
        ("", False),
    ],
)
def test_asked_for_more_is_an_explicit_request_in_the_message(text: str, more: bool) -> None:
    assert asks_for_more(text) is more


def test_the_offline_rewrite_keeps_whole_sentences_and_the_closing_question() -> None:
    text = rewrite_within(LONG_REPLY, "at most 160 characters")
    assert len(text) <= 160 and text.endswith("What time suits you?")
    assert set(re.findall(r"\w+", text)) <= set(re.findall(r"\w+", LONG_REPLY))  # no word cut or made up


def _read(text: str, outstanding: list[Question], *, combined: bool = True) -> list[tuple[str, str]]:
    return [(a.question_id, a.option_id) for a in questions.parse_answers(text, None, outstanding, combined=combined)]


DONE, NORMAL = questions.DONE_QUESTION, questions.intensity_question("normal")


@pytest.mark.parametrize(
    ("text", "outstanding", "read"),
    [
        ("3", [DONE, questions.intensity_question("low")], [("intensity", "keep")]),  # low: 3 same, 4 more
        ("4", [DONE, questions.intensity_question("low")], [("intensity", "increase")]),
        ("5", [DONE, questions.intensity_question("low")], []),  # not offered at low
        ("4", [DONE, questions.intensity_question("high")], [("intensity", "keep")]),  # high: 3 less, 4 same
        ("done 7", [DONE, NORMAL], []),
        ("yes", [DONE, NORMAL], []),  # may answer the prompt's own question: the model reads it
        ("no", [DONE, NORMAL], []),
        ("not yet", [DONE, NORMAL], [("done", "next_time")]),
        ("not today", [NORMAL], []),  # Done already answered
        ("done, 4", [NORMAL], [("intensity", "keep")]),  # only the open question is answered
        ("done, 4", [DONE], []),  # poll already answered: no reading of the 4
        ("4, done", [DONE, NORMAL], [("done", "done"), ("intensity", "keep")]),
        ("1 4", [DONE, NORMAL], [("done", "done"), ("intensity", "keep")]),
        ("not today, 3", [DONE, NORMAL], [("done", "next_time"), ("intensity", "decrease")]),
        ("next time more", [DONE, NORMAL], [("done", "next_time"), ("intensity", "increase")]),
        ("done and high", [DONE, NORMAL], [("done", "done"), ("intensity", "high")]),
        ("maybe 4", [DONE, NORMAL], []),
        ("", [DONE, NORMAL], []),
    ],
)
def test_parse_answers_reads_the_combined_line(
    text: str, outstanding: list[Question], read: list[tuple[str, str]]
) -> None:
    assert _read(text, outstanding) == read


@pytest.mark.parametrize("text", ["4", "yes 4", "done, 3", "not today"])
def test_without_the_combined_line_its_shorthand_is_not_an_answer(text: str) -> None:
    assert _read(text, [DONE, NORMAL], combined=False) == []
    assert questions.parse_answers(text, None, [DONE, NORMAL]) == []  # not combined unless said


def test_the_combined_line_numbers_only_the_options_offered() -> None:
    assert questions.render_combined_text(questions.intensity_question("low")).endswith("Intensity: 3 same, 4 more")
    assert questions.render_combined_text(questions.intensity_question("high")).endswith("Intensity: 3 less, 4 same")
    # a body is followed by the line on the next line (one newline: one character less than a paragraph)
    assert questions.with_question_text("  Go.  ", DONE, NORMAL).startswith(
        "  Go.\nDid you do it? 1 Done, 2 Next time."
    )
    # the Done question alone, or the poll alone, keeps its paragraph form
    assert questions.with_question_text("Go.", DONE) == "Go.\n\nDid you do it? Reply 1 for Done or 2 for Next time."
    assert questions.with_question_text("", NORMAL).startswith("How's the intensity? Reply LESS")


def test_both_answers_reach_the_model_one_canonical_text_a_line() -> None:
    llm = SmsLLM()
    h, p, daily = given(settings=SMS, llm=llm)
    deliver(h, daily, at=at_local(MONDAY, "09:20"))
    reply(h, p, "done, 3", at=at_local(MONDAY, "10:00"))
    assert llm.requests[-1].messages[-1].content == "Q: Did you do it? A: Done\nQ: How's the intensity? A: Decrease"


def test_the_reply_rewrite_is_routed_like_the_turns_module() -> None:
    routed = Settings(
        messaging_provider=MessagingProvider.TWILIO,
        twilio_channel="sms",
        llm_routes={"feedback": LLMRoute(model="gpt-4.1-mini")},
        genai_allowed_models=["gpt-4.1-mini"],
    )
    llm = SmsLLM(reply=LONG_REPLY, rewrites=["Thanks! What time suits you?"])
    h, p, _ = given(settings=routed, llm=llm)
    reply(h, p, "ok", at=at_local(MONDAY, "10:00"))
    [rewrite] = llm.of(REWRITE_PURPOSE)
    assert rewrite.model == "gpt-4.1-mini"


def test_a_reply_whose_emoji_the_tone_allows_is_counted_with_them() -> None:
    # An emoji the participant's tone allows makes the text UCS-2: 70 characters a segment
    emoji_reply = "Great job today, keep it going and see how it feels tomorrow morning! \U0001f389"
    llm = SmsLLM(reply=emoji_reply, rewrites=["Great job today! \U0001f389"])
    tone = {"tone_tags": ["emojis_ok"], "tone_scores": {"emojis_ok": 0.9}, "tone_version": 1}
    h, p, _ = given(settings=SMS, llm=llm, profile={"tone": tone})
    reply(h, p, "ok", at=at_local(MONDAY, "10:00"))
    assert len(llm.of(REWRITE_PURPOSE)) == 1  # 2 segments with the emoji kept: rewritten
    assert [m.body for m in sent(h, p, OutboundKind.REPLY)] == ["Great job today! \U0001f389"]
