"""The rule for the length of an inbound text, shared by the webhook (before queueing) and the worker."""

from __future__ import annotations

TRUNCATION_MARK = " […]"


def clip_inbound_text(text: str, limit: int) -> str:
    """The documented rule for an inbound body: surrounding whitespace is dropped and a text longer
    than ``limit`` characters is cut to ``limit`` and marked with ``TRUNCATION_MARK``, never rejected.
    Idempotent, so the webhook (before queueing) and the worker both apply it."""
    text = text.strip()
    return text[:limit] + TRUNCATION_MARK if len(text) > limit else text
