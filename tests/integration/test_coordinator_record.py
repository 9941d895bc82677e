"""The coordinator's tools tell the whole truth: a deleted participant's kept transcript is reachable
from the CLI and the console (marked deleted), and ``export --out`` mistakes are one line, not a
traceback (docs/cli.md)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from promptpipe.cli import coordinator_commands as cli_coordinator
from promptpipe.cli.commands import EXIT_FAILED, EXIT_USAGE, main
from promptpipe.console.app import Console
from promptpipe.coordinator.client import ApiError, CoordinatorClient
from promptpipe.exit_codes import CliError
from promptpipe.local.api_transport import InProcessTransport

BASE = "/conversation/participants"


@pytest.fixture
def client_of(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Point the CLI's coordinator commands at a local stack in this process."""

    def use(env: Any) -> CoordinatorClient:
        client = CoordinatorClient(InProcessTransport(env))

        @contextlib.contextmanager
        def local(_args: Any) -> Iterator[CoordinatorClient]:
            try:
                yield client
            except ApiError as exc:  # as the real one reports an API's error
                raise CliError(str(exc), EXIT_FAILED) from None

        monkeypatch.setattr(cli_coordinator, "coordinator_client", local)
        return client

    return use


def test_a_deleted_participants_kept_transcript_is_shown_marked_deleted(
    local_env_factory: Any, client_of: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a participant deleted with their transcript kept (the default)
    env = local_env_factory()
    client = client_of(env)
    created = env.api("POST", BASE, json_body={"phone_number": "+14165550142", "name": "Sam"})
    pid = created.body["result"]["id"]
    assert env.api("DELETE", f"{BASE}/{pid}").status == 200
    assert env.api("GET", f"{BASE}/{pid}").status == 404
    capsys.readouterr()  # the functions' logs so far

    # When the coordinator asks for it by id / Then the CLI prints it, marked deleted
    assert main(["transcript", pid, "--demo"]) == 0
    out = capsys.readouterr().out
    # enrolled without a zone: the default zone, said as such (the one zone rule)
    assert out.splitlines()[0] == (
        f"{pid} ({pid}) [deleted; transcript kept] — times in America/Toronto (default: enrolled without a time zone)"
    )
    assert "[greeting]" in out

    # And the console shows it, marked deleted, without actions
    page = Console(client).participant_page(pid, {})
    assert "deleted (transcript kept)" in page and "greeting" in page
    assert f'action="/participants/{pid}/pause"' not in page

    # An id with neither participant nor transcript is still not found (exit 1, one line)
    assert main(["transcript", "p_" + "0" * 32, "--demo"]) == EXIT_FAILED
    assert capsys.readouterr().err.count("\n") == 1


def test_export_out_to_a_file_or_an_unwritable_path_is_one_line(
    tmp_path: Path, local_env_factory: Any, client_of: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    env = local_env_factory()
    client_of(env)
    env.api("POST", BASE, json_body={"phone_number": "+14165550142", "name": "Sam"})
    existing = tmp_path / "results.csv"
    existing.write_text("keep me")
    capsys.readouterr()

    # An existing file as --out: refused before anything is written
    assert main(["export", "--demo", "--out", str(existing)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err == f"promptpipe export: --out {existing} is a file; give a folder (new or existing)\n"
    assert existing.read_text() == "keep me"

    # A path that cannot be created (a file on the way)
    beneath = existing / "export"
    assert main(["export", "--demo", "--quiet", "--out", str(beneath)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith(f"promptpipe export: cannot write the export to {beneath}: ") and err.count("\n") == 1


def test_the_console_draws_the_study_chart_and_each_participants_days(client_of: Any) -> None:
    from promptpipe.local.demo import DEMO_START, run_demo
    from promptpipe.local.environment import LocalEnvironment, local_settings

    env = LocalEnvironment(start=DEMO_START, settings=local_settings(offline_coach=True, openai_api_key=None))
    try:
        pid = run_demo(env).participant_id
        console = Console(client_of(env))

        listing = console.study_page()
        page = console.participant_page(pid, {})
    finally:
        env.close()

    # Server-side SVG: no script, the series drawn for each study day of the demo week
    assert "<script" not in listing and "<script" not in page
    assert '<svg class="study-chart" role="img"' in listing and "Mon 02 Mar: median response" in listing  # by date
    assert '<svg class="strip" role="img"' in page
    assert page.count('<rect class="day-') >= 4 and 'class="day-done"' in page
