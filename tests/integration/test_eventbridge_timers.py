"""EventBridgeTimers against moto: exact stored parameters, replace and cancel semantics, validation
before AWS, and AWS errors mapped to TimerError."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import boto3
import pytest
from botocore.stub import Stubber

from promptpipe.adapters.eventbridge_timers import EventBridgeTimers
from promptpipe.errors import ConfigurationError, InvalidScheduleExpression, TimerError
from promptpipe.models.events import ScheduledPromptPayload, TimerKind, TimerPayload
from promptpipe.ports import Timers
from promptpipe.settings import Settings

GROUP = "promptpipe-test"
TIMERS_ARN = "arn:aws:lambda:us-east-1:123456789012:function:timers"
PROMPT_ARN = "arn:aws:lambda:us-east-1:123456789012:function:scheduled-prompt"
ROLE_ARN = "arn:aws:iam::123456789012:role/scheduler"
DLQ_ARN = "arn:aws:sqs:us-east-1:123456789012:scheduler-dlq"
CREATED = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def client(aws: None) -> Iterator[Any]:
    scheduler = boto3.client("scheduler", region_name="us-east-1")
    scheduler.create_schedule_group(Name=GROUP)
    yield scheduler


def _timers(client: Any, *, dlq: str | None = DLQ_ARN) -> EventBridgeTimers:
    return EventBridgeTimers(
        client,
        group_name=GROUP,
        timers_function_arn=TIMERS_ARN,
        scheduled_prompt_function_arn=PROMPT_ARN,
        role_arn=ROLE_ARN,
        dlq_arn=dlq,
        max_retry_attempts=3,
        max_event_age_seconds=3600,
    )


def _reminder(name: str = "pp-reminder-p_1") -> TimerPayload:
    return TimerPayload(
        participant_id="p_1",
        kind=TimerKind.DAILY_PROMPT_REMINDER,
        timer_id=name,
        expected_sent_at=datetime(2027, 3, 1, 12, 50, tzinfo=UTC),
    )


def _daily(name: str = "pp-daily-p_1") -> ScheduledPromptPayload:
    return ScheduledPromptPayload(participant_id="p_1", schedule_id=name, created_at=CREATED)


def _get(client: Any, name: str) -> dict[str, Any]:
    return client.get_schedule(Name=name, GroupName=GROUP)


def _names(client: Any) -> list[str]:
    return sorted(s["Name"] for s in client.list_schedules(GroupName=GROUP)["Schedules"])


def test_it_satisfies_the_port(client: Any) -> None:
    timers: Timers = _timers(client)
    assert timers.schedule_timer(name="t1", at=CREATED, payload=_reminder("t1")) == "t1"


def test_one_shot_timer_is_stored_exactly(client: Any) -> None:
    # Given a reminder at 17:50:00 Toronto time (22:50 UTC)
    at = datetime(2027, 3, 1, 17, 50, tzinfo=ZoneInfo("America/Toronto"))
    # When it is scheduled
    name = _timers(client).schedule_timer(name="pp-reminder-p_1", at=at, payload=_reminder())
    # Then it is an at() in UTC that deletes itself, targeting the timers function
    assert name == "pp-reminder-p_1"
    stored = _get(client, name)
    assert stored["ScheduleExpression"] == "at(2027-03-01T22:50:00)"
    assert stored["ScheduleExpressionTimezone"] == "UTC"
    assert stored["ActionAfterCompletion"] == "DELETE"
    assert stored["FlexibleTimeWindow"] == {"Mode": "OFF"}
    assert stored["State"] == "ENABLED"
    target = stored["Target"]
    assert target["Arn"] == TIMERS_ARN
    assert target["RoleArn"] == ROLE_ARN
    assert target["RetryPolicy"] == {"MaximumRetryAttempts": 3, "MaximumEventAgeInSeconds": 3600}
    assert target["DeadLetterConfig"] == {"Arn": DLQ_ARN}
    body = json.loads(target["Input"])
    assert body == _reminder().model_dump(mode="json") | {
        "scheduled_time": "<aws.scheduler.scheduled-time>",
        "execution_id": "<aws.scheduler.execution-id>",
    }
    assert body["kind"] == "daily_prompt_reminder"
    assert body["timer_id"] == "pp-reminder-p_1"
    assert body["expected_sent_at"] == "2027-03-01T12:50:00Z"


def test_input_round_trips_through_the_payload_model(client: Any) -> None:
    _timers(client).schedule_timer(name="pp-reminder-p_1", at=CREATED, payload=_reminder())
    body = json.loads(_get(client, "pp-reminder-p_1")["Target"]["Input"])
    assert TimerPayload.model_validate(body).expected_sent_at == _reminder().expected_sent_at


def test_daily_prompt_is_a_cron_in_the_participant_zone(client: Any) -> None:
    _timers(client).schedule_daily_prompt(
        name="pp-daily-p_1", hour=7, minute=50, timezone="America/Toronto", payload=_daily()
    )
    stored = _get(client, "pp-daily-p_1")
    assert stored["ScheduleExpression"] == "cron(50 7 * * ? *)"
    assert stored["ScheduleExpressionTimezone"] == "America/Toronto"
    assert stored["ActionAfterCompletion"] == "NONE"
    assert stored["FlexibleTimeWindow"] == {"Mode": "OFF"}
    assert stored["Target"]["Arn"] == PROMPT_ARN
    body = json.loads(stored["Target"]["Input"])
    assert body == _daily().model_dump(mode="json") | {
        "scheduled_time": "<aws.scheduler.scheduled-time>",
        "execution_id": "<aws.scheduler.execution-id>",
    }
    assert body["kind"] == "daily_prompt"
    assert body["created_at"] == "2027-03-01T12:00:00Z"


def test_prompt_at_is_a_one_shot_to_the_scheduled_prompt_function(client: Any) -> None:
    payload = ScheduledPromptPayload(
        participant_id="p_1", schedule_id="pp-random-p_1", kind="random_window", window_minutes=60
    )
    _timers(client).schedule_prompt_at(name="pp-random-p_1-once", at=CREATED + timedelta(minutes=17), payload=payload)
    stored = _get(client, "pp-random-p_1-once")
    assert stored["ScheduleExpression"] == "at(2027-03-01T12:17:00)"
    assert stored["ScheduleExpressionTimezone"] == "UTC"
    assert stored["ActionAfterCompletion"] == "DELETE"
    assert stored["Target"]["Arn"] == PROMPT_ARN
    assert json.loads(stored["Target"]["Input"])["kind"] == "random_window"


def test_no_dead_letter_config_without_a_dlq(client: Any) -> None:
    _timers(client, dlq=None).schedule_timer(name="t1", at=CREATED, payload=_reminder("t1"))
    assert "DeadLetterConfig" not in _get(client, "t1")["Target"]


def test_second_schedule_with_the_same_name_replaces(client: Any) -> None:
    # Given a daily prompt at 07:50 Toronto
    timers = _timers(client)
    timers.schedule_daily_prompt(name="pp-daily-p_1", hour=7, minute=50, timezone="America/Toronto", payload=_daily())
    # When it is scheduled again at 19:20 Berlin
    timers.schedule_daily_prompt(name="pp-daily-p_1", hour=19, minute=20, timezone="Europe/Berlin", payload=_daily())
    # Then there is one schedule, fully updated (no field reset to AWS defaults)
    assert _names(client) == ["pp-daily-p_1"]
    stored = _get(client, "pp-daily-p_1")
    assert stored["ScheduleExpression"] == "cron(20 19 * * ? *)"
    assert stored["ScheduleExpressionTimezone"] == "Europe/Berlin"
    assert stored["Target"]["RetryPolicy"] == {"MaximumRetryAttempts": 3, "MaximumEventAgeInSeconds": 3600}
    assert stored["Target"]["DeadLetterConfig"] == {"Arn": DLQ_ARN}
    assert stored["Target"]["RoleArn"] == ROLE_ARN
    assert "<aws.scheduler.execution-id>" in stored["Target"]["Input"]


def test_replacing_a_one_shot_moves_it(client: Any) -> None:
    timers = _timers(client)
    timers.schedule_timer(name="t1", at=CREATED, payload=_reminder("t1"))
    timers.schedule_timer(name="t1", at=CREATED + timedelta(hours=1), payload=_reminder("t1"))
    assert _names(client) == ["t1"]
    assert _get(client, "t1")["ScheduleExpression"] == "at(2027-03-01T13:00:00)"


def test_cancel_deletes_and_missing_is_fine(client: Any) -> None:
    timers = _timers(client)
    timers.schedule_timer(name="t1", at=CREATED, payload=_reminder("t1"))
    timers.cancel("t1")
    assert _names(client) == []
    timers.cancel("t1")
    timers.cancel("never-existed")


@pytest.mark.parametrize("name", ["", "x" * 65, "has space", "pp/p_1", "+15551234567"])
def test_invalid_name_is_rejected_before_aws(client: Any, name: str) -> None:
    timers = _timers(client)
    with pytest.raises(InvalidScheduleExpression):
        timers.schedule_timer(name=name, at=CREATED, payload=_reminder())
    with pytest.raises(InvalidScheduleExpression):
        timers.cancel(name)
    assert _names(client) == []  # moto would have stored it


def test_invalid_zone_time_or_instant_is_rejected_before_aws(client: Any) -> None:
    timers = _timers(client)
    with pytest.raises(InvalidScheduleExpression):
        timers.schedule_daily_prompt(name="d1", hour=7, minute=0, timezone="Mars/Olympus", payload=_daily())
    with pytest.raises(InvalidScheduleExpression):
        timers.schedule_daily_prompt(name="d1", hour=7, minute=60, timezone="UTC", payload=_daily())
    with pytest.raises(InvalidScheduleExpression):
        timers.schedule_timer(name="t1", at=datetime(2027, 3, 1, 12), payload=_reminder("t1"))
    assert _names(client) == []


def test_nothing_reaches_aws_when_validation_fails() -> None:
    # Given a stubbed client with no responses queued: any call would fail with a stub error
    client = boto3.client("scheduler", region_name="us-east-1")
    with Stubber(client), pytest.raises(InvalidScheduleExpression):
        _timers(client).schedule_daily_prompt(name="d1", hour=7, minute=0, timezone="Mars/Olympus", payload=_daily())


def test_client_error_becomes_timer_error_with_code_and_message() -> None:
    client = boto3.client("scheduler", region_name="us-east-1")
    with Stubber(client) as stub:
        stub.add_client_error(
            "create_schedule",
            service_error_code="ServiceQuotaExceededException",
            service_message="quota reached",
            http_status_code=402,
        )
        with pytest.raises(TimerError, match="ServiceQuotaExceededException: quota reached") as info:
            _timers(client).schedule_timer(name="t1", at=CREATED, payload=_reminder("t1"))
    assert info.value.__cause__ is not None
    assert not isinstance(info.value, InvalidScheduleExpression)


def test_cancel_maps_other_errors() -> None:
    client = boto3.client("scheduler", region_name="us-east-1")
    with Stubber(client) as stub:
        stub.add_client_error("delete_schedule", service_error_code="AccessDeniedException", service_message="no")
        with pytest.raises(TimerError, match="AccessDeniedException"):
            _timers(client).cancel("t1")


def test_update_error_is_mapped() -> None:
    client = boto3.client("scheduler", region_name="us-east-1")
    with Stubber(client) as stub:
        stub.add_client_error("create_schedule", service_error_code="ConflictException")
        stub.add_client_error("update_schedule", service_error_code="ValidationException", service_message="bad")
        with pytest.raises(TimerError, match="update_schedule t1: ValidationException: bad"):
            _timers(client).schedule_timer(name="t1", at=CREATED, payload=_reminder("t1"))


def test_one_shot_deleted_between_create_and_update_is_created_again() -> None:
    # Given a name that exists at create time but is gone (completed) by the update
    client = boto3.client("scheduler", region_name="us-east-1")
    with Stubber(client) as stub:
        stub.add_client_error("create_schedule", service_error_code="ConflictException")
        stub.add_client_error("update_schedule", service_error_code="ResourceNotFoundException")
        stub.add_response("create_schedule", {"ScheduleArn": "arn:aws:scheduler:::schedule/g/t1"})
        # When it is scheduled / Then the third call creates it
        assert _timers(client).schedule_timer(name="t1", at=CREATED, payload=_reminder("t1")) == "t1"
        stub.assert_no_pending_responses()


def test_from_settings_uses_the_configured_names(client: Any) -> None:
    settings = Settings(
        schedule_group_name=GROUP,
        timers_function_arn=TIMERS_ARN,
        scheduled_prompt_function_arn=PROMPT_ARN,
        scheduler_role_arn=ROLE_ARN,
        scheduler_dlq_arn=None,
        scheduler_max_retry_attempts=5,
        scheduler_max_event_age_seconds=600,
    )
    timers = EventBridgeTimers.from_settings(settings, client)
    assert timers.group_name == GROUP
    timers.schedule_timer(name="t1", at=CREATED, payload=_reminder("t1"))
    target = _get(client, "t1")["Target"]
    assert target["RetryPolicy"] == {"MaximumRetryAttempts": 5, "MaximumEventAgeInSeconds": 600}
    assert "DeadLetterConfig" not in target


@pytest.mark.parametrize(("window", "prep", "expected"), [(5, 10, 5), (15, 10, 10), (5, 0, 0), (0, 10, 0)])
def test_daily_prompts_get_a_flexible_window_within_the_prep_time_and_one_shots_never(
    client: Any, window: int, prep: int, expected: int
) -> None:
    # Given a window and a prep time (the schedule fires `prep` minutes before the preferred time)
    settings = Settings(
        schedule_group_name=GROUP,
        timers_function_arn=TIMERS_ARN,
        scheduled_prompt_function_arn=PROMPT_ARN,
        scheduler_role_arn=ROLE_ARN,
        daily_prompt_flexible_window_minutes=window,
        scheduler_prep_time_minutes=prep,
    )
    timers = EventBridgeTimers.from_settings(settings, client)
    # When a daily prompt, a reminder and a random-window delivery are scheduled
    timers.schedule_daily_prompt(name="pp-daily-p_1", hour=7, minute=20, timezone="Europe/Paris", payload=_daily())
    timers.schedule_timer(name="pp-reminder-p_1", at=CREATED, payload=_reminder())
    timers.schedule_prompt_at(name="pp-random-p_1", at=CREATED, payload=_daily())
    # Then only the daily prompt may fire late, and never later than the prep time allows
    expected_window = {"Mode": "FLEXIBLE", "MaximumWindowInMinutes": expected} if expected else {"Mode": "OFF"}
    assert _get(client, "pp-daily-p_1")["FlexibleTimeWindow"] == expected_window
    assert _get(client, "pp-reminder-p_1")["FlexibleTimeWindow"] == {"Mode": "OFF"}
    assert _get(client, "pp-random-p_1")["FlexibleTimeWindow"] == {"Mode": "OFF"}


def test_an_out_of_range_daily_window_is_refused(client: Any) -> None:
    with pytest.raises(ConfigurationError, match="daily_window_minutes must be 0-1440"):
        EventBridgeTimers(
            client,
            group_name=GROUP,
            timers_function_arn=TIMERS_ARN,
            scheduled_prompt_function_arn=PROMPT_ARN,
            role_arn=ROLE_ARN,
            dlq_arn=None,
            daily_window_minutes=1441,
        )


class _CreateRacedBy:
    """The scheduler client, where ``race`` runs once just before the first CreateSchedule reaches
    moto: another caller's whole create lands between our decision to create and our request."""

    def __init__(self, inner: Any, race: Any) -> None:
        self._inner = inner
        self._race = race
        self.calls: list[str] = []

    def create_schedule(self, **params: Any) -> Any:
        self.calls.append("create_schedule")
        race, self._race = self._race, None
        if race is not None:
            race()
        return self._inner.create_schedule(**params)

    def update_schedule(self, **params: Any) -> Any:
        self.calls.append("update_schedule")
        return self._inner.update_schedule(**params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_two_racing_creations_of_the_same_schedule_leave_one_and_raise_nothing(client: Any) -> None:
    # Given two callers scheduling the same daily prompt (a redelivered event applying its effects
    # while the first delivery still applies them), the second one's create landing first
    other = _timers(client)

    def other_caller_creates() -> None:
        other.schedule_daily_prompt(name="pp-daily-p_1", hour=7, minute=50, timezone="UTC", payload=_daily())

    raced = _CreateRacedBy(client, other_caller_creates)
    # When ours reaches EventBridge after it
    name = _timers(raced).schedule_daily_prompt(
        name="pp-daily-p_1", hour=7, minute=50, timezone="America/Toronto", payload=_daily()
    )
    # Then ours met the conflict and updated in place: one schedule, the last writer's, no error
    assert name == "pp-daily-p_1"
    assert raced.calls == ["create_schedule", "update_schedule"]
    assert _names(client) == ["pp-daily-p_1"]
    stored = _get(client, "pp-daily-p_1")
    assert (stored["ScheduleExpression"], stored["ScheduleExpressionTimezone"]) == (
        "cron(50 7 * * ? *)",
        "America/Toronto",
    )
    assert stored["Target"]["RetryPolicy"] == {"MaximumRetryAttempts": 3, "MaximumEventAgeInSeconds": 3600}


def test_two_threads_creating_the_same_one_shot_at_once_leave_one(client: Any) -> None:
    # Given two threads released together, each scheduling the same reminder
    timers = _timers(client)
    start = threading.Barrier(2, timeout=30)
    errors: list[BaseException] = []

    def create() -> None:
        try:
            start.wait()
            timers.schedule_timer(name="t1", at=CREATED, payload=_reminder("t1"))
        except BaseException as exc:  # reported below: a thread's exception is otherwise lost
            errors.append(exc)

    threads = [threading.Thread(target=create) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    # Then both returned without error and one schedule exists, as asked
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []
    assert _names(client) == ["t1"]
    assert _get(client, "t1")["ScheduleExpression"] == "at(2027-03-01T12:00:00)"
