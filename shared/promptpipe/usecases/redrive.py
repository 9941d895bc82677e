"""The unanswered-turns sweep (docs/reliability.md, "The record under faults"): a turn the model could
not answer waits in the inbound dead-letter queue, its message marked ``not answered: model
unavailable`` in the transcript (``usecases/inbound_record.py``). On the stack's schedule the worker
runs this: when turns wait, one small call asks the model whether it answers again; if it does,
the turns go back on the inbound queue, each on its participant's line, and are answered as any
turn (their messages are already in the record: nothing is written twice).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from promptpipe.errors import LLMError
from promptpipe.models.llm import ChatMessage, ChatRequest
from promptpipe.usecases.context import AppContext

logger = logging.getLogger(__name__)

PROBE_TEXT = "Reply with OK."


@dataclass
class RedriveResult:
    waiting: int = 0
    model_answers: bool | None = None  # None: not asked (nothing waiting)
    redriven: int = 0


def redrive_unanswered(app: AppContext, limit: int) -> RedriveResult:
    dead_letters = app.dead_letters
    result = RedriveResult()
    result.waiting = dead_letters.waiting()
    if result.waiting == 0:
        return result  # nothing to do: no model call
    try:
        # Built here, not at import: the worker's cold start builds no model it does not need.
        app.deps.llm.complete(
            ChatRequest(purpose="probe", messages=[ChatMessage(role="user", content=PROBE_TEXT)], max_tokens=5)
        )
    except LLMError as exc:
        result.model_answers = False
        logger.warning("model still unavailable; the unanswered turns wait", extra={"error": str(exc)[:200]})
        return result
    result.model_answers = True
    result.redriven = dead_letters.redrive(limit)
    logger.info("unanswered turns redriven", extra={"redriven": result.redriven, "waiting": result.waiting})
    return result
