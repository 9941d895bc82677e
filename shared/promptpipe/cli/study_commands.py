"""The study commands (docs/studies.md): ``studies validate FILE`` and ``simulate --study FILE``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from promptpipe.cli.coordinator_commands import read_file
from promptpipe.exit_codes import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliError

if TYPE_CHECKING:
    from promptpipe.local.study_rehearsal import StudyRun


def cmd_studies(args: argparse.Namespace) -> int:
    """``studies validate FILE`` (offline): a study definition checked as the engine reads it."""
    from promptpipe.errors import ValidationFailed
    from promptpipe.usecases.studies import parse_study

    try:
        study = parse_study(read_file(args.file))
    except ValidationFailed as exc:
        print(f"{args.file}: {exc}", file=sys.stderr)
        raise CliError("invalid study definition", EXIT_FAILED) from None
    points = ", ".join(f"{p.name} ({len(p.arms)} arms)" for p in study.decision_points) or "no decision point"
    print(f"valid: study {study.id!r}, {study.duration_days} days, {points}")
    return EXIT_OK


def study_rehearsal(args: argparse.Namespace) -> StudyRun:
    """``simulate --study FILE``: the rehearsal run, its stack still open (the caller closes it)."""
    from promptpipe.errors import ValidationFailed
    from promptpipe.local.study_rehearsal import ReplyModel, parse_effects, run_study_rehearsal
    from promptpipe.usecases.studies import parse_study

    try:
        study = parse_study(args.study.read_text(encoding="utf-8"))
        replies = ReplyModel(done_rate=args.done_rate, reply_rate=args.reply_rate, effects=parse_effects(args.effects))
    except (OSError, ValidationFailed) as exc:
        raise CliError(f"{args.study}: {exc}", EXIT_USAGE) from exc
    progress = (lambda text: print(f"… {text}", file=sys.stderr)) if not args.quiet else None
    return run_study_rehearsal(
        study,
        args.participants,
        args.days,
        seed=args.seed,
        replies=replies,
        stop_rate=args.stop_rate,
        progress=progress,
        stack=args.stack,
    )


def cmd_simulate_study(args: argparse.Namespace) -> int:
    run = study_rehearsal(args)
    try:
        for line in run.lines():
            print(line)
        if args.export is not None:  # the report of the estimates and the de-identified export
            from promptpipe.local.rehearsal_export import finish_rehearsal

            lines, _ = finish_rehearsal(run.env, run.study, run.decisions, Path(args.export))
            for line in lines:
                print(line)
    finally:
        run.close()
    return 0


def add_studies_parser(sub: Any) -> None:
    studies = sub.add_parser("studies", help="study definitions (docs/studies.md): validate a file")
    studies_sub = studies.add_subparsers(dest="studies_command", required=True)
    studies_sub.add_parser("validate", help="validate a study JSON file (offline); exit 1 when invalid").add_argument(
        "file"
    )
    studies.set_defaults(func=cmd_studies)


def add_study_arguments(simulate: argparse.ArgumentParser) -> None:
    """``simulate``'s options of a study rehearsal."""
    study = simulate.add_argument_group("a study rehearsal (docs/studies.md#a-rehearsal)")
    study.add_argument("--study", type=Path, default=None, metavar="FILE", help="a study definition: rehearse it")
    study.add_argument("--done-rate", type=float, default=0.35, help="P(done) in the no-prompt arm (default 0.35)")
    study.add_argument("--reply-rate", type=float, default=0.75, help="P(any reply to the check-in) (default 0.75)")
    study.add_argument(
        "--effects",
        default="framing_a=0.1,framing_b=0.05",
        metavar="ARM=RD,…",
        help="the planted effect of each arm on P(done), a risk difference (default framing_a=0.1,framing_b=0.05)",
    )
    study.add_argument("--stop-rate", type=float, default=0.005, help="P(a participant texts STOP) a day")
    study.add_argument(
        "--stack",
        choices=("memory", "moto"),
        default="memory",
        help="the in-memory adapters (default: fast) or moto's emulated AWS (slower; what the tests run)",
    )
