"""``promptpipe chat``: be the participant. Messages go through the signed Twilio webhook, the FIFO
worker and the coach; ``/wait``, ``/tomorrow`` move the simulated clock so daily prompts and timers
fire; ``/state`` shows the stored state."""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from promptpipe.local.demo import send_sms
from promptpipe.local.environment import LocalEnvironment
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


def run_chat(args: argparse.Namespace) -> int:
    from promptpipe.local.environment import model_label

    start = args.start or datetime.now(UTC).replace(microsecond=0)
    zone = ZoneInfo(args.timezone)
    with LocalEnvironment(start=start) as env:
        print(f"PromptPipe chat — coach model: {model_label(env)}")
        print(HELP)
        enrolled = env.api(
            "POST", "/conversation/participants", json_body={"phone_number": args.phone, "timezone": args.timezone}
        )
        if enrolled.status != 201:
            print(f"enrollment failed: {enrolled.body}", file=sys.stderr)
            return 1
        pid, phone = enrolled.body["result"]["id"], enrolled.body["result"]["phone_number"]
        seen = _print_new(env, 0, zone)
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
            if line == "/help":
                print(HELP)
            elif line == "/state":
                print(json.dumps(env.api("GET", f"/conversation/participants/{pid}/state").body["result"], indent=2))
            elif line.startswith("/wait"):
                try:
                    env.advance(parse_duration(line.removeprefix("/wait").strip() or "1h"))
                except ValueError as exc:
                    print(f"? {exc}")
            elif line.startswith("/tomorrow"):
                when = line.removeprefix("/tomorrow").strip() or "09:00"
                if not re.fullmatch(r"\d{1,2}:\d{2}", when):
                    print("? use /tomorrow HH:MM")
                    continue
                local = env.clock.now().astimezone(zone).date() + timedelta(days=1)
                hour, minute = (int(x) for x in when.split(":"))
                env.advance_to(datetime(local.year, local.month, local.day, hour, minute, tzinfo=zone).astimezone(UTC))
            else:
                count += 1
                env.note_inbound(pid, line)
                send_sms(env, phone, line, f"SMchat{count:05d}")
            seen = _print_new(env, seen, zone)
