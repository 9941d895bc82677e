"""An offline, deterministic, rule-based coach that implements the ``LLM`` port (docs/architecture.md#llm).

It lets the demo and the end-to-end tests run without an OpenAI key while exercising the real
engine: it answers through the normal tool loop, calling ``save_user_profile``,
``generate_habit_prompt``, ``scheduler`` and ``transition_state`` exactly as a model would, and it
never touches state itself. Every response is labelled ``"offline-coach (rule-based, no LLM)"``.

It is stateless: each call derives what to do from the request alone — the purpose, the context
block's ``- field: value`` lines, the history, the latest user message and the tool calls and
results already made in this loop — so the same request always gets the same answer.

The package, by intent: ``turn`` reads the request; ``coach`` is the port implementation, which
hands the turn to the rules of its purpose (``intake``, ``feedback``) or to ``habit_prompt`` (the
prompt generator); ``intake_answers``, ``feedback_answers`` and ``times`` read what people write;
``text`` holds the constants and text helpers they share.
"""

from __future__ import annotations

from promptpipe.adapters.offline_coach.coach import OfflineCoach
from promptpipe.adapters.offline_coach.faq import StudyFacts, answer_faq
from promptpipe.adapters.offline_coach.feedback import FeedbackRules
from promptpipe.adapters.offline_coach.feedback_answers import classify_barrier
from promptpipe.adapters.offline_coach.habit_prompt import build_habit_prompt
from promptpipe.adapters.offline_coach.intake import IntakeRules
from promptpipe.adapters.offline_coach.intake_answers import (
    parse_anchor,
    parse_domain,
    parse_intake_message,
    parse_motivation,
)
from promptpipe.adapters.offline_coach.text import HOLDING_REPLY, LABEL
from promptpipe.adapters.offline_coach.times import friendly_time, normalise_time, parse_clock_time, parse_vague_time
from promptpipe.adapters.offline_coach.turn import LoopCall, Turn, read_turn

__all__ = [
    "HOLDING_REPLY",
    "LABEL",
    "FeedbackRules",
    "IntakeRules",
    "LoopCall",
    "OfflineCoach",
    "StudyFacts",
    "Turn",
    "answer_faq",
    "build_habit_prompt",
    "classify_barrier",
    "friendly_time",
    "normalise_time",
    "parse_anchor",
    "parse_clock_time",
    "parse_domain",
    "parse_intake_message",
    "parse_motivation",
    "parse_vague_time",
    "read_turn",
]
