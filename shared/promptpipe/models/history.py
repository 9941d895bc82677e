"""How much conversation history the state keeps and in what form (docs/behaviour.md#B-HIST-1,
B-HIST-2, B-HIST-3; docs/architecture.md#flow-state-item). Pure: no I/O.

The model is shown the last ``model_history_window(CHAT_HISTORY_LIMIT)`` messages; the state keeps
``stored_history_messages`` of them, compressed (``encode_history``); the transcript keeps all.
"""

from __future__ import annotations

import base64
import zlib

DEFAULT_LLM_HISTORY = 30
MAX_HISTORY_BYTES = 200_000  # of the history's JSON: B-HIST-3

# The widest window CHAT_HISTORY_LIMIT can ask for, and the most the history can hold
# (docs/behaviour.md#B-HIST-2).
MAX_LLM_HISTORY = 50


def model_history_window(chat_history_limit: int) -> int:
    """How many of the latest messages the model is shown (docs/behaviour.md#B-HIST-2): -1 → 30,
    0 → none, N > 0 → min(N, 50)."""
    if chat_history_limit < 0:
        return DEFAULT_LLM_HISTORY
    return min(chat_history_limit, MAX_LLM_HISTORY)


def stored_history_messages(chat_history_limit: int) -> int:
    """How many messages the state keeps (docs/behaviour.md#B-HIST-1): what the model can be shown,
    and never fewer than the default window, so the readers beyond the model's window (the last
    reply the intent rules read, the last inbound time of WhatsApp's 24-hour window) see with a
    narrower window what they see by default. The full record is in the transcript items."""
    return max(model_history_window(chat_history_limit), DEFAULT_LLM_HISTORY)


# ``conversationHistory`` as we write it: this prefix, then the base64 of the raw DEFLATE of the
# original's JSON (docs/architecture.md, "The flow-state item"). Text that does not start with it is
# the original's plain JSON (the original's states and ours before compression), read as it is.
COMPRESSED_HISTORY_PREFIX = "deflate:"


def encode_history(text: str) -> str:
    """The stored form of the history JSON ``text``: compressed (a third of its size or less)."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = deflate.compress(text.encode()) + deflate.flush()
    return COMPRESSED_HISTORY_PREFIX + base64.b64encode(packed).decode("ascii")


def decode_history(stored: str) -> str:
    """The history JSON of a stored value, compressed or plain. Raises ``ValueError`` or
    ``zlib.error`` when it cannot be read, or would inflate past ``MAX_HISTORY_BYTES``."""
    if not stored.startswith(COMPRESSED_HISTORY_PREFIX):
        return stored
    inflate = zlib.decompressobj(-15)
    packed = base64.b64decode(stored[len(COMPRESSED_HISTORY_PREFIX) :], validate=True)
    text = inflate.decompress(packed, MAX_HISTORY_BYTES + 1)
    if len(text) > MAX_HISTORY_BYTES or not inflate.eof:
        raise ValueError("compressed history truncated or over its byte budget")
    return text.decode()
