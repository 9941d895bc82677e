"""Schemathesis (all checks; examples, coverage, fuzzing and stateful phases following the document's
links) against `promptpipe serve`: zero failures. Figures in docs/reliability.md."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from promptpipe.local.environment import LocalEnvironment, local_settings
from promptpipe.local.server import LocalServer

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "tests" / "schemathesis" / "schemathesis.toml"
ST = shutil.which("st", path=str(Path(sys.executable).parent)) or shutil.which("st")
MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "25"))

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(ST is None, reason="schemathesis is not installed (pip install -e '.[dev]')"),
]


def test_schemathesis_finds_no_failure_against_the_local_server() -> None:
    env = LocalEnvironment(
        start=datetime(2026, 3, 2, 13, 0, tzinfo=UTC), settings=local_settings(offline_coach=True, openai_api_key=None)
    )
    server = LocalServer("127.0.0.1", 0, env=env, tick_seconds=3600).start()
    try:
        result = subprocess.run(
            [
                str(ST),
                "--config-file",
                str(CONFIG),
                "run",
                "--no-color",  # an option of `run` in every schemathesis pyproject.toml allows
                f"{server.url}/openapi.json",
                "--checks",
                "all",
                "--phases",
                "examples,coverage,fuzzing,stateful",
                "--max-examples",
                str(MAX_EXAMPLES),
                "--seed",
                "20260302",
                "--workers",
                "1",
                "--request-timeout",
                "60",
            ],
            capture_output=True,
            text=True,
            timeout=1200,
            check=False,
        )
    finally:
        server.stop()
    summary = result.stdout[-3000:]
    assert result.returncode == 0, summary
    cases = re.search(r"(\d+) generated", result.stdout)
    assert cases and int(cases.group(1)) > 100, summary
    from functions.enrollment.handler import app

    document = json.loads(app.get_openapi_json_schema(title="PromptPipe participants API", version="0"))
    operations = sum(len(item) for item in document["paths"].values())
    assert f"Selected: {operations}/{operations}" in result.stdout and f"Tested: {operations}" in result.stdout
    print(summary)  # the figures quoted in docs/reliability.md (pytest -s shows them)
