"""What every browser test shares: quiet functions, and the local server with the demo week played."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from promptpipe.local.demo import DEMO_START, run_demo
from promptpipe.local.environment import LocalEnvironment, local_settings
from promptpipe.local.server import LocalServer


@pytest.fixture(autouse=True)
def _quiet_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_LOG_LEVEL", "POWERTOOLS_TRACE_DISABLED"):
        monkeypatch.setenv(name, "true" if name != "POWERTOOLS_LOG_LEVEL" else "ERROR")


@pytest.fixture(scope="module")
def stack() -> Iterator[tuple[LocalServer, str]]:
    """`promptpipe serve --with-demo`: the local server with the demo week played (one per module)."""
    env = LocalEnvironment(start=DEMO_START, settings=local_settings(offline_coach=True, openai_api_key=None))
    pid = run_demo(env).participant_id
    server = LocalServer("127.0.0.1", 0, env=env, tick_seconds=3600).start()
    yield server, pid
    server.stop()
