"""``promptpipe demo``: a scripted participant's week, end to end, on the embedded local stack.

Enrollment through the participants API, every message through a signed Twilio webhook, turns
through the SQS FIFO worker, daily prompts and timers through the scheduler pump. Prints the timeline
in the participant's local time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TextIO
from zoneinfo import ZoneInfo

from promptpipe.coordinator.summary import TIMER_WORDS
from promptpipe.errors import PromptPipeError
from promptpipe.local.environment import LOCAL_TWILIO_AUTH_TOKEN, LocalEnvironment, TimelineEntry
from promptpipe.local.failures import FailureLog, failure_lines
from promptpipe.local.signing import twilio_form, twilio_signature

DEMO_ZONE = "America/Toronto"
DEMO_PHONE = "+1 416 555 0142"
DEMO_START = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)  # Monday 08:00 in Toronto
TWILIO_URL = "https://localhost/webhooks/twilio"


@dataclass
class DemoStep:
    """At ``local`` time on ``day`` (0 = enrollment day), the participant says ``text`` (or nothing:
    the clock just moves on so that schedules fire)."""

    day: int
    local: str
    text: str | None = None
    note: str | None = None


SCRIPT: tuple[DemoStep, ...] = (
    DemoStep(0, "08:02", "Hi! I'd like to exercise more."),
    DemoStep(0, "08:03", "I want to feel more energetic during the day."),
    DemoStep(0, "08:05", "Around 7:30am works for me."),
    DemoStep(0, "08:06", "After my morning coffee."),
    DemoStep(0, "08:07", "Yes, please!"),
    DemoStep(1, "07:00", note="Day 1: the first daily prompt arrives at 07:20, ten minutes before 07:30."),
    DemoStep(1, "07:41", "1"),
    DemoStep(1, "07:43", "It felt good, the stretching woke me up."),
    DemoStep(2, "07:00", note="Day 2: the participant misses the prompt; the reminder follows five hours later."),
    DemoStep(2, "18:30", "Sorry, busy day. I forgot because I was rushing to work."),
    DemoStep(3, "07:00", note="Day 3: the participant asks for more of a challenge."),
    DemoStep(3, "07:35", "more"),
    DemoStep(3, "07:36", "Done"),
    DemoStep(4, "07:00", note="Day 4: the prompt reflects the higher intensity."),
    DemoStep(4, "09:00"),
)


class DemoFailed(PromptPipeError):
    """A step of the demo did not go through (enrollment refused, a webhook rejected, a turn failed)."""


@dataclass
class DemoResult:
    participant_id: str
    timeline: list[TimelineEntry]
    state: dict


def _at(day: int, local: str, zone: ZoneInfo) -> datetime:
    base = DEMO_START.astimezone(zone).date() + timedelta(days=day)
    hour, minute = (int(x) for x in local.split(":"))
    return datetime(base.year, base.month, base.day, hour, minute, tzinfo=zone).astimezone(UTC)


def send_sms(env: LocalEnvironment, phone_e164: str, text: str, message_id: str) -> int:
    params = {"MessageSid": message_id, "AccountSid": "AClocal", "From": phone_e164, "To": "+14155550000", "Body": text}
    response = env.api(
        "POST",
        "/webhooks/twilio",
        body=twilio_form(params),
        headers={
            "content-type": "application/x-www-form-urlencoded",
            "x-twilio-signature": twilio_signature(TWILIO_URL, params, LOCAL_TWILIO_AUTH_TOKEN),
        },
        base64_body=True,
    )
    return response.status


def run_demo(
    env: LocalEnvironment, *, progress: Callable[[str], None] | None = None, failures: FailureLog | None = None
) -> DemoResult:
    zone = ZoneInfo(DEMO_ZONE)
    first_entry = len(env.timeline)
    enrolled = env.api(
        "POST",
        "/conversation/participants",
        json_body={"phone_number": DEMO_PHONE, "name": "Sam", "timezone": DEMO_ZONE, "background": "Office worker"},
    )
    if enrolled.status != 201:
        raise DemoFailed(f"enrollment failed: {enrolled.status} {enrolled.body}")
    participant = enrolled.body["result"]
    pid, phone = participant["id"], participant["phone_number"]
    note = TimelineEntry(env.clock.now(), "system", f"enrolled {participant['name']} ({pid}) through the API", pid)
    env.timeline.insert(first_entry, note)
    env.drain()
    for index, step in enumerate(SCRIPT):
        target = _at(step.day, step.local, zone)
        if target > env.clock.now():
            env.advance_to(target)
        if step.note:
            env.timeline.append(TimelineEntry(env.clock.now(), "system", step.note, pid))
            if progress:
                progress(step.note)
        if step.text is not None:
            env.note_inbound(pid, step.text)
            status = send_sms(env, phone, step.text, f"SMdemo{index:04d}")
            if status != 200:
                raise DemoFailed(f"webhook answered {status}")
        if failures is not None:
            lines = failure_lines(failures, max_retries=env.settings.genai_max_retries)
            if lines:
                raise DemoFailed(lines[0])
    state = env.api("GET", f"/conversation/participants/{pid}/state").body["result"]
    return DemoResult(pid, sorted(env.timeline, key=lambda e: e.at), state)


def _entry_text(entry: TimelineEntry, verbose: bool) -> str:
    if entry.actor == "timer" and not verbose:
        return TIMER_WORDS.get(entry.kind, entry.text)
    return entry.text


def format_timeline(result: DemoResult, zone_name: str = DEMO_ZONE, *, verbose: bool = False) -> list[str]:
    zone = ZoneInfo(zone_name)
    lines: list[str] = []
    current_day = None
    for entry in result.timeline:
        local = entry.at.astimezone(zone)
        day = local.strftime("%A %Y-%m-%d")
        if day != current_day:
            lines += ["", f"── {day} ({zone_name}) " + "─" * 20]
            current_day = day
        stamp = local.strftime("%H:%M")
        text = _entry_text(entry, verbose).replace("\n", "\n" + " " * 20)
        label = {
            "participant": "participant ›",
            "coach": "coach       ‹",
            "timer": "timer       ⏰",
            "system": "            ·",
        }
        lines.append(f"{stamp} {label.get(entry.actor, entry.actor):14s} {text}")
    return lines


def print_demo(out: TextIO, result: DemoResult, model_label: str, *, verbose: bool = False) -> None:
    out.write(f"PromptPipe local demo — coach model: {model_label}\n")
    out.write("Everything below ran through the real handlers on moto, with the local scheduler pump.\n")
    for line in format_timeline(result, verbose=verbose):
        out.write(line + "\n")
    state = result.state
    profile = state["profile"]
    out.write("\nFinal state\n")
    version = f"   version: {state['version']}" if verbose else ""
    out.write(f"  sub-state: {state['sub_state']}   status: {state['status']}{version}\n")
    out.write(
        f"  profile: domain={profile.get('habit_domain')!r} anchor={profile.get('prompt_anchor')!r} "
        f"time={profile.get('preferred_time')!r} intensity={profile.get('intensity')} "
        f"success={profile.get('success_count')}/{profile.get('total_prompts')}\n"
    )
    for schedule in state["schedules"]:
        when = schedule["fixed_time"] or schedule["random_start_time"]
        out.write(f"  schedule: {schedule['type']} {when} {schedule['timezone']}\n")
    controller = state.get("controller")
    if controller:
        steps = " → ".join(
            f"{t['nodeId']} {t['mode']}" if t.get("nodeId") else t["status"] for t in controller["recent_turns"]
        )
        done = f"complete at turn {controller['completed_at_turn']}" if controller["completed_at_turn"] else "open"
        out.write(f"  flow controller: {controller['flow']} {done}; intake turns: {steps}\n")
