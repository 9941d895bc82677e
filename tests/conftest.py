"""Shared test setup. moto is imported before any handler module so that clients created at import
time are intercepted (docs/platform.md#moto); no test ever reaches AWS."""

from __future__ import annotations

import logging
import os

# Set before anything creates a boto3 client.
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("AWS_REGION", "us-east-1")
os.environ["AWS_ACCESS_KEY_ID"] = "testing"
os.environ["AWS_SECRET_ACCESS_KEY"] = "testing"
os.environ["AWS_SECURITY_TOKEN"] = "testing"
os.environ["AWS_SESSION_TOKEN"] = "testing"
os.environ.pop("AWS_PROFILE", None)
os.environ.pop("OPENAI_API_KEY", None)
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "PromptPipeTest")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "promptpipe-test")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")

from collections.abc import Iterator
from datetime import UTC, datetime

import moto  # noqa: F401  (must precede handler imports)
import pytest
from moto import mock_aws

from promptpipe.rules.clock import ManualClock
from tests.support.backoff import no_backoff  # noqa: F401  (a fixture, for every test that asks for it)
from tests.support.logs import logged  # noqa: F401  (a fixture, for every test that asks for it)


@pytest.fixture
def aws() -> Iterator[None]:
    """A fresh in-process moto backend for every AWS service."""
    with mock_aws():
        yield


@pytest.fixture
def clock() -> ManualClock:
    """A controllable clock, starting on a Monday morning (UTC)."""
    return ManualClock(datetime(2026, 3, 2, 12, 0, tzinfo=UTC))


@pytest.fixture
def local_env_factory():
    """Build ``LocalEnvironment``s (moto + real handlers + pump); all are closed after the test.

    Usage: ``env = local_env_factory(llm=ScriptedLLM([...]), start=..., settings_overrides={...})``.
    """
    from promptpipe.local.environment import LocalEnvironment, local_settings

    created: list[LocalEnvironment] = []

    def make(*, llm=None, start: datetime | None = None, seed: int = 0, **settings_overrides):
        overrides = {"offline_coach": llm is None, "openai_api_key": None, **settings_overrides}
        env = LocalEnvironment(
            start=start or datetime(2026, 3, 2, 13, 0, tzinfo=UTC),
            llm=llm,
            seed=seed,
            settings=local_settings(**overrides),
        )
        created.append(env)
        return env

    yield make
    for env in created:
        env.close()


# --- no failure passes in silence -------------------------------------------------------------------
# Effects are applied after the commit and a failing one raises (docs/architecture.md, "Effects after
# the commit"). What could still hide a failure is code that catches an exception and only logs it.
# Every test fails when the code under test logs at ERROR, unless the test declares it with
# ``@pytest.mark.logs_errors`` (and then asserts the consequence itself).


class _ErrorRecords(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.split(".")[0] in {"promptpipe", "functions"} and record not in self.records:
            self.records.append(record)


@pytest.fixture(autouse=True)
def _fail_on_logged_errors(request: pytest.FixtureRequest) -> Iterator[None]:
    handler = _ErrorRecords()
    # stdlib loggers of the core propagate to the root; the Powertools logger ("promptpipe") does not
    targets = [logging.getLogger(), logging.getLogger("promptpipe")]
    for target in targets:
        target.addHandler(handler)
    try:
        yield
    finally:
        for target in targets:
            target.removeHandler(handler)
    if handler.records and request.node.get_closest_marker("logs_errors") is None:
        lines = "; ".join(f"{r.name}: {r.getMessage()}" for r in handler.records)
        pytest.fail(f"the code logged at ERROR and the test does not expect it (mark logs_errors): {lines}")
