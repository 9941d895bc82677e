"""``promptpipe … | head``: when the reader closes the pipe early, the command stops quietly with
exit 141 (docs/cli.md), no traceback. Each command runs in a subprocess whose stdout is a pipe.

``head`` closes its end as soon as it has its lines; with the few lines these commands print, a
real ``| head -1`` usually reads everything before closing (no error either way), so the pipe's
reader is closed before the command writes: what ``head`` leaves behind, every time."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from promptpipe.exit_codes import EXIT_BROKEN_PIPE

ROOT = Path(__file__).resolve().parents[2]
IMPORT_SCRIPT = """
import sys
from datetime import UTC, datetime
from pathlib import Path
from promptpipe import wiring
from promptpipe.cli.commands import main
from promptpipe.local.environment import LocalEnvironment, local_settings
from tests.integration.test_import import build_original

settings = local_settings(offline_coach=True, openai_api_key=None)
env = LocalEnvironment(start=datetime(2026, 3, 2, 13, 0, tzinfo=UTC), settings=settings)
wiring.build_app = lambda: env.app
path = build_original(Path(sys.argv[1]) / "original.db")
code = main(["import", "--sqlite", str(path), "--dry-run", "--default-timezone", "America/Toronto"])
env.close()
sys.exit(code)
"""


def run_into_closed_pipe(argv: list[str]) -> subprocess.CompletedProcess[str]:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader (head) has gone
    env = {**os.environ, "POWERTOOLS_LOG_LEVEL": "ERROR", "PYTHONPATH": f"{ROOT}:{ROOT / 'shared'}"}
    try:
        return subprocess.run(
            argv, stdout=write_end, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env, timeout=120, check=False
        )
    finally:
        os.close(write_end)


PROMPTPIPE = [sys.executable, "-m", "promptpipe.cli"]


@pytest.mark.parametrize(
    "argv",
    [
        [*PROMPTPIPE, "participants", "--demo"],
        [*PROMPTPIPE, "transcript", "+14165550142", "--demo"],
        [sys.executable, "-c", IMPORT_SCRIPT, "{tmp}"],
    ],
    ids=["participants", "transcript", "import"],
)
def test_a_closed_pipe_stops_the_command_quietly(argv: list[str], tmp_path: Path) -> None:
    done = run_into_closed_pipe([a.replace("{tmp}", str(tmp_path)) for a in argv])

    assert done.returncode == EXIT_BROKEN_PIPE, done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr


def test_head_gets_the_first_line() -> None:
    shell = f"{' '.join(PROMPTPIPE)} participants --demo | head -n 1"
    env = {**os.environ, "POWERTOOLS_LOG_LEVEL": "ERROR", "PYTHONPATH": f"{ROOT}:{ROOT / 'shared'}"}
    done = subprocess.run(
        ["bash", "-c", shell], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120, check=False
    )
    assert done.stdout.startswith("id ") and done.stdout.count("\n") == 1
    assert "Traceback" not in done.stderr
