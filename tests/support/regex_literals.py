"""A proof, over the stdlib regex parser's tree, that every match of a pattern contains one of a set of
literal strings (the triggers of ``rules/literal_prefilter.py``).

Test-time only: it reads ``re._parser`` (``sre_parse``), a private module of the standard library,
which run-time code never imports. Nothing is sampled: the walk shows, for each alternative of the
pattern, that its every match necessarily spells one trigger.

The rule, on a sequence of items (each consumed right after the one before):

- a *window* of consecutive items each of whose languages is a small finite set of strings (a literal,
  a class of literal characters, a group or a branch of such items, a bounded repeat of one, a
  zero-width assertion as the empty string) spells, in every match, one string of the product of
  those sets: when every string of that product contains a trigger, the sequence is covered;
- or a mandatory item is itself covered: a group by its sequence, a branch when every branch is, a
  repeat with a minimum of at least one by its body.

Optional items, open classes, ``.`` and assertions are never evidence on their own (an optional item's
set holds the empty string, so a window made of it alone never passes). A case-insensitive flag inside
the pattern ends the proof (a literal would no longer be itself).

Case-insensitive patterns (``re.IGNORECASE`` given as the pattern's flag, ``parse(pattern, re.I)``):
the walk is the same, on the literals as written, and the reader looks for the triggers in the text
folded (``rules/literal_prefilter.fold_case``). That is exact when the fold sends every character that
matches a trigger's character under the flag to that very character, one for one: ``fold_misses``
checks it over every code point. Then a match that spells a trigger ``t`` in the pattern's literals
spells, in the text, characters that each match ``t``'s under the flag, which the fold turns into ``t``
(``str.translate`` and ``str.lower`` map a character to characters of its own; only a capital sigma
reads its neighbours, and it folds to a sigma, which no Latin trigger holds).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

_parser: Any = getattr(re, "_parser", None)  # Python 3.11+: the stdlib's regex parser
_constants: Any = getattr(re, "_constants", None)

# A window's language is expanded while it stays this small: larger products are not evidence.
LIMIT = 256


def _repeats() -> tuple[Any, ...]:
    names = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
    return tuple(getattr(_constants, name) for name in names if hasattr(_constants, name))


def parse(pattern: str, flags: int = 0) -> Any:
    """The parser's tree of ``pattern`` compiled with ``flags`` (a ``SubPattern``), refusing a pattern
    made case-insensitive by an inline flag: only ``re.IGNORECASE`` given in ``flags`` says that the
    reader folds the text before looking for the triggers."""
    tree = _parser.parse(pattern, flags)
    if tree.state.flags & _constants.SRE_FLAG_IGNORECASE and not flags & re.IGNORECASE:
        raise ValueError(f"case-insensitive pattern: {pattern!r}")
    return tree


def fold_misses(triggers: Iterable[str], fold: Callable[[str], str]) -> list[tuple[str, str]]:
    """(character, trigger character) for every code point that matches a character of ``triggers``
    under ``re.IGNORECASE`` and that ``fold`` does not turn into it, alone; and any code point that
    ``fold`` spells as other than one character. Empty: looking for the triggers in the folded text
    misses no case-insensitive match (module docstring)."""
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    misses = [(x, "") for x in every if len(fold(x)) != 1]
    for wanted in sorted(set("".join(triggers))):
        misses += [(x, wanted) for x in re.findall(re.escape(wanted), every, re.IGNORECASE) if fold(x) != wanted]
    return misses


def _product(languages: Iterable[frozenset[str] | None]) -> frozenset[str] | None:
    result = frozenset([""])
    for language in languages:
        if language is None:
            return None
        result = frozenset(a + b for a in result for b in language)
        if len(result) > LIMIT:
            return None
    return result


def language(item: tuple[Any, Any]) -> frozenset[str] | None:
    """Every string ``item`` can consume, when that is a set of at most ``LIMIT`` strings; else ``None``."""
    op, av = item
    c = _constants
    if op is c.LITERAL:
        return frozenset([chr(av)])
    if op is c.IN:
        if all(member_op is c.LITERAL for member_op, _ in av):
            return frozenset(chr(code) for _, code in av)
        return None  # a range, a category, a negated class: open
    if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
        return frozenset([""])  # consumes nothing
    if op is c.SUBPATTERN:
        _group, add_flags, del_flags, body = av
        if add_flags or del_flags:
            return None
        return sequence_language(body)
    if op is c.BRANCH:
        union: set[str] = set()
        for branch in av[1]:
            branch_language = sequence_language(branch)
            if branch_language is None:
                return None
            union |= branch_language
        return frozenset(union) if len(union) <= LIMIT else None
    if op in _repeats():
        low, high, body = av
        if high is c.MAXREPEAT or high > 8:
            return None
        body_language = sequence_language(body)
        if body_language is None:
            return None
        repeated: set[str] = set()
        for count in range(low, high + 1):
            product = _product([body_language] * count)
            if product is None:
                return None
            repeated |= product
        return frozenset(repeated) if len(repeated) <= LIMIT else None
    return None


def sequence_language(items: Sequence[tuple[Any, Any]]) -> frozenset[str] | None:
    return _product(language(item) for item in items)


def _spells_a_trigger(strings: frozenset[str] | None, triggers: Sequence[str]) -> bool:
    return strings is not None and all(any(t in s for t in triggers) for s in strings)


def covered(items: Sequence[tuple[Any, Any]], triggers: Sequence[str]) -> bool:
    """Every match of the sequence ``items`` contains one of ``triggers`` (by the rule above)."""
    items = list(items)
    for start in range(len(items)):
        for end in range(start + 1, len(items) + 1):
            window = sequence_language(items[start:end])
            if window is None:
                break  # a longer window from this start is no smaller
            if _spells_a_trigger(window, triggers):
                return True
    return any(_item_covered(item, triggers) for item in items)


def _item_covered(item: tuple[Any, Any], triggers: Sequence[str]) -> bool:
    op, av = item
    c = _constants
    if op is c.SUBPATTERN:
        _group, add_flags, del_flags, body = av
        return not (add_flags or del_flags) and covered(body, triggers)
    if op is c.BRANCH:
        return all(covered(branch, triggers) for branch in av[1])
    if op in _repeats():
        low, _high, body = av
        return bool(low >= 1) and covered(body, triggers)
    return False


def uncovered(pattern: str, triggers: Sequence[str], flags: int = 0) -> bool:
    """``True`` when the proof cannot show that every match of ``pattern`` contains a trigger."""
    return not covered(parse(pattern, flags), triggers)


def _reduced(strings: Iterable[str]) -> tuple[str, ...]:
    """``strings`` without any that contains another (it would add nothing to ``any(t in text …)``)."""
    unique = sorted(set(strings), key=lambda t: (len(t), t))
    kept: list[str] = []
    for candidate in unique:
        if not any(shorter in candidate for shorter in kept):
            kept.append(candidate)
    return tuple(kept)


def _score(triggers: tuple[str, ...], reference: Sequence[str]) -> tuple[int, int, int]:
    hits = sum(any(t in text for t in triggers) for text in reference)
    shortest = min(len(t.strip()) for t in triggers)
    return (hits, -min(shortest, 10), len(triggers))


def suggest(items: Sequence[tuple[Any, Any]], reference: Sequence[str] = (), most: int = 12) -> tuple[str, ...] | None:
    """Triggers the proof accepts for the sequence ``items``: those that the fewest ``reference`` texts
    hold, then the longest (at most ``most`` strings a window). A way to choose them, not part of the
    proof (which checks the chosen ones)."""
    items = list(items)
    options: list[tuple[str, ...]] = []
    for start in range(len(items)):
        for end in range(start + 1, len(items) + 1):
            window = sequence_language(items[start:end])
            if window is None:
                break
            if "" not in window and all(s.strip() for s in window) and len(window) <= most:
                options.append(_reduced(window))
    for op, av in items:
        inner: tuple[str, ...] | None = None
        if op is _constants.SUBPATTERN and not (av[1] or av[2]):
            inner = suggest(av[3], reference, most)
        elif op is _constants.BRANCH:
            parts = [suggest(branch, reference, most) for branch in av[1]]
            inner = None if any(p is None for p in parts) else _reduced(t for p in parts for t in p or ())
        elif op in _repeats() and av[0] >= 1:
            inner = suggest(av[2], reference, most)
        if inner:
            options.append(inner)
    return min(options, key=lambda option: _score(option, reference)) if options else None


if __name__ == "__main__":  # python -m tests.support.regex_literals: suggested triggers per core
    import json
    from pathlib import Path

    from promptpipe.rules import opt_out_requests, safety_screen
    from promptpipe.rules.normalise import fold_accents, normalise_text

    # What the triggers should not hold. For the request patterns: the built opt-out corpus's other
    # messages and the safety corpus's hard negatives. For the screen: those other messages and the
    # coach's prompt texts, ordinary prose (the hard negatives are crowded with crisis words on purpose).
    data = Path(__file__).resolve().parents[1] / "data"
    ordinary = [
        row["text"]
        for row in map(json.loads, (data / "opt_out" / "built.jsonl").read_text().splitlines())
        if row["label"] != "opt_out"
    ]
    negatives = [line.split("\t")[2] for line in (data / "safety" / "built_negative.tsv").read_text().splitlines()[1:]]
    prompts = Path(__file__).resolve().parents[2] / "prompts"
    prose = [line for path in sorted(prompts.glob("*.txt")) for line in path.read_text().splitlines() if line.strip()]
    safety_reference = [safety_screen.normalise(t) for t in ordinary + prose]
    opt_out_reference = [fold_accents(normalise_text(t)) for t in negatives + ordinary]

    def show(name: str, cores: Iterable[str]) -> None:
        reference = opt_out_reference if " " in name else safety_reference
        chosen: list[str] = []
        for core in cores:
            triggers = suggest(parse(core), reference)
            print(f"  {core[:70]!r} -> {triggers}")
            chosen.extend(triggers or ["<NONE>"])
        print(name, _reduced(chosen))

    for table in (safety_screen._EN_PATTERNS, safety_screen._ES_PATTERNS):
        for category, patterns in table.items():
            show(str(category), patterns)
    r = opt_out_requests
    for lang, anchored, floating in (
        ("en", r._EN_ANCHORED, r._EN_FLOATING),
        ("es", r._ES_ANCHORED, r._ES_FLOATING),
        ("fr", r._FR_ANCHORED, r._FR_FLOATING),
        ("pt", r._PT_ANCHORED, r._PT_FLOATING),
    ):
        show(lang + " anchored", anchored)
        show(lang + " floating", floating)
