"""Coach-written SMS held to one segment (docs/behaviour.md#sms).

On SMS every segment is billed, so what the coach writes is held to one GSM-7 segment:

- the daily prompt, with its question (and the day's intensity poll when it rides along), always:
  the generator is told the room left by the questions (``daily_prompt_room``); a longer answer is
  rewritten by the model with the limit once; if that is still too long the delivery sends its own
  fallback text, which fits (``flow/prompt_generator.py``, ``flow/delivery.py``);
- a coach reply, unless the participant asked for more (``promptpipe.rules.sms.asks_for_more``): the model
  is told the limit (``SMS_REPLY_GUIDE``), and a longer reply is rewritten once. A rewrite that is
  still longer is not cut: the shorter of the two is sent whole.

Nothing is ever cut mid-word here: a text is either kept, rewritten by the model, or replaced.
WhatsApp and the local channel are untouched (``CoreConfig.sms_channel`` is off).
"""

from __future__ import annotations

import logging

from promptpipe.errors import LLMError
from promptpipe.flow import questions, routing
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.pipeline import LLMCallRecord
from promptpipe.flow.session import ConversationSession
from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse
from promptpipe.models.messaging import Question
from promptpipe.rules.sms import SINGLE_GSM7, asks_for_more, count_segments, normalize_gsm7, prepare_sms

logger = logging.getLogger(__name__)

REWRITE_PURPOSE = "sms_rewrite"
SMS_REPLY_GUIDE = (
    "\n<SMS>\nThis reply is sent as one SMS: at most 160 characters of plain text (no emoji, straight "
    "quotes, no long dashes), one idea and at most one question.\n</SMS>\n"
)


def daily_prompt_room(question: Question, follow_up: Question | None) -> int:
    """The characters left for the prompt itself in one GSM-7 segment once ``question`` (and
    ``follow_up``) are appended as the SMS messenger renders them."""
    questions_only = questions.with_question_text("x", question, follow_up)
    return SINGLE_GSM7 - (count_segments(questions_only).units - 1)


def fits_room(text: str, room: int) -> bool:
    """Whether ``text`` (as the SMS messenger will send it, emoji dropped) is GSM-7 and at most ``room``
    septets."""
    count = count_segments(normalize_gsm7(text))
    return count.encoding == "GSM-7" and count.units <= room


def rewrite_request(
    deps: FlowDeps, session: ConversationSession, text: str, limit: int, *, what: str, route: str
) -> ChatRequest:
    """Ask the model to say ``text`` again in at most ``limit`` characters (the participant's route
    for ``route``, the purpose whose text it is)."""
    system = (
        f"Rewrite the {what} below so that it fits one SMS: at most {limit} characters, plain GSM-7 text "
        "(no emoji, straight quotes, no long dashes). Keep its meaning, its language and any question it "
        "asks; use whole words, never cut a word. Output only the rewritten text."
    )
    request = ChatRequest(
        purpose=REWRITE_PURPOSE,
        messages=[ChatMessage(role="system", content=system), ChatMessage(role="user", content=text)],
    )
    return routing.routed(request, routing.resolve(deps.config, REWRITE_PURPOSE, session.data.raw, turn=route))


def call_record(response: ChatResponse) -> LLMCallRecord:
    return LLMCallRecord.of(response, purpose=REWRITE_PURPOSE, stage=REWRITE_PURPOSE)


def reply_guide(user_text: str) -> str:
    """The SMS length instruction for a reply to ``user_text`` ("" when the participant asked for more)."""
    return "" if asks_for_more(user_text) else SMS_REPLY_GUIDE


def hold_reply_to_one_segment(
    deps: FlowDeps, session: ConversationSession, user_text: str, reply: str, *, route: str, allow_emoji: bool
) -> tuple[str, list[LLMCallRecord]]:
    """``reply`` as it should go by SMS: itself when it is one segment or the participant asked for
    more; else the model's rewrite within one segment — or, when the rewrite is still longer, the
    shorter of the two, whole. Returns the text and the model calls made."""
    if not reply.strip() or asks_for_more(user_text):
        return reply, []
    billed = prepare_sms(reply, allow_emoji=allow_emoji).segments
    if billed <= 1:
        return reply, []
    try:
        response = deps.llm.complete(
            rewrite_request(deps, session, reply, SINGLE_GSM7, what="coach's SMS reply", route=route)
        )
    except LLMError as exc:
        logger.warning("SMS reply rewrite failed; sending the reply as written", extra={"error": str(exc)})
        return reply, []
    rewritten = (response.content or "").strip()
    rewritten_billed = prepare_sms(rewritten, allow_emoji=allow_emoji).segments if rewritten else billed + 1
    if rewritten_billed > 1:
        logger.info("SMS reply rewrite still over one segment", extra={"segments": rewritten_billed})
    return (rewritten if rewritten_billed < billed else reply), [call_record(response)]
