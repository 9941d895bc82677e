"""Opt-out, opt-in and HELP as the law reads them (docs/compliance.md), before anything else reads
the message.

``read_opt_message`` reads one inbound text, in the normal form of ``rules/normalise.py``:

- **A keyword as the whole message** — an opt-out word (STOP, STOPALL, UNSUBSCRIBE, CANCEL, END,
  QUIT, REVOKE, OPTOUT, OPT OUT; BAJA, PARAR, ALTO … in Spanish; PARE, SAIR … in Portuguese), an
  opt-in word (START, UNSTOP …) or a help word (HELP, INFO, AYUDA, AIDE, AJUDA), in any case, any
  Unicode form, with punctuation, emoji or a few polite words around it ("Stop.", "ＳＴＯＰ", "stop
  please 🛑", "unsubscribe pls", "unsubcribe": the long word read through a slip of the keyboard).
  The lists are settings, per language (``DEFAULT_KEYWORDS``: English, Spanish, French and
  Portuguese). A help request in a few words ("I need help", "necesito ayuda", "j'ai besoin
  d'aide", "preciso de ajuda") is a help request too.
- **A plain-language request to stop all messages** — the FCC's "any reasonable means", read by its
  structure, not by its sentence (``rules/opt_out_requests.py``): a verb of stopping with a
  verb of sending and me or the messages, a negated "send me", not wanting the messages or the
  study, removing me from the list, in English, Spanish, French and Portuguese, wherever it stands
  in a clause unless a negation or a frame before it takes it back. So "wrong number stop texting
  me", "bórrenme de la lista", "não quero mais receber mensagens" are requests, and "don't stop
  sending these!", "I'll stop by the gym", "no puedo parar de comer", "no me dejen de escribir"
  are nothing.
- **An unclear request** — a stop request narrowed to a time or a kind of message ("stop texting
  me at night", "stop the messages for a week", "stop sending me reminders"): ``UNCLEAR_STOP``. It
  is not an opt-out; the coach asks what the person wants.

Pure: no I/O, no settings object (the caller passes the lists).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from promptpipe.rules.normalise import words
from promptpipe.rules.opt_out_requests import mend_word, read_request, strip_fillers
from promptpipe.rules.opt_words import (
    DEFAULT_HELP_TEXTS,
    DEFAULT_KEYWORDS,
    DEFAULT_OPT_IN_TEXTS,
    DEFAULT_OPT_OUT_TEXTS,
    FALLBACK_LANGUAGE,
    PROVIDER_KEYWORDS,
    REQUIRED_OPT_OUT_WORDS,
    OptKeywordKind,
    OptKind,
    fixed_text,
    keyword_lists,
    primary_language,
)

__all__ = [
    "DEFAULT_HELP_TEXTS",
    "DEFAULT_KEYWORDS",
    "DEFAULT_OPT_IN_TEXTS",
    "DEFAULT_OPT_OUT_TEXTS",
    "FALLBACK_LANGUAGE",
    "PROVIDER_KEYWORDS",
    "REQUIRED_OPT_OUT_WORDS",
    "OptKeywordKind",
    "OptKind",
    "OptReading",
    "fixed_text",
    "keyword_lists",
    "primary_language",
    "provider_keyword",
    "read_opt_message",
]


@dataclass(frozen=True, slots=True)
class OptReading:
    kind: OptKind
    # The language whose word or pattern it was ("" when unknown: an unclear request's).
    language: str = ""
    # A keyword as the whole message (what a provider's own keyword filter may also have read),
    # rather than a sentence.
    keyword: bool = True


# Asking for help in a few words, as the whole message ("I need help", "necesito ayuda", "j'ai besoin
# d'aide", "preciso de ajuda"): answered with the help reply as the help words are.
_HELP_PHRASES: dict[tuple[str, ...], str] = {
    ("i", "need", "help"): "en",
    ("need", "help"): "en",
    ("help", "me"): "en",
    ("can", "you", "help"): "en",
    ("can", "u", "help"): "en",
    ("necesito", "ayuda"): "es",
    ("ayudame",): "es",
    ("ayudenme",): "es",
    ("j'ai", "besoin", "d'aide"): "fr",
    ("besoin", "d'aide"): "fr",
    ("aidez", "moi"): "fr",
    ("preciso", "de", "ajuda"): "pt",
    ("me", "ajuda"): "pt",
    ("me", "ajudem"): "pt",
}

_Frozen = tuple[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], ...]


def _freeze(keywords: Mapping[str, Mapping[str, Sequence[str]]]) -> _Frozen:
    return tuple(
        (kind, tuple((language, tuple(entries)) for language, entries in by_language.items()))
        for kind, by_language in keywords.items()
    )


@functools.lru_cache(maxsize=8)  # one set of lists per deployment: normalised once, not per message
def _keyword_forms(keywords: _Frozen) -> dict[tuple[str, ...], list[tuple[OptKind, str]]]:
    forms: dict[tuple[str, ...], list[tuple[OptKind, str]]] = {}
    for kind_name, by_language in keywords:
        kind = OptKind(kind_name)
        for language, entries in by_language:
            for entry in entries:
                form = words(entry)
                if form:
                    forms.setdefault(form, []).append((kind, language))
    return forms


def read_opt_message(
    text: str,
    keywords: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
    *,
    preferred_language: str = "",
) -> OptReading | None:
    """What ``text`` asks for, if it is an opt-out, an opt-in, a help request or an unclear stop
    request; ``None`` for every other message. ``keywords``: per kind (``opt_out``, ``opt_in``,
    ``help``), per language, the whole-message words (``DEFAULT_KEYWORDS`` when ``None``). A word
    listed in several languages is attributed to ``preferred_language`` (the participant's) when it
    is one of them, else to the first listed."""
    tokens = strip_fillers(tuple(mend_word(word) for word in words(text)))
    if not tokens:
        return None
    forms = _keyword_forms(_freeze(DEFAULT_KEYWORDS if keywords is None else keywords))
    matches = forms.get(tokens)
    if matches:
        # An opt-out word wins over the same word listed as another kind: honouring it is the safe reading.
        ordered = sorted(matches, key=lambda match: (match[0] is not OptKind.OPT_OUT, match[1] != preferred_language))
        kind, language = ordered[0]
        return OptReading(kind, language, keyword=True)
    if tokens in _HELP_PHRASES:
        return OptReading(OptKind.HELP, _HELP_PHRASES[tokens], keyword=False)
    return _leading_opt_out(text, forms) or _read_request(text)


# An opt-out word that stands as the message's first sentence ("STOP. i want to end it all", "Stop!!
# I mean it") is an opt-out whatever follows: honouring it is the safe reading. Not "end" or "cancel",
# which open other sentences as often ("Cancel. I'm sick today": today's prompt, not every message).
_FIRST_SENTENCE = re.compile(r"^\s*([^.!?;\n]+)[.!?;\n]+\s*\S")
_NOT_LEADING = frozenset({"end", "cancel", "fin", "cancelar"})


def _leading_opt_out(text: str, forms: Mapping[tuple[str, ...], list[tuple[OptKind, str]]]) -> OptReading | None:
    first = _FIRST_SENTENCE.match(text)
    if first is None:
        return None
    tokens = strip_fillers(words(first[1]))
    if not tokens or " ".join(tokens) in _NOT_LEADING:
        return None
    language = next((language for kind, language in forms.get(tokens, []) if kind is OptKind.OPT_OUT), None)
    return None if language is None else OptReading(OptKind.OPT_OUT, language, keyword=False)


def _read_request(text: str) -> OptReading | None:
    read = read_request(text)
    if read is None:
        return None
    clear, language = read
    return OptReading(OptKind.OPT_OUT if clear else OptKind.UNCLEAR_STOP, language, keyword=False)


def provider_keyword(text: str) -> str | None:
    """The kind (``opt_out``, ``opt_in``, ``help``) of a message the provider's own filter answers:
    one of ``PROVIDER_KEYWORDS`` as the whole message, surrounding spaces aside, any case."""
    word = text.strip().upper()
    return next((kind for kind, words_ in PROVIDER_KEYWORDS.items() if word in words_), None)
