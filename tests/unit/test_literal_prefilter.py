"""The literal prefilters of the safety screen, the opt-out reader, the request for a person and the
tool-intent hints (``rules/literal_prefilter.py``) are exact: every match of each pattern contains one
of its triggers, PROVED over the stdlib regex parser's tree (``tests/support/regex_literals.py``),
alternative by alternative, not sampled.

The proof reads ``re._parser``, a private module of the standard library: at test time only. The run
time never imports it; it holds the triggers as literal strings and checks them with plain ``in``.
A pattern the proof cannot cover fails here with the alternative named. On top of the proof, the
screen and the reader answer every message of every corpus in tests/data alike with and without the
prefilter (the conversations' built part only: the held-out part is never read outside its report).
The case-insensitive intent patterns look for their triggers in the folded text: the fold is proved
exact over every code point (``fold_misses``).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from promptpipe.flow import intent_rules
from promptpipe.rules import ask_person, intent_patterns, literal_prefilter, safety_screen
from promptpipe.rules import opt_out_requests as requests
from promptpipe.rules.literal_prefilter import Prefiltered, fold_case
from promptpipe.rules.opt_out import read_opt_message
from scripts.bench.prefilter import INTENT_PATTERNS, messages
from tests.support.regex_literals import covered, fold_misses, parse, suggest, uncovered

DATA = Path(__file__).resolve().parents[1] / "data"

# --- the proof itself: what it accepts and what it refuses ---------------------------------------


@pytest.mark.parametrize(
    ("pattern", "triggers"),
    [
        ("abc", ["b"]),
        (r"\bkms\b", ["kms"]),
        ("(?:stop|quit) it", ["stop", "quit"]),
        ("(?:stop|quit) it", ["p i", "t i"]),  # the window spans the branch and the literal after it
        ("[ds]ay", ["day", "say"]),  # a class of literal characters is a small set
        ("x(?:ab)+y", ["ab"]),  # a repeat of at least one: its body
        (r"a\s+(?:b|c)d", ["bd", "cd"]),
        ("(?:the )?wrong number", ["wrong"]),
        ("a|b(?:c|d)", ["a", "b"]),
        (r"\w+ing (?:me|you)", ["ing me", "ing you"]),
    ],
)
def test_the_proof_accepts_patterns_whose_every_match_holds_a_trigger(pattern: str, triggers: list[str]) -> None:
    assert covered(parse(pattern), triggers)


@pytest.mark.parametrize(
    ("pattern", "triggers"),
    [
        ("(?:the )?wrong", ["the"]),  # an optional item is no evidence
        ("(?:ab)*c", ["ab"]),  # nor is a repeat that may be absent
        ("a|bc", ["a"]),  # every branch must hold one
        (r"[a-z]+ me", ["x me"]),  # an open class is no evidence
        (".foo", ["afoo"]),
        (r"\bstop\b", ["stop "]),  # an assertion consumes nothing
        (r"stop\s+it", ["stop it"]),  # "\s+" is no space: a tab or two spaces match too
        ("(?i:stop)", ["stop"]),  # case-insensitive: "STOP" matches without the trigger
        ("(?:stop|quit) it", ["stop"]),
    ],
)
def test_the_proof_refuses_patterns_with_a_match_that_holds_no_trigger(pattern: str, triggers: list[str]) -> None:
    assert uncovered(pattern, triggers)
    # ... and each refusal is real: a string the pattern matches without any trigger
    witness = {
        "(?:the )?wrong": "wrong",
        "(?:ab)*c": "c",
        "a|bc": "bc",
        r"[a-z]+ me": "y me",
        ".foo": "bfoo",
        r"\bstop\b": "stop",
        r"stop\s+it": "stop\tit",
        "(?i:stop)": "STOP",
        "(?:stop|quit) it": "quit it",
    }[pattern]
    assert re.fullmatch(pattern, witness) and not any(t in witness for t in triggers)


def test_a_case_insensitive_pattern_is_refused_outright() -> None:
    with pytest.raises(ValueError, match="case-insensitive"):
        parse("(?i)stop")


def test_a_case_insensitive_pattern_is_proved_on_its_literals_for_a_folded_text() -> None:
    """Given as the pattern's flag, the walk reads the literals as written; the fold must then send every
    character that matches a trigger's under the flag to it: ``str.lower`` alone would not ("ſ" matches
    "s", "İ" matches "i" and lowers to two characters), ``fold_case`` does."""
    assert covered(parse(r"\b(?:stop|quit) (?:it|that)\b", re.I), ["stop ", "quit "])
    assert uncovered("(?:stop|Quit) it", ["stop", "quit"], re.I)  # "Quit" as written is not "quit"
    assert re.fullmatch("stop", "ſtop", re.I) and "stop" not in "ſtop".lower()
    assert {("ſ", "s"), ("İ", "")} <= set(fold_misses(["stop", "it"], str.lower))
    assert fold_misses(["stop", "it", "más", "préfère", "mañana", "j'aimerais"], fold_case) == []
    assert fold_case("ſTOP İT") == "stop it"


def test_the_trigger_finder_offers_only_what_the_proof_accepts() -> None:
    for pattern in (r"\b(?:kill|hurt)\s+(?:my ?self|myslef)\b", "no (?:me|nos) (?:mande|envie)", r"x\w*|y+z"):
        found = suggest(parse(pattern))
        assert found and covered(parse(pattern), found)
    assert suggest(parse(r"\w+")) is None


# --- the shipped patterns are covered ----------------------------------------------------------


def _alternatives_missed(cores: tuple[str, ...], triggers: tuple[str, ...]) -> list[str]:
    return [core for core in cores if uncovered(core, triggers)]


def _safety_tables() -> Iterator[tuple[str, Any, tuple[str, ...], Prefiltered]]:
    for language, table, compiled in (
        ("en", safety_screen._EN_PATTERNS, safety_screen._EN),
        ("es", safety_screen._ES_PATTERNS, safety_screen._ES),
    ):
        for (category, cores), (compiled_category, pattern) in zip(table.items(), compiled, strict=True):
            assert category is compiled_category
            yield f"{language} {category}", category, cores, pattern


@pytest.mark.parametrize("name", [name for name, *_ in _safety_tables()])
def test_every_match_of_the_safety_screen_holds_a_trigger_of_its_category(name: str) -> None:
    _, _category, cores, pattern = next(row for row in _safety_tables() if row[0] == name)
    assert pattern.pattern == "|".join(cores)  # the proof reads what is compiled
    assert not _alternatives_missed(cores, pattern.triggers), f"{name}: no trigger proved in these alternatives"
    assert not uncovered(pattern.pattern, pattern.triggers), name


def _request_tables() -> Iterator[tuple[str, tuple[str, ...], tuple[str, ...], Prefiltered, Prefiltered]]:
    tables = {
        "en": (requests._EN_ANCHORED, requests._EN_FLOATING),
        "es": (requests._ES_ANCHORED, requests._ES_FLOATING),
        "fr": (requests._FR_ANCHORED, requests._FR_FLOATING),
        "pt": (requests._PT_ANCHORED, requests._PT_FLOATING),
    }
    for language, anchored, floating in requests._requests():
        yield language, *tables[language], anchored, floating


@pytest.mark.parametrize("language", ["en", "es", "fr", "pt"])
def test_every_match_of_the_request_patterns_holds_a_trigger_of_its_language(language: str) -> None:
    _, anchored_cores, floating_cores, anchored, floating = next(row for row in _request_tables() if row[0] == language)
    missed = _alternatives_missed((*anchored_cores, *floating_cores), anchored.triggers)
    assert not missed, f"{language} anchored: no trigger proved in {missed}"
    missed = _alternatives_missed(floating_cores, floating.triggers)
    assert not missed, f"{language} floating: no trigger proved in {missed}"
    # the whole patterns as compiled (lead, look-arounds and all)
    assert not uncovered(anchored.pattern, anchored.triggers), f"{language} anchored"
    assert not uncovered(floating.pattern, floating.triggers), f"{language} floating"


def test_a_pattern_without_its_trigger_fails_the_proof_naming_the_alternative() -> None:
    cores = (*requests._EN_ANCHORED, r"please go away\b")  # a core added without its trigger
    assert _alternatives_missed(cores, requests._EN_ANCHORED_TRIGGERS) == [r"please go away\b"]


# --- the prefiltered pattern -------------------------------------------------------------------


def _compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The patterns ``rules/literal_prefilter`` compiles from now on, observed from outside."""
    seen: list[str] = []
    compile_pattern = literal_prefilter._compile

    def observed(pattern: str, flags: int) -> re.Pattern[str]:
        seen.append(pattern)
        return compile_pattern(pattern, flags)

    monkeypatch.setattr(literal_prefilter, "_compile", observed)
    return seen


def test_a_prefiltered_pattern_compiles_at_the_first_text_that_could_match(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = _compiles(monkeypatch)
    pattern = Prefiltered(r"\bstop (?:it|that)\b", ("stop ",))
    assert pattern.search("keep going") is None and pattern.match("nope") is None
    assert list(pattern.finditer("keep going")) == []
    assert compiled == []  # no trigger: no compile
    assert pattern.search("please stop now") is None  # a candidate that does not match
    assert compiled == [pattern.pattern]
    found = pattern.search("ok stop it")
    assert found and found.span() == (3, 10)
    assert pattern.search("keep going") is None  # compiled: the pattern alone answers, alike
    assert pattern.match("stop that") and [m.span() for m in pattern.finditer("stop it, stop that")] == [
        (0, 7),
        (9, 18),
    ]
    with pytest.raises(ValueError):
        Prefiltered("x", ())
    with pytest.raises(ValueError):
        Prefiltered("x", ("x", ""))
    assert compiled == [pattern.pattern]  # once


def test_a_case_insensitive_prefiltered_pattern_looks_for_its_triggers_in_the_folded_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compiled = _compiles(monkeypatch)
    pattern = Prefiltered(r"\bstop (?:it|that)\b", ("stop ",), re.I)
    assert pattern.search("Keep Going") is None and compiled == []
    found = pattern.search("OK ſTOP İT")
    assert found and found.group() == "ſTOP İT" and compiled == [pattern.pattern]
    with pytest.raises(ValueError, match="lower case"):
        Prefiltered("stop", ("Stop",), re.I)
    with pytest.raises(ValueError, match="IGNORECASE"):
        Prefiltered("stop", ("stop",), re.M)


# --- with and without the prefilter: the same readings on every corpus --------------------------


def _conversation_messages() -> list[str]:
    """What participants say in the built conversations (never the held-out part)."""
    return messages()


def corpus_messages() -> list[str]:
    texts = [
        line.split("\t")[2]
        for path in sorted((DATA / "safety").glob("*.tsv"))
        for line in path.read_text("utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    for path in (*sorted((DATA / "opt_out").glob("*.jsonl")), *sorted((DATA / "ask_person").glob("*.jsonl"))):
        texts += [json.loads(line)["text"] for line in path.read_text("utf-8").splitlines() if line]
    return texts + _conversation_messages()


MESSAGES = corpus_messages()


def test_the_corpora_are_read_whole() -> None:
    assert len(MESSAGES) > 2000 and len(_conversation_messages()) > 1000


def _cold_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    """The screen's patterns as at a cold start: none compiled, so its next text goes through the prefilter."""
    for name, table, triggers in (
        ("_EN", safety_screen._EN_PATTERNS, safety_screen._EN_TRIGGERS),
        ("_ES", safety_screen._ES_PATTERNS, safety_screen._ES_TRIGGERS),
    ):
        monkeypatch.setattr(safety_screen, name, safety_screen._by_category(table, triggers))


def test_the_screen_reads_every_corpus_message_alike_with_and_without_the_prefilter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each message read first after a cold start (through the prefilter), and by the compiled
    patterns alone (as before the prefilter)."""
    with_prefilter = []
    for text in MESSAGES:
        _cold_screen(monkeypatch)
        with_prefilter.append(safety_screen.screen(text))
    _cold_screen(monkeypatch)
    for _, pattern in (*safety_screen._EN, *safety_screen._ES):
        pattern.compiled  # noqa: B018  (all compiled: each pattern alone reads every text, as before)
    assert [safety_screen.screen(text) for text in MESSAGES] == with_prefilter
    assert sum(reading.flagged for reading in with_prefilter) > 200  # the corpora do reach the patterns


def test_the_opt_out_reader_reads_every_corpus_message_alike_with_and_without_the_prefilter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with_prefilter = []
    for text in MESSAGES:
        requests._requests.cache_clear()  # a cold start: no request pattern compiled
        with_prefilter.append((requests.read_request(text), read_opt_message(text)))
    unfiltered = tuple((language, a.compiled, f.compiled) for language, a, f in requests._requests())
    monkeypatch.setattr(requests, "_requests", lambda: unfiltered)
    assert [(requests.read_request(text), read_opt_message(text)) for text in MESSAGES] == with_prefilter
    assert sum(request is not None for request, _ in with_prefilter) > 100


def test_no_pattern_matches_a_corpus_text_that_holds_none_of_its_triggers() -> None:
    """Each pattern on its own, on the very text it runs on (the screen's normal form; the reader's
    clauses): the prefilter's "cannot match" is never wrong."""
    normal = [safety_screen.normalise(text) for text in MESSAGES]
    for _, _, _, pattern in _safety_tables():
        for text in normal:
            assert pattern.could_match(text) or pattern.compiled.search(text) is None, text
    clauses = [
        re.sub(r"\s+", " ", clause.strip(" '\""))
        for text in MESSAGES
        for clause in requests._CLAUSE.split(requests._mend(requests.fold_accents(requests.normalise_text(text))))
    ]
    for _, anchored, floating in requests._requests():
        for clause in clauses:
            assert anchored.could_match(clause) or anchored.compiled.match(clause) is None, clause
            assert floating.could_match(clause) or not list(floating.compiled.finditer(clause)), clause


# --- the request for a person (rules/ask_person.py) ------------------------------------------------


def test_every_match_of_the_request_for_a_person_holds_a_trigger() -> None:
    cores = (*ask_person._EN, *ask_person._ES)
    assert ask_person._PATTERN.pattern == "|".join(cores)
    missed = _alternatives_missed(cores, ask_person._PATTERN.triggers)
    assert not missed, f"no trigger proved in {missed}"
    assert not uncovered(ask_person._PATTERN.pattern, ask_person._PATTERN.triggers)


def test_the_request_for_a_person_reads_every_corpus_message_alike_with_and_without_the_prefilter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each message read as at a cold start (nothing compiled), then by the compiled pattern alone, then
    pattern by pattern as before the patterns were joined."""
    with_prefilter = []
    for text in MESSAGES:
        monkeypatch.setattr(ask_person, "_PATTERN", Prefiltered(ask_person._PATTERN.pattern, ask_person._TRIGGERS))
        with_prefilter.append(ask_person.asks_for_person(text))
    one_by_one = [re.compile(core) for core in (*ask_person._EN, *ask_person._ES)]

    class _AnyOf:
        def search(self, text: str) -> bool:
            return any(pattern.search(text) for pattern in one_by_one)

    monkeypatch.setattr(ask_person, "_PATTERN", _AnyOf())
    assert [ask_person.asks_for_person(text) for text in MESSAGES] == with_prefilter
    assert sum(with_prefilter) > 15  # the corpora do reach the pattern


# --- the tool-intent hints (rules/intent_patterns.py, flow/intent_rules.py): case-insensitive -------


@pytest.mark.parametrize("name", list(INTENT_PATTERNS))
def test_every_match_of_an_intent_pattern_holds_a_trigger_in_the_folded_text(name: str) -> None:
    pattern = INTENT_PATTERNS[name]
    assert pattern.flags == re.IGNORECASE
    assert not uncovered(pattern.pattern, pattern.triggers, pattern.flags), name
    assert fold_misses(pattern.triggers, fold_case) == [], name


def _phrasings() -> list[str]:
    """The messages the unit tests of the intent rules and the offline coach write as people do."""
    texts: set[str] = set()
    for path in sorted(Path(__file__).parent.glob("test_*.py")):
        if path.name.startswith(("test_intent", "test_offline_coach", "test_message_reading", "test_feedback")):
            tree = ast.parse(path.read_text("utf-8"))
            texts |= {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    texts |= {  # and a few more as people write them, near each pattern's edge
        "can u send me a prompt now??",
        "Give me something to try NOW",
        "try one now pls",
        "send me the habit... not now",
        "WHEN is my reminder",
        "Stop texting me.",
        "I'd rather do it at 7 in the evening from now on",
        "ſtop the reminders",
        "İs there any way to move it later on?",
    }
    return sorted(t for t in texts if 0 < len(t) < 400)


def test_the_intent_patterns_read_every_corpus_message_and_phrasing_alike_with_and_without_the_prefilter() -> None:
    """Each text (every corpus message and unit phrasing, as written, in capitals and in title case) read
    by each intent pattern as at a cold start (nothing compiled: through the folded triggers), then by the
    pattern compiled plain, as before the prefilter: the same match, span for span."""
    phrasings = _phrasings()
    assert len(phrasings) > 500
    texts = [variant for text in (*MESSAGES, *phrasings) for variant in (text, text.upper(), text.title())]
    reached = dict.fromkeys(INTENT_PATTERNS, 0)
    for name, shipped in INTENT_PATTERNS.items():
        plain = re.compile(shipped.pattern, re.IGNORECASE)
        read = "match" if shipped.pattern.startswith("^") else "search"
        for text in texts:
            cold = Prefiltered(shipped.pattern, shipped.triggers, shipped.flags)
            found, expected = getattr(cold, read)(text), getattr(plain, read)(text)
            assert (found and found.span()) == (expected and expected.span()), (name, text)
            reached[name] += expected is not None
    assert all(reached.values()), reached  # the texts do reach every pattern
    for text in texts:  # and the readers built on them
        assert intent_patterns.is_capability_question(text) == _plain_capability_question(text), text


def _plain_capability_question(text: str) -> bool:
    def plain(pattern: Prefiltered) -> re.Pattern[str]:
        return re.compile(pattern.pattern, re.IGNORECASE)

    if plain(intent_patterns._CAPABILITY).search(text):
        return True
    asked = "?" in text or bool(plain(intent_patterns._QUESTION_START).match(text.strip()))
    return asked and bool(plain(intent_patterns._LATER).search(text))


def test_every_prefiltered_intent_pattern_is_proved_here() -> None:
    """A pattern added to the intent modules behind a prefilter is in the table the proof walks."""
    shipped = {
        id(value)
        for module in (intent_patterns, intent_rules)
        for value in vars(module).values()
        if isinstance(value, Prefiltered)
    }
    assert shipped == {id(pattern) for pattern in INTENT_PATTERNS.values()}
