"""``promptpipe simulate``: a seeded population of scripted participants living several days on the
local stack (offline coach, moto, pump), to measure throughput and cost per event.

Each participant has a time zone, a habit, a preferred time and an anchor; each day they answer the
daily prompt with "Done", "Next time" plus a reason, an intensity change, or not at all (a missed
day, which brings the reminder). Every message goes through a signed Twilio webhook and the worker;
every prompt and timer through the scheduler pump.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from promptpipe.local.demo import send_sms
from promptpipe.local.environment import LocalEnvironment, local_settings

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
        ]


def population(count: int, rng: random.Random) -> list[SimulatedParticipant]:
    people = []
    for index in range(count):
        habit, motivation = rng.choice(HABITS)
        intake = (habit, motivation, f"Around {rng.choice(TIMES)} works for me.", rng.choice(ANCHORS))
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


def run_simulation(
    participants: int,
    days: int,
    *,
    seed: int = 42,
    start: datetime = datetime(2026, 3, 2, 0, 0, tzinfo=UTC),
    progress: Callable[[str], None] | None = None,
) -> SimulationReport:
    rng = random.Random(seed)
    env = LocalEnvironment(
        start=start, seed=seed, settings=local_settings(offline_coach=True, openai_api_key=None), notified_pump=True
    )
    webhook_calls = firings = 0
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
        for step in range(4):  # intake, one message a minute
            env.advance(timedelta(minutes=1))
            for person in people:
                counter += 1
                send_sms(env, person.phone, person.intake[step], f"SMsim{counter:08d}")
                webhook_calls += 1
        if progress:
            progress("intake done")
        for day in range(days):
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
                    firings += len(env.advance_to(at))
                counter += 1
                send_sms(env, person.phone, reply, f"SMsim{counter:08d}")
                webhook_calls += 1
            firings += len(env.advance_to(max(env.clock.now(), day_start + timedelta(days=1))))
            if progress:
                progress(f"day {day + 1}/{days} done")
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        worker_turns = webhook_calls + participants  # one turn per inbound message, plus each greeting
        messages = len(env.messages())
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
        )
    finally:
        env.close()
