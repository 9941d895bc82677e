"""One reading of what a person typed, before any rule looks at its words.

People write the same word many ways: full-width letters from a phone's keyboard (``ＳＴＯＰ``), a
zero-width space or a bidi mark pasted in with it, typographic quotes (``don’t``), emoji and
punctuation around it (`` stop 🛑``, ``STOP!``), any case. Every reader of a message's words (the
opt-out and HELP reader, the offline coach, a safety screen) starts from the same normal form, so
a word one of them knows is known in every written form, and two readers never disagree about what
the message said.

- ``normalise_text``: Unicode NFKC (compatibility forms to their plain letters: full-width,
  ligatures, superscripts), format characters removed (zero-width space, joiners, word joiner, BOM,
  soft hyphen, bidi embeddings, overrides and isolates, variation selectors, tag characters),
  control characters and every kind of space to one space, typographic quotes and dashes to their
  ASCII forms, then ``casefold`` (``STRASSE`` and ``straße`` alike). Punctuation and emoji stay:
  a question mark still says the message asks.
- ``fold_accents``: accents off (``más`` -> ``mas``) for readers that compare words people type
  with and without them.
- ``words``: the words alone, accents folded: letters and digits, an apostrophe inside a word kept
  (``don't``), everything else — punctuation, emoji, symbols, hyphens — a separator. ``OPT-OUT``,
  ``opt_out`` and ``opt out`` are the same two words.
- ``strip_edges``: the normal form without the punctuation and emoji around it.
- ``squeeze_repeats``: a letter typed three times or more, once (or twice): ``"yesss"`` -> ``"yes"``,
  ``"daleee"`` -> ``"dale"``, ``"goood"`` -> ``"good"`` with ``keep=2``. Readers try both.

Pure: ``unicodedata`` and ``re`` only.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["fold_accents", "normalise_text", "squeeze_repeats", "strip_edges", "words"]

# Typographic forms NFKC leaves alone, to the ASCII ones people also type.
_PUNCTUATION = str.maketrans(
    {
        "\u2018": "'",  # left single quotation mark
        "\u2019": "'",  # right single quotation mark (the phone keyboards' apostrophe)
        "\u201a": "'",
        "\u201b": "'",
        "\u02bc": "'",  # modifier letter apostrophe
        "\u2032": "'",  # prime
        "\u00b4": "'",  # acute accent used as an apostrophe
        "\u0060": "'",  # grave accent used as an apostrophe
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2015": "-",
        "\u2212": "-",
    }
)
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def _invisible(char: str) -> bool:
    """A character that changes nothing a person reads: a format character (category Cf: zero-width
    space and joiners, bidi controls, BOM, soft hyphen, tags) or a variation selector."""
    code = ord(char)
    return unicodedata.category(char) == "Cf" or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF


def normalise_text(text: str) -> str:
    """``text`` in the one normal form every reader starts from (see the module's docstring):
    ``"  ＳＴＯＰ\u200b!! "`` -> ``"stop!!"``, ``"Don’t\u00a0text me"`` -> ``"don't text me"``."""
    composed = unicodedata.normalize("NFKC", text)
    visible = "".join(" " if unicodedata.category(char) == "Cc" else char for char in composed if not _invisible(char))
    return _SPACE.sub(" ", visible.translate(_PUNCTUATION)).strip().casefold()


def fold_accents(text: str) -> str:
    """``text`` without its combining marks (``más`` -> ``mas``, ``información`` -> ``informacion``)."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", "".join(char for char in decomposed if not unicodedata.combining(char)))


def words(text: str) -> tuple[str, ...]:
    """The words of ``text`` in normal form, accents folded: ``"OPT-OUT 🛑"`` -> ``("opt", "out")``,
    ``"No quiero más"`` -> ``("no", "quiero", "mas")``, ``"don’t"`` -> ``("don't",)``."""
    return tuple(_WORD.findall(fold_accents(normalise_text(text))))


def strip_edges(text: str) -> str:
    """The normal form of ``text`` without the punctuation, symbols and emoji before its first and
    after its last letter or digit: ``" stop 🛑"`` -> ``"stop"``, ``"¿ayuda?"`` -> ``"ayuda"``."""
    normal = normalise_text(text)
    start = next((i for i, char in enumerate(normal) if char.isalnum()), len(normal))
    end = next((i for i in range(len(normal), start, -1) if normal[i - 1].isalnum()), start)
    return normal[start:end]


_REPEATED = re.compile(r"([^\W\d_])\1{2,}")


def squeeze_repeats(text: str, keep: int = 1) -> str:
    """``text`` with each run of three or more of the same letter cut to ``keep`` of it: people stretch
    words for tone ("yesss", "siii", "okkk", "daleee"), and the stretched word is the same word."""
    return _REPEATED.sub(lambda match: match[1] * keep, text)
