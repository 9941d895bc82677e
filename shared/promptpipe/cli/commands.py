"""The ``promptpipe`` command: local demo, interactive chat, local server, simulation, OpenAPI
document; the coordinator's tools (participants, transcript, export, console); flow definitions
(flows), the prompt store (prompts) and the import from the original PromptPipe (import).

Exit codes (``promptpipe.exit_codes``, docs/cli.md): 0 done; 1 the operation failed (the API, AWS or
the model answered an error, a flow is invalid, ``prompts diff`` found a difference); 2 invalid command
line (argument, time zone, time, phone number, file); 3 invalid configuration (an environment
variable, a missing key or credentials); 4 a network resource is unavailable (port in use, API or
database unreachable); 130 interrupted.

Longer than 500 lines because the parser of every local command and its handler sit together, so that
an option and what it does are read in one place; the coordinator's and the studies' commands have
their own modules.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from datetime import UTC, datetime
from typing import Any

from promptpipe.cli.argument_types import port_number, positive_count, window_minutes
from promptpipe.cli.coordinator_commands import (
    add_export_option,
    api_options,
    cmd_console,
    cmd_console_token,
    cmd_export,
    cmd_participants,
    cmd_transcript,
    console_tokens_option,
    coordinator_client,
    export_deidentified_options,
    read_file,
    read_flow_json,
)
from promptpipe.cli.study_commands import add_studies_parser, add_study_arguments, cmd_simulate_study
from promptpipe.exit_codes import (
    EXIT_BROKEN_PIPE,
    EXIT_CONFIG,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    CliError,
)

__all__ = [
    "EXIT_CONFIG",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_UNAVAILABLE",
    "EXIT_USAGE",
    "CliError",
    "build_parser",
    "main",
]


ALLOW_HOST_HELP = (
    "a name this server is also reached by (a tunnel, a LAN name; repeatable); "
    "a request naming any other host is refused"
)


def _quiet_lambda_runtime() -> None:
    """Local runs print a readable transcript, not the functions' JSON logs and EMF metrics."""
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    import warnings

    warnings.filterwarnings("ignore", message="No application metrics to publish")
    # Powertools emits the ColdStart metric even when metrics are disabled.
    from aws_lambda_powertools.metrics.provider import cold_start

    cold_start.is_cold_start = False


def _parse_instant(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO-8601 time; use e.g. 2026-03-02T13:00:00Z (UTC when no offset is given)"
        ) from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _parse_zone(text: str) -> str:
    from promptpipe.errors import ValidationFailed
    from promptpipe.usecases.participants import validate_timezone

    try:
        return validate_timezone(text.strip()) or "UTC"
    except ValidationFailed:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an IANA time zone; use a name such as America/Toronto, Europe/London or UTC"
        ) from None


def _parse_phone(text: str) -> str:
    from promptpipe.errors import InvalidPhoneNumber
    from promptpipe.rules.phone import canonicalize_phone

    try:
        return canonicalize_phone(text)
    except InvalidPhoneNumber as exc:
        raise argparse.ArgumentTypeError(f"{exc}; use international form, e.g. +14165550142") from None


def check_settings() -> Any:
    """The settings from the environment, or a ``CliError`` naming each invalid variable.

    Unknown variables in our families (``GENAI_TEMPRATURE``) are reported as warnings on stderr."""
    from pydantic import ValidationError

    from promptpipe.settings import Settings, describe_settings_error, unknown_variables

    try:
        settings = Settings()
    except ValidationError as exc:
        lines = describe_settings_error(exc)
        raise CliError("invalid configuration:\n  " + "\n  ".join(lines), EXIT_CONFIG) from None
    for line in unknown_variables():
        print(f"promptpipe: warning: {line}", file=sys.stderr)
    return settings


def cmd_demo(args: argparse.Namespace) -> int:
    from promptpipe.local.demo import DEMO_START, DemoFailed, print_demo, run_demo
    from promptpipe.local.environment import LocalEnvironment, local_settings, model_label
    from promptpipe.local.failures import quiet_function_logs

    if args.use_openai and not args.settings.openai_api_key:
        raise CliError("--use-openai needs OPENAI_API_KEY (and OPENAI_BASE_URL for a compatible endpoint)", EXIT_CONFIG)
    settings = local_settings(offline_coach=False) if args.use_openai else local_settings(offline_coach=True)
    if not args.use_openai:
        settings = settings.model_copy(update={"openai_api_key": None})
    with (
        quiet_function_logs(verbose=args.verbose) as failures,
        LocalEnvironment(start=DEMO_START, seed=args.seed, settings=settings) as env,
    ):
        progress = (lambda note: print(f"… {note}", file=sys.stderr)) if args.progress else None
        try:
            result = run_demo(env, progress=progress, failures=failures)
        except DemoFailed as exc:
            raise CliError(f"the demo stopped: {exc}", EXIT_FAILED) from None
        print_demo(sys.stdout, result, model_label(env), verbose=args.verbose)
    return 0


def cmd_openapi(_args: argparse.Namespace) -> int:
    import json

    from functions.enrollment.openapi import openapi_document

    print(json.dumps(openapi_document(), indent=2))
    return 0


def cmd_reconcile(args: argparse.Namespace) -> int:
    """``reconcile ID | --all``: make live schedules equal to what the state wants (docs/architecture.md#effects),
    through the participants API (a running ``promptpipe serve``, or the deployed API signed with
    SigV4); prints every repair."""
    if bool(args.participant_id) == args.all:
        raise CliError("give a participant id or --all (not both)", EXIT_USAGE)
    with coordinator_client(args) as client:
        result = client.reconcile(None if args.all else args.participant_id)
    reports = result.get("participants", [result])
    for report in reports:
        for name in report.get("deleted_orphans", []):
            print(f"{report['participant_id']}: deleted orphan schedule {name}")
        for name in report.get("created_missing", []):
            print(f"{report['participant_id']}: re-created missing schedule {name}")
        for drifted in report.get("updated_drifted", []):
            fields = ", ".join(drifted.get("fields", []))
            print(f"{report['participant_id']}: rewrote drifted schedule {drifted['name']} ({fields})")
    repairs = sum(int(r.get("repairs", 0)) for r in reports)
    print(f"{repairs} repair(s) for {len(reports)} participant(s)")
    return EXIT_OK


def cmd_flows(args: argparse.Namespace) -> int:
    """``flows validate FILE`` (offline), ``flows push FILE`` and ``flows show ID`` (against the
    participants API: a running ``promptpipe serve``, or the deployed API signed with SigV4)."""
    import json

    from promptpipe.controller.definition import parse_text

    if args.flows_command == "validate":
        definition, problems = parse_text(read_file(args.file))
        for problem in problems:
            print(f"{args.file}: {problem}", file=sys.stderr)
        if definition is None:
            raise CliError(f"invalid: {len(problems)} problem(s)", EXIT_FAILED)
        print(f"valid: flow {definition.id!r}, {len(definition.nodes)} node(s), {len(definition.gates)} gate(s)")
        return EXIT_OK
    raw: Any = None
    if args.flows_command == "push":
        raw = read_flow_json(args.file)
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not raw["id"]:
            raise CliError(f'{args.file} names no flow: a definition is an object with an "id"', EXIT_USAGE)
    from promptpipe.coordinator.client import ApiError

    with coordinator_client(args) as client:
        try:
            if args.flows_command == "push":
                stored = client.push_flow(raw["id"], raw)
                print(f"stored flow {stored['id']!r} as version {stored['version']}")
            else:
                print(json.dumps(client.flow(args.flow_id, version=args.version), indent=2))
        except ApiError as exc:
            answered: list[Any] = exc.result.get("problems", []) if isinstance(exc.result, dict) else []
            for item in answered:
                print(f"{item.get('path', '')}: {item.get('message', '')}", file=sys.stderr)
            raise
    return EXIT_OK


def cmd_chat(args: argparse.Namespace) -> int:
    from promptpipe.local.chat import run_chat

    return run_chat(args)


def cmd_import(args: argparse.Namespace) -> int:
    """Participants and flow states of the original PromptPipe into this deployment (README, "Moving
    a study from the original PromptPipe")."""
    from pathlib import Path

    from promptpipe.adapters.original_db import read_postgres, read_sqlite
    from promptpipe.usecases.import_participants import import_participants
    from promptpipe.wiring import build_app

    if args.sqlite and not Path(args.sqlite).is_file():
        raise CliError(f"no such file: {args.sqlite}", EXIT_USAGE)
    originals = read_sqlite(args.sqlite) if args.sqlite else read_postgres(args.postgres)
    options = {"default_region": args.region, "default_timezone": args.default_timezone}
    report = import_participants(build_app(), originals, dry_run=args.dry_run, **options)
    for line in report.render():
        print(line)
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    from promptpipe.local.server import run_server

    return run_server(args)


def cmd_simulate(args: argparse.Namespace) -> int:
    from promptpipe.local.simulate import run_simulation

    if args.export and getattr(args, "study", None) is None:
        raise CliError("--export writes a study's de-identified export: give --study FILE too", EXIT_USAGE)
    if getattr(args, "study", None) is not None:  # a study rehearsal (cli/study_commands.py)
        return cmd_simulate_study(args)
    progress = (lambda text: print(f"… {text}", file=sys.stderr)) if not args.quiet else None
    run = functools.partial(
        run_simulation, seed=args.seed, progress=progress, compare_sms=args.sms_compare, stack=args.stack
    )
    report = run(args.participants, args.days, flexible_window=args.flexible_window)
    for line in report.lines():
        print(line)
    return 0


def cmd_prompts(args: argparse.Namespace) -> int:
    """``prompts push|show|diff``: the prompt store (SSM, ``PROMPT_STORE_PREFIX``) against ``prompts/``."""
    import difflib

    from promptpipe.adapters.prompt_store import SSMPromptStore
    from promptpipe.flow.prompts import PROMPT_NAMES, PromptLibrary, text_version
    from promptpipe.settings import get_settings

    names = args.names or list(PROMPT_NAMES)
    unknown = [n for n in names if n not in PROMPT_NAMES]
    if unknown:
        raise CliError(f"unknown prompt(s): {', '.join(unknown)}; known: {', '.join(PROMPT_NAMES)}", EXIT_USAGE)
    settings = get_settings()
    store = SSMPromptStore.from_settings(settings)
    library = PromptLibrary.from_settings(settings)
    changed = 0
    for name in names:
        local = library.local(name).text
        stored = store.fetch(name)
        if args.action == "push":
            if stored is not None and stored.strip() == local:
                print(f"{name}: unchanged ({text_version(local)})")
                continue
            version = store.push(name, local)
            print(f"{name}: pushed {store.parameter_name(name)} version {version} ({text_version(local)})")
        elif args.action == "show":
            source = "store" if stored is not None else "file (not in the store)"
            text = stored.strip() if stored is not None else local
            print(f"# {name} from {source}, version {text_version(text)}\n{text}\n")
        else:
            diff = list(
                difflib.unified_diff(
                    (stored or "").strip().splitlines(),
                    local.splitlines(),
                    f"store:{store.parameter_name(name)}",
                    f"file:{name}",
                    lineterm="",
                )
            )
            changed += bool(diff)
            print("\n".join(diff) if diff else f"{name}: store and file agree")
    return EXIT_FAILED if args.action == "diff" and changed else EXIT_OK  # like diff(1): 1 = they differ


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="promptpipe", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser(
        "demo", help="run a scripted week of one participant on the local stack (moto, offline coach)"
    )
    demo.add_argument("--seed", type=int, default=7, help="seed of the local pump and ids (default 7)")
    demo.add_argument(
        "--use-openai", action="store_true", help="use OpenAI (OPENAI_API_KEY) instead of the offline coach"
    )
    demo.add_argument("--progress", action="store_true", help="print progress notes on stderr")
    demo.add_argument(
        "--verbose", action="store_true", help="internal names (timer kinds, state version) and the functions' logs"
    )
    demo.set_defaults(func=cmd_demo)

    chat = sub.add_parser("chat", help="talk to the coach as a participant; /wait 5h, /tomorrow 09:00, /state, /quit")
    chat.add_argument("--phone", type=_parse_phone, default="+14165550142", help="the participant's phone number")
    chat.add_argument(
        "--timezone", type=_parse_zone, default="America/Toronto", help="the participant's IANA time zone"
    )
    chat.add_argument(
        "--start", type=_parse_instant, default=None, help="simulated start time, ISO-8601 UTC (default: now)"
    )
    chat.add_argument("--verbose", action="store_true", help="print the functions' logs")
    chat.set_defaults(func=cmd_chat)

    serve = sub.add_parser("serve", help="local HTTP server with the API Gateway routes, the worker and the pump")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=port_number, default=8000)
    serve.add_argument("--allow-host", action="append", default=[], metavar="NAME", help=ALLOW_HOST_HELP)
    serve.add_argument(
        "--start", type=_parse_instant, default=None, help="simulated start time, ISO-8601 UTC (default: now)"
    )
    serve.add_argument(
        "--with-demo",
        action="store_true",
        help="start with the demo participant's week already played (the clock starts after it)",
    )
    serve.add_argument("--verbose", action="store_true", help="print the functions' logs")
    serve.set_defaults(func=cmd_serve)

    simulate = sub.add_parser("simulate", help="a seeded population living several days; prints throughput")
    simulate.add_argument("--participants", type=positive_count, default=100)
    simulate.add_argument("--days", type=positive_count, default=7)
    simulate.add_argument("--seed", type=int, default=42)
    simulate.add_argument(
        "--flexible-window",
        type=window_minutes,
        default=5,
        metavar="MINUTES",
        help="flexible time window of the daily-prompt schedules, as deployed (default 5; 0: exact times)",
    )
    simulate.add_argument("--sms-compare", action="store_true", help="also run it without the SMS rules (same seed)")
    simulate.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    add_export_option(simulate)
    add_study_arguments(simulate)
    simulate.set_defaults(func=cmd_simulate)

    participants = sub.add_parser("participants", help="list participants with their counts (coordinators)")
    participants.add_argument("--status", choices=["active", "paused", "completed", "withdrawn"])
    participants.add_argument("--phone", help="find the participant with this phone number")
    api_options(participants)
    participants.set_defaults(func=cmd_participants)

    transcript = sub.add_parser("transcript", help="one participant's conversation, in their local time")
    transcript.add_argument("participant", metavar="ID|PHONE", help="participant id (p_…) or phone number")
    transcript.add_argument("--tz", choices=["local", "UTC"], default="local", help="times in (default: local)")
    transcript.add_argument("--format", choices=["text", "jsonl"], default="text")
    api_options(transcript)
    transcript.set_defaults(func=cmd_transcript)

    export = sub.add_parser("export", help="participants.csv, prompts.csv, messages.jsonl (docs/export.md)")
    export.add_argument("--out", required=True, metavar="DIR", help="directory to write (created)")
    export.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    export.add_argument("--force", action="store_true", help="write into a folder that already holds files")
    export_deidentified_options(export)
    api_options(export)
    export.set_defaults(func=cmd_export)

    console = sub.add_parser("console", help="the coordinator's console in the browser (localhost)")
    console.add_argument("--host", default="127.0.0.1")
    console.add_argument("--port", type=port_number, default=8080)
    console.add_argument("--allow-host", action="append", default=[], metavar="NAME", help=ALLOW_HOST_HELP)
    console.add_argument("--no-token", action="store_true", help="serve without the token printed at start")
    console_tokens_option(console)
    console.add_argument(
        "--operator",
        default="console operator",
        metavar="NAME",
        help="who the token printed at start (or --no-token) acts as, in the audit (a coordinator)",
    )
    console.add_argument(
        "--study", metavar="FILE", default=None, help="the study view shows this study's decisions (docs/studies.md)"
    )
    api_options(console)
    console.set_defaults(func=cmd_console)

    tokens = sub.add_parser("console-token", help="each coordinator's own console token (docs/console.md)")
    token_commands = tokens.add_subparsers(dest="token_command", required=True)
    add = token_commands.add_parser("add", help="make NAME a token (printed once; kept hashed)")
    add.add_argument("name", metavar="NAME", help="the coordinator, as the audit names them")
    add.add_argument("--role", choices=["coordinator", "viewer"], default="coordinator")
    remove = token_commands.add_parser("remove", help="remove NAME's token")
    remove.add_argument("name", metavar="NAME")
    listing = token_commands.add_parser("list", help="the names and roles (never the tokens)")
    for token_parser in (add, remove, listing):
        console_tokens_option(token_parser)
    tokens.set_defaults(func=cmd_console_token)

    importer = sub.add_parser(
        "import", help="import participants and flow states from the original PromptPipe (SQLite or Postgres)"
    )
    source = importer.add_mutually_exclusive_group(required=True)
    source.add_argument("--sqlite", metavar="FILE", help="the original's SQLite database file")
    source.add_argument("--postgres", metavar="DSN", help="the original's Postgres DSN (needs psycopg)")
    importer.add_argument("--dry-run", action="store_true", help="report what would be imported; write nothing")
    importer.add_argument("--region", help="region national numbers are read in first (default: DEFAULT_PHONE_REGION)")
    importer.add_argument("--default-timezone", metavar="ZONE", help="zone for those whose schedules name none")
    importer.set_defaults(func=cmd_import)

    reconcile = sub.add_parser(
        "reconcile", help="repair drift between a participant's schedules and their state (docs/architecture.md)"
    )
    reconcile.add_argument("participant_id", nargs="?", default="")
    reconcile.add_argument("--all", action="store_true", help="every participant (and every orphaned schedule)")
    api_options(reconcile)
    reconcile.set_defaults(func=cmd_reconcile)

    add_studies_parser(sub)
    flows = sub.add_parser("flows", help="flow definitions: validate a file, push it, show the stored one")
    flows_sub = flows.add_subparsers(dest="flows_command", required=True)
    validate = flows_sub.add_parser("validate", help="validate a flow JSON file (offline); exit 1 when invalid")
    validate.add_argument("file")
    push = flows_sub.add_parser("push", help="store a flow JSON file as the next version (via the API)")
    push.add_argument("file")
    show = flows_sub.add_parser("show", help="print a stored flow (the latest, or --version N)")
    show.add_argument("flow_id")
    show.add_argument("--version", type=int, default=None)
    for command in (push, show):
        api_options(command)
    flows.set_defaults(func=cmd_flows)

    openapi = sub.add_parser("openapi", help="print the participants API's OpenAPI document")
    openapi.set_defaults(func=cmd_openapi)

    prompts = sub.add_parser("prompts", help="the system prompts in the prompt store (SSM) vs prompts/")
    prompts.add_argument("action", choices=("push", "show", "diff"))
    prompts.add_argument("names", nargs="*", help="prompt names (default: all)")
    prompts.set_defaults(func=cmd_prompts)
    return parser


def main(argv: list[str] | None = None) -> int:
    _quiet_lambda_runtime()
    args = build_parser().parse_args(argv)  # a usage mistake: argparse prints it and exits with 2
    try:
        args.settings = check_settings()
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe fails here, inside main, not while Python exits
        return code
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `promptpipe participants | head`: the reader has what it wanted; stop quietly, and keep
        # Python's exit-time flush of the closed stdout from printing a traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except Exception as exc:
        error = as_cli_error(exc)
        if error is None:
            raise  # a bug: the traceback is what helps
        print(f"promptpipe {args.command}: {error}", file=sys.stderr)
        return error.code


def as_cli_error(exc: BaseException) -> CliError | None:
    """The one-line error (and exit code) for a failure the commands share: configuration, an
    unreachable resource, an AWS call's failure. ``None`` for anything else (a bug)."""
    from promptpipe.adapters.aws import aws_failure
    from promptpipe.errors import ConfigurationError, ResourceUnavailable, ValidationFailed

    if isinstance(exc, CliError):
        return exc
    if isinstance(exc, ConfigurationError):
        return CliError(str(exc), EXIT_CONFIG)
    if isinstance(exc, ResourceUnavailable):
        return CliError(str(exc), EXIT_UNAVAILABLE)
    if isinstance(exc, ValidationFailed):
        return CliError(str(exc), EXIT_USAGE)
    failure = aws_failure(exc)
    if failure is not None:
        kind, message = failure
        return CliError(message, {"config": EXIT_CONFIG, "unavailable": EXIT_UNAVAILABLE}.get(kind, EXIT_FAILED))
    return None


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
