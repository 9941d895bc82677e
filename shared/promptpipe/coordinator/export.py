"""The research export: ``participants.csv``, ``prompts.csv``, ``messages.jsonl`` and ``adherence.csv``
(docs/export.md).

Every CSV cell that a spreadsheet would read as a formula is neutralised (``csv_safety``).

The columns are stable: new ones are only ever appended. Everything comes through the API (paged),
so the same export runs against the local stack and a deployed one.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from promptpipe.coordinator.adherence import ADHERENCE_COLUMNS, adherence_row, record_end, study_days, study_series
from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.coordinator.csv_safety import safe_row
from promptpipe.coordinator.kinds import provider_ids, shown
from promptpipe.coordinator.summary import ParticipantSummary, iso, local_iso, summarize
from promptpipe.models.participant import ConsentRecord, ConversationParticipant
from promptpipe.models.store import TranscriptEntry
from promptpipe.rules.timezones import participant_zone_name, zone_is_default

PARTICIPANT_COLUMNS = (
    "participant_id",
    "name",
    "phone_number",
    "timezone",
    "enrolled_at",
    "status",
    "opted_out",
    "sub_state",
    "habit_domain",
    "motivational_frame",
    "preferred_time",
    "prompt_anchor",
    "intensity",
    "prompts_sent",
    "answered",
    "done",
    "next_time",
    "done_rate",
    "reminders",
    "handoffs",
    "last_reply_at",
    "undelivered",
    # Consent on record and its withdrawal (docs/safety.md#consent).
    "consent_at",
    "consent_version",
    "consent_method",
    "withdrawal_at",
    "withdrawal_version",
    "withdrawal_method",
    "timezone_default",
)

PROMPT_COLUMNS = (
    "participant_id",
    "sent_at_utc",
    "sent_at_local",
    "timezone",
    "prompt",
    "answered_at_utc",
    "answered_at_local",
    "latency_minutes",
    "answer",
    "intensity",
    "reminder_sent",
    "first_reply",
    "delivery",
)


# The columns that name a participant; the de-identified export writes a pseudonym in their place.
IDENTIFYING_COLUMNS = ("participant_id", "name", "phone_number")


def participant_row(summary: ParticipantSummary) -> dict[str, object]:
    p = summary.participant
    return {"participant_id": p.id, "name": p.name, "phone_number": p.phone_number, **summary_cells(summary, iso)}


def summary_cells(
    summary: ParticipantSummary, at: Callable[[datetime | None], str], text: Callable[[object], object] | None = None
) -> dict[str, object]:
    """The participant columns after the identifying ones, shared with the de-identified export:
    ``at`` writes an instant, ``text`` a free-text answer of the profile (masked there)."""
    p, profile = summary.participant, summary.profile
    text = text or (lambda value: value)
    return {
        "timezone": participant_zone_name(p.timezone),
        "enrolled_at": at(p.enrolled_at),
        "status": p.status.value if summary.state is not None else "deleted",
        "opted_out": str(p.opted_out).lower(),
        "sub_state": summary.sub_state,
        "habit_domain": text(profile.get("habit_domain", "")),
        "motivational_frame": text(profile.get("motivational_frame", "")),
        "preferred_time": text(profile.get("preferred_time", "")),
        "prompt_anchor": text(profile.get("prompt_anchor", "")),
        "intensity": profile.get("intensity", ""),
        "prompts_sent": summary.prompts_sent,
        "answered": summary.answered,
        "done": summary.done,
        "next_time": summary.next_time,
        "done_rate": "" if summary.done_rate is None else summary.done_rate,
        "reminders": summary.reminders,
        "handoffs": summary.handoffs,
        "last_reply_at": at(summary.last_reply_at),
        "undelivered": summary.undelivered,
        **_record_cells("consent", p.consent, at),
        **_record_cells("withdrawal", p.withdrawal, at),
        "timezone_default": str(zone_is_default(p.timezone)).lower(),
    }


def _record_cells(prefix: str, record: ConsentRecord | None, at: Callable[[datetime | None], str]) -> dict[str, object]:
    if record is None:
        return {f"{prefix}_at": "", f"{prefix}_version": "", f"{prefix}_method": ""}
    return {f"{prefix}_at": at(record.at), f"{prefix}_version": record.version, f"{prefix}_method": record.method}


@dataclass
class ExportCounts:
    participants: int = 0
    prompts: int = 0
    messages: int = 0
    days: int = 0


def write_export(
    client: CoordinatorClient, out_dir: Path, *, progress: Callable[[int, int], None] | None = None
) -> ExportCounts:
    """Write the five files (``audit.csv`` the fifth) into ``out_dir`` (created); ``progress(done, total)``
    per participant.

    The participants are listed first: an API that cannot be reached (or refuses) leaves nothing
    behind, not even the folder."""
    participants = list(client.iter_participants())
    out_dir.mkdir(parents=True, exist_ok=True)
    counts = ExportCounts()
    columns = ParticipantFileColumns(PARTICIPANT_COLUMNS, PROMPT_COLUMNS)
    write_participant_files(client, out_dir, participants, columns, rows=_rows, counts=counts, progress=progress)
    write_audit(client, out_dir / "audit.csv")
    return counts


def _rows(summary: ParticipantSummary, entries: list[TranscriptEntry]) -> ParticipantRows:
    prompts = [
        {
            "participant_id": row.participant_id,
            "sent_at_utc": iso(row.sent_at),
            "sent_at_local": local_iso(row.sent_at, row.zone),
            "timezone": row.zone.key,
            "prompt": row.prompt,
            "answered_at_utc": iso(row.answered_at),
            "answered_at_local": local_iso(row.answered_at, row.zone),
            "latency_minutes": "" if row.latency_minutes is None else row.latency_minutes,
            "answer": row.answer,
            "intensity": row.intensity,
            "reminder_sent": str(row.reminder_sent).lower(),
            "first_reply": row.first_reply,
            "delivery": row.delivery,
        }
        for row in summary.prompts
    ]
    earlier = provider_ids(entries)
    lines = []
    for entry in entries:
        # as the API returns it, plus what the console and the text transcript show for it
        line = entry.model_dump(mode="json")
        line["shown"], line["shown_as"] = shown(entry, earlier)
        lines.append(line)
    return participant_row(summary), prompts, lines


@dataclass(frozen=True)
class ParticipantFileColumns:
    participants: Sequence[str]
    prompts: Sequence[str]
    adherence: Sequence[str] = ADHERENCE_COLUMNS


# One participant's row of participants.csv, rows of prompts.csv and lines of messages.jsonl.
ParticipantRows = tuple[Mapping[str, object], Sequence[Mapping[str, object]], Sequence[Mapping[str, object]]]


def write_participant_files(
    client: CoordinatorClient,
    out_dir: Path,
    participants: Sequence[ConversationParticipant],
    columns: ParticipantFileColumns,
    *,
    rows: Callable[[ParticipantSummary, list[TranscriptEntry]], ParticipantRows],
    counts: ExportCounts,
    progress: Callable[[int, int], None] | None = None,
) -> list[ParticipantSummary]:
    """``participants.csv``, ``prompts.csv``, ``messages.jsonl`` and ``adherence.csv``, written the
    same way by both exports; ``rows`` makes one participant's rows. Returns the summaries."""
    summaries: list[ParticipantSummary] = []
    with (
        (out_dir / "participants.csv").open("w", newline="", encoding="utf-8") as people_file,
        (out_dir / "prompts.csv").open("w", newline="", encoding="utf-8") as prompts_file,
        (out_dir / "messages.jsonl").open("w", encoding="utf-8") as messages_file,
    ):
        people = csv.DictWriter(people_file, fieldnames=columns.participants)
        prompts = csv.DictWriter(prompts_file, fieldnames=columns.prompts)
        people.writeheader()
        prompts.writeheader()
        for index, participant in enumerate(participants, start=1):
            entries = list(client.iter_history(participant.id, include_audit=True))
            summary = summarize(participant, entries, client.state(participant.id))
            summaries.append(summary)
            person, prompt_rows, lines = rows(summary, entries)
            people.writerow(safe_row(person))
            prompts.writerows(safe_row(row) for row in prompt_rows)
            for line in lines:
                messages_file.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
            counts.participants += 1
            counts.prompts += len(summary.prompts)
            counts.messages += len(entries)
            if progress:
                progress(index, len(participants))
    end = record_end(summaries)
    series = study_series([study_days(s, end) for s in summaries]) if end is not None else []
    with (out_dir / "adherence.csv").open("w", newline="", encoding="utf-8") as adherence_file:
        adherence = csv.DictWriter(adherence_file, fieldnames=columns.adherence)
        adherence.writeheader()
        adherence.writerows(adherence_row(share) for share in series)
    counts.days = len(series)
    return summaries


# The coordinators' audit (docs/console.md, "Accountability"): every record, erased participants' too.
# ``by`` is who (the signing AWS principal); ``named`` the coordinator the caller named, a note.
AUDIT_COLUMNS = ("at_utc", "participant_id", "action", "by", "named", "reason", "fields", "redacted")


def write_audit(client: CoordinatorClient, path: Path) -> int:
    records = client.audit()
    with path.open("w", newline="", encoding="utf-8") as audit_file:
        writer = csv.DictWriter(audit_file, fieldnames=AUDIT_COLUMNS)
        writer.writeheader()
        for record in records:
            writer.writerow(
                safe_row(
                    {
                        "at_utc": iso(record.at),
                        "participant_id": record.participant_id,
                        "action": record.action.value,
                        "by": record.by,
                        "named": record.named,
                        "reason": record.reason,
                        "fields": " ".join(record.fields),
                        "redacted": str(record.redacted).lower(),
                    }
                )
            )
    return len(records)
