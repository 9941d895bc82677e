"""SMS segments: what a text costs, and keeping coach-written SMS cheap. Pure: no I/O.

Carriers bill SMS per *segment*. A message written only in the GSM-7 alphabet (GSM 03.38: the
basic table, plus the extension table whose characters take two septets) fits 160 characters in a
single segment and 153 per segment once split (the other 7 carry the concatenation header). One
character outside GSM-7 — an emoji, a curly quote, an em dash — turns the whole message into UCS-2:
70 UTF-16 code units in a single segment, 67 per segment once split. Twilio refuses a body longer
than 1,600 characters.

``prepare_sms`` is what the SMS messenger applies to a body before it sends it: typographic
punctuation becomes its ASCII equivalent (the meaning does not change), emoji are dropped unless the
participant's tone allows them (the ``emojis_ok`` tag), and a body over 1,600 characters is split
at sentence boundaries into several messages.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

# GSM 03.38 basic character table (ESC 0x1B excluded: it introduces the extension table).
GSM7_BASIC = frozenset(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
# The extension table: each character is sent as ESC + one septet (two septets).
GSM7_EXTENSION = frozenset("\f^{}\\[~]|€")

SINGLE_GSM7 = 160
MULTI_GSM7 = 153
SINGLE_UCS2 = 70
MULTI_UCS2 = 67
MAX_BODY_CHARS = 1600  # Twilio's limit on one message body
# Twilio's US list price of one outbound SMS segment (USD, 2025): the console's estimate of a day's
# messages (docs/console.md). Check it before relying on a figure; carriers' fees are not in it.
SMS_SEGMENT_USD = 0.0083

# Typographic characters with an exact GSM-7 (ASCII) counterpart.
_REPLACEMENTS = {
    "\u2018": "'",  # left single quotation mark
    "\u2019": "'",  # right single quotation mark / apostrophe
    "\u201a": "'",
    "\u201b": "'",
    "\u2032": "'",  # prime
    "\u00b4": "'",  # acute accent used as an apostrophe
    "\u0060": "'",  # grave accent used as an apostrophe (not in GSM-7)
    "\u201c": '"',
    "\u201d": '"',
    "\u201e": '"',
    "\u201f": '"',
    "\u2033": '"',
    "\u00ab": '"',
    "\u00bb": '"',
    "\u2010": "-",  # hyphen
    "\u2011": "-",  # non-breaking hyphen
    "\u2012": "-",  # figure dash
    "\u2013": "-",  # en dash
    "\u2014": "-",  # em dash
    "\u2015": "-",  # horizontal bar
    "\u2212": "-",  # minus sign
    "\u2026": "...",  # ellipsis
    "\u2192": "->",  # rightwards arrow
    "\u2190": "<-",
    "\u2022": "-",  # bullet
    "\u00b7": "-",  # middle dot used as a bullet
    "\u00a0": " ",  # no-break space
    "\u2002": " ",
    "\u2003": " ",
    "\u2009": " ",  # thin space
    "\u202f": " ",  # narrow no-break space
    "\t": " ",
    "\u200b": "",  # zero-width space
    "\u2060": "",  # word joiner
    "\ufeff": "",  # byte order mark
}
_TRANSLATION = str.maketrans(_REPLACEMENTS)

# Emoji and pictographs, their modifiers and joiners. Conservative: letters of any script stay.
_EMOJI = re.compile(
    "["
    "\U0001f000-\U0001faff"  # mahjong, cards, enclosed, pictographs, emoticons, transport, symbols
    "\U0001fc00-\U0001ffff"
    "\u2600-\u27bf"  # miscellaneous symbols and dingbats
    "\u2b00-\u2bff"  # arrows and stars (⭐, ⬆)
    "\u2300-\u23ff"  # technical: ⌚, ⏰, ⏳
    "\u2190-\u21ff"  # arrows
    "\u3030\u303d\u3297\u3299"
    "\u00a9\u00ae\u2122\u203c\u2049\u2139"
    "\ufe0e\ufe0f"  # variation selectors
    "\u200d"  # zero-width joiner
    "\u20e3"  # combining keycap
    "\U000e0020-\U000e007f"  # tag characters (flag sequences)
    "]+"
)
_SPACES_BEFORE_PUNCT = re.compile(r"[ ]+([.,!?;:])")
_MULTI_SPACES = re.compile(r"[ ]{2,}")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+")


def is_gsm7(text: str) -> bool:
    """Whether every character is in the GSM-7 basic or extension table."""
    return all(ch in GSM7_BASIC or ch in GSM7_EXTENSION for ch in text)


@dataclass(frozen=True)
class SegmentCount:
    encoding: str  # "GSM-7" | "UCS-2"
    units: int  # septets (GSM-7) or UTF-16 code units (UCS-2)
    segments: int


def count_segments(text: str) -> SegmentCount:
    """How many segments ``text`` is billed as (0 for an empty text).

    Multi-part messages are packed as handsets and Twilio pack them: an extension character (two
    septets) or a surrogate pair (two code units) is never split across two segments.
    """
    if not text:
        return SegmentCount("GSM-7", 0, 0)
    if is_gsm7(text):
        widths = [2 if ch in GSM7_EXTENSION else 1 for ch in text]
        return SegmentCount("GSM-7", sum(widths), _pack(widths, SINGLE_GSM7, MULTI_GSM7))
    widths = [2 if ord(ch) > 0xFFFF else 1 for ch in text]
    return SegmentCount("UCS-2", sum(widths), _pack(widths, SINGLE_UCS2, MULTI_UCS2))


def _pack(widths: Iterable[int], single: int, per_segment: int) -> int:
    widths = list(widths)
    if sum(widths) <= single:
        return 1
    segments, used = 1, 0
    for width in widths:
        if used + width > per_segment:
            segments, used = segments + 1, 0
        used += width
    return segments


def segments(text: str) -> int:
    return count_segments(text).segments


def strip_emoji(text: str) -> str:
    """``text`` without emoji (and the spaces they leave behind)."""
    if not _EMOJI.search(text):
        return text
    stripped = _EMOJI.sub("", text)
    lines = [_SPACES_BEFORE_PUNCT.sub(r"\1", _MULTI_SPACES.sub(" ", line)).strip() for line in stripped.split("\n")]
    return "\n".join(lines).strip()


def normalize_gsm7(text: str, *, allow_emoji: bool = False) -> str:
    """Typographic punctuation as its GSM-7 equivalent; emoji dropped unless ``allow_emoji``.

    Characters with no GSM-7 equivalent that carry meaning (letters of other scripts, accented
    letters outside the table) are kept: the message is then sent as UCS-2, correctly.
    """
    text = text.translate(_TRANSLATION)
    if not allow_emoji:
        text = strip_emoji(text)
    return text


def fold_to_gsm7(text: str) -> str:
    """Accented Latin letters outside GSM-7 as their base letter (``á`` -> ``a``, ``í`` -> ``i``,
    ``ç`` -> ``c``); the accented letters GSM-7 has (``é``, ``ñ``, ``ü``…) and every other character
    are kept. What people write in SMS anyway, and what keeps a Spanish or Portuguese prompt in one
    segment; a script GSM-7 cannot write stays as it is (UCS-2)."""

    def fold(ch: str) -> str:
        if ch in GSM7_BASIC or ch in GSM7_EXTENSION:
            return ch
        base = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
        return base if base and is_gsm7(base) else ch

    return "".join(fold(ch) for ch in text)


def split_body(text: str, limit: int = MAX_BODY_CHARS) -> list[str]:
    """``text`` in parts of at most ``limit`` characters, split after a sentence where possible,
    else at a space, else hard. A text within the limit is one part."""
    text = text.strip()
    if len(text) <= limit:
        return [text] if text else []
    parts: list[str] = []
    while len(text) > limit:
        window = text[: limit + 1]
        cut = 0
        for match in _SENTENCE_END.finditer(window):
            if match.start() <= limit and match.start() > 0:
                cut = match.start()
        if cut == 0:
            cut = window.rfind(" ")
        if cut <= 0:
            cut = limit
        parts.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    if text:
        parts.append(text)
    return parts


@dataclass(frozen=True)
class PreparedSms:
    parts: list[str]
    segments: int  # the billed segments of all parts together

    @property
    def body(self) -> str:
        return "\n".join(self.parts)


def prepare_sms(text: str, *, allow_emoji: bool = False) -> PreparedSms:
    """What the SMS messenger sends for ``text``: normalised, then split over 1,600 characters."""
    parts = split_body(normalize_gsm7(text, allow_emoji=allow_emoji))
    return PreparedSms(parts=parts, segments=sum(segments(part) for part in parts))


# "Asked for more" (docs/behaviour.md#B-SMS-3): an explicit request for a longer answer in the
# participant's own message. Bare "more" is not one: it is the intensity poll's word.
_ASKS_FOR_MORE = re.compile(
    r"\b(?:tell|show|give)\s+me\s+more\b"
    r"|\bmore\s+(?:details?|info|information|about)\b"
    r"|\b(?:explain|elaborate|expand)\b"
    r"|\bsay\s+more\b"
    r"|\bin\s+(?:more\s+)?detail\b"
    r"|^\W*why\b"
    r"|\bwhy\s*\?"
    r"|\bm[aá]s\s+(?:detalles?|informaci[oó]n)\b"
    r"|\bexpl[ií]ca"
    r"|\b(?:cu[eé]ntame|dime)\s+m[aá]s\b"
    r"|^\W*por\s*qu[eé]\b"
    r"|\bpor\s+qu[eé]\s*\?",
    re.IGNORECASE,
)


def asks_for_more(text: str | None) -> bool:
    """Whether the participant's message asks for a longer answer ("tell me more", "explain",
    "why?", "más detalles"): then the coach's SMS reply may take more than one segment."""
    return bool(text) and _ASKS_FOR_MORE.search(text or "") is not None
