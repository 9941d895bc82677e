"""EventBridge Scheduler faults for the tests: raised inside moto's own endpoint, so botocore parses
and retries the error response as it would AWS's (docs/reliability.md, "How faults are injected")."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from moto.core.exceptions import JsonRESTError

# promptpipe.adapters.aws: retries {"mode": "standard", "max_attempts": 5} = six attempts per call.
ATTEMPTS = 6


class ServiceFault(JsonRESTError):
    """An AWS error response produced inside moto's service endpoint (status, ``__type``)."""

    def __init__(self, status: int, error_type: str, message: str) -> None:
        super().__init__(error_type, message)
        self.code = status


@contextmanager
def throttled_create_schedule(times: int = ATTEMPTS) -> Iterator[list[int]]:
    """While open, EventBridge Scheduler answers the first ``times`` CreateSchedule calls with
    ``ThrottlingException`` (HTTP 400, retried by botocore: the default ``times`` exhausts one call's
    six attempts). Yields the list of calls seen; botocore's backoff delays are not slept."""
    from botocore.retries import standard
    from moto.scheduler.responses import EventBridgeSchedulerResponse

    original = EventBridgeSchedulerResponse.create_schedule
    calls: list[int] = []

    def throttled(self: Any) -> Any:
        calls.append(1)
        if len(calls) <= times:
            raise ServiceFault(400, "ThrottlingException", "Rate exceeded")
        return original(self)

    with (
        mock.patch.object(EventBridgeSchedulerResponse, "create_schedule", throttled),
        mock.patch.object(standard.ExponentialBackoff, "delay_amount", lambda _self, _context: 0.0),
    ):
        yield calls
