"""What every Lambda function shares: one decorator stack, and the run-and-send body of the three
event functions (worker, scheduled prompt, timers).

``lambda_entry`` checks at cold start, in Lambda, that the settings the function needs are there (a
function deployed without its queue URL or a scheduler ARN fails its init instead of starting and
targeting nothing), then wraps the handler in the same layers everywhere: logger context (and the
correlation id of an API request), metrics with the cold-start metric, tracing, and the ``Errors``
count by function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from promptpipe.collector import resume_collector
from promptpipe.errors import ConfigurationError
from promptpipe.observability import counts_errors, logger, metrics, tracer
from promptpipe.settings import LAMBDA_REQUIRED, Settings, require_in_lambda
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.outcomes import EventOutcome, outcome_log_fields
from promptpipe.usecases.sending import apply_effects
from promptpipe.wiring import get_app

Handler = TypeVar("Handler", bound=Callable[..., Any])
# What the stack returns: Lambda (and the local stack, with its own context object) calls it.
LambdaHandler = Callable[[dict[str, Any], Any], Any]


def lambda_entry(
    function: str,
    *,
    requires: tuple[str, ...] = (),
    correlation_id_path: str | None = None,
    uncounted: tuple[type[BaseException], ...] = (),
) -> Callable[[Handler], LambdaHandler]:
    """The decorator stack of every function's ``handler`` (see the module docstring); ``uncounted``:
    exceptions the handler counts itself. The decorated handler's ``required_settings`` names what the
    deployment must set (checked against the stack's environment by tests/infra)."""
    unknown = [name for name in requires if name not in Settings.model_fields]
    if unknown:  # a typo here would otherwise surface only in Lambda
        raise ConfigurationError(f"{function} requires unknown settings: {', '.join(unknown)}")
    require_in_lambda(requires)

    def decorate(handler: Handler) -> LambdaHandler:
        wrapped = counts_errors(function, uncounted=uncounted)(handler)
        wrapped = tracer.capture_lambda_handler(wrapped)
        wrapped = metrics.log_metrics(capture_cold_start_metric=True)(wrapped)
        traced: LambdaHandler = logger.inject_lambda_context(correlation_id_path=correlation_id_path, clear_state=True)(
            wrapped
        )
        traced.required_settings = LAMBDA_REQUIRED + requires  # type: ignore[attr-defined]
        resume_collector()  # the function's module has loaded (see functions/__init__.py)
        return traced

    return decorate


def run_and_send(
    run: Callable[[AppContext], EventOutcome],
    message: str,
    details: Callable[[EventOutcome], dict[str, Any]] = lambda _: {},
) -> tuple[EventOutcome, int]:
    """Run one event, then apply its effects after the commit; log the outcome (ids and counts only,
    never a body). The use case has published the event's metrics (``usecases/outcome_metrics.py``)."""
    app = get_app()
    with tracer.provider.in_subsegment("run_event"):
        outcome = run(app)
    with tracer.provider.in_subsegment("apply_effects"):
        sent = apply_effects(app, outcome)
    logger.info(message, extra={**outcome_log_fields(outcome), **details(outcome), "sent": sent})
    return outcome, sent
