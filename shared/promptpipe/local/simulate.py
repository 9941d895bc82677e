"""``promptpipe simulate``: a seeded population of scripted participants living several days on the
local stack (offline coach, pump; the in-memory adapters, or moto with ``--stack moto``), to measure
throughput and cost per event.

Each participant has a time zone, a habit, a preferred time and an anchor; each day they answer the
daily prompt with "Done", "Next time" plus a reason, an intensity change, or not at all (a missed
day, which brings the reminder). Every message goes through a signed Twilio webhook and the worker;
every prompt and timer through the scheduler pump.
"""

from __future__ import annotations

import dataclasses
import random
import resource
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from promptpipe.adapters.local_outbox import OutboxRecord
from promptpipe.errors import ValidationFailed
from promptpipe.local.demo import send_sms
from promptpipe.local.environment import SCHEDULED_PROMPT_ARN, LocalEnvironment, local_settings
from promptpipe.models.messaging import OutboundKind
from promptpipe.rules.sms import prepare_sms, segments

ZONES = ("America/Toronto", "America/Los_Angeles", "Europe/London", "Europe/Berlin", "Asia/Tokyo", "Australia/Sydney")
HABITS = (
    ("I'd like to exercise more", "I want to feel more energetic"),
    ("I want to drink more water", "so that I feel less tired"),
    ("I'd like to read more", "because it helps me relax"),
    ("I want to sleep better", "to feel rested in the morning"),
    ("I'd like to meditate", "because it helps me stay calm"),
)
ANCHORS = ("After my morning coffee.", "After brushing my teeth.", "After lunch.", "When I get home from work.")
TIMES = ("7:30am", "8am", "12:30pm", "6pm", "9pm")
DAILY_REPLIES = (
    ("1", 0.35),
    ("Done", 0.15),
    ("2", 0.1),
    ("Next time, I was too busy", 0.1),
    ("more", 0.05),
    ("less", 0.05),
    (None, 0.2),  # a missed day
)


@dataclass
class SimulatedParticipant:
    phone: str
    zone: str
    intake: tuple[str, ...]
    pid: str = ""


# Twilio's US list price per SMS segment before carrier fees (scripts/bench/cost_model.py uses the same).
SMS_SEGMENT_PRICE = 0.0083


@dataclass
class SegmentStats:
    """SMS segments of every message the run sent, as if the channel were SMS.

    ``before``: the text as the coach wrote it (typographic quotes, dashes, emoji as they come).
    ``after``: what the SMS messenger sends (``promptpipe.rules.sms.prepare_sms``: GSM-7 where the meaning
    allows, emoji only when the tone allows them).
    """

    messages: int
    before: int
    after: int
    poll_messages: int
    # kind -> (messages, segments before, segments after)
    by_kind: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    @classmethod
    def of(cls, records: list[OutboxRecord]) -> SegmentStats:
        by_kind: dict[str, tuple[int, int, int]] = {}
        for record in records:
            count, was, now = by_kind.get(record.kind.value, (0, 0, 0))
            by_kind[record.kind.value] = (
                count + 1,
                was + segments(record.body_text),
                now + prepare_sms(record.body_text, allow_emoji=record.allow_emoji).segments,
            )
        before = sum(was for _, was, _ in by_kind.values())
        after = sum(now for _, _, now in by_kind.values())
        polls = by_kind.get(OutboundKind.INTENSITY_POLL.value, (0, 0, 0))[0]
        return cls(len(records), before, after, polls, by_kind)

    def per_participant_day(self, participants: int, days: int) -> float:
        return self.after / (participants * days or 1)

    def lines(self, participants: int, days: int, label: str = "") -> list[str]:
        per = participants * days or 1
        monthly = self.per_participant_day(participants, days) * 30 * 1000 * SMS_SEGMENT_PRICE
        return [
            f"SMS segments per participant per day{label} (all {self.messages} messages, intake included): "
            f"before {self.before / per:.2f}, after {self.after / per:.2f}; "
            f"messages {self.messages / per:.2f}/participant/day ({self.poll_messages} intensity polls on their own); "
            f"outbound SMS per 1,000 participants a month at ${SMS_SEGMENT_PRICE}/segment: ${monthly:,.0f}",
            f"SMS segments per message by kind{label} (before -> after): "
            + ", ".join(
                f"{kind} {was / count:.2f} -> {now / count:.2f} (n={count})"
                for kind, (count, was, now) in sorted(self.by_kind.items())
            ),
        ]


@dataclass
class PromptPeaks:
    """How the daily-prompt firings cluster: the busiest second and minute of the run (the popular
    local times make peaks; a flexible window on the schedules spreads them, docs/scale.md)."""

    firings: int
    busiest_second: int
    busiest_minute: int
    window_minutes: int

    @classmethod
    def of(cls, times: list[datetime], window_minutes: int) -> PromptPeaks:
        seconds = Counter(t.replace(microsecond=0) for t in times)
        minutes = Counter(t.replace(second=0, microsecond=0) for t in times)
        return cls(
            firings=len(times),
            busiest_second=max(seconds.values(), default=0),
            busiest_minute=max(minutes.values(), default=0),
            window_minutes=window_minutes,
        )

    def line(self) -> str:
        window = f"{self.window_minutes}-minute flexible window" if self.window_minutes else "no flexible window"
        return (
            f"daily-prompt firings {self.firings} ({window}): busiest second {self.busiest_second}, "
            f"busiest minute {self.busiest_minute}"
        )


@dataclass
class SimulationReport:
    participants: int
    days: int
    events: int
    webhook_calls: int
    scheduler_firings: int
    worker_turns: int
    messages_sent: int
    wall_seconds: float
    cpu_seconds: float
    sms: SegmentStats | None = None
    # per simulated day: (events, CPU seconds) of that day's replies and firings
    daily: list[tuple[int, float]] = field(default_factory=list)
    # resident memory (bytes) after intake and at the end; None where the platform does not say
    rss_after_intake: int | None = None
    rss_at_end: int | None = None
    prompt_peaks: PromptPeaks | None = None
    # The same seeded run without the SMS channel's rules (``promptpipe simulate --sms-compare``).
    sms_without_rules: SegmentStats | None = None

    def daily_cpu_ms(self) -> list[float]:
        return [1000 * cpu / events if events else 0.0 for events, cpu in self.daily]

    @property
    def memory_per_participant_day(self) -> float | None:
        """Growth of resident memory over the simulated days, in bytes per participant-day."""
        if self.rss_after_intake is None or self.rss_at_end is None or not self.participants * self.days:
            return None
        return (self.rss_at_end - self.rss_after_intake) / (self.participants * self.days)

    @property
    def events_per_second(self) -> float:
        return self.events / self.wall_seconds if self.wall_seconds else 0.0

    @property
    def cpu_ms_per_event(self) -> float:
        return 1000 * self.cpu_seconds / self.events if self.events else 0.0

    def lines(self) -> list[str]:
        return [
            f"participants={self.participants} days={self.days}",
            f"events={self.events} (webhook calls {self.webhook_calls}, worker turns {self.worker_turns}, "
            f"scheduler firings {self.scheduler_firings}); messages sent {self.messages_sent}",
            f"wall {self.wall_seconds:.1f} s, {self.events_per_second:.1f} events/s, "
            f"CPU {self.cpu_ms_per_event:.2f} ms/event",
            *self._flatness_lines(),
            *([self.prompt_peaks.line()] if self.prompt_peaks else []),
            *(self.sms.lines(self.participants, self.days) if self.sms else []),
            *(
                self.sms_without_rules.lines(self.participants, self.days, " without the SMS rules")
                if self.sms_without_rules
                else []
            ),
        ]

    def _flatness_lines(self) -> list[str]:
        lines = []
        per_day = self.daily_cpu_ms()
        if per_day:
            first, last = per_day[0], per_day[-1]
            change = f" (last day {100 * (last - first) / first:+.0f} % vs day 1)" if first else ""
            lines.append("CPU ms/event by simulated day: " + " ".join(f"{ms:.1f}" for ms in per_day) + change)
        per_pd = self.memory_per_participant_day
        if per_pd is not None and self.rss_after_intake is not None and self.rss_at_end is not None:
            lines.append(
                f"resident memory {self.rss_after_intake / 2**20:.0f} MB after intake -> "
                f"{self.rss_at_end / 2**20:.0f} MB at the end: {per_pd / 2**10:.1f} KB per participant-day"
            )
        return lines


def resident_bytes() -> int | None:
    """This process's resident set size now (Linux ``/proc/self/statm``), else its peak (getrusage)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def population(count: int, rng: random.Random) -> list[SimulatedParticipant]:
    people = []
    for index in range(count):
        habit, motivation = rng.choice(HABITS)
        # the last: the yes to the coach's proposal of the daily time (the schedule is made on it)
        intake = (habit, motivation, f"Around {rng.choice(TIMES)} works for me.", rng.choice(ANCHORS), "Yes, please.")
        # +1 416 555 01xx are reserved fictional numbers; a second block keeps 1000+ people unique.
        phone = f"+1416555{index:04d}" if index < 10_000 else f"+1647555{index - 10_000:04d}"
        people.append(SimulatedParticipant(phone=phone, zone=rng.choice(ZONES), intake=intake))
    return people


def _weighted(rng: random.Random) -> str | None:
    roll, total = rng.random(), 0.0
    for reply, weight in DAILY_REPLIES:
        total += weight
        if roll < total:
            return reply
    return None


def _check_population(participants: int, days: int) -> None:
    if participants < 1 or days < 1:  # a negative population would report "$-0" as if it had run
        raise ValidationFailed("a simulation needs at least 1 participant and 1 day", field="participants")


def run_simulation(
    participants: int,
    days: int,
    *,
    seed: int = 42,
    start: datetime = datetime(2026, 3, 2, 0, 0, tzinfo=UTC),
    progress: Callable[[str], None] | None = None,
    flexible_window: int = 5,
    sms_rules: bool = True,
    compare_sms: bool = False,
    stack: Literal["memory", "moto"] = "memory",
) -> SimulationReport:
    """``sms_rules``: the participants are on SMS (docs/behaviour.md#sms: one segment per daily prompt
    with the poll in it, replies held to one segment); off: the text channel without those rules.
    ``compare_sms``: the same seeded run once more without the rules, its segments reported too.
    ``stack``: the in-memory adapters (the default: what is measured is our code, not an emulator's
    cost, which grows with the table on stock moto, docs/benchmarks.md) or moto's emulated AWS."""
    _check_population(participants, days)
    if compare_sms:
        report = run_simulation(
            participants, days, seed=seed, start=start, progress=progress, flexible_window=flexible_window, stack=stack
        )
        if progress:
            progress("the same run without the SMS rules")
        without = run_simulation(
            participants, days, seed=seed, start=start, flexible_window=flexible_window, sms_rules=False, stack=stack
        )
        report.sms_without_rules = without.sms
        return report
    rng = random.Random(seed)
    env = LocalEnvironment(
        start=start,
        seed=seed,
        notified_pump=True,
        stack=stack,
        settings=local_settings(
            offline_coach=True, openai_api_key=None, daily_prompt_flexible_window_minutes=flexible_window
        ),
    )
    # The participants text by SMS: the core's SMS rules apply (the messages still land in the outbox).
    env.app.deps.config = dataclasses.replace(env.app.deps.config, sms_channel=sms_rules)
    webhook_calls = firings = 0
    prompt_times: list[datetime] = []  # when each daily-prompt firing happened

    def advance_to(at: datetime) -> int:
        fired = env.advance_to(at)
        # the recurring schedules only (a random-window delivery, "-r", is a one-shot they arm)
        prompt_times.extend(f.at for f in fired if f.target_arn == SCHEDULED_PROMPT_ARN and not f.name.endswith("-r"))
        return len(fired)

    wall0, cpu0 = time.perf_counter(), time.process_time()
    try:
        people = population(participants, rng)
        for person in people:
            response = env.api(
                "POST", "/conversation/participants", json_body={"phone_number": person.phone, "timezone": person.zone}
            )
            person.pid = response.body["result"]["id"]
        if progress:
            progress(f"enrolled {participants} participants")
        counter = 0
        for step in range(5):  # intake, one message a minute (the last: the yes to the proposed time)
            env.advance(timedelta(minutes=1))
            for person in people:
                counter += 1
                send_sms(env, person.phone, person.intake[step], f"SMsim{counter:08d}")
                webhook_calls += 1
        if progress:
            progress("intake done")
        rss_after_intake = resident_bytes()
        daily: list[tuple[int, float]] = []
        for day in range(days):
            day_cpu0, day_events0 = time.process_time(), webhook_calls * 2 + firings
            plan: list[tuple[datetime, SimulatedParticipant, str]] = []
            day_start = start + timedelta(days=day + 1)
            for person in people:
                reply = _weighted(rng)
                if reply is None:
                    continue
                local = day_start.astimezone(ZoneInfo(person.zone))
                # Replies land over the participant's day, after their morning-to-evening prompts.
                at = local.replace(hour=rng.randint(8, 22), minute=rng.randint(0, 59)).astimezone(UTC)
                plan.append((at, person, reply))
            for at, person, reply in sorted(plan, key=lambda item: (item[0], item[1].phone)):
                if at > env.clock.now():
                    firings += advance_to(at)
                counter += 1
                send_sms(env, person.phone, reply, f"SMsim{counter:08d}")
                webhook_calls += 1
            firings += advance_to(max(env.clock.now(), day_start + timedelta(days=1)))
            # a reply is two events (webhook call, worker turn); a firing one
            daily.append((webhook_calls * 2 + firings - day_events0, time.process_time() - day_cpu0))
            if progress:
                ms = 1000 * daily[-1][1] / daily[-1][0] if daily[-1][0] else 0.0
                progress(f"day {day + 1}/{days} done ({daily[-1][0]} events, CPU {ms:.1f} ms/event)")
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        rss_at_end = resident_bytes()
        worker_turns = webhook_calls + participants  # one turn per inbound message, plus each greeting
        records = env.messages()
        messages = len(records)
        return SimulationReport(
            participants=participants,
            days=days,
            events=webhook_calls + participants + worker_turns + firings,
            webhook_calls=webhook_calls,
            scheduler_firings=firings,
            worker_turns=worker_turns,
            messages_sent=messages,
            wall_seconds=wall,
            cpu_seconds=cpu,
            sms=SegmentStats.of(sorted(records, key=lambda r: (r.participant_id, r.sent_at))),
            daily=daily,
            rss_after_intake=rss_after_intake,
            rss_at_end=rss_at_end,
            # the window as applied: never beyond the prep time (adapters/eventbridge_timers.py)
            prompt_peaks=PromptPeaks.of(
                prompt_times,
                min(env.settings.daily_prompt_flexible_window_minutes, env.settings.scheduler_prep_time_minutes),
            ),
        )
    finally:
        env.close()
