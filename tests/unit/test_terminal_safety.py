"""A participant's text written to a terminal is shown, never obeyed: ``promptpipe
transcript`` escapes ESC, CR, the other controls and the bidirectional overrides."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest

from promptpipe.coordinator.summary import transcript_text
from promptpipe.coordinator.terminal import terminal_safe
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.store import Direction, TranscriptEntry
from tests.support import START


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b]0;owned\x07title", "\\x1b]0;owned\\x07title"),
        ("\x1b[2J\x1b[Hcleared", "\\x1b[2J\\x1b[Hcleared"),
        ("fine\rDONE", "fine\\rDONE"),
        ("abc\u202edcba", "abc\\u202edcba"),
        ("\u2066isolate\u2069 \u200f", "\\u2066isolate\\u2069 \\u200f"),
        ("\x9b31m C1", "\\x9b31m C1"),
        ("tab\there\x00", "tab\there\\x00"),
        ("two\nlines", "two\nlines"),
        ("é 😀 مرحبا 你好", "é 😀 مرحبا 你好"),  # text, any script: unchanged
    ],
)
def test_terminal_safe_escapes_controls_and_bidi_and_keeps_text(text: str, shown: str) -> None:
    assert terminal_safe(text) == shown


def test_terminal_safe_on_one_line_escapes_the_line_break_too() -> None:
    assert terminal_safe("a\nb", keep_newlines=False) == "a\\nb"


def test_the_transcript_shows_a_participants_escape_sequences_escaped() -> None:
    participant = ConversationParticipant(
        id="p_" + "3" * 32,
        phone_number="+14155550101",
        name="Sam\x1b[31m",
        timezone="UTC",
        enrolled_at=START,
        created_at=START,
        updated_at=START,
    )
    entry = TranscriptEntry(
        participant_id=participant.id,
        at=START,
        seq="0000000001#000",
        direction=Direction.INBOUND,
        kind="message",
        content="done\r\x1b[2Kcoach: you are dismissed \u202eevil",
    )
    text = transcript_text(participant, [entry], ZoneInfo("UTC"))
    assert "\x1b" not in text and "\r" not in text and "\u202e" not in text
    assert "Sam\\x1b[31m" in text
    assert "done\\r\\x1b[2Kcoach: you are dismissed \\u202eevil" in text
