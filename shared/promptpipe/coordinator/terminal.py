"""Text from participants made safe to write to a terminal (``promptpipe transcript``,
``promptpipe participants``): a participant's message is data, never a command to the terminal.

Control characters (C0 but the tab and the line break, DEL, C1: ``ESC`` starts the sequences that move the
cursor, recolour or retitle the window, ``CR`` rewrites the line) and the bidirectional controls
(which reorder what is shown: "Trojan Source") are shown escaped, as Python writes them (``\\x1b``,
``\\r``, ``\\u202e``), so the coordinator sees that they were there and what they were.
"""

from __future__ import annotations

import re

# C0 controls but "\t" and "\n", DEL and C1; the bidi embeddings, overrides, isolates and marks; the line and
# paragraph separators (which some terminals break lines on).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


_NAMED = {"\r": "\\r", "\x0b": "\\v", "\x0c": "\\f"}


def _escaped(match: re.Match[str]) -> str:
    if match.group() in _NAMED:
        return _NAMED[match.group()]
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def terminal_safe(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` with every control and bidi character escaped; ``\\n`` kept unless ``keep_newlines``
    is false (a field shown on one line)."""
    safe = _UNSAFE.sub(_escaped, text)
    return safe if keep_newlines else safe.replace("\n", "\\n")
