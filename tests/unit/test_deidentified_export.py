"""``promptpipe export --deidentified`` (docs/studies.md, "The de-identified export"): no phone
number, name or email in any file, every column written described in data_dictionary.json,
decisions.csv from a DecisionLog, participants under a stable salted pseudonym, study days instead of
dates, test participants left out, and no export without a salt."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import phonenumbers
import pytest

from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.coordinator.data_dictionary import UndescribedColumn, field_for
from promptpipe.coordinator.deidentified_export import (
    DECISION_COLUMNS,
    DeidentifyOptions,
    is_test_participant,
    write_deidentified_export,
)
from promptpipe.coordinator.deidentify import MissingSalt, StudyClock, mask_text, pseudonym
from promptpipe.models.decision import (
    DecisionDelivery,
    DecisionRecord,
    ProximalOutcomeValue,
    UnavailableReason,
    decision_id,
)
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.study import StudyDefinition
from promptpipe.ports import DecisionLog
from tests.support.api_fakes import T0, CannedApi, entry, participant

SALT = "a-salt-kept-for-the-study-life"
STUDY = StudyDefinition.model_validate_json(Path("prompts/studies/example-mrt.json").read_text(encoding="utf-8"))
PROBABILITIES = {"no_prompt": 0.3, "framing_a": 0.35, "framing_b": 0.35}
EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")
TORONTO = ZoneInfo("America/Toronto")


class MemoryDecisionLog:
    """A DecisionLog kept in a dict (the port of ports.py)."""

    def __init__(self) -> None:
        self.records: dict[str, DecisionRecord] = {}

    def get(self, decision_id: str) -> DecisionRecord | None:
        return self.records.get(decision_id)

    def for_participant(self, participant_id: str) -> list[DecisionRecord]:
        return [r for r in self.all_records() if r.participant_id == participant_id]

    def all(self, study_id: str) -> list[DecisionRecord]:
        return [r for r in self.all_records() if r.study_id == study_id]

    def all_records(self) -> list[DecisionRecord]:
        return sorted(self.records.values(), key=lambda r: (r.participant_id, r.study_day, r.decision_point))

    def update(self, record: DecisionRecord) -> None:
        self.records[record.decision_id] = record


def _record(pid: str, day: int, arm: str | None, *, outcome: ProximalOutcomeValue | None = None) -> DecisionRecord:
    decided = T0 + timedelta(days=day - 1)  # 08:00 in Toronto
    sent = decided + timedelta(minutes=2) if arm not in (None, "no_prompt") else None
    return DecisionRecord(
        decision_id=decision_id(pid, "daily_prompt", day),
        study_id=STUDY.id,
        participant_id=pid,
        decision_point="daily_prompt",
        study_day=day,
        decided_at=decided,
        decided_at_local=decided.astimezone(TORONTO),
        available=arm is not None,
        unavailable_reason=None if arm is not None else UnavailableReason.PAUSED,
        probabilities=PROBABILITIES,
        arm=arm,
        intended_send_at=decided if arm is not None else None,
        sent_at=sent,
        delivery=DecisionDelivery.DELIVERED if sent else DecisionDelivery.NOT_SENT,
        outcome=outcome,
    )


ALICE = participant("a1", name="Alice Wonderly", phone_number="+14165550142")
BOB = participant("b2", name="Bob Okafor", phone_number="+14165550199")
NAMES = ("Alice", "Wonderly", "Bob", "Okafor")


def _api() -> CannedApi:
    history = {
        ALICE["id"]: [
            entry(ALICE["id"], 0, "outbound", "daily_prompt", "Alice, time for a 10-minute walk! Did you do it?"),
            entry(ALICE["id"], 5, "inbound", "message", "done! text my sister at 416-555-0123 or alice.w@example.org"),
            entry(ALICE["id"], 60 * 24 + 9, "inbound", "message", "Wonderly here, call me (647) 555 0188"),
        ],
        BOB["id"]: [
            entry(BOB["id"], 0, "outbound", "daily_prompt", "Hi Bob! Ready for your stretch?"),
            entry(BOB["id"], 30, "inbound", "message", "bob okafor says next time, reach me at bob@okafor.net"),
        ],
    }
    states = {
        ALICE["id"]: {
            "sub_state": "FEEDBACK",
            "profile": {"prompt_anchor": "After Alice's coffee, call +1 416 555 0177"},
        },
        BOB["id"]: {"sub_state": "FEEDBACK", "profile": {"motivational_frame": "for my kid, Bob jr"}},
    }
    return CannedApi([ALICE, BOB], history, states)


def _log() -> MemoryDecisionLog:
    log = MemoryDecisionLog()
    arms = ["no_prompt", "framing_a", "framing_b", None, "framing_a"]
    for pid in (ALICE["id"], BOB["id"]):
        for day, arm in enumerate(arms, start=1):
            log.update(_record(pid, day, arm, outcome=ProximalOutcomeValue.DONE if arm else None))
    return log


def _export(tmp_path: Path, **options: bool) -> Path:
    write_deidentified_export(
        CoordinatorClient(_api()),
        tmp_path,
        DeidentifyOptions(salt=SALT, **options),
        study=STUDY,
        decisions=_log().all(STUDY.id),
    )
    return tmp_path


def _columns(path: Path) -> list[str]:
    if path.suffix == ".jsonl":
        keys: list[str] = []
        for line in path.read_text(encoding="utf-8").splitlines():
            keys.extend(k for k in json.loads(line) if k not in keys)
        return keys
    with path.open(newline="", encoding="utf-8") as f:
        return next(csv.reader(f))


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("options", [{}, {"include_text": True}, {"calendar_dates": True, "include_text": True}])
def test_no_file_holds_a_phone_number_a_name_or_an_email(tmp_path: Path, options: dict[str, bool]) -> None:
    out = _export(tmp_path, **options)
    files = sorted(p for p in out.iterdir())
    assert [p.name for p in files] == [
        "adherence.csv",
        "data_dictionary.json",
        "decisions.csv",
        "messages.jsonl",
        "participants.csv",
        "prompts.csv",
    ]
    for path in files:
        text = path.read_text(encoding="utf-8")
        numbers = [
            m.raw_string for m in phonenumbers.PhoneNumberMatcher(text, "US", leniency=phonenumbers.Leniency.POSSIBLE)
        ]
        assert numbers == [], path.name
        assert not EMAIL.search(text), path.name
        for name in NAMES:
            assert not re.search(rf"\b{name}\b", text, re.IGNORECASE), (path.name, name)
        assert ALICE["id"] not in text and BOB["id"] not in text, path.name


def test_text_is_there_masked_only_when_asked_for(tmp_path: Path) -> None:
    without = _export(tmp_path / "plain")
    assert "text" not in _columns(without / "messages.jsonl")
    assert "prompt_anchor" not in _columns(without / "participants.csv")
    with_text = _export(tmp_path / "text", include_text=True)
    lines = [json.loads(line) for line in (with_text / "messages.jsonl").read_text(encoding="utf-8").splitlines()]
    texts = [line["text"] for line in lines]
    assert "done! text my sister at [phone] or [email]" in texts
    assert "[name] here, call me [phone]" in texts
    assert "[name] [name] says next time, reach me at [email]" in texts
    [alice] = [r for r in _rows(with_text / "participants.csv") if r["participant"] == pseudonym(ALICE["id"], SALT)]
    assert alice["prompt_anchor"] == "After [name]'s coffee, call [phone]"


def test_every_column_written_is_in_the_data_dictionary(tmp_path: Path) -> None:
    for options in ({}, {"include_text": True, "calendar_dates": True}):
        out = _export(tmp_path / str(len(options)), **options)
        dictionary = json.loads((out / "data_dictionary.json").read_text(encoding="utf-8"))
        described = {r["path"]: r["schema"]["fields"] for r in dictionary["resources"]}
        for path in out.iterdir():
            if path.name == "data_dictionary.json":
                continue
            fields = {f["name"]: f for f in described[path.name]}
            assert _columns(path) and set(_columns(path)) <= set(fields), path.name
            for field in fields.values():
                assert field["type"] and field["description"], (path.name, field["name"])


def test_the_dictionary_gives_the_allowed_values(tmp_path: Path) -> None:
    dictionary = json.loads((_export(tmp_path) / "data_dictionary.json").read_text(encoding="utf-8"))
    decisions = next(r for r in dictionary["resources"] if r["path"] == "decisions.csv")["schema"]
    fields = {f["name"]: f for f in decisions["fields"]}
    assert fields["arm"]["constraints"]["enum"] == ["", "no_prompt", "framing_a", "framing_b"]
    assert fields["delivery"]["constraints"]["enum"] == ["not_sent", "pending", "sent", "delivered", "failed", "read"]
    assert fields["decided_at"]["unit"] == "study day and local time (HH:MM)"
    assert fields["p_framing_a"]["unit"] == "probability"
    assert decisions["primaryKey"] == ["participant", "decision_point", "decided_at"]
    rows = _rows(tmp_path / "decisions.csv")
    for name, field in fields.items():
        allowed = field.get("constraints", {}).get("enum")
        pattern = field.get("constraints", {}).get("pattern")
        for row in rows:
            assert allowed is None or row[name] in allowed, (name, row[name])
            assert pattern is None or re.fullmatch(pattern, row[name]) or row[name] == "", (name, row[name])


def test_an_undescribed_column_stops_the_export() -> None:
    with pytest.raises(UndescribedColumn):
        field_for("decisions.csv", "phone_number", calendar_dates=False)
    with pytest.raises(UndescribedColumn):
        field_for("decisions.csv", "p_unknown_arm", calendar_dates=False, arms=("no_prompt",))


def test_decisions_csv_has_the_columns_and_one_row_per_decision(tmp_path: Path) -> None:
    out = _export(tmp_path)
    assert _columns(out / "decisions.csv") == [*DECISION_COLUMNS, "p_no_prompt", "p_framing_a", "p_framing_b"]
    rows = _rows(out / "decisions.csv")
    assert len(rows) == 10
    first, unavailable = rows[0], rows[3]
    alias = pseudonym(ALICE["id"], SALT)
    assert first == {
        "participant": alias,
        "decision_point": "daily_prompt",
        "decided_at": "1 08:00",
        "available": "true",
        "unavailable_reason": "",
        "arm": "no_prompt",
        "probability": "0.3",
        "intended_send_at": "1 08:00",
        "sent_at": "",
        "delivery": "not_sent",
        "outcome": "done",
        "p_no_prompt": "0.3",
        "p_framing_a": "0.35",
        "p_framing_b": "0.35",
    }
    assert rows[1]["sent_at"] == "2 08:02" and rows[1]["delivery"] == "delivered"
    assert (unavailable["available"], unavailable["unavailable_reason"], unavailable["arm"]) == ("false", "paused", "")
    for row in rows:
        assert sum(float(row[f"p_{arm}"]) for arm in PROBABILITIES) == pytest.approx(1.0)


def test_calendar_dates_only_when_asked_for(tmp_path: Path) -> None:
    out = _export(tmp_path, calendar_dates=True)
    first = _rows(out / "decisions.csv")[0]
    assert first["decided_at"] == "2026-03-02T08:00:00-05:00"
    plain = _export(tmp_path / "plain")
    for path in plain.iterdir():
        assert not re.search(r"20\d\d-\d\d-\d\d", path.read_text(encoding="utf-8")), path.name


def test_pseudonyms_are_stable_and_depend_on_the_salt(tmp_path: Path) -> None:
    one = _rows(_export(tmp_path / "1") / "participants.csv")
    two = _rows(_export(tmp_path / "2") / "participants.csv")
    assert [r["participant"] for r in one] == [r["participant"] for r in two]
    assert re.fullmatch(r"ps_[0-9a-f]{20}", one[0]["participant"])
    assert pseudonym(ALICE["id"], SALT) != pseudonym(ALICE["id"], SALT + "x")
    assert pseudonym(ALICE["id"], SALT) != pseudonym(BOB["id"], SALT)


@pytest.mark.parametrize("salt", ["", "short"])
def test_no_export_without_a_salt(tmp_path: Path, salt: str) -> None:
    with pytest.raises(MissingSalt):
        write_deidentified_export(CoordinatorClient(_api()), tmp_path / "out", DeidentifyOptions(salt=salt))
    assert not (tmp_path / "out").exists()


class FlaggedParticipant(ConversationParticipant):
    test: bool = False


class _ClientWithTestPhone(CoordinatorClient):
    def iter_participants(self, *, page_size: int = 50) -> Iterator[ConversationParticipant]:
        for p in super().iter_participants(page_size=page_size):
            yield FlaggedParticipant.model_validate(p.model_dump() | {"test": p.id == BOB["id"]})


def test_test_participants_are_left_out(tmp_path: Path) -> None:
    counts = write_deidentified_export(
        _ClientWithTestPhone(_api()), tmp_path, DeidentifyOptions(salt=SALT), decisions=_log().all(STUDY.id)
    )
    assert counts.test_participants_left_out == 1
    bob = pseudonym(BOB["id"], SALT)
    for path in tmp_path.iterdir():
        assert bob not in path.read_text(encoding="utf-8"), path.name
    assert len(_rows(tmp_path / "decisions.csv")) == 5
    assert is_test_participant(FlaggedParticipant.model_validate(ALICE | {"test": True}))
    assert not is_test_participant(ConversationParticipant.model_validate(ALICE))


def test_a_fake_log_is_a_decision_log() -> None:
    log: DecisionLog = MemoryDecisionLog()
    assert log.all(STUDY.id) == []


def test_study_clock_and_masking_rules() -> None:
    clock = StudyClock.of(datetime(2026, 3, 2, 4, 30, tzinfo=UTC), TORONTO)  # 23:30 on 1 March in Toronto
    assert clock.cell(datetime(2026, 3, 1, 23, 59, tzinfo=TORONTO)) == "1 23:59"
    assert clock.cell(datetime(2026, 3, 2, 0, 1, tzinfo=TORONTO)) == "2 00:01"
    assert clock.cell(None) == ""
    assert mask_text("I did 3 of 5 days at 8:30, 2 km") == "I did 3 of 5 days at 8:30, 2 km"
    assert mask_text("+33 6 12 34 56 78 / 0033612345678") == "[phone] / [phone]"
    assert mask_text("Ann and Annabel", names=["Ann"]) == "[name] and Annabel"
