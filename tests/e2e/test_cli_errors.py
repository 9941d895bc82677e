"""Ordinary mistakes end in one readable line and a documented exit code, never a traceback."""

from __future__ import annotations

import io
import socket
from pathlib import Path

import pytest

from promptpipe.cli import commands as cli
from promptpipe.cli.commands import EXIT_CONFIG, EXIT_UNAVAILABLE, EXIT_USAGE, main


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_LOG_LEVEL", "POWERTOOLS_TRACE_DISABLED"):
        monkeypatch.setenv(name, "true" if name != "POWERTOOLS_LOG_LEVEL" else "ERROR")
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GENAI_TEMPERATURE", "MESSAGING_PROVIDER", "PROMPTPIPE_API_URL"):
        monkeypatch.delenv(name, raising=False)


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["chat", "--timezone", "Mars/Olympus"], "'Mars/Olympus' is not an IANA time zone"),
        (["chat", "--start", "yesterday"], "'yesterday' is not an ISO-8601 time"),
        (["chat", "--phone", "not a phone"], "use international form"),
        (["serve", "--port", "99999"], "'99999' is not a port number"),
        (["serve", "--start", "2026-13-40"], "is not an ISO-8601 time"),
        (["simulate", "--participants", "-3"], "'-3' is not a whole number of at least 1"),
        (["simulate", "--participants", "0"], "'0' is not a whole number of at least 1"),
        (["simulate", "--days", "-1"], "'-1' is not a whole number of at least 1"),
    ],
)
def test_invalid_arguments_exit_2_with_one_line(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = _run(argv, capsys)
    assert code == EXIT_USAGE
    assert expected in err
    assert "Traceback" not in err


def test_invalid_environment_variable_is_named_in_upper_case_with_allowed_values(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GENAI_TEMPERATURE", "5")
    monkeypatch.setenv("MESSAGING_PROVIDER", "sms")
    assert main(["openapi"]) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert "GENAI_TEMPERATURE='5' is not valid" in err
    assert "≤ 2.0" in err
    assert "MESSAGING_PROVIDER='sms'" in err
    assert "one of twilio, whatsapp_cloud, local" in err
    assert "genai_temperature" not in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("OFFLINE_COACH", "maybe", "allowed: true/1/yes/on or false/0/no/off"),
        ("QUIET_HOURS_MAX_DELAY", "soon", "allowed: a duration such as 15m, 3h, 1h30m, 90s, or a number of seconds"),
        ("TWILIO_CHANNEL", "mms", "allowed: text matching ^(sms|whatsapp)$"),
        ("TABLE_NAME", "ab", "allowed: text at least 3 characters, at most 255 characters"),
        ("GENAI_MAX_TOKENS", "8", "allowed: a whole number ≥ 16, ≤ 32000"),
    ],
)
def test_each_kind_of_setting_says_what_it_accepts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str, value: str, allowed: str
) -> None:
    monkeypatch.setenv(name, value)
    assert main(["openapi"]) == EXIT_CONFIG
    [line] = [line.strip() for line in capsys.readouterr().err.splitlines() if line.strip().startswith(name)]
    assert line.startswith(f"{name}={value!r} is not valid (")
    assert line.endswith(allowed)


def test_unknown_environment_variable_is_a_warning_with_the_nearest_name(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GENAI_TEMPRATURE", "0.5")
    assert main(["openapi"]) == 0
    err = capsys.readouterr().err
    assert "GENAI_TEMPRATURE is not a setting (did you mean GENAI_TEMPERATURE?)" in err


def test_use_openai_without_a_key_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--use-openai"]) == EXIT_CONFIG
    captured = capsys.readouterr()
    assert "--use-openai needs OPENAI_API_KEY" in captured.err
    assert "offline coach" not in captured.out  # it did not quietly run the offline coach


def test_serve_on_a_busy_port_suggests_another(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == EXIT_UNAVAILABLE
    err = capsys.readouterr().err
    assert f"port {port} on 127.0.0.1 is already in use" in err
    assert "--port" in err
    assert "Traceback" not in err


def _chat(monkeypatch: pytest.MonkeyPatch, lines: list[str], argv: list[str] | None = None) -> list[str]:
    sent: list[str] = []
    from promptpipe.local import chat

    real_send = chat.send_sms

    def recording_send(env, phone, text, message_id):  # type: ignore[no-untyped-def]
        sent.append(text)
        return real_send(env, phone, text, message_id)

    monkeypatch.setattr(chat, "send_sms", recording_send)
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    assert main(["chat", "--start", "2026-03-02T13:00:00Z", *(argv or [])]) == 0
    return sent


def test_chat_rejects_a_bad_time_and_an_unknown_command_without_sending_them(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OFFLINE_COACH", "true")
    sent = _chat(monkeypatch, ["/tomorrow 25:00", "/foo bar", "/wait soon", "/wait 0h", "/quit"])
    out = capsys.readouterr().out
    assert "? '25:00' is not a time of day; use HH:MM from 00:00 to 23:59" in out
    assert "? unknown command /foo (not sent to the coach)" in out
    assert "? invalid duration 'soon'" in out
    assert "? /wait needs a positive duration, e.g. /wait 5h" in out
    assert sent == []  # none of them reached the coach
    assert "[Mon 08:00] you:" in out  # the clock did not move


def test_chat_with_an_unreachable_model_prints_one_line_and_the_retry_rule(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("GENAI_MAX_RETRIES", "0")
    monkeypatch.setenv("GENAI_TIMEOUT_SECONDS", "5")
    sent = _chat(monkeypatch, ["Hi", "/quit"])
    captured = capsys.readouterr()
    failures = [line for line in captured.out.splitlines() if line.startswith("! ")]
    assert sent == ["Hi"]
    assert failures, captured.out
    assert all("the coach's model did not answer" in line for line in failures)
    assert "GENAI_MAX_RETRIES=0" in failures[-1]
    assert "dead-letter queue" in failures[-1]
    assert "Traceback" not in captured.out + captured.err
    assert len(captured.out + captured.err) < 10_000


def test_exit_codes_are_documented() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    for code in (0, cli.EXIT_FAILED, EXIT_USAGE, EXIT_CONFIG, EXIT_UNAVAILABLE, cli.EXIT_INTERRUPTED):
        assert f"| `{code}` |" in doc


def _free_port() -> int:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        return int(closed.getsockname()[1])


def test_flows_prompts_and_import_mistakes_are_one_line_with_their_exit_code(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pathlib import Path

    intake = Path(__file__).resolve().parents[2] / "prompts" / "flows" / "intake.json"
    not_json = tmp_path / "flow.txt"
    not_json.write_text("not json")
    cases = [
        (["flows", "validate", str(tmp_path / "missing.json")], EXIT_USAGE, "cannot read"),
        (["flows", "push", str(not_json)], EXIT_USAGE, "is not JSON"),
        (["flows", "push", str(intake), "--url", f"http://127.0.0.1:{_free_port()}"], EXIT_UNAVAILABLE, "cannot reach"),
        (["flows", "show", "intake", "--api", f"http://127.0.0.1:{_free_port()}"], EXIT_UNAVAILABLE, "cannot reach"),
        (["prompts", "show", "no-such-prompt"], EXIT_USAGE, "unknown prompt(s): no-such-prompt; known: "),
        (["import", "--sqlite", str(tmp_path / "missing.db")], EXIT_USAGE, "no such file"),
        (["import", "--sqlite", str(not_json)], EXIT_CONFIG, "cannot read the SQLite database"),
    ]
    for argv, code, fragment in cases:
        assert main(argv) == code, argv
        err = capsys.readouterr().err
        assert err.startswith(f"promptpipe {argv[0]}: "), err
        assert fragment in err and "Traceback" not in err, err


def test_aws_failures_map_to_the_documented_exit_codes() -> None:
    from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError
    from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError

    denied = ClientError({"Error": {"Code": "AccessDeniedException", "Message": "not allowed"}}, "GetParameter")
    wrapped = GetParameterError("denied")
    wrapped.__cause__ = denied
    expected = [
        (NoCredentialsError(), EXIT_CONFIG, "Unable to locate credentials"),
        (EndpointConnectionError(endpoint_url="https://ssm.example"), EXIT_UNAVAILABLE, "ssm.example"),
        (denied, cli.EXIT_FAILED, "AccessDeniedException: not allowed"),
        (wrapped, cli.EXIT_FAILED, "AccessDeniedException: not allowed"),
    ]
    for exc, code, fragment in expected:
        error = cli.as_cli_error(exc)
        assert error is not None and error.code == code and fragment in str(error), (exc, error)
    assert cli.as_cli_error(RuntimeError("a bug")) is None  # a bug keeps its traceback


# --- ------------------------------------------------------------------------------------------
# The command's small mistakes: ``export`` to an API that cannot be reached creates nothing, and
# an optional setting's error names its type.


def test_export_to_an_unreachable_api_creates_no_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given an --out folder that does not exist yet, and no API listening
    out = tmp_path / "study" / "export"
    # When exporting / Then the unreachable API is reported (exit 4) and nothing was created
    assert main(["export", "--out", str(out), "--api", f"http://127.0.0.1:{_free_port()}", "--quiet"]) == (
        EXIT_UNAVAILABLE
    )
    err = capsys.readouterr().err
    assert err.startswith("promptpipe export: ") and "cannot reach" in err
    assert not (tmp_path / "study").exists()


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("RETENTION_DAYS_AFTER_DELETE", "0", "allowed: a whole number ≥ 1, ≤ 3650"),
        ("CHAT_HISTORY_LIMIT", "-2", "allowed: a whole number ≥ -1"),
        ("LLM_ROUTES", "[1]", "allowed: a JSON object"),
    ],
)
def test_a_setting_error_names_the_type_of_the_setting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str, value: str, allowed: str
) -> None:
    monkeypatch.setenv(name, value)
    assert main(["openapi"]) == EXIT_CONFIG
    [line] = [line.strip() for line in capsys.readouterr().err.splitlines() if line.strip().startswith(name)]
    assert line.startswith(f"{name}=") and " is not valid (" in line and line.endswith(allowed)


# --- every documented command with bad input ----------------------------------
# Each ends in one line on stderr, ``promptpipe <command>: …``, with its documented exit code.


def _one_line(argv: list[str], code: int, fragment: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == code, argv
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    assert captured.err.startswith(f"promptpipe {argv[0]}: ") and captured.err.count("\n") == 1, captured.err
    assert fragment in captured.err, captured.err


@pytest.mark.parametrize("action", ["show", "diff", "push"])
def test_prompts_without_aws_credentials_is_one_line_exit_3(
    action: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_SECURITY_TOKEN",
        "AWS_PROFILE",
        "AWS_ENDPOINT_URL",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    ):
        monkeypatch.delenv(name, raising=False)
    for name in ("AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.setenv(name, str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    from promptpipe.adapters import aws

    monkeypatch.setattr(aws, "_sessions", [])  # a new session: credentials are looked up afresh
    _one_line(["prompts", action], EXIT_CONFIG, "Unable to locate credentials", capsys)


@pytest.mark.parametrize("action", ["show", "diff", "push"])
def test_prompts_with_an_unreachable_endpoint_is_one_line_exit_4(
    action: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{_free_port()}")
    _one_line(["prompts", action], EXIT_UNAVAILABLE, "Could not connect to the endpoint URL", capsys)


def test_export_into_a_folder_that_holds_files_is_refused_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "export"
    out.mkdir()
    (out / "participants.csv").write_text("an earlier export\n")
    api = f"http://127.0.0.1:{_free_port()}"
    _one_line(["export", "--out", str(out), "--api", api], EXIT_USAGE, "--force to overwrite", capsys)
    assert (out / "participants.csv").read_text() == "an earlier export\n"  # untouched
    # With --force the folder is taken (here the API is down: the next line says so, exit 4)
    _one_line(
        ["export", "--out", str(out), "--api", api, "--force", "--quiet"], EXIT_UNAVAILABLE, "cannot reach", capsys
    )
    # An empty folder needs no --force
    empty = tmp_path / "empty"
    empty.mkdir()
    _one_line(["export", "--out", str(empty), "--api", api, "--quiet"], EXIT_UNAVAILABLE, "cannot reach", capsys)


def test_import_mistakes_are_one_line_and_a_path_is_taken_literally(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "dir/study#1.db" missing, while "dir/study" (what a URI reading would open) exists
    folder = tmp_path / "dir"
    folder.mkdir()
    (folder / "study").write_text("not the database")
    _one_line(["import", "--sqlite", str(folder / "study#1.db")], EXIT_USAGE, "no such file", capsys)
    (folder / "study#1.db").write_text("not a database either")
    _one_line(["import", "--sqlite", str(folder / "study#1.db")], EXIT_CONFIG, "study#1.db", capsys)


def test_console_takes_no_token_and_refuses_a_bad_port(capsys: pytest.CaptureFixture[str]) -> None:
    parsed = cli.build_parser().parse_args(["console", "--no-token", "--api", "http://127.0.0.1:1"])
    assert parsed.no_token is True
    assert cli.build_parser().parse_args(["console"]).no_token is False
    code, _out, err = _run(["console", "--port", "99999"], capsys)
    assert code == EXIT_USAGE and "'99999' is not a port number" in err


# --- every documented command with bad input (docs/cli.md, "Errors, not tracebacks") ---------------
def _bad_input(tmp_path: Path) -> dict[str, list[tuple[list[str], int, str]]]:
    """For each of the parser's commands, mistakes of its own: (argv, documented exit code, what the
    last line of stderr says)."""
    down = f"http://127.0.0.1:{_free_port()}"
    missing = str(tmp_path / "missing.json")
    return {
        "demo": [(["demo", "--seed", "abc"], EXIT_USAGE, "argument --seed: invalid int value: 'abc'")],
        "chat": [(["chat", "--phone", "12"], EXIT_USAGE, "use international form")],
        "serve": [(["serve", "--start", "soon"], EXIT_USAGE, "'soon' is not an ISO-8601 time")],
        "simulate": [(["simulate", "--days", "0"], EXIT_USAGE, "'0' is not a whole number of at least 1")],
        "studies": [(["studies", "validate", missing], EXIT_USAGE, "cannot read")],
        "console-token": [
            (["console-token", "add", "Ana", "--role", "boss"], EXIT_USAGE, "argument --role: invalid choice: 'boss'"),
            (
                ["console-token", "remove", "Nobody", "--tokens", str(tmp_path / "tokens.json")],
                EXIT_USAGE,
                "no console token names Nobody",
            ),
        ],
        "participants": [
            (["participants", "--status", "gone"], EXIT_USAGE, "argument --status: invalid choice: 'gone'"),
            (["participants", "--api", down], EXIT_UNAVAILABLE, "cannot reach the API"),
        ],
        "transcript": [
            (["transcript"], EXIT_USAGE, "the following arguments are required: ID|PHONE"),
            (["transcript", "p_1", "--tz", "Mars"], EXIT_USAGE, "argument --tz: invalid choice: 'Mars'"),
            (["transcript", "p_1", "--api", down], EXIT_UNAVAILABLE, "cannot reach the API"),
        ],
        "export": [
            (["export"], EXIT_USAGE, "the following arguments are required: --out"),
            (["export", "--out", str(tmp_path / "x"), "--api", down, "--quiet"], EXIT_UNAVAILABLE, "cannot reach"),
        ],
        "console": [(["console", "--port", "0x50"], EXIT_USAGE, "'0x50' is not a port number")],
        "import": [
            (["import"], EXIT_USAGE, "one of the arguments --sqlite --postgres is required"),
            (["import", "--sqlite", str(tmp_path / "missing.db")], EXIT_USAGE, "no such file"),
        ],
        "reconcile": [
            (["reconcile"], EXIT_USAGE, "give a participant id or --all (not both)"),
            (["reconcile", "p_1", "--all"], EXIT_USAGE, "give a participant id or --all (not both)"),
            (["reconcile", "--all", "--api", down], EXIT_UNAVAILABLE, "cannot reach the API"),
        ],
        "flows": [
            (["flows"], EXIT_USAGE, "the following arguments are required: flows_command"),
            (["flows", "validate", missing], EXIT_USAGE, "cannot read"),
            (["flows", "push", missing, "--api", down], EXIT_USAGE, "cannot read"),
            (["flows", "show", "intake", "--version", "two"], EXIT_USAGE, "invalid int value: 'two'"),
        ],
        "openapi": [(["openapi", "--bogus"], EXIT_USAGE, "unrecognized arguments: --bogus")],
        "prompts": [
            (["prompts"], EXIT_USAGE, "the following arguments are required: action"),
            (["prompts", "list", "x"], EXIT_USAGE, "argument action: invalid choice: 'list'"),
            (["prompts", "diff", "no-such-prompt"], EXIT_USAGE, "unknown prompt(s): no-such-prompt"),
        ],
    }


def test_every_command_of_the_parser_has_its_bad_input_case(tmp_path: Path) -> None:
    import re

    [choices] = re.findall(r"\{([a-z,-]+)\}", cli.build_parser().format_usage())
    assert set(_bad_input(tmp_path)) == set(choices.split(","))


def test_every_documented_command_with_bad_input_is_one_line_and_its_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command, cases in _bad_input(tmp_path).items():
        for argv, code, fragment in cases:
            try:
                exited = main(argv)
            except SystemExit as exc:  # the argument parser: its usage lines, then the error
                exited = int(exc.code or 0)
            out, err = capsys.readouterr()
            last = err.strip().splitlines()[-1] if err.strip() else ""
            assert exited == code, (argv, exited, err)
            assert "Traceback" not in out + err, argv
            assert last.startswith("promptpipe") and fragment in last, (command, argv, err)
