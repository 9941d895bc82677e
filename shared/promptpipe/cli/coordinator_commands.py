"""The coordinator's commands of ``promptpipe`` (participants, transcript, export, console): each
talks to the participants API, of a ``promptpipe serve`` or a deployed stack (``--api URL``) or of an
in-process local stack with the demo week played (``--demo``); and the readers of the files a
command names (``flows push``). ``promptpipe.cli.commands`` parses the command line and dispatches here."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from promptpipe.exit_codes import EXIT_CONFIG, EXIT_FAILED, EXIT_UNAVAILABLE, EXIT_USAGE, CliError


@contextlib.contextmanager
def coordinator_client(args: argparse.Namespace) -> Iterator[Any]:
    """The API client of ``--demo`` (an in-process local stack with the demo week played) or of
    ``--api URL`` (default ``PROMPTPIPE_API_URL``); API failures become ``CliError``s."""
    from promptpipe.coordinator.client import ApiError, ApiUnreachable, CoordinatorClient
    from promptpipe.errors import ConfigurationError

    try:
        if args.demo:
            from promptpipe.local.api_transport import InProcessTransport
            from promptpipe.local.demo import DEMO_START, run_demo
            from promptpipe.local.environment import LocalEnvironment, local_settings
            from promptpipe.local.failures import quiet_function_logs

            with (
                quiet_function_logs(verbose=False),
                LocalEnvironment(start=DEMO_START, settings=local_settings(offline_coach=True)) as env,
            ):
                run_demo(env)
                yield CoordinatorClient(InProcessTransport(env))
        else:
            from promptpipe.adapters.api_http import http_transport

            transport = http_transport(args.api or args.settings.promptpipe_api_url, region=args.settings.aws_region)
            try:
                yield CoordinatorClient(transport)
            finally:
                transport.close()
    except ApiUnreachable as exc:
        hint = " (is `promptpipe serve` running? or pass --api URL / --demo)" if not args.demo else ""
        raise CliError(f"{exc}{hint}", EXIT_UNAVAILABLE) from None
    except ApiError as exc:
        raise CliError(str(exc), EXIT_FAILED) from None
    except ConfigurationError as exc:
        raise CliError(str(exc), EXIT_CONFIG) from None


def cmd_participants(args: argparse.Namespace) -> int:
    from promptpipe.coordinator.summary import summarize
    from promptpipe.coordinator.terminal import terminal_safe

    with coordinator_client(args) as client:
        found = client.participants(status=args.status, phone=args.phone)
        header = f"{'id':36} {'name':12} {'phone':16} {'status':10} {'sub-state':16} prompts done  last reply (UTC)"
        print(header)
        for p in found:
            s = summarize(p, client.iter_history(p.id, include_audit=True), client.state(p.id))
            last = s.last_reply_at.strftime("%Y-%m-%d %H:%M") if s.last_reply_at else "—"
            status = p.status.value + (" (opted out)" if p.opted_out else "")
            print(
                f"{p.id:36} {terminal_safe(p.name[:12], keep_newlines=False):12} {p.phone_number:16} "
                f"{status:10} {s.sub_state:16} "
                f"{s.prompts_sent:7} {s.done:4}  {last}"
            )
        print(f"{len(found)} participant(s)", file=sys.stderr)
    return 0


def cmd_transcript(args: argparse.Namespace) -> int:
    from zoneinfo import ZoneInfo

    from promptpipe.coordinator.summary import transcript_text, zone_of

    with coordinator_client(args) as client:
        participant, deleted = client.find_kept(args.participant)
        # the text needs the audit too: what a message was (a photo, an edit of which message) and
        # the answers parsed from it are recorded there
        entries = list(client.iter_history(participant.id, include_audit=True))
        if args.format == "jsonl":
            for entry in entries:
                print(entry.model_dump_json())
        else:
            zone = zone_of(participant) if args.tz == "local" else ZoneInfo("UTC")
            sys.stdout.write(transcript_text(participant, entries, zone, deleted=deleted))
    return 0


def export_deidentified_options(export: argparse.ArgumentParser) -> None:
    """``export --deidentified`` and its options (docs/studies.md, "The de-identified export")."""
    export.add_argument(
        "--deidentified",
        action="store_true",
        help="no names, phone numbers or free text; participants under a salted pseudonym (EXPORT_PSEUDONYM_SALT); "
        "times as study day and local time; adds decisions.csv and data_dictionary.json",
    )
    export.add_argument("--include-text", action="store_true", help="with --deidentified: free text, masked")
    export.add_argument("--calendar-dates", action="store_true", help="with --deidentified: local dates and times")
    export.add_argument(
        "--study", metavar="FILE", default=None, help="with --deidentified: the study whose decisions to export"
    )


def add_export_option(simulate: argparse.ArgumentParser) -> None:
    """``simulate --export DIR`` (with ``--study``): the rehearsal's de-identified export."""
    simulate.add_argument(
        "--export",
        metavar="DIR",
        default=None,
        help="with --study: write the de-identified export of the simulated study to DIR (docs/studies.md)",
    )


def decision_records(client: Any, study: Any) -> list[Any]:
    """The study's decision records for ``export --deidentified --study``, read through the API
    (``GET /conversation/studies/{id}/decisions``; the export leaves test participants out)."""
    return list(client.decisions(study.id))


def read_study(path: str) -> Any:
    """The study definition in ``path`` (``--study FILE``), checked; a usage error when it is not one."""
    from pydantic import ValidationError

    from promptpipe.models.study import StudyDefinition

    try:
        return StudyDefinition.model_validate_json(read_file(path))
    except ValidationError as exc:
        raise CliError(f"{path} is not a valid study: {exc.errors()[0]['msg']}", EXIT_USAGE) from None


def cmd_export_deidentified(args: argparse.Namespace, out: Any, progress: Any = None) -> int:
    from promptpipe.adapters.secrets import pseudonym_salt
    from promptpipe.coordinator.deidentified_export import DeidentifyOptions, write_deidentified_export
    from promptpipe.coordinator.deidentify import MissingSalt, check_salt

    try:
        salt = check_salt(pseudonym_salt(args.settings))
    except MissingSalt as exc:
        raise CliError(str(exc), EXIT_CONFIG) from None
    study = read_study(args.study) if args.study else None
    options = DeidentifyOptions(
        salt=salt,
        include_text=args.include_text,
        calendar_dates=args.calendar_dates,
        region=args.settings.default_phone_region,
    )
    with coordinator_client(args) as client:
        records = decision_records(client, study) if study is not None else []
        if study is not None and not records:
            print(f"no decision of study {study.id} on record: decisions.csv holds its header only", file=sys.stderr)
        try:
            counts = write_deidentified_export(
                client, out, options, study=study, decisions=records, progress=None if args.quiet else progress
            )
        except OSError as exc:
            if isinstance(exc, ConnectionError):
                raise
            raise CliError(f"cannot write the export to {out}: {exc.strerror or exc}", EXIT_USAGE) from None
    left_out = (
        f"; {counts.test_participants_left_out} test participant(s) left out"
        if counts.test_participants_left_out
        else ""
    )
    print(
        f"wrote the de-identified export to {out}: {counts.participants} participants, {counts.prompts} prompts, "
        f"{counts.messages} messages, {counts.decisions} decisions, data_dictionary.json{left_out}"
    )
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from promptpipe.coordinator.export import write_export

    def progress(done: int, total: int) -> None:
        width = 30
        filled = width * done // max(total, 1)
        end = "\n" if done == total else ""
        bar = "#" * filled + "." * (width - filled)
        print(f"\rexporting [{bar}] {done}/{total} participants", end=end, file=sys.stderr)

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CliError(f"--out {out} is a file; give a folder (new or existing)", EXIT_USAGE)
    if out.is_dir() and not args.force and any(out.iterdir()):
        held = ", ".join(sorted(p.name for p in out.iterdir())[:4])
        raise CliError(
            f"--out {out} already holds files ({held}); give a new or empty folder, or --force to overwrite",
            EXIT_USAGE,
        )
    if getattr(args, "deidentified", False):
        return cmd_export_deidentified(args, out, progress)
    if getattr(args, "include_text", False) or getattr(args, "calendar_dates", False) or getattr(args, "study", None):
        raise CliError("--include-text, --calendar-dates and --study go with --deidentified", EXIT_USAGE)
    with coordinator_client(args) as client:
        try:
            counts = write_export(client, out, progress=None if args.quiet else progress)
            client.record_export(by=None)  # the audit names the caller: the AWS principal (docs/console.md)
        except OSError as exc:  # not writable, a file on the way, disk full
            if isinstance(exc, ConnectionError):  # the network (or a closed pipe): not the folder
                raise
            raise CliError(f"cannot write the export to {out}: {exc.strerror or exc}", EXIT_USAGE) from None
    print(
        f"wrote {out / 'participants.csv'} ({counts.participants} rows), "
        f"{out / 'prompts.csv'} ({counts.prompts} rows), {out / 'messages.jsonl'} ({counts.messages} lines)"
    )
    return 0


def cmd_console(args: argparse.Namespace) -> int:
    from pathlib import Path

    from promptpipe.console.app import run_console
    from promptpipe.console.identity import TokenBook

    study = read_study(args.study) if args.study else None  # a bad file stops before the API is asked
    with coordinator_client(args) as client:
        return run_console(
            client,
            host=args.host,
            port=args.port,
            allowed_hosts=args.allow_host,
            require_token=not args.no_token,
            tokens=TokenBook(Path(args.tokens)),
            operator=args.operator,
            study=study,
        )


def cmd_console_token(args: argparse.Namespace) -> int:
    """``console-token add NAME --role R`` (prints the token once), ``list``, ``remove NAME``."""
    from pathlib import Path

    from promptpipe.console.identity import Role, TokenBook

    book = TokenBook(Path(args.tokens))
    if args.token_command == "add":
        token = book.add(args.name, Role(args.role))
        print(f"console token for {args.name.strip()} ({args.role}), shown once; keep it safe:")
        print(token)
        print(f"open the console's address with ?token=<it>; stored hashed in {book.path}", file=sys.stderr)
    elif args.token_command == "remove":
        if not book.remove(args.name):
            raise CliError(f"no console token names {args.name}", EXIT_USAGE)
        print(f"removed the console token of {args.name}")
    else:
        for name, role, created in book.listed():
            print(f"{name}\t{role}\t{created}")
    return 0


def console_tokens_option(command: argparse.ArgumentParser) -> None:
    from pathlib import Path

    command.add_argument(
        "--tokens",
        default=str(Path.home() / ".promptpipe" / "console-tokens.json"),
        metavar="FILE",
        help="the coordinators' console tokens, hashed (default ~/.promptpipe/console-tokens.json)",
    )


def api_options(command: argparse.ArgumentParser) -> None:
    where = command.add_mutually_exclusive_group()
    where.add_argument(
        "--api",
        "--url",
        dest="api",
        default=None,
        metavar="URL",
        help="the participants API: a `promptpipe serve` URL, or a deployed API's URL (signed with SigV4 using "
        "your AWS credentials); default PROMPTPIPE_API_URL (http://127.0.0.1:8000)",
    )
    where.add_argument(
        "--demo", action="store_true", help="use an in-process local stack with the demo week played (no server)"
    )


def read_file(path: str) -> str:
    """A file the command names, as text (exit 2 when it cannot be read)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read {path}: {exc}", EXIT_USAGE) from None


def read_flow_json(path: str) -> Any:
    """The file's JSON, read as the API reads a body (``http_body``): text that is not JSON, nested
    too deeply or with an integer too long cannot be pushed (exit 2); a key twice in one object is
    a problem of the definition, reported like ``flows validate`` does (exit 1)."""
    from promptpipe.rules.http_body import MalformedBody, NotJson, read_json_text

    try:
        raw, duplicates = read_json_text(read_file(path))
    except NotJson as exc:
        raise CliError(f"{path} is not JSON: {str(exc).removeprefix('not valid JSON: ')}", EXIT_USAGE) from None
    except MalformedBody as exc:
        raise CliError(f"{path} cannot be read: {exc}", EXIT_USAGE) from None
    for key in duplicates:
        print(f"{path}: $: duplicate key {key!r}", file=sys.stderr)
    if duplicates:
        raise CliError(f"invalid: {len(duplicates)} problem(s)", EXIT_FAILED)
    return raw
