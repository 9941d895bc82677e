"""A regular expression behind an exact literal prefilter: compiled at the first text that could match
it, never at import, and never for a text that cannot.

``re`` parses and compiles a pattern in Python, about 12,500 instructions a pattern character
(docs/benchmarks.md, section 2): the safety screen's and the opt-out reader's long alternations cost a
function's cold start more than anything else they import. Each comes with *triggers*, literal strings
such that every match of the pattern contains one of them; tests/unit/test_literal_prefilter.py proves
it over the regex parser's tree, alternative by alternative (not by sampling). So a text holding none of
them cannot match, and the answer for it is "no match" without the pattern: exact, not a heuristic.

Pure: ``re`` and ``functools`` only.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence

__all__ = ["Prefiltered", "fold_case"]

# Under re.IGNORECASE a letter also matches these, which str.lower() leaves apart ("ı", "ſ") or spells
# as two characters ("İ" as "i" and a combining dot): folded to the letter before lowering.
_CASE_EXTRAS = str.maketrans({"İ": "i", "ı": "i", "ſ": "s"})


# Every case-insensitive pattern of a turn reads the same message: it is folded once, not once a pattern.
@functools.lru_cache(maxsize=8)
def fold_case(text: str) -> str:
    """``text`` in lower case, one character for one: what a case-insensitive pattern's triggers are
    looked for in."""
    return text.translate(_CASE_EXTRAS).lower()


@functools.cache
def _compile(pattern: str, flags: int) -> re.Pattern[str]:
    return re.compile(pattern, flags)


class Prefiltered:
    """``pattern``, compiled at the first text holding one of ``triggers`` (plain ``in``, no regex).
    Once compiled, the pattern alone reads every text: searching it costs about what the triggers do,
    and the answer is the same either way (scripts/bench/prefilter.py)."""

    def __init__(self, pattern: str, triggers: Sequence[str], flags: int = 0) -> None:
        if not triggers or not all(triggers):
            raise ValueError("a prefiltered pattern needs non-empty triggers")
        if flags not in (0, re.IGNORECASE):
            raise ValueError("a prefiltered pattern takes no flag but re.IGNORECASE")
        if flags and any(fold_case(trigger) != trigger for trigger in triggers):
            raise ValueError("a case-insensitive pattern's triggers are in lower case")
        self.pattern = pattern
        self.triggers = tuple(triggers)
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    def could_match(self, text: str) -> bool:
        """Whether ``text`` holds a trigger: ``False`` means no match of the pattern is possible."""
        if self.flags:
            text = fold_case(text)
        return any(trigger in text for trigger in self.triggers)

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = _compile(self.pattern, self.flags)
        return self._compiled

    def _for(self, text: str) -> re.Pattern[str] | None:
        """The compiled pattern to read ``text`` with; ``None`` when it cannot match and is not compiled."""
        if self._compiled is None and not self.could_match(text):
            return None
        return self.compiled

    def search(self, text: str) -> re.Match[str] | None:
        pattern = self._for(text)
        return None if pattern is None else pattern.search(text)

    def match(self, text: str) -> re.Match[str] | None:
        pattern = self._for(text)
        return None if pattern is None else pattern.match(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        pattern = self._for(text)
        return iter(()) if pattern is None else pattern.finditer(text)
