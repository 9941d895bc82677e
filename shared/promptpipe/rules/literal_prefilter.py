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

__all__ = ["Prefiltered"]


@functools.cache
def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


class Prefiltered:
    """``pattern``, compiled at the first text holding one of ``triggers`` (plain ``in``, no regex).
    Once compiled, the pattern alone reads every text: searching it costs about what the triggers do,
    and the answer is the same either way (scripts/bench/prefilter.py)."""

    def __init__(self, pattern: str, triggers: Sequence[str]) -> None:
        if not triggers or not all(triggers):
            raise ValueError("a prefiltered pattern needs non-empty triggers")
        self.pattern = pattern
        self.triggers = tuple(triggers)
        self._compiled: re.Pattern[str] | None = None

    def could_match(self, text: str) -> bool:
        """Whether ``text`` holds a trigger: ``False`` means no match of the pattern is possible."""
        return any(trigger in text for trigger in self.triggers)

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = _compile(self.pattern)
        return self._compiled

    @property
    def is_compiled(self) -> bool:
        return self._compiled is not None

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
