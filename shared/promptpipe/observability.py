"""Powertools Logger, Metrics and Tracer shared by every function (one service, one namespace).

Logs are JSON; phone numbers are masked and message bodies never logged at INFO. The tracer is
inactive outside Lambda (Powertools disables it unless ``LAMBDA_TASK_ROOT`` is set, or when
``POWERTOOLS_TRACE_DISABLED`` is true). Powertools' ``Tracer`` imports the X-Ray SDK when it is
constructed, even disabled, and the SDK's recorder builds botocore objects at import (about 1x an
``import boto3``); ``LazyTracer`` constructs it only when tracing is on, at the first traced call.

Metric names (namespace ``PromptPipe``): TurnsProcessed (module), ToolCalls (tool, outcome),
LLMCalls, LLMLatencyMs, LLMPromptTokens, LLMCompletionTokens, DailyPromptsDelivered, RemindersSent,
AutoFeedbackTransitions, StateTransitions (target), FeedbackNudgesSent, OptOuts, WebhookRejected
(reason), WebhookMisconfigured (a signing secret missing or unreadable; alarmed), Errors (function),
StateSaveFailures, CorruptStateValues (key), ColdStart.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.metrics.functions import is_metrics_disabled
from aws_lambda_powertools.tracing.tracer import Tracer

from promptpipe.models.metrics import Metric
from promptpipe.models.state import on_corrupt_value

Handler = TypeVar("Handler", bound=Callable[..., Any])

SERVICE = "promptpipe"
NAMESPACE = "PromptPipe"


class _NoSubsegment:
    """What ``in_subsegment`` yields while tracing is off: annotations go nowhere."""

    def put_annotation(self, key: str, value: Any) -> None:
        pass

    def put_metadata(self, key: str, value: Any, namespace: str = "default") -> None:
        pass


class _NoProvider:
    """The provider surface this code base uses, doing nothing (tracing off)."""

    @contextlib.contextmanager
    def in_subsegment(self, name: str, **_: Any) -> Iterator[_NoSubsegment]:
        yield _NoSubsegment()


class LazyTracer:
    """Powertools' ``Tracer``, built on first use and only if tracing is on.

    Whether tracing is on is Powertools' own rule (``Tracer._is_tracer_disabled``: off outside
    Lambda, under SAM/Chalice, or with ``POWERTOOLS_TRACE_DISABLED=true``), read once. While off,
    ``provider.in_subsegment`` and ``capture_lambda_handler`` are no-ops and ``aws_xray_sdk`` is never
    imported. While on, the first call builds the real tracer (which patches botocore and httpx
    for every client, existing ones included, since the patch is on the class); ``prime()`` does it
    earlier, e.g. before a SnapStart snapshot.
    """

    def __init__(self, service: str) -> None:
        self._service = service
        self._enabled: bool | None = None
        self._tracer: Tracer | None = None
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        if self._enabled is None:
            self._enabled = not Tracer._is_tracer_disabled()
        return self._enabled

    def _real(self) -> Tracer:
        if self._tracer is None:
            with self._lock:
                if self._tracer is None:
                    self._tracer = Tracer(service=self._service)
        return self._tracer

    def prime(self) -> None:
        """Build the real tracer now if tracing is on (imports the X-Ray SDK); no network."""
        if self.enabled:
            self._real()

    @property
    def provider(self) -> Any:
        return self._real().provider if self.enabled else _NO_PROVIDER

    def capture_lambda_handler(self, handler: Handler) -> Handler:
        """Powertools' ``capture_lambda_handler`` when tracing is on; the bare handler when off."""
        traced: Callable[..., Any] | None = None

        @functools.wraps(handler)
        def wrapped(event: Any, context: Any) -> Any:
            nonlocal traced
            if not self.enabled:
                return handler(event, context)
            if traced is None:
                traced = self._real().capture_lambda_handler(handler)
            return traced(event, context)

        return wrapped  # type: ignore[return-value]


_NO_PROVIDER = _NoProvider()

logger = Logger(service=SERVICE)
metrics = Metrics(namespace=NAMESPACE, service=SERVICE)
tracer = LazyTracer(SERVICE)


def count(name: str, value: float = 1, unit: MetricUnit = MetricUnit.Count, **dimensions: str) -> None:
    """One metric; with dimensions it is flushed on its own (EMF allows one dimension set per blob)."""
    if is_metrics_disabled():  # Powertools' auto-flush and single_metric ignore the switch
        return
    if not dimensions:
        metrics.add_metric(name=name, unit=unit, value=value)
        return
    with single_metric(name=name, unit=unit, value=value, namespace=NAMESPACE) as metric:
        metric.add_dimension(name="service", value=SERVICE)
        for key, dim_value in dimensions.items():
            metric.add_dimension(name=key, value=dim_value)


def publish(points: Iterable[Metric]) -> None:
    """Metrics as the application layer derived them (``usecases/outcome_metrics.py``)."""
    for point in points:
        count(point.name, point.value, _UNITS[point.unit], **dict(point.dimensions))


_UNITS = {"Count": MetricUnit.Count, "Milliseconds": MetricUnit.Milliseconds}


def count_corrupt_value(key: str) -> None:
    """A stored state value that could not be read (and was read as empty)."""
    count("CorruptStateValues", key=key)


# The core reports corrupt values through a listener, so it never imports Powertools.
on_corrupt_value(count_corrupt_value)


def count_error(function: str) -> None:
    count("Errors", function=function)


def counts_errors(function: str, uncounted: tuple[type[BaseException], ...] = ()) -> Callable[[Handler], Handler]:
    """Decorate a Lambda handler: any exception it lets out is counted (``Errors``, by function),
    except those in ``uncounted`` (already counted where they arose)."""

    def decorate(handler: Handler) -> Handler:
        @functools.wraps(handler)
        def wrapped(event: dict[str, Any], context: Any) -> Any:
            try:
                return handler(event, context)
            except Exception as exc:
                if not isinstance(exc, uncounted):
                    count_error(function)
                raise

        return wrapped  # type: ignore[return-value]

    return decorate
