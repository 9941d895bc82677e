"""The local stand-in for EventBridge Scheduler firing (moto stores schedules, never fires them).

``SchedulerPump.run_until(t)`` fires, in time order, every occurrence of the group's schedules up
to ``t``: it sets the shared ``ManualClock`` to each occurrence, hands the target's Input (with
the scheduler's context placeholders filled) to ``dispatch``, deletes completed one-shots whose
ActionAfterCompletion is DELETE, and re-reads the group after every firing because handlers
create, replace and cancel schedules while they run.

Occurrences:
- ``at()`` fires once, at max(at, the pump's time when it first sees the schedule version);
- ``cron()`` fires per ``next_cron_fire`` in its zone, strictly after the schedule's creation (the
  Input's ``created_at`` when present, else when the pump first saw it), after the pump's own start,
  after StartDate, and never twice for the same occurrence of a name (across replacements);
- ``rate()`` every period from the same anchor (see ``next_rate_fire``);
- a FLEXIBLE window of W minutes delays each occurrence by 0..W minutes, drawn from a generator
  seeded with (seed, name, occurrence), so the delay does not depend on other schedules.
The ``scheduled-time`` placeholder is the nominal occurrence (before any delay).

Cost: one paginated ``list_schedules`` per loop iteration; ``get_schedule`` only for names that
are new or whose version changed. A version is (Arn, CreationDate, LastModificationDate) from
the list item: a replacement (UpdateSchedule) moves LastModificationDate, a delete and re-create
moves CreationDate, so a cached ``get_schedule`` result is never stale. A fired DELETE one-shot is
deleted by the next listing if its version is unchanged; a handler that replaced it during the
firing keeps its new version. In notified mode (``watch``) the pump re-reads only the names
reported as changed, and a heap of pending occurrences gives the next one in O(log schedules), so
a firing costs the same on day 1 and day 100 of a simulated study.

A dispatch that raises still counts as fired (and a DELETE one-shot is still deleted at the next
refresh, as after AWS's retries are exhausted); the exception propagates with the clock left at
that firing.
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import random
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from botocore.exceptions import ClientError
from pydantic import ConfigDict

from promptpipe.errors import InvalidScheduleExpression
from promptpipe.lazy_model import LazyModel
from promptpipe.rules.clock import ManualClock, parse_rfc3339
from promptpipe.rules.scheduling import (
    ParsedExpression,
    at_fire_time,
    next_cron_fire,
    next_rate_fire,
    parse_expression,
)

if TYPE_CHECKING:
    from botocore.client import BaseClient

logger = logging.getLogger(__name__)

Dispatch = Callable[[str, dict[str, Any]], None]

# A handler that keeps scheduling "now" would otherwise spin forever.
MAX_FIRINGS_PER_RUN = 100_000


class Firing(LazyModel):
    """One delivered occurrence."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: str | None  # the Input's "kind" field
    at: datetime  # when it fired (the clock during dispatch)
    scheduled_time: datetime  # the nominal occurrence, before any flexible delay
    target_arn: str
    execution_id: str


class ScheduleSource(Protocol):
    """Where the pump reads the group's schedules, in the Scheduler API's shapes: ``listing`` yields
    ListSchedules items (``Name``, ``Arn``, ``CreationDate``, ``LastModificationDate``), ``get`` a
    GetSchedule answer (``None``: no such schedule), ``delete`` removes a completed one-shot (a
    schedule already gone is no error)."""

    def listing(self) -> Iterable[dict[str, Any]]: ...

    def get(self, name: str) -> dict[str, Any] | None: ...

    def delete(self, name: str) -> None: ...


class SchedulerApiSource:
    """The schedule group through the EventBridge Scheduler API (moto locally)."""

    def __init__(self, client: BaseClient, group_name: str) -> None:
        self._client = client
        self._group_name = group_name

    def listing(self) -> Iterator[dict[str, Any]]:
        paginator = self._client.get_paginator("list_schedules")
        for page in paginator.paginate(GroupName=self._group_name, PaginationConfig={"PageSize": 100}):
            yield from page.get("Schedules", [])

    def get(self, name: str) -> dict[str, Any] | None:
        try:
            return dict(self._client.get_schedule(Name=name, GroupName=self._group_name))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
                return None
            raise

    def delete(self, name: str) -> None:
        try:
            self._client.delete_schedule(Name=name, GroupName=self._group_name)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
                raise


@dataclass(slots=True)
class _Entry:
    """What the pump knows about one version of one schedule."""

    name: str
    version: tuple[object, ...]
    arn: str
    target_arn: str
    input_text: str | None
    kind: str | None
    expression: ParsedExpression | None  # None: unusable (invalid expression or zone)
    timezone: str
    delete_after: bool
    window_minutes: int
    anchor: datetime  # recurring occurrences fall strictly after this
    end_date: datetime | None
    nominal: datetime | None = None  # the pending occurrence, None when there is none
    due: datetime | None = None  # nominal + flexible delay
    stamp: int = 0  # which push onto the pump's heap is this entry's current one


class SchedulerPump:
    def __init__(
        self,
        client: BaseClient | None,
        *,
        group_name: str,
        clock: ManualClock,
        dispatch: Dispatch,
        seed: int = 0,
        source: ScheduleSource | None = None,
    ) -> None:
        """Reads the group through the Scheduler API (``client``), or through ``source``."""
        if source is None:
            if client is None:
                raise ValueError("a scheduler pump needs a Scheduler client or a schedule source")
            source = SchedulerApiSource(client, group_name)
        self._source = source
        self._clock = clock
        self._dispatch = dispatch
        self._seed = seed
        self._started = clock.now()
        self._entries: dict[str, _Entry] = {}
        self._last_fired: dict[str, datetime] = {}  # name -> last nominal occurrence fired
        self._completed: dict[str, tuple[object, ...]] = {}  # fired DELETE one-shots -> version
        # Notified mode (``watch``): re-read only the names the Timers adapter reports as changed.
        self._dirty: set[str] | None = None
        self._listed_once = False
        # (due, name, stamp, entry) for every pending occurrence; a row is stale (skipped when it
        # reaches the top) once its entry is replaced, removed or advanced (the stamp moved on).
        self._heap: list[tuple[datetime, str, int, _Entry]] = []
        self._stamps = itertools.count(1)

    def watch(self) -> Callable[[str], None]:
        """Switch to notified refresh and return the callback that reports a changed schedule name.

        Listing the whole group before every firing costs O(schedules) calls per firing; with
        thousands of participants (``promptpipe simulate``) the adapter instead reports each name it
        creates, replaces or deletes, and the pump re-reads only those.
        """
        self._dirty = set()
        return self._dirty.add

    def next_due(self) -> datetime | None:
        """When the next occurrence fires (never earlier than the clock), or None."""
        self._refresh()
        now = self._clock.now()
        candidate = self._earliest()
        return None if candidate is None else max(candidate.due or now, now)

    def run_until(self, instant: datetime) -> list[Firing]:
        """Fire everything due up to ``instant`` in time order; leave the clock at ``instant``."""
        if instant.tzinfo is None:
            raise ValueError("run_until needs a timezone-aware instant")
        instant = instant.astimezone(UTC)
        if instant < self._clock.now():
            raise ValueError("the pump never moves the clock backwards")
        firings: list[Firing] = []
        while True:
            self._refresh()
            entry = self._earliest()
            if entry is None or entry.due is None or max(entry.due, self._clock.now()) > instant:
                break
            if len(firings) >= MAX_FIRINGS_PER_RUN:
                raise RuntimeError(f"more than {MAX_FIRINGS_PER_RUN} firings before {instant}")
            firings.append(self._fire(entry))
        self._clock.set(instant)
        return firings

    # --- firing ---------------------------------------------------------------------------

    def _earliest(self) -> _Entry | None:
        """The pending occurrence that fires first: the least (due, name). (Ordering by
        (max(due, now), due, name) is the same order: the overdue come first, by due.)"""
        heap = self._heap
        while heap:
            _, name, stamp, entry = heap[0]
            if self._entries.get(name) is entry and entry.stamp == stamp and entry.due is not None:
                return entry
            heapq.heappop(heap)  # stale: replaced, removed or advanced since it was pushed
        return None

    def _push(self, entry: _Entry) -> None:
        entry.stamp = next(self._stamps)
        if entry.due is None:
            return
        heapq.heappush(self._heap, (entry.due, entry.name, entry.stamp, entry))
        if len(self._heap) > 2 * len(self._entries) + 1024:  # drop stale rows now and then
            self._heap = [row for row in self._heap if self._entries.get(row[1]) is row[3] and row[3].stamp == row[2]]
            heapq.heapify(self._heap)

    def _fire(self, entry: _Entry) -> Firing:
        assert entry.nominal is not None and entry.due is not None
        nominal = entry.nominal
        self._clock.set(max(entry.due, self._clock.now()))
        execution_id = self._execution_id(entry.name, nominal)
        firing = Firing(
            name=entry.name,
            kind=entry.kind,
            at=self._clock.now(),
            scheduled_time=nominal,
            target_arn=entry.target_arn,
            execution_id=execution_id,
        )
        event = self._event(entry, nominal, execution_id)
        self._last_fired[entry.name] = nominal
        self._advance(entry)
        if entry.expression is not None and entry.expression.kind == "at" and entry.delete_after:
            # Deleted by the next refresh, unless the handler replaces it meanwhile.
            self._completed[entry.name] = entry.version
        self._dispatch(entry.target_arn, event)
        return firing

    def _event(self, entry: _Entry, nominal: datetime, execution_id: str) -> dict[str, Any]:
        if not entry.input_text:
            return {}
        text = (
            entry.input_text.replace("<aws.scheduler.scheduled-time>", _iso_z(nominal))
            .replace("<aws.scheduler.execution-id>", execution_id)
            .replace("<aws.scheduler.schedule-arn>", entry.arn)
            .replace("<aws.scheduler.attempt-number>", "1")
        )
        try:
            event = json.loads(text)
        except ValueError:
            return {"input": text}
        return event if isinstance(event, dict) else {"input": event}

    # --- reading the group ----------------------------------------------------------------

    def _refresh(self) -> None:
        if self._dirty is not None and self._listed_once:
            self._refresh_notified(self._dirty)
            return
        self._listed_once = True
        seen: set[str] = set()
        completed: list[str] = []
        for item in self._source.listing():
            name = item["Name"]
            if self._completed.pop(name, None) == _version(item):
                completed.append(name)  # the one-shot that fired, unchanged: delete it
                continue
            seen.add(name)
            entry = self._entries.get(name)
            if entry is not None and entry.version == _version(item):
                continue
            loaded = self._load(name)
            if loaded is not None:
                self._entries[name] = loaded
        self._completed.clear()  # any left were deleted by someone else
        for name in completed:  # after the listing, so pagination never sees a deletion
            self._source.delete(name)
        for name in [n for n in self._entries if n not in seen]:
            del self._entries[name]

    def _refresh_notified(self, dirty: set[str]) -> None:
        for name in self._completed:
            if name not in dirty:  # fired and untouched since: complete it as AWS would
                self._entries.pop(name, None)
                self._source.delete(name)
        self._completed.clear()
        for name in list(dirty):
            dirty.discard(name)
            loaded = self._load(name)
            if loaded is None:
                self._entries.pop(name, None)
            else:
                self._entries[name] = loaded

    def _load(self, name: str) -> _Entry | None:
        schedule = self._source.get(name)
        if schedule is None:
            return None  # deleted between the list and the get
        target = schedule.get("Target", {})
        input_text = target.get("Input")
        body = _json_object(input_text)
        window = schedule.get("FlexibleTimeWindow", {})
        entry = _Entry(
            name=name,
            version=_version(schedule),
            arn=str(schedule.get("Arn", "")),
            target_arn=str(target.get("Arn", "")),
            input_text=input_text,
            kind=body.get("kind") if isinstance(body.get("kind"), str) else None,
            expression=None,
            timezone=schedule.get("ScheduleExpressionTimezone") or "UTC",
            delete_after=schedule.get("ActionAfterCompletion") == "DELETE",
            window_minutes=int(window.get("MaximumWindowInMinutes", 0)) if window.get("Mode") == "FLEXIBLE" else 0,
            anchor=self._anchor(name, schedule, body),
            end_date=_aware(schedule.get("EndDate")),
        )
        if schedule.get("State", "ENABLED") != "ENABLED":
            return entry
        try:
            entry.expression = parse_expression(str(schedule.get("ScheduleExpression", "")))
            self._first_occurrence(entry)
        except InvalidScheduleExpression as exc:
            logger.warning("schedule %s never fires locally: %s", name, exc)
            entry.expression, entry.nominal, entry.due = None, None, None
            entry.stamp = next(self._stamps)
        return entry

    def _anchor(self, name: str, schedule: dict[str, Any], body: dict[str, Any]) -> datetime:
        created = _created_at(body) or self._clock.now()
        candidates = [created, self._started]
        start_date = _aware(schedule.get("StartDate"))
        if start_date is not None:
            candidates.append(start_date)
        if name in self._last_fired:
            candidates.append(self._last_fired[name])
        return max(candidates)

    def _first_occurrence(self, entry: _Entry) -> None:
        expression = entry.expression
        assert expression is not None
        if expression.kind == "at":
            nominal = at_fire_time(expression, entry.timezone)
            self._set_pending(entry, nominal, earliest=self._clock.now())
        elif expression.kind == "cron":
            self._set_pending(entry, next_cron_fire(expression, entry.timezone, entry.anchor))
        else:
            self._set_pending(entry, next_rate_fire(expression, entry.anchor, entry.anchor))

    def _advance(self, entry: _Entry) -> None:
        expression, nominal = entry.expression, entry.nominal
        assert expression is not None and nominal is not None
        if expression.kind == "at":
            self._set_pending(entry, None)
        elif expression.kind == "cron":
            self._set_pending(entry, next_cron_fire(expression, entry.timezone, nominal))
        else:
            self._set_pending(entry, next_rate_fire(expression, entry.anchor, nominal))

    def _set_pending(self, entry: _Entry, nominal: datetime | None, earliest: datetime | None = None) -> None:
        if nominal is None or (entry.end_date is not None and nominal > entry.end_date):
            entry.nominal, entry.due = None, None
        else:
            entry.nominal = nominal
            base = nominal if earliest is None else max(nominal, earliest)
            entry.due = base + self._flexible_delay(entry, nominal)
        self._push(entry)

    # --- deterministic randomness ---------------------------------------------------------

    def _flexible_delay(self, entry: _Entry, nominal: datetime) -> timedelta:
        if entry.window_minutes <= 0:
            return timedelta(0)
        rng = random.Random(f"{self._seed}|window|{entry.name}|{nominal.isoformat()}")
        return timedelta(seconds=rng.randint(0, entry.window_minutes * 60))

    def _execution_id(self, name: str, nominal: datetime) -> str:
        rng = random.Random(f"{self._seed}|execution|{name}|{nominal.isoformat()}")
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _version(schedule: dict[str, Any]) -> tuple[object, ...]:
    return (schedule.get("Arn"), schedule.get("CreationDate"), schedule.get("LastModificationDate"))


def _json_object(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _created_at(body: dict[str, Any]) -> datetime | None:
    value = body.get("created_at")
    if not isinstance(value, str):
        return None
    try:
        return parse_rfc3339(value)
    except ValueError:
        return None


def _aware(value: object) -> datetime | None:
    if not isinstance(value, datetime):
        return None
    return (value if value.tzinfo is not None else value.replace(tzinfo=UTC)).astimezone(UTC)


def _iso_z(instant: datetime) -> str:
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
