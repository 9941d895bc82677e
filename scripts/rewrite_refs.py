"""Rewrite citations of documents outside the repository into citations of its own docs.

Early code cited the team's working notes (the behaviour facts, the design notes, the platform notes,
the source specifications, numbered decisions and tracker items). Those are not part of the
repository, so a reader cannot follow them. This script finds such citations and rewrites each run
of them into ids of ``docs/behaviour.md`` (rules ``B-…``, scenarios ``SC-…``, reference cases),
sections of ``docs/architecture.md`` or ``docs/platform.md``; tracker items are dropped.

    python -m scripts.rewrite_refs            # rewrite in place, print every change
    python -m scripts.rewrite_refs --check    # print what would change; exit 1 if anything would

It is idempotent (its output contains nothing it rewrites) and prints, as ``UNMAPPED``, every
citation it found but could not map; those are left as they are, and the hygiene test
(``tests/unit/test_repo_hygiene.py``) keeps failing until someone rewrites them by hand. The
patterns are written so that this file does not match them itself.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from scripts.citation_map import (
    ARCHITECTURE,
    BEHAVIOUR,
    CONTRACT_REFINED,
    CONTRACT_SECTIONS,
    DECISION_KEYWORDS,
    DECISIONS,
    DESIGN_SECTIONS,
    NOTES_SECTIONS,
    PLATFORM,
    REF_SUBSECTIONS,
    REFERENCE_SECTIONS,
    SEEDS,
)

ROOT = Path(__file__).resolve().parent.parent
SECTION = "\u00a7"  # the section sign, spelled out so that this file does not cite anything
REFERENCE_WORD = "FACT" + "S"
DESIGN_WORD = "DESIG" + "N"
NOTES_WORD = "AWS" + "_NOTES"
STYLE_WORD = "STYL" + "E"

SCANNED_ROOTS = ("shared", "functions", "infra", "tests", "scripts", "docs", "prompts", ".ci")
SCANNED_FILES = ("README.md", "Makefile", "pyproject.toml", "cdk.json", "CHANGELOG.md")
SCANNED_SUFFIXES = (".py", ".md", ".json", ".txt", ".toml", ".yml", ".yaml", ".cfg", ".ini")

# --- the patterns -------------------------------------------------------------------------------
_NUM = r"\d+(?:\.\d+)*"
_SEC = rf"{SECTION}\s?{_NUM}(?:\([a-z]\))?(?:\s?[–-]\s?(?:{SECTION}\s?)?{_NUM})?"
_SUFFIX = r'(?:\s+"[^"\n]{1,40}")?(?:\s+(?:steps?|rules?|key|items?)\s+\d+(?:\s?[–-]\s?\d+)?)?(?:\s+bug\b)?'
_CASE = r"[A-Z]{1,2}\d{1,2}(?:\s?[–-]\s?[A-Z]{0,2}\d{1,2})?"
_CASES = rf"\(?\b{_CASE}(?:(?:,\s|\sand\s){_CASE})*\b\)?"
_NUMLIST = r"\d+(?:\s?[–-]\s?\d+)?(?:(?:,\s?|\s+and\s+)\d+(?:\s?[–-]\s?\d+)?)*"

_START = (
    rf"\b{REFERENCE_WORD}\b(?:\s+{_SEC}{_SUFFIX})?(?:\s+{_CASES})?(?:\s+{_SEC})?",
    rf"\b{DESIGN_WORD}\b(?:\.md)?(?:\s+{_SEC})?",
    rf"\b{NOTES_WORD}\b(?:\.md)?(?:\s+{_SEC})?",
    rf"\b{STYLE_WORD}\.md",
    rf"\b[Cc]ontract\s+{_SEC}{_SUFFIX}",
    rf"\b[Cc]ontract\s+scenarios?\s+{_NUMLIST}",
    rf"\b[Dd]ecisions?\s+{_NUMLIST}",
    r"\bseeds?\s+0\d\d\b",
    r"\bseed" r"s/[\w.…/-]*",  # split: this file names the pattern, it cites nothing
    r"(?:\.\./|/work/)shared/[\w.…/-]*",
    rf"\bissues?\s+\d+(?:\s+(?:{SECTION}\s?|items?\s+)\d+(?:\s?[–-]\s?\d+)?)?(?:,\s*lite)?",
    rf"(?<![\w{SECTION}]){_SEC}{_SUFFIX}",
)
_CONTINUE = (
    *_START,
    rf"\bscenarios?\s+{_NUMLIST}",
    r'"[^"\n]{1,40}"',
    _CASES,
)
_SEP = r"(?:,\s*|;\s*|\s+and\s+|\s*/\s*|\s+(?=\(?[A-Z]{1,2}\d|" + SECTION + r"))"
START_RE = re.compile("|".join(f"(?:{p})" for p in _START))
TOKEN_RE = re.compile("|".join(f"(?:{p})" for p in _CONTINUE))
RUN_RE = re.compile(rf"(?:{START_RE.pattern})(?:{_SEP}(?:{TOKEN_RE.pattern}))*")

# What the hygiene test forbids anywhere in the repository (kept here so both agree).
FORBIDDEN = (
    rf"\b{REFERENCE_WORD}\b",
    rf"\b{DESIGN_WORD}(?:\.md|\s*{SECTION}|'s\b)",
    NOTES_WORD,
    rf"\b{STYLE_WORD}\.md",
    r"\b[Dd]ecisions?\s+\d+",
    rf"\b[Cc]ontract\s+(?:{SECTION}|scenarios?\s+\d)",
    rf"{SECTION}\s?\d",
    r"\bseeds?\s+0\d\d\b",
    r"\bseed" r"s/",
    r"(?:\.\./|/work/)shared/",
    r"\bissues?\s+\d+\b",
)
FORBIDDEN_RE = re.compile("|".join(f"(?:{p})" for p in FORBIDDEN))


@dataclass(frozen=True)
class Target:
    """Where one citation now points: a document (path with an optional #anchor) or a case label."""

    link: str
    label: str | None = None  # reference cases: "cases T1–T18"


class Unmapped(ValueError):
    """A citation the tables do not cover."""


def _sections(token: str) -> list[str]:
    """Section numbers of a token: '<sign>4.2–4.3' gives ['4.2', '4.3'], '<sign>1(a)' gives ['1'].

    Only the part before a quoted sub-heading or a "step/rule/key/item" suffix counts."""
    head = re.split(r'"|\s(?:steps?|rules?|key|items?|bug)\b', token)[0]
    match = re.search(rf"{SECTION}\s?({_NUM})(?:\([a-z]\))?(?:\s?[–-]\s?(?:{SECTION}\s?)?({_NUM}))?", head)
    if match is None:
        return []
    return [n for n in match.groups() if n]


def _numbers(text: str) -> list[int]:
    """'3–6, 8 and 10' → [3, 4, 5, 6, 8, 10]."""
    out: list[int] = []
    for first, last in re.findall(r"(\d+)(?:\s?[–-]\s?(\d+))?", text):
        start, end = int(first), int(last or first)
        out.extend(range(start, end + 1))
    return out


def _behaviour(anchor: str) -> Target:
    return Target(f"{BEHAVIOUR}#{anchor}")


def _facts(token: str, line: str) -> list[Target]:
    sections = _sections(token)
    cases = re.search(rf"{_CASES}\s*$", token.replace(REFERENCE_WORD, "", 1).strip())
    out: list[Target] = []
    if not sections:
        if cases and cases.group(0).strip("()"):
            return [Target(f"{BEHAVIOUR}#cases", cases.group(0).strip("()"))]
        return [Target(BEHAVIOUR)]
    number = sections[0]
    if number not in REFERENCE_SECTIONS:
        raise Unmapped(token)
    refined = next((a for (n, key), a in REF_SUBSECTIONS.items() if n == number and key in token.lower()), None)
    if refined is None:
        refined = next((a for (n, key), a in REF_SUBSECTIONS.items() if n == number and key in line.lower()), None)
    if number == "11" and cases:
        out.append(Target(f"{BEHAVIOUR}#cases", cases.group(0).strip("()")))
    else:
        out.append(_behaviour(refined or REFERENCE_SECTIONS[number]))
    return out


def _contract(token: str, line: str) -> list[Target]:
    if re.search(r"scenarios?", token):
        return [_behaviour(f"SC-{n}") for n in _numbers(token.split("scenario", 1)[1])]
    sections = _sections(token)
    if not sections:
        raise Unmapped(token)
    out: list[Target] = []
    lowered = (token + " " + line).lower()
    for number in sections:
        refined = next((a for (n, key), a in CONTRACT_REFINED.items() if n == number and key in lowered), None)
        anchor = refined or CONTRACT_SECTIONS.get(number)
        if anchor is None:
            raise Unmapped(token)
        out.append(_behaviour(anchor))
    return out


def _decisions(token: str, line: str) -> list[Target]:
    lowered = line.lower()
    out: list[Target] = []
    for number in _numbers(token.split(None, 1)[1]):
        if number not in DECISIONS:
            raise Unmapped(token)
        keywords = DECISION_KEYWORDS.get(number, ())
        anchor = next((a for key, a in keywords if key in lowered), DECISIONS[number])
        out.append(_behaviour(anchor))
    return out


def _design(token: str, line: str) -> list[Target]:
    sections = _sections(token)
    if not sections:
        if not token.endswith(".md"):
            raise Unmapped(token)  # the design notes named in prose: a sentence to rewrite by hand
        return [Target(ARCHITECTURE)]
    out = []
    for number in sections:
        link = DESIGN_SECTIONS.get(number.split(".")[0])
        if link is None:
            raise Unmapped(token)
        if number == "4" and re.search(r"\b(name|timer|schedul)", line.lower()):
            link = f"{ARCHITECTURE}#timers"
        out.append(Target(link))
    return out


def _notes(token: str, line: str) -> list[Target]:
    sections = _sections(token)
    if not sections:
        return [Target(PLATFORM)]
    link = NOTES_SECTIONS.get(sections[0].split(".")[0])
    if link is None:
        raise Unmapped(token)
    return [Target(link)]


def _fixed(link: str) -> Mapper:
    return lambda token, line: [Target(link)]


def _seed(token: str, line: str) -> list[Target]:
    link = SEEDS.get(token[-3:])
    if link is None or not (_REPO[0] / link.partition("#")[0]).is_file():
        raise Unmapped(token)
    return [Target(link)]


def _dropped(token: str, line: str) -> list[Target]:
    return []


def _cases(token: str, line: str) -> list[Target]:
    return [Target(f"{BEHAVIOUR}#cases", token.strip("()"))]


Mapper = Callable[[str, str], list[Target]]
# (how a token starts, how it maps, the context it leaves for bare sections; None keeps the old one)
_DISPATCH: tuple[tuple[re.Pattern[str], Mapper, str | None], ...] = (
    (re.compile(rf"{REFERENCE_WORD}\b"), _facts, "facts"),
    (re.compile(rf"{DESIGN_WORD}\b"), _design, "design"),
    (re.compile(rf"{NOTES_WORD}\b"), _notes, "notes"),
    (re.compile(rf"{STYLE_WORD}\.md"), _fixed(ARCHITECTURE), None),
    (re.compile(r"[Cc]ontract\b"), _contract, "contract"),
    (re.compile(r"[Dd]ecisions?\b"), _decisions, None),
    (re.compile(r"seeds?\s+0"), _seed, None),
    (re.compile(r"(?:seeds?/|\.\./|/work/)"), _fixed(BEHAVIOUR), None),
    (re.compile(r"issues?\b"), _dropped, None),
    (re.compile(r"scenarios?\b"), lambda token, line: _contract("contract " + token, line), "contract"),
    (re.compile(r'"'), _dropped, None),
)
_BARE_SECTION: dict[str | None, tuple[str, Mapper]] = {
    None: ("contract", _contract),
    "contract": ("contract", _contract),
    "facts": (REFERENCE_WORD, _facts),
    "design": (DESIGN_WORD, _design),
    "notes": (NOTES_WORD, _notes),
}


def map_token(token: str, context: str | None, line: str) -> tuple[list[Target], str | None]:
    """The targets of one citation token, and the document context it leaves for bare sections."""
    t = token.strip()
    for start, mapper, leaves in _DISPATCH:
        if start.match(t):
            return mapper(t, line), leaves or context
    if t.startswith(SECTION) and context in _BARE_SECTION:
        prefix, mapper = _BARE_SECTION[context]
        return mapper(f"{prefix} {t}", line), context or "contract"
    if re.match(_CASES, t):
        return _cases(t, line), context
    raise Unmapped(t)


def render(targets: Iterable[Target]) -> str:
    """One readable reference: the first behaviour id as a link, further rule ids bare, cases last."""
    unique = list(dict.fromkeys(targets))
    labels = [t.label for t in unique if t.label]
    parts: list[str] = []
    behaviour_named = False
    for target in unique:
        if target.label:
            continue
        anchor = target.link.partition("#")[2]
        in_behaviour = target.link.startswith(BEHAVIOUR)
        if in_behaviour and ((anchor == "cases" and labels) or (not anchor and (behaviour_named or labels))):
            continue
        if in_behaviour and behaviour_named and re.fullmatch(r"B-[A-Z]+-\d+|SC-\d+", anchor):
            parts.append(anchor)
            continue
        parts.append(target.link)
        behaviour_named = behaviour_named or in_behaviour
    if labels:
        joined = ", ".join(labels)
        if behaviour_named:
            parts.append(f"cases {joined}")
        elif len(labels) == 1 and re.fullmatch(r"[A-Z]{1,2}\d{1,2}", joined):
            parts.append(f"{BEHAVIOUR}#{joined}")
        else:
            parts.append(f"{BEHAVIOUR}#cases ({joined})")
    return ", ".join(parts)


@dataclass
class Change:
    path: str
    line: int
    before: str
    after: str


@dataclass
class Problem:
    path: str
    line: int
    text: str


def rewrite_line(line: str) -> tuple[str, list[str]]:
    """The line with every run of citations rewritten, and the citations that could not be mapped."""
    problems: list[str] = []

    def replace(match: re.Match[str]) -> str:
        run = match.group(0)
        targets: list[Target] = []
        context: str | None = None
        try:
            for token in TOKEN_RE.finditer(run):
                found, context = map_token(token.group(0), context, line)
                targets.extend(found)
        except Unmapped as exc:
            problems.append(str(exc))
            return run
        rendered = render(targets)
        if not rendered and not _standalone(line, match.start(), match.end()):
            problems.append(run)  # a tracker item named in a sentence: dropping it would break the sentence
            return run
        return rendered

    new = RUN_RE.sub(replace, line)
    if new != line:
        new = keep_banner_width(line, _tidy(new))
    return new, problems


def keep_banner_width(old: str, new: str) -> str:
    """A ``# === title ====`` banner keeps its width: its trailing rule grows or shrinks (to 3 at least)."""
    match = re.fullmatch(r"(.*\S)\s([=-])\2{2,}", new)
    if match is None or not re.fullmatch(r".*\s([=-])\1{2,}", old):
        return new
    head, rule = match.group(1), match.group(2)
    return f"{head} {rule * max(3, len(old) - len(head) - 1)}"


def _standalone(line: str, start: int, end: int) -> bool:
    """Whether a citation stands apart from the sentence: inside parentheses or a list of citations."""
    before, after = line[:start].rstrip(), line[end:].lstrip()
    return before.endswith(("(", ",", ";")) and after.startswith((")", ",", ";"))


def _tidy(line: str) -> str:
    """Punctuation left behind when a citation disappears (a dropped tracker item)."""
    line = re.sub(r"\(\s*[,;]\s*", "(", line)
    line = re.sub(r"\s*[,;]\s*\)", ")", line)
    line = re.sub(r"\s*\(\s*\)", "", line)
    return re.sub(r",\s*,", ",", line)


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


_REPO = [ROOT]  # the repository being rewritten (a target document must exist in it)


def run(root: Path = ROOT, *, write: bool = True) -> tuple[list[Change], list[Problem]]:
    _REPO[0] = root
    changes: list[Change] = []
    problems: list[Problem] = []
    for path in scanned_files(root):
        rel = path.relative_to(root).as_posix()
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        out_lines: list[str] = []
        for number, line in enumerate(text.splitlines(keepends=True), start=1):
            body = line.rstrip("\r\n")
            ending = line[len(body) :]
            new, unmapped = rewrite_line(body)
            problems.extend(Problem(rel, number, u) for u in unmapped)
            if new != body:
                changes.append(Change(rel, number, body, new))
            elif FORBIDDEN_RE.search(body) and not unmapped:
                problems.append(Problem(rel, number, FORBIDDEN_RE.search(body).group(0)))  # type: ignore[union-attr]
            out_lines.append(new + ending)
        new_text = "".join(out_lines)
        if write and new_text != text:
            path.write_text(new_text, encoding="utf-8")
    return changes, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report; exit 1 if anything would change")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository to rewrite (default: this one)")
    args = parser.parse_args(argv)
    changes, problems = run(args.root.resolve(), write=not args.check)
    for change in changes:
        print(f"{change.path}:{change.line}\n  - {change.before.strip()}\n  + {change.after.strip()}")
    for problem in problems:
        print(f"UNMAPPED {problem.path}:{problem.line}: {problem.text}")
    verb = "would change" if args.check else "changed"
    print(f"{verb} {len(changes)} line(s); {len(problems)} citation(s) left to rewrite by hand")
    return 1 if (args.check and changes) or problems else 0


if __name__ == "__main__":
    sys.exit(main())
