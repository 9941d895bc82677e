"""The ``promptpipe`` command: local demo, interactive chat, local server, OpenAPI document."""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime


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


def cmd_chat(args: argparse.Namespace) -> int:
    from promptpipe.local.chat import run_chat

    return run_chat(args)


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

    openapi = sub.add_parser("openapi", help="print the participants API's OpenAPI document")
    openapi.set_defaults(func=cmd_openapi)
    return parser


def main(argv: list[str] | None = None) -> int:
    _quiet_lambda_runtime()
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
