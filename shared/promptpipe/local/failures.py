"""Local runs print a readable line when a turn fails, not the functions' JSON stack traces.

``quiet_function_logs`` keeps the handlers' Powertools logs off the terminal (``--verbose`` keeps
them) and collects the failures; ``describe_failure`` turns one into a sentence for a coordinator.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from promptpipe.adapters.aws import INBOUND_MAX_RECEIVE_COUNT
from promptpipe.errors import ConfigurationError, LLMError

_SILENT = logging.CRITICAL + 10


class FailureLog(logging.Handler):
    """Collects the exceptions logged by the functions (ERROR and above) during a local run."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def take(self) -> list[BaseException]:
        """The exceptions collected since the last call, oldest first."""
        found = [r.exc_info[1] for r in self.records if r.exc_info and r.exc_info[1] is not None]
        self.records.clear()
        return found


@contextlib.contextmanager
def quiet_function_logs(*, verbose: bool) -> Iterator[FailureLog]:
    """While open: the collector listens on the package's logger and the root logger and, unless
    ``verbose``, the Powertools handler of the package's logger prints nothing. Restored on exit."""
    from promptpipe import observability  # noqa: F401  (configures the package's Powertools logger)

    collector = FailureLog()
    package = logging.getLogger("promptpipe")
    root = logging.getLogger()
    levels = {handler: handler.level for handler in package.handlers}
    if not verbose:
        for handler in package.handlers:
            handler.setLevel(_SILENT)
    extra: list[tuple[logging.Logger, logging.Handler]] = [(package, collector), (root, collector)]
    # With a handler on root, logging's last-resort stderr printer stays quiet.
    if verbose:
        extra.append((root, logging.StreamHandler()))
    for owner, handler in extra:
        owner.addHandler(handler)
    try:
        yield collector
    finally:
        for owner, handler in extra:
            owner.removeHandler(handler)
        for handler, level in levels.items():
            handler.setLevel(level)


def _cause(exc: BaseException) -> BaseException:
    """The first LLM or configuration error in the chain, else the exception itself."""
    children = getattr(exc, "child_exceptions", None)  # a failed batch carries its records' errors
    if children:
        first = children[0]
        exc = first[1] if isinstance(first, tuple) else first
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, LLMError | ConfigurationError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return exc


def describe_failure(exc: BaseException, *, max_retries: int) -> str:
    """One line: what failed and what the system does about it."""
    cause = _cause(exc)
    first_line = (str(cause).strip().splitlines() or [type(cause).__name__])[0][:200]
    if isinstance(cause, LLMError):
        return (
            f"the coach's model did not answer ({first_line}). Each model call is tried {1 + max_retries} "
            f"time(s) (GENAI_MAX_RETRIES={max_retries}); the turn is redelivered up to "
            f"{INBOUND_MAX_RECEIVE_COUNT} times and then set aside in the dead-letter queue, so this message "
            "got no reply: check OPENAI_BASE_URL / OPENAI_API_KEY and send it again."
        )
    if isinstance(cause, ConfigurationError):
        return f"configuration problem: {first_line}"
    return (
        f"a turn failed ({type(cause).__name__}: {first_line}); it is redelivered up to "
        f"{INBOUND_MAX_RECEIVE_COUNT} times and then set aside in the dead-letter queue (--verbose shows the logs)."
    )


def failure_lines(collector: FailureLog, *, max_retries: int) -> list[str]:
    """Distinct one-line descriptions of the failures collected since the last call."""
    lines: list[str] = []
    for exc in collector.take():
        line = describe_failure(exc, max_retries=max_retries)
        if line not in lines:
            lines.append(line)
    return lines
