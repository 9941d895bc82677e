"""What a coordinator reads from a transcript: the daily prompts and their answers, a participant's
counts, and the conversation in the participant's local time. Pure functions of the API's data."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from promptpipe.coordinator.kinds import provider_ids, shown
from promptpipe.coordinator.terminal import terminal_safe
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.store import IMPORT_KIND, IMPORTED_KIND, Direction, TranscriptEntry
from promptpipe.rules.delivery_words import skip_meaning
from promptpipe.rules.timezones import participant_zone_label, participant_zone_name, zone_is_default

_PARSED = re.compile(r"^Q: (?P<question>.*?) A: (?P<answer>.*)$")
DONE_QUESTION = "Did you do it?"
INTENSITY_QUESTION = "How's the intensity?"


def zone_of(participant: ConversationParticipant) -> ZoneInfo:
    """The participant's zone, by the one rule their prompts follow: the stored zone, else the
    default zone (``rules.timezones.participant_zone_name``), never UTC in its place."""
    return ZoneInfo(participant_zone_name(participant.timezone))


def zone_label(participant: ConversationParticipant) -> str:
    """The participant's zone as shown: the default said as such (``… (default: …)``)."""
    return participant_zone_label(participant.timezone)


def parsed_answers(entry: TranscriptEntry) -> dict[str, str]:
    """``{"Did you do it?": "Done"}`` from an inbound entry's audit (``parsed_answer``)."""
    text = str(entry.metadata.get("parsed_answer") or "")
    answers: dict[str, str] = {}
    for part in text.split("\n"):
        match = _PARSED.match(part.strip())
        if match:
            answers[match["question"]] = match["answer"]
    return answers


@dataclass
class PromptRow:
    """One daily prompt and what followed it, until the next daily prompt."""

    participant_id: str
    sent_at: datetime
    zone: ZoneInfo
    prompt: str
    answered_at: datetime | None = None
    first_reply: str = ""
    answer: str = ""  # "Done", "Next time" or "" (no answer to the question)
    intensity: str = ""  # the answer to the intensity question: Decrease, Keep current, Increase
    reminder_sent: bool = False
    reminder_quiet_hours: str = ""  # "moved" / "dropped": what quiet hours did to its reminder
    # The prompt's final outcome: "sent", or "delivered" / "read" once the provider reported it
    # (``DeliveryOutcome.final``; a prompt reported failed is not a row).
    delivery: str = "sent"

    @property
    def latency_minutes(self) -> float | None:
        if self.answered_at is None:
            return None
        return round((self.answered_at - self.sent_at).total_seconds() / 60, 1)


def prompt_rows(participant: ConversationParticipant, entries: Sequence[TranscriptEntry]) -> list[PromptRow]:
    """The daily prompts the participant received (a prompt failed, skipped or never confirmed is
    not one: docs/architecture.md, "Delivery outcomes"), each with what followed it."""
    zone = zone_of(participant)
    rows: list[PromptRow] = []
    for entry in sorted(entries, key=lambda e: (e.at, e.seq)):
        if not entry.delivered or entry.kind in (IMPORTED_KIND, IMPORT_KIND):  # imported: counted from its record
            continue
        if entry.direction is Direction.OUTBOUND and entry.kind == "daily_prompt":
            quiet = str(entry.metadata.get("reminder_quiet_hours") or "")
            final = entry.delivery.final if entry.delivery is not None else "sent"
            rows.append(
                PromptRow(participant.id, entry.at, zone, entry.content, reminder_quiet_hours=quiet, delivery=final)
            )
            continue
        if not rows:
            continue
        row = rows[-1]
        if entry.direction is Direction.OUTBOUND and entry.kind == "reminder":
            row.reminder_sent = True
        elif entry.direction is Direction.INBOUND and entry.kind == "message":
            # a reaction, an edit, a deletion or a photo without words is not an answer
            if row.answered_at is None:
                row.answered_at, row.first_reply = entry.at, entry.content
            answers = parsed_answers(entry)
            row.answer = row.answer or answers.get(DONE_QUESTION, "")
            row.intensity = row.intensity or answers.get(INTENSITY_QUESTION, "")
    return rows


@dataclass
class ParticipantSummary:
    participant: ConversationParticipant
    state: dict[str, Any] | None
    prompts: list[PromptRow] = field(default_factory=list)
    reminders: int = 0
    handoffs: int = 0
    last_reply_at: datetime | None = None
    messages: int = 0
    # Outbound messages decided but not delivered: failed, skipped, or never confirmed.
    undelivered: int = 0
    # What the original PromptPipe counted before the import (its profile's total_prompts and
    # success_count, recorded by the import): included in prompts_sent, answered and done.
    imported_prompts: int = 0
    imported_done: int = 0

    @property
    def prompts_sent(self) -> int:
        return len(self.prompts) + self.imported_prompts

    @property
    def answered(self) -> int:
        # of imported prompts only those answered "Done" are known to have been answered
        return sum(1 for p in self.prompts if p.answered_at is not None) + self.imported_done

    @property
    def done(self) -> int:
        return sum(1 for p in self.prompts if p.answer == "Done") + self.imported_done

    @property
    def next_time(self) -> int:
        return sum(1 for p in self.prompts if p.answer == "Next time")

    @property
    def done_rate(self) -> float | None:
        return round(self.done / self.prompts_sent, 3) if self.prompts_sent else None

    @property
    def sub_state(self) -> str:
        return str((self.state or {}).get("sub_state", ""))

    @property
    def needs_person(self) -> bool:
        """The conversation is held for a person (a safety flag, a hand-off: docs/safety.md), or the
        flow controller waits for one (when the state view shows it)."""
        controller = (self.state or {}).get("controller")
        held = isinstance(controller, dict) and (controller.get("needs_person") or controller.get("hold"))
        return bool(held or self.hold_reason)

    @property
    def hold_reason(self) -> str | None:
        """Why the conversation is held (safety, handoff, staff); None: not held."""
        hold = (self.state or {}).get("hold")
        return str(hold.get("reason") or "staff") if isinstance(hold, dict) else None

    @property
    def profile(self) -> dict[str, Any]:
        profile = (self.state or {}).get("profile")
        return profile if isinstance(profile, dict) else {}


def summarize(
    participant: ConversationParticipant, entries: Iterable[TranscriptEntry], state: dict[str, Any] | None
) -> ParticipantSummary:
    entries = list(entries)
    summary = ParticipantSummary(participant, state, prompt_rows(participant, entries), messages=len(entries))
    for entry in entries:
        if not entry.delivered:
            summary.undelivered += 1
            continue
        if entry.direction is Direction.OUTBOUND and entry.kind == "reminder":
            summary.reminders += 1
        if is_handoff(entry):
            summary.handoffs += 1
        if entry.kind == IMPORT_KIND:
            prompts, done = imported_counts(entry.metadata)
            summary.imported_prompts += prompts
            summary.imported_done += done
        if entry.direction is Direction.INBOUND and (summary.last_reply_at is None or entry.at > summary.last_reply_at):
            summary.last_reply_at = entry.at
    if summary.handoffs == 0 and summary.needs_person:  # a hold whose turn's audit is not in the transcript
        summary.handoffs = 1
    return summary


def is_handoff(entry: TranscriptEntry) -> bool:
    """A turn on which the flow controller handed the participant to a person, as its audit records
    it (``metadata.controller``, docs/controller.md): a HANDOFF decision or a DEADLOCK; the turns
    that wait on the hold afterwards (status PAUSED) are not new hand-offs."""
    controller = entry.metadata.get("controller")
    if not isinstance(controller, dict):
        return False
    status, mode = controller.get("status"), controller.get("mode")
    return status == "DEADLOCK" or (status == "OK" and mode == "HANDOFF")


def imported_counts(metadata: dict[str, Any]) -> tuple[int, int]:
    """(prompts, done) the original counted, from an ``import`` entry's metadata."""

    def number(key: str) -> int:
        value = metadata.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

    return number("prompts"), number("done")


# -- the conversation as a coordinator reads it ----------------------------------------------------
# What a coordinator reads for each timer kind (internal names stay in ``--verbose`` / JSON output).
TIMER_WORDS = {
    "daily_prompt": "time for the daily prompt",
    "daily_prompt_reminder": "reminder due (no answer yet)",
    "auto_feedback": "feedback conversation starts",
    "state_transition": "conversation moves on",
    "feedback_timeout": "feedback nudge due",
    "feedback_followup": "feedback follow-up due",
}
MARKS = {
    "daily_prompt": "daily prompt",
    "reminder": "reminder",
    "intensity_poll": "question",
    "greeting": "greeting",
    IMPORTED_KIND: "imported",
    IMPORT_KIND: "imported",
}


@dataclass
class ChatLine:
    """One transcript entry for reading: who, when (in the chosen zone), what, and its mark."""

    at: datetime
    local: datetime
    who: str  # "participant" | "coach" | "system"
    kind: str
    text: str
    mark: str = ""  # "daily prompt", "reminder", "answer: Done", …


def chat_lines(entries: Iterable[TranscriptEntry], zone: ZoneInfo) -> list[ChatLine]:
    """Each entry as it reads, shown as what it was (coordinator/kinds.py: a photo, a reaction, an
    edit of an earlier message, a delivery failure), not as an empty bubble."""
    lines = []
    ordered = sorted(entries, key=lambda e: (e.at, e.seq))
    earlier = provider_ids(ordered)
    for entry in ordered:
        who = {Direction.INBOUND: "participant", Direction.OUTBOUND: "coach"}.get(entry.direction, "system")
        text, mark = shown(entry, earlier)
        mark = mark or MARKS.get(entry.kind, "")
        if entry.direction is Direction.INBOUND and entry.kind == "message":
            answers = parsed_answers(entry)
            mark = "; ".join(f"answer: {a}" if q == DONE_QUESTION else f"intensity: {a}" for q, a in answers.items())
        if not entry.delivered:
            mark = f"{mark}; {not_delivered(entry)}" if mark else not_delivered(entry)
        if entry.direction is Direction.SYSTEM and entry.kind == "timer":
            text = TIMER_WORDS.get(str(entry.metadata.get("kind", "")), text)
        lines.append(ChatLine(entry.at, entry.at.astimezone(zone), who, entry.kind, text, mark))
    return lines


def not_delivered(entry: TranscriptEntry) -> str:
    """Why an outbound message did not reach the participant, in a coordinator's words."""
    outcome = entry.delivery
    if outcome is None or outcome.status == "pending":
        return "not confirmed sent"
    if outcome.status == "failed" and outcome.reason.startswith("undelivered: "):  # reported later by the provider
        return f"not delivered (provider code {outcome.code or 'none'}: {outcome.reason.removeprefix('undelivered: ')})"
    if outcome.status == "failed":
        return f"failed (provider code {outcome.code or 'none'})"
    return f"not sent: {skip_meaning(outcome.reason)}"


def transcript_text(
    participant: ConversationParticipant, entries: Iterable[TranscriptEntry], zone: ZoneInfo, *, deleted: bool = False
) -> str:
    """The conversation as text, one day heading per local day, marks in brackets."""
    out: list[str] = []
    zone_name = zone.key
    if zone.key == zone_of(participant).key and zone_is_default(participant.timezone):
        zone_name = zone_label(participant)
    mark = " [deleted; transcript kept]" if deleted else ""
    name = terminal_safe(participant.name or participant.id, keep_newlines=False)
    out.append(f"{name} ({participant.id}){mark} — times in {zone_name}")
    day = None
    labels = {"participant": "participant ›", "coach": "coach       ‹", "system": "            ·"}
    for line in chat_lines(entries, zone):
        heading = line.local.strftime("%A %Y-%m-%d")
        if heading != day:
            out += ["", f"── {heading} " + "─" * 20]
            day = heading
        mark = f"[{terminal_safe(line.mark, keep_newlines=False)}] " if line.mark else ""
        text = terminal_safe(line.text).replace("\n", "\n" + " " * 20)
        out.append(f"{line.local:%H:%M} {labels[line.who]:14s} {mark}{text}")
    return "\n".join(out) + "\n"


def iso(instant: datetime | None) -> str:
    if instant is None:
        return ""
    return instant.astimezone(UTC).isoformat().replace("+00:00", "Z")


def local_iso(instant: datetime | None, zone: ZoneInfo) -> str:
    return "" if instant is None else instant.astimezone(zone).isoformat()
