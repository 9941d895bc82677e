"""The study rehearsal checked from outside, on the files of its de-identified export (docs/studies.md,
"Checking a rehearsal"). Used by ``scripts/bench/study_rehearsal.py
--check`` at 200 × 28 and by tests/e2e/test_study_rehearsal.py at a small size.

Every check reads only what an analyst receives (``decisions.csv``, ``data_dictionary.json``, the
other files), plus what the rehearsal was told: its size, its planted effects, and the phone numbers
and names it enrolled (to look for them in the files).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import phonenumbers

from promptpipe.coordinator.data_dictionary import ARM_PROBABILITY_PREFIX
from promptpipe.coordinator.deidentify import EMAIL, PSEUDONYM_HEX, PSEUDONYM_PREFIX
from promptpipe.models.decision import ProximalOutcomeValue
from promptpipe.models.study import StudyDefinition
from promptpipe.rules.mrt import NotEstimable, Observation, proximal_effects

DECISIONS = "decisions.csv"
DICTIONARY = "data_dictionary.json"
SHARE_TOLERANCE = 0.025  # ± 2.5 percentage points
PROBABILITY_SUM_TOLERANCE = 1e-9
PSEUDONYM = re.compile(rf"{re.escape(PSEUDONYM_PREFIX)}[0-9a-f]{{{PSEUDONYM_HEX}}}")


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str

    def line(self) -> str:
        return f"{'PASS' if self.passed else 'FAIL'} {self.name}: {self.detail}"


@dataclass(frozen=True)
class Expected:
    """What the rehearsal was run with: ``days_lived`` UTC days after enrolment (each participant has
    ``min(duration, days_lived + 1)`` study days, or one more east of UTC, never past the duration)."""

    participants: int
    days_lived: int
    duration_days: int | None
    effects: Mapping[str, float]
    phones: Sequence[str] = ()
    names: Sequence[str] = ()
    region: str = "US"

    def study_days(self) -> set[int]:
        counts = {self.days_lived + 1, self.days_lived + 2}
        return {min(count, self.duration_days) for count in counts} if self.duration_days else counts


def read_decisions(export_dir: Path) -> list[dict[str, str]]:
    with (export_dir / DECISIONS).open(newline="", encoding="utf-8") as file:
        return list(csv.DictReader(file))


def arms_hash(export_dir: Path) -> str:
    """SHA-256 of the ``arm`` column of ``decisions.csv``, in file order (empty when not available)."""
    digest = hashlib.sha256()
    for row in read_decisions(export_dir):
        digest.update(row["arm"].encode() + b"\n")
    return digest.hexdigest()


def _study_day(row: Mapping[str, str]) -> int:
    """``decided_at`` is ``"<study day> HH:MM"`` (the export's default dates)."""
    return int(row["decided_at"].split(" ", 1)[0])


def _arms(rows: Sequence[Mapping[str, str]]) -> list[str]:
    return [
        column.removeprefix(ARM_PROBABILITY_PREFIX)
        for column in (rows[0] if rows else {})
        if column.startswith(ARM_PROBABILITY_PREFIX)
    ]


def check_rows(rows: Sequence[Mapping[str, str]], expected: Expected) -> list[Check]:
    """One row per participant and study day (and decision point), available or not; the ``p_<arm>``
    columns of every row sum to 1."""
    days: dict[tuple[str, str], list[int]] = defaultdict(list)
    for row in rows:
        days[(row["participant"], row["decision_point"])].append(_study_day(row))
    participants = {participant for participant, _ in days}
    allowed = expected.study_days()
    wrong = {
        key: found
        for key, found in days.items()
        if sorted(found) != list(range(1, len(found) + 1)) or len(found) not in allowed
    }
    arms = _arms(rows)
    off = [
        row
        for row in rows
        if abs(sum(float(row[ARM_PROBABILITY_PREFIX + arm]) for arm in arms) - 1) > PROBABILITY_SUM_TOLERANCE
    ]
    per = Counter(len(found) for found in days.values())
    return [
        Check(
            "one row per participant-day",
            len(participants) == expected.participants and not wrong,
            f"{len(rows)} rows, {len(participants)} participants (expected {expected.participants}), study days per "
            f"participant {dict(sorted(per.items()))} (allowed {sorted(allowed)}); "
            f"{len(wrong)} participants with a missing, repeated or extra day",
        ),
        Check(
            "p_<arm> sum to 1",
            bool(rows) and not off,
            f"{len(rows) - len(off)} of {len(rows)} rows ({', '.join(ARM_PROBABILITY_PREFIX + arm for arm in arms)})",
        ),
    ]


def check_shares(rows: Sequence[Mapping[str, str]], tolerance: float = SHARE_TOLERANCE) -> Check:
    """Among available decisions, each arm's share within ``tolerance`` of its probability (the mean
    of its ``p_<arm>`` over those decisions: the declared one when no stratum changes it)."""
    available = [row for row in rows if row["available"] == "true"]
    drawn = Counter(row["arm"] for row in available)
    parts, passed = [], bool(available)
    for arm in _arms(rows):
        share = drawn[arm] / len(available) if available else 0.0
        probability = sum(float(row[ARM_PROBABILITY_PREFIX + arm]) for row in available) / (len(available) or 1)
        passed = passed and abs(share - probability) <= tolerance
        parts.append(f"{arm} {100 * share:.1f} % (p {100 * probability:.1f} %, {100 * (share - probability):+.1f} pp)")
    return Check(
        f"arm shares within ±{100 * tolerance:.1f} pp",
        passed,
        f"{len(available)} available of {len(rows)}: " + ", ".join(parts),
    )


def _files(export_dir: Path) -> Iterator[Path]:
    return (path for path in sorted(export_dir.iterdir()) if path.is_file())


def check_identifiers(export_dir: Path, expected: Expected) -> Check:
    """No phone number (``phonenumbers``' matcher, and each enrolled number's digits), email address
    or enrolled participant's name in any file of the export (its pseudonyms set aside)."""
    found: list[str] = []
    names = [re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.IGNORECASE) for name in expected.names]
    digits = [re.sub(r"\D", "", phone) for phone in expected.phones]
    scanned = 0
    for path in _files(export_dir):
        # The pseudonyms are hex digests: a run of their digits can look like a local number.
        text = PSEUDONYM.sub(PSEUDONYM_PREFIX, path.read_text(encoding="utf-8"))
        scanned += len(text)
        leniency = phonenumbers.Leniency.POSSIBLE
        found += [
            f"{path.name}: phone {m.raw_string!r}"
            for m in phonenumbers.PhoneNumberMatcher(text, expected.region, leniency=leniency)
        ]
        found += [f"{path.name}: email {m.group()!r}" for m in EMAIL.finditer(text)]
        found += [f"{path.name}: name {p.pattern!r}" for p in names if p.search(text)]
        found += [f"{path.name}: phone digits" for number in digits if number and number in text]
    files = sum(1 for _ in _files(export_dir))
    return Check(
        "no phone number, name or email",
        not found,
        f"{files} files, {scanned / 2**20:.1f} MB scanned for {len(expected.phones)} numbers and {len(expected.names)} "
        f"names (pseudonyms set aside): " + ("; ".join(found[:5]) if found else "none found"),
    )


def _columns(path: Path) -> set[str]:
    if path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as file:
            return set(next(csv.reader(file), []))
    keys: set[str] = set()
    with path.open(encoding="utf-8") as file:
        for line in file:
            if line.strip():
                keys.update(json.loads(line))
    return keys


def check_dictionary(export_dir: Path) -> Check:
    """Every column of every file written is a field of that file's resource in the dictionary."""
    package = json.loads((export_dir / DICTIONARY).read_text(encoding="utf-8"))
    described = {
        resource["path"]: {field["name"] for field in resource["schema"]["fields"]} for resource in package["resources"]
    }
    missing, columns = [], 0
    for path in _files(export_dir):
        if path.name == DICTIONARY:
            continue
        found = _columns(path)
        columns += len(found)
        missing += [f"{path.name}:{column}" for column in sorted(found - described.get(path.name, set()))]
    return Check(
        "every column in data_dictionary.json",
        not missing,
        f"{columns} columns of {len(described)} files" + (f"; not described: {', '.join(missing)}" if missing else ""),
    )


def check_effects(rows: Sequence[Mapping[str, str]], study: StudyDefinition, expected: Expected) -> list[Check]:
    """Each arm's estimated effect against the no-prompt arm (the weighted and centred least-squares
    risk difference, ``rules/mrt.py``) within two standard errors of the planted one."""
    checks: list[Check] = []
    for point in study.decision_points:
        reference = next((arm.name for arm in point.arms if arm.framing is None), None)
        if reference is None:
            continue
        arms = [arm.name for arm in point.arms]
        observations = [
            Observation(
                row["participant"],
                row["arm"],
                {arm: float(row[ARM_PROBABILITY_PREFIX + arm]) for arm in arms},
                1.0 if row["outcome"] == ProximalOutcomeValue.DONE.value else 0.0,
            )
            for row in rows
            if row["decision_point"] == point.name and row["available"] == "true" and row["outcome"]
        ]
        try:
            effects = proximal_effects(observations, arms, reference)
        except NotEstimable as exc:
            checks.append(Check(f"{point.name}: planted effects", False, f"no estimate: {exc}"))
            continue
        for effect in effects:
            planted = expected.effects.get(effect.arm, 0.0)
            gap = abs(effect.estimate - planted)
            distance = gap / effect.standard_error if effect.standard_error else (0.0 if gap < 1e-12 else float("inf"))
            checks.append(
                Check(
                    f"{point.name}: {effect.arm} vs {reference} within 2 SE of the planted effect",
                    distance <= 2,
                    f"planted {planted:+.3f}, estimated {effect.estimate:+.3f} (SE {effect.standard_error:.3f}, "
                    f"{distance:.2f} SE away; n={effect.decisions})",
                )
            )
    return checks


def check_export(export_dir: Path, study: StudyDefinition, expected: Expected) -> list[Check]:
    """Every check that one run's export answers (the same-seed check needs two runs: ``arms_hash``)."""
    rows = read_decisions(export_dir)
    return [
        *check_rows(rows, expected),
        check_shares(rows),
        check_identifiers(export_dir, expected),
        check_dictionary(export_dir),
        *check_effects(rows, study, expected),
    ]


def check_same_arms(first: str, second: str) -> Check:
    return Check(
        "same seed twice draws the same arms", first == second, f"arm column SHA-256 {first[:16]}… and {second[:16]}…"
    )
