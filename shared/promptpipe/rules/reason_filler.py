"""A reason as it is saved: what the person said, without the filler around it (docs/offline-coach.md,
"Generic reading in the intake").

People give why a habit matters with a hedge, a laugh or an emoji around it: "idk just to feel better
lol", "para dormir mejor creo 🙏", "my doctor said so 🙄", "franchement pour le dos quoi". The hedge,
the laugh and the emoji say how they feel about answering, not why: the reason is the words between.
Only the edges are trimmed (a hedge inside the reason, "i think better after a walk", is part of it),
and a reason that is nothing but filler is left as it was, for the caller to judge.

Pure: ``re`` and ``unicodedata`` only.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["reason_without_filler"]

# A laugh as people type it: "haha", "hahaha", "jajaja", "jeje", "lol", "lmao".
_LAUGH = r"(?:(?:ha){2,}h?|(?:he){2,}h?|(?:ja){2,}j?|(?:je){2,}j?|lol+|lmao+|rofl|mdr)"
# A hedge or a laugh that opens a reason, said before it and apart from it, in the three languages.
_LEADING = re.compile(
    r"^(?:idk|i dunno|dunno|i don'?t know|honestly|tbh|um+|uh+|hmm+|basically|just|"
    r"pues|bueno|no s[ée]|nose|ni idea|la verdad|sinceramente|creo que|supongo que|"
    r"bah|ben|euh+|franchement|je sais pas|je ne sais pas|je pense que|je crois que|" + _LAUGH + r")\b[\s,.:;!…-]*"
    # a word that opens a reason only as a hedge when a pause or the reason's own cue follows it: "i think
    # better after a walk", "well rested", "este año" keep theirs
    r"|^(?:well|like|i guess|i think|i mean|probably|mostly|maybe|este|igual)(?:[\s]*[,.:;!…-]+\s*|\s+(?=(?:to|for|"
    r"because|bc|cause|cuz|so|it'?s|its|para|porque|por|pour|parce)\b))",
    re.I,
)
# A hedge or a laugh that closes it.
_TRAILING = re.compile(
    r"[\s,.;:!…-]*\b(?:" + _LAUGH + r"|i guess|i think|i suppose|tbh|honestly|basically|mostly|probably|"
    r"or something|or smth|or whatever|idk|"
    r"creo|supongo|la verdad|o algo as[ií]|digo yo|nom[aá]s|"
    r"je pense|je crois|quoi|genre|en fait)$",
    re.I,
)
# An emoticon typed with punctuation: ":)", ";-(", ":P", "xD", "<3".
_EMOTICON = re.compile(r"(?:^|(?<=\s))(?:[:;=]-?[()DPpO3/\\|]+|xD+|XD+|<3+)(?=\s|$)")


def _is_emoji_part(char: str) -> bool:
    """A pictograph, a symbol drawn as one, or a joiner, selector or skin tone that belongs to it."""
    code = ord(char)
    return (
        unicodedata.category(char) == "So"
        or code in (0x200D, 0xFE0E, 0xFE0F, 0x20E3)
        or 0x1F3FB <= code <= 0x1F3FF  # skin tones
        or 0x1F1E6 <= code <= 0x1F1FF  # regional indicators (flags)
    )


def reason_without_filler(reason: str) -> str:
    """``reason`` without its emoji and emoticons and the hedges and laughs at its edges: "idk just to
    feel better lol" -> "to feel better", "para dormir mejor creo 🙏" -> "para dormir mejor", "my doctor
    said so 🙄" -> "my doctor said so". The reason as given when nothing of it would be left."""
    text = "".join(" " if _is_emoji_part(char) else char for char in reason)
    text = re.sub(r"\s+", " ", _EMOTICON.sub(" ", text)).strip()
    previous = None
    while previous != text:
        previous = text
        text = _LEADING.sub("", text).strip()
        text = _TRAILING.sub("", text).strip()
    text = text.strip(" ,.;:!…-")
    return text if re.search(r"\w", text) else reason.strip()
