"""``promptpipe export --deidentified`` (docs/studies.md, "The de-identified export"): the files of
the research export without names, phone numbers or free text, participants keyed by a salted
pseudonym, times as study day and local time of day; plus ``decisions.csv`` (one row per decision of
the study) and ``data_dictionary.json`` (a Table Schema per file). Test participants are left out.

``--include-text`` adds the free-text columns with phone numbers, emails and the participant's names
masked; ``--calendar-dates`` writes local ISO-8601 times instead of study days.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from promptpipe.coordinator.adherence import ADHERENCE_COLUMNS
from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.coordinator.csv_safety import safe_row
from promptpipe.coordinator.data_dictionary import ARM_PROBABILITY_PREFIX, data_package
from promptpipe.coordinator.deidentify import StudyClock, check_salt, mask_text, pseudonym
from promptpipe.coordinator.export import (
    IDENTIFYING_COLUMNS,
    ExportCounts,
    ParticipantFileColumns,
    ParticipantRows,
    summary_cells,
    write_participant_files,
)
from promptpipe.coordinator.export import (
    PARTICIPANT_COLUMNS as EXPORT_PARTICIPANT_COLUMNS,
)
from promptpipe.coordinator.kinds import provider_ids, shown
from promptpipe.coordinator.summary import ParticipantSummary, zone_of
from promptpipe.models.decision import DecisionRecord
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.store import TranscriptEntry
from promptpipe.models.study import StudyDefinition

# The participant's flag for a staff phone (docs/studies.md, "Test participants"), read by the names
# the engine may give it, so that this export runs before and after that flag lands.
TEST_FLAG_NAMES = ("test", "is_test", "test_participant")

# The research export's participant columns, with a pseudonym in place of the identifying ones.
PARTICIPANT_COLUMNS = ("participant", *(c for c in EXPORT_PARTICIPANT_COLUMNS if c not in IDENTIFYING_COLUMNS))
PROMPT_COLUMNS = (
    "participant",
    "sent_at",
    "timezone",
    "prompt",
    "answered_at",
    "latency_minutes",
    "answer",
    "intensity",
    "reminder_sent",
    "first_reply",
)
MESSAGE_FIELDS = ("participant", "at", "direction", "kind", "delivered", "text")
DECISION_COLUMNS = (
    "participant",
    "decision_point",
    "decided_at",
    "available",
    "unavailable_reason",
    "arm",
    "probability",
    "intended_send_at",
    "sent_at",
    "delivery",
    "outcome",
)
# Free text: written only with --include-text (masked).
TEXT_COLUMNS = frozenset(
    {"habit_domain", "motivational_frame", "preferred_time", "prompt_anchor", "prompt", "first_reply", "text"}
)


def is_test_participant(participant: object) -> bool:
    """A staff phone flagged as a test participant: kept out of exports, decisions and charts."""
    return any(getattr(participant, name, False) is True for name in TEST_FLAG_NAMES)


@dataclass(frozen=True)
class DeidentifyOptions:
    salt: str
    include_text: bool = False
    calendar_dates: bool = False
    region: str = "US"  # how a phone number written without its + is read (DEFAULT_PHONE_REGION)

    def columns(self, columns: Sequence[str]) -> list[str]:
        return [column for column in columns if self.include_text or column not in TEXT_COLUMNS]


@dataclass
class DeidentifiedCounts(ExportCounts):
    test_participants_left_out: int = 0
    decisions: int = 0
    files: dict[str, list[str]] = field(default_factory=dict)


def arms_of(study: StudyDefinition | None, records: Sequence[DecisionRecord]) -> list[str]:
    """Every arm, in the study's order (then any other a record names, sorted)."""
    arms: list[str] = []
    if study is not None:
        for point in study.decision_points:
            arms.extend(arm.name for arm in point.arms if arm.name not in arms)
    extra = sorted({arm for record in records for arm in record.probabilities} - set(arms))
    return arms + extra


def decision_row(record: DecisionRecord, arms: Sequence[str], options: DeidentifyOptions) -> dict[str, object]:
    """One decision. Its times are read in the zone it was decided in (``decided_at_local``), and
    days counted from its own study day, so the row needs nothing but the record."""
    local_zone = record.decided_at_local.tzinfo
    decided_on = record.decided_at_local.date()

    def cell(instant: Any) -> str:
        if instant is None:
            return ""
        local = instant.astimezone(local_zone)
        if options.calendar_dates:
            return str(local.isoformat(timespec="seconds"))
        return f"{record.study_day + (local.date() - decided_on).days} {local:%H:%M}"

    probability = record.probability
    return {
        "participant": pseudonym(record.participant_id, options.salt),
        "decision_point": record.decision_point,
        "decided_at": cell(record.decided_at_local),
        "available": str(record.available).lower(),
        "unavailable_reason": record.unavailable_reason.value if record.unavailable_reason else "",
        "arm": record.arm or "",
        "probability": "" if probability is None else probability,
        "intended_send_at": cell(record.intended_send_at),
        "sent_at": cell(record.sent_at),
        "delivery": record.delivery.value,
        "outcome": record.outcome.value if record.outcome else "",
        **{f"{ARM_PROBABILITY_PREFIX}{arm}": record.probabilities.get(arm, 0.0) for arm in arms},
    }


class _Masker:
    def __init__(self, participant: ConversationParticipant, options: DeidentifyOptions) -> None:
        self.names = [participant.name]
        self.region = options.region

    def __call__(self, text: object) -> str:
        return mask_text(str(text or ""), names=self.names, region=self.region)


def participant_row(summary: ParticipantSummary, clock: StudyClock, options: DeidentifyOptions) -> dict[str, object]:
    def at(instant: datetime | None) -> str:
        return clock.cell(instant, calendar_dates=options.calendar_dates)

    alias = pseudonym(summary.participant.id, options.salt)
    return {"participant": alias, **summary_cells(summary, at, _Masker(summary.participant, options))}


def _pick(row: Mapping[str, object], columns: Sequence[str]) -> dict[str, object]:
    return {column: row[column] for column in columns}


def write_deidentified_export(
    client: CoordinatorClient,
    out_dir: Path,
    options: DeidentifyOptions,
    *,
    study: StudyDefinition | None = None,
    decisions: Iterable[DecisionRecord] = (),
    progress: Callable[[int, int], None] | None = None,
) -> DeidentifiedCounts:
    """Write the de-identified files into ``out_dir`` (created); ``decisions`` are the study's
    records (``DecisionLog.all(study.id)``). Refuses (``MissingSalt``) before writing anything
    when the salt is missing or short."""
    check_salt(options.salt)
    listed = list(client.iter_participants())
    participants = [p for p in listed if not is_test_participant(p)]
    left_out = {p.id for p in listed} - {p.id for p in participants}
    records = [record for record in decisions if record.participant_id not in left_out]
    arms = arms_of(study, records)
    out_dir.mkdir(parents=True, exist_ok=True)
    counts = DeidentifiedCounts(test_participants_left_out=len(left_out))
    files = {
        "participants.csv": options.columns(PARTICIPANT_COLUMNS),
        "prompts.csv": options.columns(PROMPT_COLUMNS),
        "messages.jsonl": options.columns(MESSAGE_FIELDS),
        "adherence.csv": list(ADHERENCE_COLUMNS),
        "decisions.csv": [*DECISION_COLUMNS, *(f"{ARM_PROBABILITY_PREFIX}{arm}" for arm in arms)],
    }
    dates = options.calendar_dates
    # before any file: a column without its meaning stops the export (UndescribedColumn)
    dictionary = data_package(files, calendar_dates=dates, include_text=options.include_text, arms=arms)

    def rows(summary: ParticipantSummary, entries: list[TranscriptEntry]) -> ParticipantRows:
        participant = summary.participant
        clock = StudyClock.of(participant.enrolled_at, zone_of(participant))
        mask = _Masker(participant, options)
        alias = pseudonym(participant.id, options.salt)
        prompts = [
            {
                "participant": alias,
                "sent_at": clock.cell(row.sent_at, calendar_dates=dates),
                "timezone": row.zone.key,
                "prompt": mask(row.prompt),
                "answered_at": clock.cell(row.answered_at, calendar_dates=dates),
                "latency_minutes": "" if row.latency_minutes is None else row.latency_minutes,
                "answer": row.answer,
                "intensity": row.intensity,
                "reminder_sent": str(row.reminder_sent).lower(),
                "first_reply": mask(row.first_reply),
            }
            for row in summary.prompts
        ]
        earlier = provider_ids(entries)
        lines = [
            {
                "participant": alias,
                "at": clock.cell(entry.at, calendar_dates=dates),
                "direction": entry.direction.value,
                "kind": entry.kind,
                "delivered": entry.delivered,
                "text": mask(shown(entry, earlier)[0]),
            }
            for entry in entries
        ]
        return (
            _pick(participant_row(summary, clock, options), files["participants.csv"]),
            [_pick(prompt, files["prompts.csv"]) for prompt in prompts],
            [_pick(line, files["messages.jsonl"]) for line in lines],
        )

    columns = ParticipantFileColumns(files["participants.csv"], files["prompts.csv"], files["adherence.csv"])
    write_participant_files(client, out_dir, participants, columns, rows=rows, counts=counts, progress=progress)
    with (out_dir / "decisions.csv").open("w", newline="", encoding="utf-8") as decisions_file:
        writer = csv.DictWriter(decisions_file, fieldnames=files["decisions.csv"])
        writer.writeheader()
        for record in records:
            writer.writerow(safe_row(decision_row(record, arms, options)))
    counts.decisions = len(records)
    (out_dir / "data_dictionary.json").write_text(json.dumps(dictionary, indent=2) + "\n", encoding="utf-8")
    counts.files = files
    return counts
