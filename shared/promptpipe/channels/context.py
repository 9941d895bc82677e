"""What a messenger needs to know about the participant to send well on their channel. Pure.

The caller that builds an ``OutboundMessage`` from a participant's state fills in:

- ``last_inbound_at``: when the participant last wrote (the newest user message in the stored
  conversation history, or the stored answer to the daily prompt); ``NEVER_WROTE`` when they never
  did. WhatsApp messengers send a business-initiated message as a template once 24 hours passed.
- ``allow_emoji``: the participant's tone policy has ``emojis_ok`` active; SMS messengers drop
  emoji otherwise (one emoji turns a 160-character segment into a 70-character one).

``with_channel_context(message, data)`` does both; one call where outbound messages are emitted.
"""

from __future__ import annotations

from datetime import datetime

from promptpipe.models.messaging import NEVER_WROTE, OutboundMessage
from promptpipe.models.state import DataKey, StateData


def last_inbound_at(data: StateData) -> datetime:
    """When the participant last wrote, from their state; ``NEVER_WROTE`` if they never did."""
    times = [m.timestamp for m in data.history() if m.role == "user"]
    responded = data.get_time(DataKey.DAILY_PROMPT_RESPONDED_AT)
    if responded is not None:
        times.append(responded)
    return max(times, default=NEVER_WROTE)


def allows_emoji(data: StateData) -> bool:
    """Whether the tone policy allows emoji (``emojis_ok`` active; an unreadable profile reads as a
    new one: no)."""
    tags = data.profile().tone.tags
    return "emojis_ok" in tags and "no_emojis" not in tags


def with_channel_context(message: OutboundMessage, data: StateData) -> OutboundMessage:
    """``message`` with ``last_inbound_at`` and ``allow_emoji`` from the participant's state (values
    the caller set explicitly are kept)."""
    update: dict[str, object] = {}
    if message.last_inbound_at is None:
        update["last_inbound_at"] = last_inbound_at(data)
    if not message.allow_emoji and allows_emoji(data):
        update["allow_emoji"] = True
    return message.model_copy(update=update) if update else message
