"""The repository stands alone: it cites only its own documents, and every citation resolves.

Code, tests, infrastructure and docs cite rules as ``docs/behaviour.md#B-TONE-9`` (or a section of another
file under ``docs/``). A citation of a document that is not in the repository — the team's working
notes, numbered decisions, tracker items — cannot be followed by a reader; these tests list, as
``file:line``, any such citation or any link that points nowhere.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SECTION = "\u00a7"  # the section sign, spelled out so that this file does not cite anything
SCANNED_ROOTS = ("shared", "functions", "infra", "tests", "scripts", "docs", "prompts", ".ci")
SCANNED_FILES = ("README.md", "Makefile", "pyproject.toml", "cdk.json", "CHANGELOG.md")
SCANNED_SUFFIXES = (".py", ".md", ".json", ".txt", ".toml", ".yml", ".yaml", ".cfg", ".ini")

# Citations of documents outside the repository; each word is split so that this file matches none.
FORBIDDEN_RE = re.compile(
    "|".join(
        f"(?:{p})"
        for p in (
            r"\b" + "FACT" + r"S\b",
            r"\b" + "DESIG" + rf"N(?:\.md|\s*{SECTION}|'s\b)",
            "AWS" + "_NOTES",
            r"\b" + "STYL" + r"E\.md",
            r"\b[Dd]ecisions?\s+\d+",
            rf"\b[Cc]ontract\s+(?:{SECTION}|scenarios?\s+\d)",
            rf"{SECTION}\s?\d",
            r"\bseeds?\s+0\d\d\b",
            r"\bseed" r"s/",
            r"(?:\.\./|/work/)shared/",
            r"\bissues?\s+\d+\b",
        )
    )
)


def scanned_files(root: Path = ROOT) -> Iterator[Path]:
    """Tracked and new (not ignored) files of the repository that may cite documents."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: walk the scanned folders
        listed = [*SCANNED_FILES]
        for top in SCANNED_ROOTS:
            listed.extend(
                p.relative_to(root).as_posix() for p in (root / top).rglob("*") if "__pycache__" not in p.parts
            )
    for name in sorted(set(listed)):
        path = root / name
        if not path.is_file():
            continue
        top = name.split("/", 1)[0]
        if name in SCANNED_FILES or (top in SCANNED_ROOTS and (path.suffix in SCANNED_SUFFIXES or top == ".ci")):
            yield path


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
    # Then there are none
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
