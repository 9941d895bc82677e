"""The SMS rewrite (purpose ``sms_rewrite``): the text said again within the character limit the
request names, as a model asked to shorten would — whole sentences, the closing question kept."""

from __future__ import annotations

import re

from promptpipe.rules.sms import normalize_gsm7

_LIMIT = re.compile(r"at most (\d+) characters")
# A sentence with the closing quotes or brackets that follow its end.
_SENTENCE = re.compile(r"[^.!?\n]*[.!?]+[\"')\]]*|[^.!?\n]+")
_CLAUSE = re.compile(r"\s+-\s+|,\s+|;\s+|:\s+")


def rewrite_within(text: str, system_text: str) -> str:
    """``text`` within the limit named in ``system_text``: the question it ends with (if any), then
    as many of the first sentences as fit; when even that is too long, the first clauses of each.
    Words are never cut; a text that cannot be shortened this way comes back as short as it got."""
    match = _LIMIT.search(system_text)
    plain = normalize_gsm7(text).strip()
    if match is None or len(plain) <= int(match[1]):
        return plain
    limit = int(match[1])
    sentences = [s.strip() for s in _SENTENCE.findall(plain) if s.strip()]
    question = sentences.pop() if sentences and sentences[-1].rstrip("\"')]").endswith("?") else ""
    kept: list[str] = []
    for sentence in sentences:
        candidate = " ".join([*kept, sentence, question]).strip()
        if len(candidate) <= limit:
            kept.append(sentence)
    if kept or (question and len(question) <= limit):
        return _balanced(" ".join([*kept, question]).strip(), limit)
    shortened = [_first_clause(s) for s in (sentences[:1] + ([question] if question else []))]
    return " ".join(s for s in shortened if s)


def _first_clause(sentence: str) -> str:
    clause = _CLAUSE.split(sentence, maxsplit=1)[0].rstrip(".!?")
    return clause + ("?" if sentence.endswith("?") else ".")


def _balanced(text: str, limit: int) -> str:
    """A quotation opened in a kept sentence and closed in a dropped one is closed again."""
    return text + '"' if text.count('"') % 2 and len(text) < limit else text
