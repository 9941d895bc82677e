"""EventBridge Scheduler rules in pure Python: names, zones, expressions and next-fire times.

moto validates nothing and never fires (docs/platform.md#moto), so the Scheduler adapter validates with
these functions before calling AWS and the local pump computes occurrences with them. Grammar and
DST behaviour follow docs/platform.md#scheduler-rules: ``at(yyyy-mm-ddThh:mm:ss)``, ``rate(N unit)``, six-field
``cron()`` with ``?`` in day-of-month or day-of-week; a local time that does not exist on a
spring-forward day is skipped, an ambiguous fall-back time fires once (its first occurrence).
"""

import calendar
import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from pydantic import ConfigDict

from promptpipe.errors import InvalidScheduleExpression
from promptpipe.lazy_model import LazyModel
from promptpipe.rules.timezones import validate_iana_zone

MAX_NAME_LENGTH = 64
MAX_EXPRESSION_LENGTH = 256
MIN_YEAR = 1970
MAX_YEAR = 2199

_NAME = re.compile(r"[0-9a-zA-Z\-_.]{1,64}")
_EXPRESSION = re.compile(r"(at|cron|rate)\((.*)\)", re.DOTALL)
_AT_BODY = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})")
_RATE_BODY = re.compile(r"([1-9]\d{0,8}) (minute|minutes|hour|hours|day|days)")
_RATE_UNITS = {"minute": 60, "hour": 3600, "day": 86400}
_MONTHS = {name.upper(): i for i, name in enumerate(calendar.month_abbr) if name}
_DAYS = {"SUN": 1, "MON": 2, "TUE": 3, "WED": 4, "THU": 5, "FRI": 6, "SAT": 7}
# Offsets between a zone's UTC offsets on either side of a transition stay below this.
_DST_SLACK = timedelta(hours=3)


class DayOfMonthRule(LazyModel):
    """The day-of-month field: plain days, ``L`` (last day), ``LW`` (last weekday), ``nW``."""

    model_config = ConfigDict(frozen=True)

    days: frozenset[int] = frozenset()
    last_day: bool = False
    last_weekday: bool = False
    nearest_weekday: int | None = None

    def matches(self, day: date) -> bool:
        last = calendar.monthrange(day.year, day.month)[1]
        if day.day in self.days or (self.last_day and day.day == last):
            return True
        if self.last_weekday:
            return day.day == _nearest_weekday(day.year, day.month, last)
        if self.nearest_weekday is not None:
            return day.day == _nearest_weekday(day.year, day.month, self.nearest_weekday)
        return False


class DayOfWeekRule(LazyModel):
    """The day-of-week field (1-7 = SUN-SAT): plain days, ``nL`` (last n-day), ``n#k`` (k-th n-day)."""

    model_config = ConfigDict(frozen=True)

    days: frozenset[int] = frozenset()
    last_of_month: frozenset[int] = frozenset()
    nth: frozenset[tuple[int, int]] = frozenset()

    def matches(self, day: date) -> bool:
        weekday = aws_day_of_week(day)
        if weekday in self.days:
            return True
        last = calendar.monthrange(day.year, day.month)[1]
        if weekday in self.last_of_month and day.day + 7 > last:
            return True
        return (weekday, (day.day - 1) // 7 + 1) in self.nth


class CronSpec(LazyModel):
    """The six fields of a ``cron()`` expression, expanded. Exactly one day rule is set."""

    model_config = ConfigDict(frozen=True)

    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    day_of_month: DayOfMonthRule | None
    months: tuple[int, ...]
    day_of_week: DayOfWeekRule | None
    years: tuple[int, ...]

    def matches_day(self, day: date) -> bool:
        if self.day_of_month is not None:
            return self.day_of_month.matches(day)
        return self.day_of_week is not None and self.day_of_week.matches(day)


class ParsedExpression(LazyModel):
    """A schedule expression: ``at`` (a wall-clock time in the schedule's zone), ``cron`` or
    ``rate`` (a fixed period)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["at", "cron", "rate"]
    text: str
    at: datetime | None = None  # naive: read it in the schedule's ScheduleExpressionTimezone
    cron: CronSpec | None = None
    rate: timedelta | None = None


# --- names, zones, simple builders -------------------------------------------------------


def validate_schedule_name(name: str) -> str:
    """A schedule (or group) name: 1-64 characters of ``[0-9a-zA-Z-_.]``."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidScheduleExpression(
            f"invalid schedule name {name!r}: use 1-{MAX_NAME_LENGTH} characters of [0-9a-zA-Z-_.]"
        )
    return name


def validate_timezone(name: str) -> ZoneInfo:
    """An IANA time zone name (``promptpipe.rules.timezones``: the rule enrollment and the tools use too)."""
    try:
        return ZoneInfo(validate_iana_zone(name))
    except (ValueError, OSError) as exc:  # InvalidTimeZone; ZoneInfoNotFoundError is an OSError
        raise InvalidScheduleExpression(str(exc)) from exc


def at_expression(instant: datetime) -> str:
    """``at(...)`` of the instant's UTC wall clock (use with ScheduleExpressionTimezone "UTC").

    Sub-second parts are rounded up so a timer never fires before the instant it was asked for.
    """
    utc = _require_aware(instant).astimezone(UTC)
    if utc.microsecond:
        utc = utc.replace(microsecond=0) + timedelta(seconds=1)
    return f"at({utc:%Y-%m-%dT%H:%M:%S})"


def daily_cron_expression(hour: int, minute: int) -> str:
    """Every day at hour:minute (in the schedule's time zone)."""
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        raise InvalidScheduleExpression(f"invalid daily time {hour}:{minute}: hour 0-23, minute 0-59")
    return f"cron({minute} {hour} * * ? *)"


def aws_day_of_week(day: date) -> int:
    """AWS numbering: 1 = Sunday ... 7 = Saturday."""
    return (day.weekday() + 1) % 7 + 1


# --- parsing ---------------------------------------------------------------------------


def parse_expression(expression: str) -> ParsedExpression:
    """Parse ``at(...)``, ``cron(...)`` or ``rate(...)``; ``InvalidScheduleExpression`` otherwise."""
    if not isinstance(expression, str) or len(expression) > MAX_EXPRESSION_LENGTH:
        raise InvalidScheduleExpression(f"invalid schedule expression {expression!r}")
    match = _EXPRESSION.fullmatch(expression)
    if match is None:
        raise InvalidScheduleExpression(
            f"invalid schedule expression {expression!r}: expected at(...), cron(...) or rate(...)"
        )
    kind, body = match.group(1), match.group(2)
    if kind == "at":
        return ParsedExpression(kind="at", text=expression, at=_parse_at(body, expression))
    if kind == "rate":
        return ParsedExpression(kind="rate", text=expression, rate=_parse_rate(body, expression))
    return ParsedExpression(kind="cron", text=expression, cron=_parse_cron(body, expression))


def _parse_at(body: str, expression: str) -> datetime:
    match = _AT_BODY.fullmatch(body)
    if match is None:
        raise InvalidScheduleExpression(f"invalid {expression!r}: expected at(yyyy-mm-ddThh:mm:ss)")
    try:
        year, month, day, hour, minute, second = (int(part) for part in match.groups())
        return datetime(year, month, day, hour, minute, second)
    except ValueError as exc:
        raise InvalidScheduleExpression(f"invalid {expression!r}: {exc}") from exc


def _parse_rate(body: str, expression: str) -> timedelta:
    match = _RATE_BODY.fullmatch(body)
    if match is None:
        raise InvalidScheduleExpression(f"invalid {expression!r}: expected rate(N minute(s)|hour(s)|day(s))")
    return timedelta(seconds=int(match.group(1)) * _RATE_UNITS[match.group(2).rstrip("s")])


def _parse_cron(body: str, expression: str) -> CronSpec:
    fields = body.split(" ")
    if len(fields) != 6:
        raise InvalidScheduleExpression(f"invalid {expression!r}: cron needs six fields")
    minute, hour, dom, month, dow, year = fields
    if (dom == "?") == (dow == "?"):
        raise InvalidScheduleExpression(
            f"invalid {expression!r}: use '?' in exactly one of day-of-month and day-of-week"
        )
    try:
        return CronSpec(
            minutes=_sorted(_parse_list(minute, 0, 59, {})),
            hours=_sorted(_parse_list(hour, 0, 23, {})),
            day_of_month=None if dom == "?" else _parse_day_of_month(dom),
            months=_sorted(_parse_list(month, 1, 12, _MONTHS)),
            day_of_week=None if dow == "?" else _parse_day_of_week(dow),
            years=_sorted(_parse_list(year, MIN_YEAR, MAX_YEAR, {})),
        )
    except ValueError as exc:
        raise InvalidScheduleExpression(f"invalid {expression!r}: {exc}") from exc


def _sorted(values: frozenset[int]) -> tuple[int, ...]:
    return tuple(sorted(values))


def _parse_day_of_month(text: str) -> DayOfMonthRule:
    if text == "L":
        return DayOfMonthRule(last_day=True)
    if text == "LW":
        return DayOfMonthRule(last_weekday=True)
    if text.endswith("W"):
        return DayOfMonthRule(nearest_weekday=_value(text[:-1], 1, 31, {}))
    return DayOfMonthRule(days=_parse_list(text, 1, 31, {}))


def _parse_day_of_week(text: str) -> DayOfWeekRule:
    if text == "L":  # a bare L in day-of-week is the last day of the week, Saturday
        return DayOfWeekRule(days=frozenset({7}))
    if len(text) > 1 and text.endswith("L"):
        return DayOfWeekRule(last_of_month=frozenset({_value(text[:-1], 1, 7, _DAYS)}))
    if "#" in text:
        day, _, nth = text.partition("#")
        return DayOfWeekRule(nth=frozenset({(_value(day, 1, 7, _DAYS), _value(nth, 1, 5, {}))}))
    return DayOfWeekRule(days=_parse_list(text, 1, 7, _DAYS))


def _parse_list(text: str, low: int, high: int, names: dict[str, int]) -> frozenset[int]:
    """``*``, ``a``, ``a-b`` (wrapping when a > b), each with an optional ``/step``, comma-joined."""
    values: set[int] = set()
    for part in text.split(","):
        base, slash, step_text = part.partition("/")
        step = _value(step_text, 1, high - low + 1, {}) if slash else 1
        if base == "*":
            start, end = low, high
        elif "-" in base:
            first, _, last = base.partition("-")
            start, end = _value(first, low, high, names), _value(last, low, high, names)
        else:
            start = _value(base, low, high, names)
            end = high if slash else start
        span = list(range(start, end + 1)) if start <= end else [*range(start, high + 1), *range(low, end + 1)]
        values.update(span[::step])
    return frozenset(values)


def _value(text: str, low: int, high: int, names: dict[str, int]) -> int:
    if text.upper() in names:
        return names[text.upper()]
    if not text.isdigit() or not text.isascii():
        raise ValueError(f"{text!r} is not a number in {low}-{high}")
    value = int(text)
    if not low <= value <= high:
        raise ValueError(f"{value} is outside {low}-{high}")
    return value


def _nearest_weekday(year: int, month: int, day: int) -> int | None:
    """Quartz ``nW``: the weekday nearest to ``day`` without leaving the month."""
    last = calendar.monthrange(year, month)[1]
    if day > last:
        return None
    weekday = date(year, month, day).weekday()  # Monday = 0
    if weekday == 5:  # Saturday: Friday before, or Monday after when the 1st
        return day + 2 if day == 1 else day - 1
    if weekday == 6:  # Sunday: Monday after, or Friday before when the last day
        return day - 2 if day == last else day + 1
    return day


# --- next fire times -------------------------------------------------------------------


def at_fire_time(expression: str | ParsedExpression, timezone: str) -> datetime:
    """The UTC instant of an ``at()`` expression read in ``timezone``."""
    parsed = _parsed(expression)
    if parsed.at is None:
        raise InvalidScheduleExpression(f"{parsed.text!r} is not an at() expression")
    zone = validate_timezone(timezone)
    return parsed.at.replace(tzinfo=zone).astimezone(UTC)


def next_cron_fire(expression: str | ParsedExpression, timezone: str, after: datetime) -> datetime | None:
    """The next occurrence strictly after ``after`` (aware, UTC), or None when there is none.

    Fields are matched against the zone's local wall clock; a wall time skipped by a
    spring-forward transition does not fire that day, an ambiguous fall-back time fires at its
    first occurrence only.
    """
    parsed = _parsed(expression)
    if parsed.cron is None:
        raise InvalidScheduleExpression(f"{parsed.text!r} is not a cron() expression")
    spec = parsed.cron
    zone = validate_timezone(timezone)
    after_utc = _require_aware(after).astimezone(UTC)
    local = after_utc.astimezone(zone)
    # Wall times well before ``after`` cannot map to a later instant; skip them cheaply.
    floor = local.replace(tzinfo=None) - _DST_SLACK
    for day in _matching_days(spec, local.date()):
        for hour in spec.hours:
            for minute in spec.minutes:
                wall = datetime.combine(day, time(hour, minute))
                if wall < floor:
                    continue
                instant = _resolve_wall_time(wall, zone)
                if instant is not None and instant > after_utc:
                    return instant
    return None


def next_rate_fire(expression: str | ParsedExpression, start: datetime, after: datetime) -> datetime:
    """The first ``start + k * period`` (k >= 0) strictly after ``after``.

    Assumption (not checked against AWS): occurrences are anchored at the schedule's start
    (StartDate or creation), and a rate is a fixed period regardless of DST (docs/platform.md#scheduler-rules).
    """
    parsed = _parsed(expression)
    if parsed.rate is None:
        raise InvalidScheduleExpression(f"{parsed.text!r} is not a rate() expression")
    start_utc = _require_aware(start).astimezone(UTC)
    after_utc = _require_aware(after).astimezone(UTC)
    if after_utc < start_utc:
        return start_utc
    periods = (after_utc - start_utc) // parsed.rate + 1
    return start_utc + periods * parsed.rate


def _matching_days(spec: CronSpec, first: date) -> Iterator[date]:
    for year in spec.years:
        if year < first.year:
            continue
        for month in spec.months:
            if (year, month) < (first.year, first.month):
                continue
            start = first.day if (year, month) == (first.year, first.month) else 1
            for day_number in range(start, calendar.monthrange(year, month)[1] + 1):
                day = date(year, month, day_number)
                if spec.matches_day(day):
                    yield day


def _resolve_wall_time(wall: datetime, zone: ZoneInfo) -> datetime | None:
    """The UTC instant of a local wall time: first occurrence when ambiguous, None when skipped."""
    instant = wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
    if instant.astimezone(zone).replace(tzinfo=None) != wall:
        return None
    return instant


def _parsed(expression: str | ParsedExpression) -> ParsedExpression:
    return expression if isinstance(expression, ParsedExpression) else parse_expression(expression)


def _require_aware(instant: datetime) -> datetime:
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise InvalidScheduleExpression(f"{instant!r} must be timezone-aware")
    return instant
