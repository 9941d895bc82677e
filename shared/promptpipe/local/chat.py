"""``promptpipe chat``: be the participant. Messages go through the signed Twilio webhook, the FIFO
worker and the coach; ``/wait``, ``/tomorrow`` move the simulated clock so daily prompts and timers
fire; ``/state`` shows the stored state."""

from __future__ import annotations

import argparse
import json
import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from promptpipe.exit_codes import CliError
from promptpipe.local.demo import send_sms
from promptpipe.local.environment import LocalEnvironment, model_label
from promptpipe.settings import parse_duration

HELP = "commands: /wait <duration, e.g. 5h or 30m>  /tomorrow [HH:MM]  /state  /help  /quit"


def _print_new(env: LocalEnvironment, seen: int, zone: ZoneInfo) -> int:
    entries = sorted(env.timeline, key=lambda e: e.at)
    for entry in entries[seen:]:
        if entry.actor == "participant":
            continue
        stamp = entry.at.astimezone(zone).strftime("%a %H:%M")
        prefix = {"coach": "coach", "timer": "timer", "system": "·"}.get(entry.actor, entry.actor)
        print(f"[{stamp}] {prefix}: {entry.text}")
    return len(entries)


def parse_clock_time(text: str) -> tuple[int, int]:
    """``"07:30"`` -> (7, 30); anything else (``25:00``, ``7h``) raises ``ValueError`` with a hint."""
    match = re.fullmatch(r"(\d{1,2}):(\d{2})", text.strip())
    if not match or int(match[1]) > 23 or int(match[2]) > 59:
        raise ValueError(f"{text!r} is not a time of day; use HH:MM from 00:00 to 23:59")
    return int(match[1]), int(match[2])


def _command(env: LocalEnvironment, line: str, pid: str, zone: ZoneInfo) -> None:
    """Run one ``/command``; a mistake prints one ``?`` line."""
    name, _, rest = line.partition(" ")
    rest = rest.strip()
    if name == "/help":
        print(HELP)
    elif name == "/state":
        print(json.dumps(env.api("GET", f"/conversation/participants/{pid}/state").body["result"], indent=2))
    elif name == "/wait":
        try:
            delta = parse_duration(rest or "1h")
        except ValueError as exc:
            print(f"? {exc}")
            return
        if delta.total_seconds() <= 0:
            print("? /wait needs a positive duration, e.g. /wait 5h")
            return
        env.advance(delta)
    elif name == "/tomorrow":
        try:
            hour, minute = parse_clock_time(rest or "09:00")
        except ValueError as exc:
            print(f"? {exc}")
            return
        local = env.clock.now().astimezone(zone).date() + timedelta(days=1)
        env.advance_to(datetime(local.year, local.month, local.day, hour, minute, tzinfo=zone).astimezone(UTC))
    else:
        print(f"? unknown command {name} (not sent to the coach). {HELP}")


def run_chat(args: argparse.Namespace) -> int:
    from promptpipe.local.failures import failure_lines, quiet_function_logs

    start = args.start or datetime.now(UTC).replace(microsecond=0)
    zone = ZoneInfo(args.timezone)
    with (
        quiet_function_logs(verbose=getattr(args, "verbose", False)) as failures,
        LocalEnvironment(start=start) as env,
    ):
        retries = env.settings.genai_max_retries

        def report_failures() -> None:
            for text in failure_lines(failures, max_retries=retries):
                print(f"! {text}")

        print(f"PromptPipe chat — coach model: {model_label(env)}")
        print(HELP)
        enrolled = env.api(
            "POST", "/conversation/participants", json_body={"phone_number": args.phone, "timezone": args.timezone}
        )
        if enrolled.status != 201:
            raise CliError(f"enrollment failed: {enrolled.body.get('message', enrolled.body)}")
        pid, phone = enrolled.body["result"]["id"], enrolled.body["result"]["phone_number"]
        seen = _print_new(env, 0, zone)
        report_failures()
        count = 0
        while True:
            try:
                line = input(f"[{env.clock.now().astimezone(zone):%a %H:%M}] you: ").strip()
            except EOFError:
                print()
                return 0
            if not line:
                continue
            if line in ("/quit", "/exit"):
                return 0
            if line.startswith("/"):
                _command(env, line, pid, zone)
            else:
                count += 1
                env.note_inbound(pid, line)
                send_sms(env, phone, line, f"SMchat{count:05d}")
            seen = _print_new(env, seen, zone)
            report_failures()
