"""The participants API's cold start (docs/benchmarks.md, section 2): the models its routes declare at
import are defined with annotations as objects, which pydantic does not compile and evaluate; the
console's list loads its use case at its own first call."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from scripts.bench.cold_start import child_environment

REPO = Path(__file__).resolve().parents[2]
# Every model module the participants API defines at import and no other function does.
API_MODEL_MODULES = (
    "promptpipe.models.api",
    "promptpipe.models.participant_list",
    "promptpipe.models.audit",
    "promptpipe.controller.problems",
)
# The console's list of participants (GET /conversation/participant-rows) alone reads these.
ROWS_ROUTE_ONLY = ("promptpipe.usecases.participant_rows", "promptpipe.usecases.participant_listing")

LOADED_PROBE = """
import json, sys
import functions.enrollment.handler
from promptpipe.wiring import get_app
get_app()
print(json.dumps(sorted(sys.modules)))
"""


def test_the_console_list_use_case_loads_at_its_route_not_at_cold_start() -> None:
    """Import and the composition root of the participants API leave out the list's use case (its
    first call imports it); the list still answers (tests/integration: the participant-rows route)."""
    done = subprocess.run(
        [sys.executable, "-c", LOADED_PROBE],
        env=child_environment(REPO),
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert "functions.enrollment.participants" in loaded  # the probe sees the routes load
    assert loaded.isdisjoint(ROWS_ROUTE_ONLY)
