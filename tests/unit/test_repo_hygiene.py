"""The repository stands alone: it cites only its own documents, and every citation resolves.

Code, tests, infrastructure and docs cite rules as ``docs/behaviour.md#B-TONE-9`` (or a section of another
file under ``docs/``). A citation of a document that is not in the repository — the team's working
notes, numbered decisions, tracker items — cannot be followed by a reader; ``scripts/rewrite_refs.py``
rewrites most of them, and these tests list, as ``file:line``, any that remain or any link that points
nowhere.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scripts.rewrite_refs import (
    DESIGN_WORD,
    FORBIDDEN_RE,
    NOTES_WORD,
    REFERENCE_WORD,
    ROOT,
    SECTION,
    keep_banner_width,
    rewrite_line,
    scanned_files,
)

DOC_LINK = re.compile(r"\bdocs/([\w-]+\.md)#([\w-]+)")
BARE_ID = re.compile(r"\b(B-[A-Z]+-\d+|SC-\d+)\b")


def _lines() -> list[tuple[str, int, str]]:
    out = []
    for path in scanned_files(ROOT):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        rel = path.relative_to(ROOT).as_posix()
        out.extend((rel, number, line) for number, line in enumerate(text.splitlines(), start=1))
    return out


def _anchors(doc: Path) -> set[str]:
    """Explicit ``<a id="…">`` anchors and GitHub's slugs of the headings."""
    text = doc.read_text(encoding="utf-8")
    anchors = set(re.findall(r'<a id="([^"]+)"', text))
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*$", text, re.M):
        anchors.add(re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-"))
    return anchors


def test_no_file_cites_a_document_outside_the_repository() -> None:
    # Given every source, test, infrastructure and documentation file of the repository
    # When each line is searched for citations of documents that are not in it
    found = [
        f"{path}:{number}: {m.group(0)!r} in {line.strip()[:100]}"
        for path, number, line in _lines()
        for m in [FORBIDDEN_RE.search(line)]
        if m
    ]
    # Then there are none (python -m scripts.rewrite_refs rewrites most of them)
    assert not found, "citations of documents outside the repository:\n" + "\n".join(found)


def test_every_docs_link_resolves_to_a_file_and_an_anchor() -> None:
    # Given every docs/<file>.md#<anchor> citation in the repository
    anchors: dict[str, set[str]] = {}
    broken = []
    for path, number, line in _lines():
        for match in DOC_LINK.finditer(line):
            name, anchor = match.groups()
            doc = ROOT / "docs" / name
            if name not in anchors:
                anchors[name] = _anchors(doc) if doc.is_file() else set()
            # Then the file exists and has the anchor
            if anchor not in anchors[name]:
                broken.append(f"{path}:{number}: {match.group(0)}")
    assert not broken, "links to missing documents or anchors:\n" + "\n".join(broken)


def test_every_rule_id_cited_is_defined_in_behaviour_md() -> None:
    # Given the rule and scenario ids defined in docs/behaviour.md
    defined = _anchors(ROOT / "docs" / "behaviour.md")
    assert {"B-TURN-1", "B-TONE-9", "SC-12"} <= defined
    # When the repository cites a rule or scenario id anywhere
    unknown = [
        f"{path}:{number}: {m.group(1)}"
        for path, number, line in _lines()
        for m in BARE_ID.finditer(line)
        if m.group(1) not in defined
    ]
    # Then it is one of them
    assert not unknown, "rule ids not defined in docs/behaviour.md:\n" + "\n".join(unknown)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            f"``transition_state`` ({REFERENCE_WORD} {SECTION}6, {SECTION}11 ST1–ST6; contract "
            f"scenario 5; decision" + " 8) with fakes.",
            "``transition_state`` (docs/behaviour.md#transitions, SC-5, B-TRANS-3, cases ST1–ST6) with fakes.",
        ),
        (
            "# round up, never truncate to zero (decision" + " 8).",
            "# round up, never truncate to zero (docs/behaviour.md#B-TRANS-4).",
        ),
        (
            f"a tool bug must reach the model ({SECTION}8.1 rule 5)",
            "a tool bug must reach the model (docs/behaviour.md#B-LOOP-3)",
        ),
        (
            f'"""The one stack ({DESIGN_WORD} {SECTION}8, {NOTES_WORD} {SECTION}3)."""',
            '"""The one stack (docs/architecture.md#infrastructure, docs/platform.md#cdk-bundling)."""',
        ),
        (f"# {REFERENCE_WORD} M4: rejected there too", "# docs/behaviour.md#M4: rejected there too"),
        ('"""Seven days, end to end (issue' + f' 3 {SECTION}7)."""', '"""Seven days, end to end."""'),
        ("envelope of seed" + " 001.", "envelope of docs/behaviour.md#B-API-1."),
    ],
)
def test_rewrite_maps_each_kind_of_citation(before: str, after: str) -> None:
    # Given a line citing documents outside the repository / When rewritten
    new, problems = rewrite_line(before)
    # Then it cites the repository's own docs, and a second pass changes nothing
    assert (new, problems) == (after, [])
    assert rewrite_line(new) == (new, [])


@pytest.mark.parametrize(
    ("line", "unmapped"),
    [
        # a section no table covers
        (f"see {REFERENCE_WORD} {SECTION}99 for why", f"{REFERENCE_WORD} {SECTION}99"),
        # a tracker item inside a sentence: dropping it would break the sentence
        ("# compared with the revision before issue" + " 14.", "issue" + " 14"),
        # the design notes named in prose
        (f"keeps {DESIGN_WORD}'s properties", DESIGN_WORD),
        # a specification whose page does not exist
        ("the controller of seed" + " 009", "seed" + " 009"),
    ],
)
def test_rewrite_reports_what_it_cannot_map_and_leaves_it(line: str, unmapped: str) -> None:
    # When rewritten / Then the line is left as it is and the citation reported
    assert rewrite_line(line) == (line, [unmapped])


def test_a_rewritten_banner_keeps_its_width() -> None:
    old = "# === lifecycle: decision" + " 4 " + "=" * 60
    new, _ = rewrite_line(old)
    assert new.startswith("# === lifecycle: docs/behaviour.md#B-LIFE-1 ===")
    assert len(new) == len(old)
    assert keep_banner_width("plain", "text") == "text"


def test_make_help_lists_every_target() -> None:
    # Given the Makefile's declared targets
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    phony = re.search(r"^\.PHONY:(.*)$", makefile, re.M)
    assert phony is not None
    targets = phony.group(1).split()
    # Then each is a rule with a "## what it does" comment, which is what `make help` prints
    described = set(re.findall(r"^([a-z][a-z-]*):[^\n]*## ", makefile, re.M))
    assert set(targets) <= described, f"targets without a help line: {sorted(set(targets) - described)}"
    assert described <= set(targets), f"rules missing from .PHONY: {sorted(described - set(targets))}"
