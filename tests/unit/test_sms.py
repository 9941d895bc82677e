"""SMS segments: GSM-7 vs UCS-2 counting, the GSM-7 normaliser and the 1,600-character split."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptpipe.rules.sms import (
    GSM7_BASIC,
    GSM7_EXTENSION,
    MAX_BODY_CHARS,
    count_segments,
    is_gsm7,
    normalize_gsm7,
    prepare_sms,
    segments,
    split_body,
)


@pytest.mark.parametrize(
    ("text", "encoding", "units", "count"),
    [
        ("", "GSM-7", 0, 0),
        ("a" * 160, "GSM-7", 160, 1),
        ("a" * 161, "GSM-7", 161, 2),
        ("a" * 306, "GSM-7", 306, 2),
        ("a" * 307, "GSM-7", 307, 3),
        ("€" * 80, "GSM-7", 160, 1),  # extension characters take two septets
        ("€" * 81, "GSM-7", 162, 2),
        ("a" * 152 + "€" + "a" * 10, "GSM-7", 164, 2),  # the escape pair is not split
        ("a" * 152 + "€" + "a" * 152, "GSM-7", 306, 3),
        ("é" * 160, "GSM-7", 160, 1),  # in the basic table
        ("a" * 69 + "’", "UCS-2", 70, 1),  # one curly quote forces UCS-2
        ("a" * 70 + "’", "UCS-2", 71, 2),
        ("a" * 134, "GSM-7", 134, 1),
        ("a" * 133 + "—", "UCS-2", 134, 2),
        ("😀" * 35, "UCS-2", 70, 1),  # an emoji is a surrogate pair: two code units
        ("a" * 66 + "😀" + "a" * 10, "UCS-2", 78, 2),  # the pair is not split across segments
        ("a" * 66 + "😀" + "a" * 66, "UCS-2", 134, 3),
    ],
)
def test_count_segments(text: str, encoding: str, units: int, count: int) -> None:
    result = count_segments(text)
    assert (result.encoding, result.units, result.segments) == (encoding, units, count)


def test_gsm7_tables() -> None:
    assert is_gsm7("Hello @ £5 {ok} [x] ~ | ^ \\ €")
    assert not is_gsm7("It’s fine")
    assert "\x1b" not in GSM7_BASIC and not GSM7_BASIC & GSM7_EXTENSION
    assert len(GSM7_BASIC) == 127 and len(GSM7_EXTENSION) == 10


def test_normalize_replaces_typography_with_gsm7() -> None:
    coach = "“Nice work!” — you’re on a roll… Keep it up – tomorrow → same time, same place.\u00a0"
    text = normalize_gsm7(coach)
    assert text == '"Nice work!" - you\'re on a roll... Keep it up - tomorrow -> same time, same place. '
    assert is_gsm7(text)
    assert segments(coach) == 2 and segments(text) == 1


def test_normalize_drops_emoji_unless_allowed() -> None:
    coach = "Great job today 🎉💪! Keep going 👍🏽\nSee you tomorrow ☀️"
    assert normalize_gsm7(coach) == "Great job today! Keep going\nSee you tomorrow"
    assert normalize_gsm7(coach, allow_emoji=True) == coach
    family = "Walk with the kids 👨\u200d👩\u200d👧 tonight"
    assert normalize_gsm7(family) == "Walk with the kids tonight"


def test_normalize_keeps_letters_of_other_scripts() -> None:
    text = "Zażółć gęślą jaźń — ok"
    assert normalize_gsm7(text) == "Zażółć gęślą jaźń - ok"
    assert count_segments(normalize_gsm7(text)).encoding == "UCS-2"  # the meaning wins over the price


def test_split_at_sentence_boundaries() -> None:
    sentence = "This is one sentence of a rather long coaching reply. "
    text = sentence * 60  # 3,240 characters
    parts = split_body(text)
    assert len(parts) == 3
    assert all(len(p) <= MAX_BODY_CHARS for p in parts)
    assert all(p.endswith(".") for p in parts)
    assert " ".join(parts) == text.strip()


def test_split_without_sentences_falls_back_to_spaces_then_hard_cuts() -> None:
    words = "word " * 400
    parts = split_body(words)
    assert all(len(p) <= MAX_BODY_CHARS for p in parts) and " ".join(parts) == words.strip()
    blob = "x" * 3300
    assert [len(p) for p in split_body(blob)] == [1600, 1600, 100]
    assert split_body("short") == ["short"] and split_body("  ") == []


@given(st.text(min_size=0, max_size=4000))
def test_split_never_exceeds_the_limit_and_loses_no_words(text: str) -> None:
    parts = split_body(text)
    assert all(0 < len(p) <= MAX_BODY_CHARS for p in parts)
    assert "".join("".join(parts).split()) == "".join(text.split())


def test_prepare_sms_counts_every_part() -> None:
    prepared = prepare_sms("Done “today” 🎉. " * 200)
    assert len(prepared.parts) == 2
    assert all(is_gsm7(p) for p in prepared.parts)
    assert prepared.parts[0].startswith('Done "today". Done')
    assert prepared.segments == sum(math.ceil(len(p) / 153) for p in prepared.parts)
