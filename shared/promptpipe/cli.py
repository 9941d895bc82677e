"""The ``promptpipe`` command: local demo, interactive chat, local server, OpenAPI document."""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime
from typing import Any


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
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def cmd_demo(args: argparse.Namespace) -> int:
    from promptpipe.local.demo import DEMO_START, print_demo, run_demo
    from promptpipe.local.environment import LocalEnvironment, local_settings, model_label

    settings = local_settings(offline_coach=True, openai_api_key=None) if not args.use_openai else local_settings()
    with LocalEnvironment(start=DEMO_START, seed=args.seed, settings=settings) as env:
        result = run_demo(env, progress=(lambda note: print(f"… {note}", file=sys.stderr)) if args.progress else None)
        print_demo(sys.stdout, result, model_label(env))
    return 0


def cmd_openapi(_args: argparse.Namespace) -> int:
    from functions.enrollment.handler import app

    print(app.get_openapi_json_schema(title="PromptPipe participants API", version="0.1.0"))
    return 0


def cmd_flows(args: argparse.Namespace) -> int:
    """``flows validate FILE`` (offline), ``flows push FILE`` and ``flows show ID`` (against the
    API of a running ``promptpipe serve``; the deployed, IAM-signed API is not supported here)."""
    import json
    from pathlib import Path

    from promptpipe.controller.definition import parse_text

    if args.flows_command == "validate":
        definition, problems = parse_text(Path(args.file).read_text(encoding="utf-8"))
        for problem in problems:
            print(f"{args.file}: {problem}", file=sys.stderr)
        if definition is None:
            print(f"invalid: {len(problems)} problem(s)", file=sys.stderr)
            return 1
        print(f"valid: flow {definition.id!r}, {len(definition.nodes)} node(s), {len(definition.gates)} gate(s)")
        return 0
    if args.flows_command == "push":
        raw = json.loads(Path(args.file).read_text(encoding="utf-8"))
        status, body = _api(args.url, "PUT", f"/conversation/flows/{raw.get('id', '')}", raw)
    else:
        query = f"?version={args.version}" if args.version else ""
        status, body = _api(args.url, "GET", f"/conversation/flows/{args.flow_id}{query}", None)
    if status >= 400:
        print(body.get("message", status), file=sys.stderr)
        for problem in (body.get("result") or {}).get("problems", []):
            print(f"{problem['path']}: {problem['message']}", file=sys.stderr)
        return 1
    if args.flows_command == "push":
        print(body.get("message", "stored"))
    else:
        print(json.dumps(body.get("result"), indent=2))
    return 0


def _api(base_url: str, method: str, path: str, payload: Any) -> tuple[int, dict[str, Any]]:
    import json
    import urllib.error
    import urllib.request

    data = json.dumps(payload).encode() if payload is not None else None
    request = urllib.request.Request(
        base_url.rstrip("/") + path, data=data, method=method, headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def cmd_chat(args: argparse.Namespace) -> int:
    from promptpipe.local.chat import run_chat

    return run_chat(args)


def cmd_import(args: argparse.Namespace) -> int:
    """Participants and flow states of the original PromptPipe into this deployment (README, "Moving
    a study from the original PromptPipe")."""
    from promptpipe.adapters.original_db import read_postgres, read_sqlite
    from promptpipe.importer import import_participants
    from promptpipe.wiring import build_app

    originals = read_sqlite(args.sqlite) if args.sqlite else read_postgres(args.postgres)
    report = import_participants(build_app(), originals, dry_run=args.dry_run, default_region=args.region)
    for line in report.render():
        print(line)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from promptpipe.local.server import run_server

    return run_server(args)


def cmd_simulate(args: argparse.Namespace) -> int:
    from promptpipe.local.simulate import run_simulation

    progress = (lambda text: print(f"… {text}", file=sys.stderr)) if not args.quiet else None
    report = run_simulation(args.participants, args.days, seed=args.seed, progress=progress)
    for line in report.lines():
        print(line)
    return 0


def cmd_prompts(args: argparse.Namespace) -> int:
    """``prompts push|show|diff``: the prompt store (SSM, ``PROMPT_STORE_PREFIX``) against ``prompts/``."""
    import difflib

    from promptpipe.adapters.prompt_store import SSMPromptStore
    from promptpipe.flow.prompts import PROMPT_NAMES, PromptLibrary, text_version
    from promptpipe.settings import get_settings

    settings = get_settings()
    store = SSMPromptStore.from_settings(settings)
    library = PromptLibrary.from_settings(settings)
    names = args.names or list(PROMPT_NAMES)
    unknown = [n for n in names if n not in PROMPT_NAMES]
    if unknown:
        print(f"unknown prompt(s): {', '.join(unknown)}; known: {', '.join(PROMPT_NAMES)}", file=sys.stderr)
        return 2
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
    return 1 if args.action == "diff" and changed else 0


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
    demo.set_defaults(func=cmd_demo)

    chat = sub.add_parser("chat", help="talk to the coach as a participant; /wait 5h, /tomorrow 09:00, /state, /quit")
    chat.add_argument("--phone", default="+14165550142", help="the participant's phone number")
    chat.add_argument("--timezone", default="America/Toronto", help="the participant's IANA time zone")
    chat.add_argument(
        "--start", type=_parse_instant, default=None, help="simulated start time, ISO-8601 UTC (default: now)"
    )
    chat.set_defaults(func=cmd_chat)

    serve = sub.add_parser("serve", help="local HTTP server with the API Gateway routes, the worker and the pump")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--start", type=_parse_instant, default=None, help="simulated start time, ISO-8601 UTC (default: now)"
    )
    serve.set_defaults(func=cmd_serve)

    simulate = sub.add_parser("simulate", help="a seeded population living several days; prints throughput")
    simulate.add_argument("--participants", type=int, default=100)
    simulate.add_argument("--days", type=int, default=7)
    simulate.add_argument("--seed", type=int, default=42)
    simulate.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    simulate.set_defaults(func=cmd_simulate)

    importer = sub.add_parser(
        "import", help="import participants and flow states from the original PromptPipe (SQLite or Postgres)"
    )
    source = importer.add_mutually_exclusive_group(required=True)
    source.add_argument("--sqlite", metavar="FILE", help="the original's SQLite database file")
    source.add_argument("--postgres", metavar="DSN", help="the original's Postgres DSN (needs psycopg)")
    importer.add_argument("--dry-run", action="store_true", help="report what would be imported; write nothing")
    importer.add_argument("--region", default=None, help="region for national phone numbers (default: settings)")
    importer.set_defaults(func=cmd_import)

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
        command.add_argument(
            "--url",
            default="http://127.0.0.1:8000",
            help="the API of a running `promptpipe serve` (default %(default)s)",
        )
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
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
