"""Patterns of whole words, and the words of the day's moments the readers share.

Every reader of a message (the offline coach's intake, its times, the turn's tool rules) asks the same
kind of question: does one of these words, or phrases, stand in the message as a whole word?
``any_word`` builds that pattern once from a list, so a list is data, not a hand-written regex.

Pure: ``re`` only.
"""

from __future__ import annotations

import re

__all__ = ["DAYPARTS", "MEALS", "any_word"]

# Moments of the day and meals, as regex pieces (English; readers add their languages' words).
DAYPARTS = ("mornings?", "evenings?", "afternoons?", "nights?", "noon", "midday", "tonight", "bed ?time")
MEALS = ("breakfast", "lunch(?:time)?", "dinner")


def any_word(*alternatives: str, flags: re.RegexFlag = re.IGNORECASE) -> re.Pattern[str]:
    """A pattern matching any of ``alternatives`` (regex pieces: words, phrases, ``mornings?``) as a
    whole word: ``any_word("after", "before")`` is ``\\b(?:after|before)\\b``, case ignored."""
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b", flags)
