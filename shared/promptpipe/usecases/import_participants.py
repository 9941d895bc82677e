"""``promptpipe import``: moving a study from the original PromptPipe to this system.

For each conversation participant of the original: the phone number is canonicalised (digits only
are read in ``--region`` first; the report names the country found; a number that cannot be read is
reported and skipped); the time zone is taken from the schedule registry (the original's
participants table has no zone column; one is read when a database has it), else from
``--default-timezone``, which is required when any participant has none (the report says where each
zone came from); the participant, their phone claim and their flow state are
created in one write, the state's ``DataKey`` strings unchanged; the daily schedules are rebuilt from
their stored ``scheduleRegistry``. Idempotent: a participant already imported (their number is
claimed by the id the import gives them) is left as it is, so a second run changes nothing.

What is adapted on the way, and reported:

- participant ids: kept when they have this system's form (``p_`` + 32 hex), else replaced by a
  stable id derived from the original one (the same on every run);
- schedule registry: each schedule's ``timer_id`` becomes this system's EventBridge schedule name
  (the original's timer ids named in-process timers); ids and timings are kept;
- one-shot timers of the original (reminder, feedback, auto-feedback, delayed transition) cannot be
  carried over: their ``…TimerID`` values are cleared (a pending daily prompt stays pending, so a
  reply still counts as its answer, but its reminder is not re-armed);
- a ``userProfile`` with values this system cannot read (an unknown ``tone_update_source``, a count
  that is not a number) is imported without those fields, each reported; one that is not a JSON
  object at all is imported unchanged and reported: the organiser should fix it.

Schedules are rebuilt for active participants only (paused ones get theirs back when resumed).
The history the original kept (``conversationHistory``) and its counts are copied into the
transcript, marked as imported (``promptpipe.usecases.import_history``). A dry run reports the same counts
(participants, schedules, history) as the run it previews.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from promptpipe.errors import (
    InvalidPhoneNumber,
    ParticipantAlreadyEnrolled,
    ParticipantNotFound,
    StoreError,
    ValidationFailed,
)
from promptpipe.flow.timer_names import daily_schedule_name
from promptpipe.models.original import OriginalParticipant
from promptpipe.models.participant import CONSENT_IMPORTED, ConversationParticipant, ParticipantStatus, engine_consent
from promptpipe.models.profile import UserProfile
from promptpipe.models.state import FLOW_TYPE, STATE_CONVERSATION_ACTIVE, DataKey, FlowState, ScheduleInfo, StateData
from promptpipe.rules.phone import canonicalize_imported_phone, mask_phone, region_of
from promptpipe.rules.timezones import validate_iana_zone
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.import_history import ImportedHistory, read_history, write_history
from promptpipe.usecases.schedules import reconcile

_ID = re.compile(r"^p_[0-9a-f]{32}$")
_SCHEDULE_ID = re.compile(r"^[0-9A-Za-z_-]{1,29}$")  # keeps "<participant id>-<schedule id>-r" within 64
_PROFILE_REPAIR_ROUNDS = 3  # pydantic reports every bad field at once; a dropped one may uncover another
_NOT_A_PROFILE = (ValueError, TypeError, AttributeError, RecursionError)
_ONE_SHOT_KEYS = (
    DataKey.DAILY_PROMPT_REMINDER_TIMER_ID,
    DataKey.FEEDBACK_TIMER_ID,
    DataKey.FEEDBACK_FOLLOWUP_TIMER_ID,
    DataKey.AUTO_FEEDBACK_TIMER_ID,
    DataKey.STATE_TRANSITION_TIMER_ID,
)


@dataclass
class ImportLine:
    original_id: str
    participant_id: str = ""
    phone: str = ""  # masked
    country: str = ""  # the region the number belongs to (US, GB…)
    timezone: str = ""
    timezone_source: str = ""  # scheduleRegistry | timezone column | --default-timezone
    outcome: str = ""  # imported | already_imported | skipped | would_import
    reason: str = ""
    schedules: int = 0
    warnings: list[str] = field(default_factory=list)
    history: ImportedHistory | None = None


@dataclass
class ImportReport:
    dry_run: bool
    lines: list[ImportLine] = field(default_factory=list)

    def count(self, outcome: str) -> int:
        return sum(1 for line in self.lines if line.outcome == outcome)

    def _written(self) -> list[ImportLine]:
        return [line for line in self.lines if line.outcome in ("imported", "would_import")]

    @property
    def schedules_created(self) -> int:
        return sum(line.schedules for line in self._written())

    @property
    def history_messages(self) -> int:
        return sum(len(line.history.messages) for line in self._written() if line.history)

    def render(self) -> list[str]:
        head = "DRY RUN (nothing written): " if self.dry_run else ""
        out = [
            f"{head}{len(self.lines)} participants read; "
            f"imported {self.count('imported') + self.count('would_import')}, "
            f"already imported {self.count('already_imported')}, skipped {self.count('skipped')}; "
            f"schedules created {self.schedules_created}; history messages {self.history_messages}"
        ]
        for line in self.lines:
            country = f" ({line.country})" if line.country else ""
            text = f"  {line.original_id} -> {line.participant_id or '-'} {line.phone}{country} {line.outcome}"
            if line.reason:
                text += f": {line.reason}"
            if line.schedules:
                text += f" ({line.schedules} schedules)"
            out.append(text)
            if line.timezone:
                out.append(f"      zone {line.timezone} (from {line.timezone_source})")
            if line.history is not None and line.outcome in ("imported", "would_import"):
                out.append(f"      {line.history.describe()}")
            out.extend(f"      warning: {w}" for w in line.warnings)
        return out


def import_participants(
    app: AppContext,
    originals: list[OriginalParticipant],
    *,
    dry_run: bool = False,
    default_region: str | None = None,
    default_timezone: str | None = None,
    rebuild: Callable[[AppContext, str], int] | None = None,
) -> ImportReport:
    """Raises ``ValidationFailed`` (before anything is written) when a participant to import has no
    time zone in the original and ``default_timezone`` is not given, or is not an IANA zone."""
    report = ImportReport(dry_run=dry_run)
    fallback = _default_zone(default_timezone)
    region = default_region or app.deps.config.default_phone_region
    rebuild = rebuild or rebuild_schedules
    phones: dict[str, str] = {}
    for original in originals:
        try:
            phones[original.id] = canonicalize_imported_phone(original.phone_number, region)
        except InvalidPhoneNumber:
            continue
    winners = _one_per_phone(originals, phones)
    zones = {o.id: _zone_of(o) for o in originals if o.id in phones and winners[phones[o.id]] == o.id}
    zoneless = sorted(pid for pid, (zone, _) in zones.items() if not zone)
    if zoneless and fallback is None:
        shown = ", ".join(zoneless[:5]) + (f" and {len(zoneless) - 5} more" if len(zoneless) > 5 else "")
        raise ValidationFailed(
            f"{len(zoneless)} participant(s) have no time zone in the original ({shown}); "
            "give one with --default-timezone ZONE, e.g. --default-timezone America/New_York",
            field="default_timezone",
        )
    for original in originals:
        line = ImportLine(original_id=original.id)
        report.lines.append(line)
        phone = phones.get(original.id)
        if phone is None:
            line.outcome, line.reason = "skipped", "phone number cannot be canonicalised"
            continue
        line.phone, line.country = mask_phone(phone), region_of(phone)
        if winners[phone] != original.id:
            line.outcome, line.reason = "skipped", f"same phone number as {winners[phone]} in the original"
            continue
        line.participant_id = imported_id(original.id)
        line.timezone, line.timezone_source = zones[original.id]
        if not line.timezone and fallback is not None:
            line.timezone, line.timezone_source = fallback, "--default-timezone"
        status = _status(original.status, line)
        if status is None:
            line.outcome = "skipped"
            continue
        holder = app.repo.find_id_by_phone(phone)
        if holder == line.participant_id:
            line.outcome = "already_imported"
            if not dry_run:  # an import interrupted before its history landed completes it
                write_history(app, line.participant_id, _original_history(original))
            continue
        if holder is not None:
            line.outcome, line.reason = "skipped", "phone number already enrolled here (another participant)"
            continue
        participant, flow = _build(
            original, line, phone, status, app.clock.now(), max_schedules=app.deps.config.max_live_daily_schedules
        )
        line.history = read_history(StateData(flow.state_data))
        if dry_run:
            _preview(app, line, flow, status, region)
            continue
        if not _created(app, participant, flow, line, region):
            continue
        line.outcome = "imported"
        write_history(app, participant.id, line.history)
        if status is ParticipantStatus.ACTIVE:
            line.schedules = rebuild(app, participant.id)
    return report


# The store's codes for a row it refuses (too large, a value it cannot take); anything else stops the run.
_ROW_REFUSED = frozenset({"ValidationException", "TransactionCanceledException", "ItemCollectionSizeLimitExceeded"})


def _why(exc: StoreError) -> str:
    text = str(exc.__cause__ or exc)
    if "size" in text.lower():
        return "too large for one DynamoDB item (400 KB); shorten its history or profile in the original"
    return text[:200]


def _preview(app: AppContext, line: ImportLine, flow: FlowState, status: ParticipantStatus, region: str) -> None:
    """What a run would do with this participant (the conflict of another ``--region`` included)."""
    if _exists(app, line.participant_id):
        line.outcome, line.reason = "skipped", _already_imported_elsewhere(app, line.participant_id, region)
        return
    line.outcome = "would_import"
    line.schedules = len(StateData(flow.state_data).schedules()) if status is ParticipantStatus.ACTIVE else 0


def _created(
    app: AppContext, participant: ConversationParticipant, flow: FlowState, line: ImportLine, region: str
) -> bool:
    """Write the participant, claim and state; or report (``line``) why not, and go on to the next:
    imported before under another number (another ``--region``), enrolled concurrently, or a row
    the table refuses (too large). The store itself failing stops the run."""
    if _exists(app, participant.id):
        line.outcome, line.reason = "skipped", _already_imported_elsewhere(app, participant.id, region)
        return False
    try:
        app.repo.create(participant, flow)
    except ParticipantAlreadyEnrolled:
        line.outcome, line.reason = "skipped", "phone number enrolled concurrently"
        return False
    except StoreError as exc:
        if exc.code not in _ROW_REFUSED:
            raise  # throttled past the retries, unreachable: the run stops, as it must
        line.outcome, line.reason = "skipped", f"the table refused this participant's row: {_why(exc)}"
        return False
    return True


def _exists(app: AppContext, participant_id: str) -> bool:
    try:
        app.repo.get(participant_id)
    except ParticipantNotFound:
        return False
    return True


def _already_imported_elsewhere(app: AppContext, participant_id: str, region: str) -> str:
    """Why a participant already imported under another number is left alone: the number read now
    differs from the one the first run stored (most often, another ``--region``)."""
    stored = mask_phone(app.repo.get(participant_id).phone_number)
    return (
        f"already imported as {participant_id} with {stored}; this run reads the number differently "
        f"(--region {region}): a conflict, nothing changed (run again with the first run's --region)"
    )


def _one_per_phone(originals: list[OriginalParticipant], phones: dict[str, str]) -> dict[str, str]:
    """Two rows of the original may spell one number differently: the one with a non-empty
    conversation state, then the most recently updated, then the smallest id, is imported."""
    oldest = datetime.min.replace(tzinfo=UTC)
    ranked = sorted(
        (o for o in originals if o.id in phones),
        key=lambda o: (bool(o.state_data), o.updated_at or oldest, _reverse(o.id)),
        reverse=True,
    )
    winners: dict[str, str] = {}
    for original in ranked:
        winners.setdefault(phones[original.id], original.id)
    return winners


def _original_history(original: OriginalParticipant) -> ImportedHistory:
    """The history a first run read, from the original as ``_build`` carries it over; not from the
    stored state, whose history every later commit bounds to the model's window."""
    data = StateData(dict(original.state_data or {}))
    _drop_unreadable_profile_fields(data, ImportLine(original.id))
    return read_history(data)


def _reverse(text: str) -> tuple[int, ...]:
    return tuple(-ord(ch) for ch in text)


def rebuild_schedules(app: AppContext, participant_id: str) -> int:
    """Re-create a participant's daily schedules from their registry through the engine's own path,
    ``reconcile`` (live schedules = what the state wants). Returns the schedules created."""
    return len(reconcile(app, participant_id).created_missing)


def imported_id(original_id: str) -> str:
    """The original id when it has this system's form, else a stable id derived from it."""
    if _ID.match(original_id):
        return original_id
    return "p_" + hashlib.sha256(f"promptpipe-import:{original_id}".encode()).hexdigest()[:32]


def _status(raw: str, line: ImportLine) -> ParticipantStatus | None:
    value = (raw or "active").strip().lower()
    try:
        return ParticipantStatus(value)
    except ValueError:
        line.reason = f"unknown status {raw!r}"
        return None


def _build(
    original: OriginalParticipant,
    line: ImportLine,
    phone: str,
    status: ParticipantStatus,
    now: datetime,
    *,
    max_schedules: int,
) -> tuple[ConversationParticipant, FlowState]:
    enrolled = original.enrolled_at or original.created_at or now
    participant = ConversationParticipant(
        id=line.participant_id,
        phone_number=phone,
        name=original.name,
        gender=original.gender,
        ethnicity=original.ethnicity,
        background=original.background,
        timezone=line.timezone,
        status=status,
        enrolled_at=enrolled,
        created_at=original.created_at or enrolled,
        updated_at=now,
        consent=engine_consent(enrolled, CONSENT_IMPORTED),  # docs/safety.md#consent
    )
    if original.state_error:
        line.warnings.append(f"{original.state_error}; imported with an empty state")
    line.warnings.extend(original.state_warnings)
    data = StateData(dict(original.state_data or {}))
    _adapt_registry(data, line, participant.timezone or "UTC", max_schedules)
    cleared = [key.value for key in _ONE_SHOT_KEYS if data.get(key)]
    for key in _ONE_SHOT_KEYS:
        data.clear(key)
    if cleared:
        line.warnings.append("one-shot timers of the original not carried over: " + ", ".join(cleared))
    _drop_unreadable_profile_fields(data, line)
    data.profile()  # a corrupt profile reads as a new one until the next save replaces it
    if DataKey.USER_PROFILE.value in data.unreadable_keys:
        line.warnings.append(
            "userProfile is unreadable: imported unchanged; it reads as empty until the next save replaces it"
        )
    flow = FlowState(
        participant_id=participant.id,
        flow_type=FLOW_TYPE,
        current_state=original.current_state or STATE_CONVERSATION_ACTIVE,
        state_data=data.raw,
    )
    return participant, flow


def _drop_unreadable_profile_fields(data: StateData, line: ImportLine) -> None:
    """A ``userProfile`` that is a JSON object but holds values this system cannot read (an unknown
    ``tone_update_source``, a count that is not a number): those fields are dropped, one warning
    each (naming the field and the rule, never the value), and the rest is imported. A profile that
    is not a JSON object, or fails in a way no field explains, is left to the unreadable-profile
    warning."""
    text = data.get(DataKey.USER_PROFILE)
    try:
        stored = json.loads(text) if text else None
    except ValueError:
        return
    if not isinstance(stored, dict):
        return
    dropped: list[str] = []
    for _ in range(_PROFILE_REPAIR_ROUNDS):
        try:
            UserProfile.from_json_dict(stored)
        except ValidationError as exc:
            problems = [(_field_path(error["loc"]), error["msg"]) for error in exc.errors()]
            removed = [f"userProfile.{'.'.join(path)}: {msg}; dropped" for path, msg in problems if _drop(stored, path)]
            if not removed:
                return
            dropped.extend(removed)
            continue
        except _NOT_A_PROFILE:
            return
        if dropped:
            data.set(DataKey.USER_PROFILE, json.dumps(stored, ensure_ascii=False))
            line.warnings.extend(dropped)
        return


def _field_path(loc: tuple[int | str, ...]) -> tuple[str, ...]:
    """The field an error is in: up to the first list index (a bad element drops its whole list)."""
    path: list[str] = []
    for part in loc:
        if isinstance(part, int):
            break
        path.append(part)
    return tuple(path)


def _drop(stored: dict[str, Any], path: tuple[str, ...]) -> bool:
    """Remove ``path`` from the nested objects of ``stored``; whether it was there."""
    if not path:
        return False
    parent: Any = stored
    for part in path[:-1]:
        parent = parent.get(part) if isinstance(parent, dict) else None
    if not isinstance(parent, dict) or path[-1] not in parent:
        return False
    del parent[path[-1]]
    return True


def _adapt_registry(data: StateData, line: ImportLine, zone: str, max_schedules: int) -> None:
    raw = data.get(DataKey.SCHEDULE_REGISTRY)
    if not raw:
        return
    schedules = data.schedules()
    readable = len(schedules)
    if len(schedules) > max_schedules:  # the first by time of day, in the registry's order
        ranked = sorted(range(len(schedules)), key=lambda n: _time_of_day(schedules[n]))
        over = [schedules[n] for n in ranked[max_schedules:]]
        schedules = [schedules[n] for n in sorted(ranked[:max_schedules])]
        shown = ", ".join(s.id for s in over[:10]) + (f" and {len(over) - 10} more" if len(over) > 10 else "")
        line.warnings.append(
            f"{len(over)} daily schedules over the limit of {max_schedules} not imported "
            f"(MAX_LIVE_DAILY_SCHEDULES; the first {max_schedules} by time of day are kept): {shown}"
        )
    try:
        stored = json.loads(raw)
    except ValueError:
        stored = None
    if not isinstance(stored, list) or len(stored) != readable:
        line.warnings.append("scheduleRegistry partly unreadable: only its readable entries are kept")
    kept = []
    for schedule in schedules:
        schedule_id = schedule.id if _SCHEDULE_ID.match(schedule.id) else _short_id(schedule.id)
        kept.append(
            schedule.model_copy(
                update={
                    "id": schedule_id,
                    "timer_id": daily_schedule_name(line.participant_id, schedule_id),
                    "timezone": schedule.timezone or zone,
                }
            )
        )
    data.set_schedules(kept)


def _time_of_day(schedule: ScheduleInfo) -> tuple[str, str]:
    """A schedule's place in the day: its fixed time, or the start of its random window ("HH:MM")."""
    return (schedule.fixed_time or schedule.random_start_time or "99:99", schedule.id)


def _short_id(schedule_id: str) -> str:
    return "sched_" + hashlib.sha256(schedule_id.encode()).hexdigest()[:16]


def _default_zone(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return validate_iana_zone(name)
    except ValueError as exc:
        raise ValidationFailed(f"--default-timezone: {exc}", field="default_timezone") from None


def _zone_of(original: OriginalParticipant) -> tuple[str, str]:
    """(zone, where it came from): the first IANA zone of the schedule registry, else the
    participants table's ``timezone`` column when the database has one; ("", "") when neither."""
    try:  # the raw entries: a zone is worth keeping even from an entry the import cannot schedule
        registry = json.loads((original.state_data or {}).get(DataKey.SCHEDULE_REGISTRY.value) or "[]")
    except ValueError:
        registry = []
    for entry in registry if isinstance(registry, list) else []:
        zone = _iana(entry.get("timezone")) if isinstance(entry, dict) else ""
        if zone:
            return zone, "scheduleRegistry"
    zone = _iana(original.timezone)
    return (zone, "timezone column") if zone else ("", "")


def _iana(name: object) -> str:
    try:
        return (
            validate_iana_zone(name) if isinstance(name, str) and name else ""
        )  # the rule of enrollment: it can be scheduled
    except ValueError:
        return ""
