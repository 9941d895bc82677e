"""The one place the day's outcome is recorded (docs/pipeline.md, "The day's outcome").

A "Done" counts once per delivered daily prompt (docs/behaviour.md#B-DONE-2), however it comes: a
tap on the poll's button, a typed "1" or "Done" (``conversation._answer_ops``), or a report in the
participant's own words that the model records with its tool (``flow/tools/outcome.py``) or the
offline coach reads (``rules/outcome.py``). Each goes through ``record_done``, guarded by the prompt it
answers (``DONE_COUNTED_FOR_PROMPT``): a second report of the same day never counts twice, and a report
of yesterday's prompt is never counted against today's.

The window: a typed answer counts for the latest daily prompt while it is at most
``OUTCOME_WINDOW_HOURS`` (24) old, measured from its delivery (``LAST_PROMPT_SENT_AT``); after that
there is nothing open to report on.
"""

from __future__ import annotations

from collections.abc import Callable

from promptpipe.flow.session import ConversationSession, OpContext
from promptpipe.models.state import DataKey

OUTCOME_WINDOW_HOURS = 24.0


def open_prompt(session: ConversationSession, within_hours: float = OUTCOME_WINDOW_HOURS) -> str:
    """The delivery time (as stored) of the daily prompt a report would answer, or ``""``."""
    data, now = session.data, session.now
    sent_at = data.get_time(DataKey.LAST_PROMPT_SENT_AT)
    if not sent_at or (now - sent_at).total_seconds() > within_hours * 3600:
        return ""
    return str(data.get(DataKey.LAST_PROMPT_SENT_AT))


def already_counted(session: ConversationSession, prompt_sent_at: str) -> bool:
    return bool(prompt_sent_at) and session.data.get(DataKey.DONE_COUNTED_FOR_PROMPT) == prompt_sent_at


def record_done(prompt_sent_at: str) -> Callable[[OpContext], None]:
    """The operation that counts a "Done" for the prompt delivered at ``prompt_sent_at``, once."""

    def count_done(op: OpContext) -> None:
        if not prompt_sent_at or op.data.get(DataKey.LAST_PROMPT_SENT_AT) != prompt_sent_at:
            return  # another prompt was delivered meanwhile: this report is not about it
        if op.data.get(DataKey.DONE_COUNTED_FOR_PROMPT) == prompt_sent_at:
            return
        profile = op.data.profile()
        profile.success_count += 1
        profile.updated_at = op.now
        op.data.set_profile(profile)
        op.data.set(DataKey.DONE_COUNTED_FOR_PROMPT, prompt_sent_at)

    return count_done
