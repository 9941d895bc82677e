"""The local scheduler pump over moto: schedules written by EventBridgeTimers fire in time order on
the manual clock, across DST, including schedules that handlers create while firing."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import boto3
import pytest

from promptpipe.adapters.eventbridge_timers import EventBridgeTimers
from promptpipe.local.pump import Firing, SchedulerPump
from promptpipe.models.events import ScheduledPromptPayload, TimerKind, TimerPayload
from promptpipe.rules.clock import ManualClock

GROUP = "promptpipe-test"
TIMERS_ARN = "arn:aws:lambda:us-east-1:123456789012:function:timers"
PROMPT_ARN = "arn:aws:lambda:us-east-1:123456789012:function:scheduled-prompt"
TORONTO = ZoneInfo("America/Toronto")


class Recorder:
    """A dispatch that records (target, event, clock time) and can run a hook per event."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.calls: list[tuple[str, dict[str, Any], datetime]] = []
        self.hook: Callable[[str, dict[str, Any]], None] | None = None

    def __call__(self, target_arn: str, event: dict[str, Any]) -> None:
        self.calls.append((target_arn, event, self.clock.now()))
        if self.hook is not None:
            self.hook(target_arn, event)


@pytest.fixture
def client(aws: None) -> Iterator[Any]:
    scheduler = boto3.client("scheduler", region_name="us-east-1")
    scheduler.create_schedule_group(Name=GROUP)
    yield scheduler


def _setup(client: Any, start: datetime, seed: int = 0) -> tuple[EventBridgeTimers, SchedulerPump, Recorder]:
    clock = ManualClock(start)
    recorder = Recorder(clock)
    timers = EventBridgeTimers(
        client,
        group_name=GROUP,
        timers_function_arn=TIMERS_ARN,
        scheduled_prompt_function_arn=PROMPT_ARN,
        role_arn="arn:aws:iam::123456789012:role/scheduler",
        dlq_arn=None,
    )
    pump = SchedulerPump(client, group_name=GROUP, clock=clock, dispatch=recorder, seed=seed)
    return timers, pump, recorder


def _reminder(name: str) -> TimerPayload:
    return TimerPayload(participant_id="p_1", kind=TimerKind.DAILY_PROMPT_REMINDER, timer_id=name)


def _daily(name: str, created_at: datetime | None) -> ScheduledPromptPayload:
    return ScheduledPromptPayload(participant_id="p_1", schedule_id=name, created_at=created_at)


def _names(client: Any) -> list[str]:
    return sorted(s["Name"] for s in client.list_schedules(GroupName=GROUP)["Schedules"])


def _assert_time_ordered(firings: list[Firing]) -> None:
    assert [f.at for f in firings] == sorted(f.at for f in firings)


def test_one_shot_fires_once_and_is_deleted(client: Any) -> None:
    # Given a reminder at 17:00 UTC
    start = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
    timers, pump, recorder = _setup(client, start)
    timers.schedule_timer(name="pp-reminder-p_1", at=start + timedelta(hours=5), payload=_reminder("pp-reminder-p_1"))

    # When the pump runs to just before, then past it, then much later
    assert pump.run_until(start + timedelta(hours=4, minutes=59)) == []
    firings = pump.run_until(start + timedelta(hours=6))
    later = pump.run_until(start + timedelta(days=3))

    # Then it fired once, at its time, with the context filled in, and the schedule is gone
    assert [(f.name, f.kind, f.at, f.target_arn) for f in firings] == [
        ("pp-reminder-p_1", "daily_prompt_reminder", start + timedelta(hours=5), TIMERS_ARN)
    ]
    assert later == []
    target, event, fired_at = recorder.calls[0]
    assert target == TIMERS_ARN
    assert fired_at == start + timedelta(hours=5)
    assert event["scheduled_time"] == "2027-03-01T17:00:00Z"
    assert str(uuid.UUID(event["execution_id"])) == event["execution_id"]
    assert event["execution_id"] == firings[0].execution_id
    assert TimerPayload.model_validate(event).timer_id == "pp-reminder-p_1"
    assert _names(client) == []
    assert len(recorder.calls) == 1


def test_clock_ends_at_the_requested_instant(client: Any) -> None:
    start = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
    _, pump, recorder = _setup(client, start)
    pump.run_until(start + timedelta(days=2))
    assert recorder.clock.now() == start + timedelta(days=2)
    with pytest.raises(ValueError, match="backwards"):
        pump.run_until(start)


def test_one_shot_without_delete_stays_but_fires_once(client: Any) -> None:
    start = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
    _, pump, recorder = _setup(client, start)
    client.create_schedule(
        Name="keep",
        GroupName=GROUP,
        ScheduleExpression="at(2027-03-01T13:00:00)",
        FlexibleTimeWindow={"Mode": "OFF"},
        ActionAfterCompletion="NONE",
        Target={"Arn": TIMERS_ARN, "RoleArn": "r", "Input": json.dumps({"kind": "x"})},
    )
    assert len(pump.run_until(start + timedelta(hours=2))) == 1
    assert pump.run_until(start + timedelta(days=1)) == []
    assert _names(client) == ["keep"]
    assert len(recorder.calls) == 1


@pytest.mark.parametrize(
    ("start", "expected_utc_hours"),
    [
        # spring forward on Sunday 2027-03-14: EST (UTC-5) -> EDT (UTC-4); 03-10..03-17 (the last
        # one, 11:50 UTC, falls before the end of the week at 12:00 UTC)
        (datetime(2027, 3, 10, 12, 0, tzinfo=UTC), [12, 12, 12, 12, 11, 11, 11, 11]),
        # fall back on Sunday 2027-11-07: EDT -> EST; 11-03..11-09
        (datetime(2027, 11, 3, 11, 0, tzinfo=UTC), [11, 11, 11, 11, 12, 12, 12]),
    ],
)
def test_daily_prompt_fires_every_day_at_the_local_time_across_dst(
    client: Any, start: datetime, expected_utc_hours: list[int]
) -> None:
    # Given a daily 07:50 Toronto prompt created before today's time
    timers, pump, recorder = _setup(client, start)
    timers.schedule_daily_prompt(
        name="pp-daily-p_1", hour=7, minute=50, timezone="America/Toronto", payload=_daily("pp-daily-p_1", start)
    )
    # When a week passes
    firings = pump.run_until(start + timedelta(days=7))
    # Then it fired once a day at 07:50 local; the UTC hour follows DST
    days = len(expected_utc_hours)
    assert [f.at.astimezone(TORONTO).strftime("%H:%M") for f in firings] == ["07:50"] * days
    assert [f.at.astimezone(TORONTO).date() for f in firings] == [
        (start + timedelta(days=i)).astimezone(TORONTO).date() for i in range(days)
    ]
    assert [f.at.hour for f in firings] == expected_utc_hours
    assert all(f.at.minute == 50 and f.target_arn == PROMPT_ARN and f.kind == "daily_prompt" for f in firings)
    assert [c[1]["scheduled_time"] for c in recorder.calls] == [f.at.strftime("%Y-%m-%dT%H:%M:%SZ") for f in firings]
    assert len({c[1]["execution_id"] for c in recorder.calls}) == days
    assert _names(client) == ["pp-daily-p_1"]  # recurring schedules stay


def test_daily_created_after_todays_time_first_fires_tomorrow(client: Any) -> None:
    # Given 09:00 Toronto, and a 07:50 daily prompt created now
    start = datetime(2027, 3, 1, 9, 0, tzinfo=TORONTO)
    timers, pump, _ = _setup(client, start)
    timers.schedule_daily_prompt(
        name="pp-daily-p_1", hour=7, minute=50, timezone="America/Toronto", payload=_daily("pp-daily-p_1", start)
    )
    # When the pump runs two days / Then the first firing is tomorrow 07:50
    firings = pump.run_until(start + timedelta(days=2))
    assert [f.at for f in firings] == [
        datetime(2027, 3, 2, 7, 50, tzinfo=TORONTO),
        datetime(2027, 3, 3, 7, 50, tzinfo=TORONTO),
    ]


def test_daily_without_created_at_is_anchored_when_first_seen(client: Any) -> None:
    start = datetime(2027, 3, 1, 9, 0, tzinfo=TORONTO)
    timers, pump, _ = _setup(client, start)
    timers.schedule_daily_prompt(
        name="pp-daily-p_1", hour=7, minute=50, timezone="America/Toronto", payload=_daily("pp-daily-p_1", None)
    )
    assert pump.next_due() == datetime(2027, 3, 2, 7, 50, tzinfo=TORONTO)


def test_created_at_in_the_future_delays_the_first_firing(client: Any) -> None:
    start = datetime(2027, 3, 1, 6, 0, tzinfo=TORONTO)
    timers, pump, _ = _setup(client, start)
    timers.schedule_daily_prompt(
        name="d",
        hour=7,
        minute=50,
        timezone="America/Toronto",
        payload=_daily("d", start + timedelta(hours=3)),
    )
    assert pump.next_due() == datetime(2027, 3, 2, 7, 50, tzinfo=TORONTO)


def test_schedule_created_by_a_handler_fires_in_order(client: Any) -> None:
    # Given a daily prompt whose handler arms a reminder 5 h later and an immediate timer
    start = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
    timers, pump, recorder = _setup(client, start)
    timers.schedule_daily_prompt(
        name="pp-daily-p_1", hour=13, minute=0, timezone="UTC", payload=_daily("pp-daily-p_1", start)
    )

    def on_fire(target: str, event: dict[str, Any]) -> None:
        if event["kind"] == "daily_prompt":
            now = recorder.clock.now()
            timers.schedule_timer(
                name="pp-reminder-p_1", at=now + timedelta(hours=5), payload=_reminder("pp-reminder-p_1")
            )
            timers.schedule_timer(name="pp-autofb-p_1", at=now, payload=_reminder("pp-autofb-p_1"))

    recorder.hook = on_fire
    # When two days pass
    firings = pump.run_until(start + timedelta(days=2))
    # Then each day: prompt, immediate timer (same instant), reminder 5 h later
    assert [(f.name, f.at) for f in firings] == [
        ("pp-daily-p_1", datetime(2027, 3, 1, 13, tzinfo=UTC)),
        ("pp-autofb-p_1", datetime(2027, 3, 1, 13, tzinfo=UTC)),
        ("pp-reminder-p_1", datetime(2027, 3, 1, 18, tzinfo=UTC)),
        ("pp-daily-p_1", datetime(2027, 3, 2, 13, tzinfo=UTC)),
        ("pp-autofb-p_1", datetime(2027, 3, 2, 13, tzinfo=UTC)),
        ("pp-reminder-p_1", datetime(2027, 3, 2, 18, tzinfo=UTC)),
    ]
    _assert_time_ordered(firings)
    assert _names(client) == ["pp-daily-p_1"]


def test_handler_re_arming_its_own_one_shot_keeps_the_new_version(client: Any) -> None:
    # Given a one-shot whose handler re-schedules the same name an hour later, twice
    start = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
    timers, pump, recorder = _setup(client, start)
    timers.schedule_timer(name="t", at=start + timedelta(hours=1), payload=_reminder("t"))

    def rearm(target: str, event: dict[str, Any]) -> None:
        if len(recorder.calls) < 3:
            timers.schedule_timer(name="t", at=recorder.clock.now() + timedelta(hours=1), payload=_reminder("t"))

    recorder.hook = rearm
    firings = pump.run_until(start + timedelta(hours=10))
    # Then the replacement was not deleted as "completed": it fired too
    assert [f.at.hour for f in firings] == [13, 14, 15]
    assert _names(client) == []


def test_cancelled_before_due_never_fires(client: Any) -> None:
    start = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
    timers, pump, _ = _setup(client, start)
    timers.schedule_timer(name="t", at=start + timedelta(hours=2), payload=_reminder("t"))
    assert pump.next_due() == start + timedelta(hours=2)
    timers.cancel("t")
    assert pump.next_due() is None
    assert pump.run_until(start + timedelta(days=1)) == []


def test_replaced_one_shot_fires_at_its_new_time_only(client: Any) -> None:
    start = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
    timers, pump, _ = _setup(client, start)
    timers.schedule_timer(name="t", at=start + timedelta(hours=2), payload=_reminder("t"))
    assert pump.next_due() == start + timedelta(hours=2)
    timers.schedule_timer(name="t", at=start + timedelta(hours=3), payload=_reminder("t"))
    assert [f.at for f in pump.run_until(start + timedelta(days=1))] == [start + timedelta(hours=3)]


def test_past_one_shot_fires_immediately(client: Any) -> None:
    start = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
    timers, pump, recorder = _setup(client, start)
    timers.schedule_timer(name="t", at=start - timedelta(hours=1), payload=_reminder("t"))
    firings = pump.run_until(start + timedelta(minutes=1))
    assert [f.at for f in firings] == [start]
    assert firings[0].scheduled_time == start - timedelta(hours=1)
    assert recorder.calls[0][1]["scheduled_time"] == "2027-03-01T11:00:00Z"


def _flexible(client: Any, name: str, window: int) -> None:
    client.create_schedule(
        Name=name,
        GroupName=GROUP,
        ScheduleExpression="cron(0 9 * * ? *)",
        ScheduleExpressionTimezone="UTC",
        FlexibleTimeWindow={"Mode": "FLEXIBLE", "MaximumWindowInMinutes": window},
        Target={"Arn": PROMPT_ARN, "RoleArn": "r", "Input": json.dumps({"kind": "random_window"})},
    )


def _flexible_run(seed: int) -> list[datetime]:
    from moto import mock_aws

    with mock_aws():
        client = boto3.client("scheduler", region_name="us-east-1")
        client.create_schedule_group(Name=GROUP)
        start = datetime(2027, 3, 1, 0, 0, tzinfo=UTC)
        _, pump, _ = _setup(client, start, seed=seed)
        _flexible(client, "rand-a", 60)
        _flexible(client, "rand-b", 60)
        firings = pump.run_until(start + timedelta(days=10))
    _assert_time_ordered(firings)
    return [f.at for f in firings]


def test_flexible_window_is_deterministic_per_seed_and_within_the_window() -> None:
    first, again, other = _flexible_run(7), _flexible_run(7), _flexible_run(8)
    assert first == again
    assert first != other
    assert len(first) == 20
    for at in first:
        nominal = at.replace(hour=9, minute=0, second=0)
        assert nominal <= at <= nominal + timedelta(minutes=60)
    assert len({at.time() for at in first}) > 1  # the delay varies


def test_flexible_firing_reports_the_nominal_scheduled_time(client: Any) -> None:
    start = datetime(2027, 3, 1, 0, 0, tzinfo=UTC)
    _, pump, recorder = _setup(client, start, seed=3)
    _flexible(client, "rand", 30)
    (firing,) = pump.run_until(start + timedelta(days=1))
    assert firing.scheduled_time == datetime(2027, 3, 1, 9, tzinfo=UTC)
    assert recorder.calls[0][2] == firing.at


@pytest.mark.slow
def test_many_schedules_fire_in_strict_time_order_across_pages(client: Any) -> None:
    # Given 120 one-shots (more than one list page) in shuffled order, and two dailies
    start = datetime(2027, 3, 1, 0, 0, tzinfo=UTC)
    timers, pump, _ = _setup(client, start)
    minutes = [(i * 37) % 120 for i in range(120)]
    for i, minute in enumerate(minutes):
        timers.schedule_timer(name=f"t{i:03d}", at=start + timedelta(minutes=minute * 10), payload=_reminder(f"t{i}"))
    timers.schedule_daily_prompt(name="d-utc", hour=6, minute=5, timezone="UTC", payload=_daily("d-utc", start))
    timers.schedule_daily_prompt(
        name="d-tor", hour=6, minute=5, timezone="America/Toronto", payload=_daily("d-tor", start)
    )
    # When the pump runs a day
    firings = pump.run_until(start + timedelta(days=1))
    # Then every schedule fired once, in time order (ties by name)
    assert len(firings) == 122
    assert [(f.at, f.name) for f in firings] == sorted((f.at, f.name) for f in firings)
    assert sorted(f.name for f in firings if f.name.startswith("t")) == [f"t{i:03d}" for i in range(120)]
    assert _names(client) == ["d-tor", "d-utc"]


def test_execution_ids_are_deterministic_per_seed(client: Any) -> None:
    start = datetime(2027, 3, 1, 0, 0, tzinfo=UTC)
    timers, pump, _ = _setup(client, start, seed=1)
    timers.schedule_daily_prompt(name="d", hour=6, minute=0, timezone="UTC", payload=_daily("d", start))
    ids = [f.execution_id for f in pump.run_until(start + timedelta(days=2))]
    again = SchedulerPump(client, group_name=GROUP, clock=ManualClock(start), dispatch=lambda a, e: None, seed=1)
    assert [f.execution_id for f in again.run_until(start + timedelta(days=2))] == ids


def test_failing_dispatch_counts_as_fired_and_propagates(client: Any) -> None:
    start = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
    timers, pump, recorder = _setup(client, start)
    timers.schedule_timer(name="t", at=start + timedelta(hours=1), payload=_reminder("t"))

    def boom(target: str, event: dict[str, Any]) -> None:
        raise RuntimeError("handler failed")

    recorder.hook = boom
    with pytest.raises(RuntimeError, match="handler failed"):
        pump.run_until(start + timedelta(hours=2))
    assert recorder.clock.now() == start + timedelta(hours=1)
    recorder.hook = None
    assert pump.run_until(start + timedelta(hours=3)) == []
    assert _names(client) == []  # completed: deleted by the next pass, never re-fired


def test_disabled_and_invalid_schedules_do_not_fire(client: Any) -> None:
    start = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
    _, pump, _ = _setup(client, start)
    for name, expression, state in [("off", "cron(0 13 * * ? *)", "DISABLED"), ("bad", "garbage", "ENABLED")]:
        client.create_schedule(
            Name=name,
            GroupName=GROUP,
            ScheduleExpression=expression,
            State=state,
            FlexibleTimeWindow={"Mode": "OFF"},
            Target={"Arn": TIMERS_ARN, "RoleArn": "r"},
        )
    assert pump.next_due() is None
    assert pump.run_until(start + timedelta(days=2)) == []


def _linear_earliest(self: SchedulerPump) -> Any:
    """The pump's choice before it kept a heap: scan every schedule for the least
    (max(due, now), due, name)."""
    pending = [e for e in self._entries.values() if e.due is not None]
    if not pending:
        return None
    now = self._clock.now()
    return min(pending, key=lambda e: (max(e.due or now, now), e.due, e.name))


def _simulated_firings(monkeypatch: pytest.MonkeyPatch, *, linear: bool) -> tuple[list[tuple[Any, ...]], Any]:
    from promptpipe.local.simulate import run_simulation

    log: list[tuple[Any, ...]] = []
    real_fire = SchedulerPump._fire

    def fire(self: SchedulerPump, entry: Any) -> Firing:
        firing = real_fire(self, entry)
        log.append((firing.at, firing.name, firing.kind, firing.scheduled_time, firing.execution_id))
        return firing

    with monkeypatch.context() as patch:
        patch.setattr(SchedulerPump, "_fire", fire)
        if linear:
            patch.setattr(SchedulerPump, "_earliest", _linear_earliest)
        report = run_simulation(4, 7, seed=11)
    return log, report


@pytest.mark.slow
def test_heap_pump_fires_as_the_scanning_pump_did_over_a_seeded_week(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a seeded population of four participants (four zones, crons across a week, reminders,
    # auto-feedback one-shots armed and cancelled by the handlers), run once choosing the next
    # firing by scanning every schedule and once from the heap
    scanned, scanned_report = _simulated_firings(monkeypatch, linear=True)
    heaped, heaped_report = _simulated_firings(monkeypatch, linear=False)
    # Then the two event logs are the same firing for firing, and so is everything the run sent
    assert len(heaped) > 4 * 7
    assert heaped == scanned
    assert {f[2] for f in heaped} >= {"daily_prompt", "daily_prompt_reminder"}
    assert (heaped_report.events, heaped_report.messages_sent) == (scanned_report.events, scanned_report.messages_sent)
    assert heaped_report.sms == scanned_report.sms


# --- schedules the app never writes, but EventBridge accepts: rate(), start and end dates, any Input --


def _raw_schedule(client: Any, name: str, expression: str, **extra: Any) -> None:
    client.create_schedule(
        Name=name,
        GroupName=GROUP,
        ScheduleExpression=expression,
        FlexibleTimeWindow={"Mode": "OFF"},
        Target={"Arn": TIMERS_ARN, "RoleArn": "r", **extra.pop("target", {})},
        **extra,
    )


def test_a_rate_fires_every_period_from_its_start_date_until_its_end_date(client: Any) -> None:
    # Given a rate(6 hours) schedule from 13:00 to 08:00 the next day, whose Input is not JSON
    start = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
    _, pump, recorder = _setup(client, start)
    _raw_schedule(
        client,
        "every6h",
        "rate(6 hours)",
        StartDate=start + timedelta(hours=1),
        EndDate=start + timedelta(hours=20),
        target={"Input": "ping <aws.scheduler.attempt-number>"},
    )
    # When two days pass
    firings = pump.run_until(start + timedelta(days=2))
    # Then it fired 6, 12 and 18 hours after its start, and not after its end date
    assert [f.at - start for f in firings] == [timedelta(hours=h) for h in (7, 13, 19)]
    assert [f.scheduled_time for f in firings] == [f.at for f in firings]
    # And the handler got the text as it was, with the context filled in
    assert [event for _, event, _ in recorder.calls] == [{"input": "ping 1"}] * 3
    assert _names(client) == ["every6h"]  # a rate is never completed


@pytest.mark.parametrize(("target", "event"), [({}, {}), ({"Input": "[1, 2]"}, {"input": [1, 2]})])
def test_an_input_that_is_absent_or_not_an_object_reaches_the_handler_wrapped(
    client: Any, target: dict[str, str], event: dict[str, Any]
) -> None:
    start = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
    _, pump, recorder = _setup(client, start)
    _raw_schedule(client, "once", "at(2027-03-01T13:00:00)", target=target)
    [firing] = pump.run_until(start + timedelta(hours=2))
    assert firing.at == start + timedelta(hours=1)
    assert [e for _, e, _ in recorder.calls] == [event]


def test_run_until_refuses_a_naive_instant_and_a_runaway_schedule(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    start = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
    _, pump, recorder = _setup(client, start)
    with pytest.raises(ValueError, match=r"^run_until needs a timezone-aware instant$"):
        pump.run_until(datetime(2027, 3, 2, 12, 0))
    # Given a schedule firing every minute and a cap of 3 firings per run
    monkeypatch.setattr("promptpipe.local.pump.MAX_FIRINGS_PER_RUN", 3)
    _raw_schedule(client, "every-minute", "rate(1 minute)")
    # When the pump is asked to run an hour / Then it stops at the cap instead of looping on
    with pytest.raises(RuntimeError, match=r"^more than 3 firings before 2027-03-01 13:00:00\+00:00$"):
        pump.run_until(start + timedelta(hours=1))
    assert len(recorder.calls) == 3
