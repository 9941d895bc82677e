"""``promptpipe simulate --study FILE``: the simulated population living a study on the local stack
(docs/studies.md#a-rehearsal).

The same stack as ``promptpipe simulate`` (moto, the scheduler pump, the offline coach, every
message through the signed webhook and the worker), with the study active: the daily prompt draws
each participant's arm, the end-of-day check-in goes to every available participant, and each
simulated participant answers it after a reply model of the arm drawn that day: "done" with the
arm's done rate (the base rate plus the arm's planted effect, a risk difference), another reply up
to the reply rate, else nothing. A few text STOP along the way (``stop_rate`` a day), so that some
days are not available. The daily sweep runs once a simulated day. ``--seed`` fixes everything:
the population, the replies and (through the study, the participant and the day) every draw.

``run_study_rehearsal`` returns the run with its application context still open, so the caller
reads the decisions (``StudyRun.decisions``), exports them, then closes it.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from promptpipe.errors import ValidationFailed
from promptpipe.local.demo import send_sms
from promptpipe.local.environment import LocalEnvironment, local_settings
from promptpipe.local.simulate import SimulatedParticipant, population, resident_bytes
from promptpipe.models.decision import DecisionRecord
from promptpipe.models.study import DecisionPointAt, StudyDefinition
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.studies import sweep_study, with_study

# The latest a check-in goes in this population (the latest preferred time, 9 pm, plus the late
# check-in's hour: flow/study.py LATE_CHECK_IN_DELAY).
LATEST_CHECK_IN = (22, 0)
DONE_REPLIES = ("Yes, I did it today!", "yes done", "Did it ✅", "yep, did it after dinner")
OTHER_REPLIES = ("No, not today.", "nope, too busy", "no, I forgot", "not yet")
# Fictional names, given at enrolment so that the export's checks can look for them in its files.
FIRST_NAMES = ("Amara", "Bartholomew", "Céline", "Dmitri", "Esperanza", "Florentyna", "Gustavo", "Hyacinth")
LAST_NAMES = ("Okonkwo", "Vasquez-Reyes", "Lindqvist", "Papadakis", "Nakamura", "Oyelaran", "Thistlewood")


@dataclass(frozen=True)
class ReplyModel:
    """How simulated participants answer the check-in: P(done) = ``done_rate`` + the arm's effect;
    P(any reply) = ``reply_rate`` (at least the done rate)."""

    done_rate: float = 0.35
    reply_rate: float = 0.75
    effects: dict[str, float] = field(default_factory=dict)

    def done_probability(self, arm: str | None) -> float:
        return min(1.0, max(0.0, self.done_rate + self.effects.get(arm or "", 0.0)))

    def answer(self, arm: str | None, rng: random.Random) -> str | None:
        roll = rng.random()
        done = self.done_probability(arm)
        if roll < done:
            return rng.choice(DONE_REPLIES)
        if roll < max(done, self.reply_rate):
            return rng.choice(OTHER_REPLIES)
        return None


def parse_effects(text: str) -> dict[str, float]:
    """``framing_a=0.1,framing_b=0.05`` -> {"framing_a": 0.1, "framing_b": 0.05}."""
    effects: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        try:
            effects[name.strip()] = float(value)
        except ValueError:
            raise ValidationFailed(f"an effect is ARM=NUMBER, not {part!r}", field="effects") from None
        if not sep:
            raise ValidationFailed(f"an effect is ARM=NUMBER, not {part!r}", field="effects")
    return effects


@dataclass
class StudyRun:
    """A finished rehearsal, its stack still open (``close`` it)."""

    env: LocalEnvironment
    study: StudyDefinition
    participants: int
    days: int
    wall_seconds: float
    cpu_seconds: float
    peak_rss: int | None
    stops: int = 0
    phones: tuple[str, ...] = ()  # the enrolled participants' numbers and names
    names: tuple[str, ...] = ()

    @property
    def app(self) -> AppContext:
        return self.env.app

    @property
    def decisions(self) -> list[DecisionRecord]:
        return self.env.app.decisions.all(self.study.id)

    def close(self) -> None:
        self.env.close()

    def lines(self) -> list[str]:
        rows = self.decisions
        available = [r for r in rows if r.available]
        arms = Counter(r.arm for r in available)
        point = self.study.decision_points[0] if self.study.decision_points else None
        shares = ", ".join(
            f"{arm.name} {arms[arm.name] / (len(available) or 1):.3f} (p={arm.probability})"
            for arm in (point.arms if point else ())
        )
        outcomes = Counter(r.outcome.value if r.outcome else "open" for r in available)
        return [
            f"study {self.study.id}: participants={self.participants} days={self.days}; "
            f"wall {self.wall_seconds:.1f} s, CPU {self.cpu_seconds:.1f} s"
            + (f", peak resident memory {self.peak_rss / 2**20:.0f} MB" if self.peak_rss else ""),
            f"decisions {len(rows)}; available {len(available)} ({len(available) / (len(rows) or 1):.3f}); "
            f"participants who texted STOP {self.stops}",
            f"arm shares among available decisions: {shares}",
            "proximal outcomes of available decisions: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())),
        ]


def run_study_rehearsal(
    study: StudyDefinition,
    participants: int,
    days: int,
    *,
    seed: int = 42,
    replies: ReplyModel | None = None,
    stop_rate: float = 0.005,
    start: datetime = datetime(2026, 3, 2, 0, 0, tzinfo=UTC),
    progress: Callable[[str], None] | None = None,
    stack: Literal["memory", "moto"] = "memory",
) -> StudyRun:
    """Enrol ``participants`` (intake on day 0, the day of enrolment: study day 1), then live
    ``days`` more days; the sweep runs at the end of each day. ``stack``: the in-memory adapters
    (the default: docs/studies.md, "Its cost") or moto's emulated AWS."""
    if participants < 1 or days < 1:
        raise ValidationFailed("a rehearsal needs at least 1 participant and 1 day", field="participants")
    env = LocalEnvironment(
        start=start,
        seed=seed,
        notified_pump=True,
        settings=local_settings(offline_coach=True, openai_api_key=None, daily_prompt_flexible_window_minutes=0),
        stack=stack,
        keep_timeline=False,
    )
    with_study(env.app, study)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    try:
        life = _Life(env, study, replies or ReplyModel(), stop_rate, random.Random(seed), seed)
        life.enrol(participants)
        if progress:
            progress(f"enrolled {participants} participants, intake done")
        for day in range(days + 1):  # day 0: the enrolment day is study day 1
            life.live(start + timedelta(days=day))
            if progress:
                progress(f"day {day + 1}/{days + 1} done")
        return StudyRun(
            env=env,
            study=study,
            participants=participants,
            days=days,
            wall_seconds=time.perf_counter() - wall0,
            cpu_seconds=time.process_time() - cpu0,
            peak_rss=life.peak,
            stops=len(life.stopped),
            phones=tuple(person.phone for person in life.people),
            names=tuple(life.names),
        )
    except BaseException:
        env.close()
        raise


@dataclass
class _Life:
    env: LocalEnvironment
    study: StudyDefinition
    replies: ReplyModel
    stop_rate: float
    rng: random.Random
    seed: int = 0
    people: list[SimulatedParticipant] = field(default_factory=list)
    stopped: set[str] = field(default_factory=set)
    counter: int = 0
    peak: int | None = None
    names: list[str] = field(default_factory=list)

    def text(self, phone: str, body: str) -> None:
        self.counter += 1
        send_sms(self.env, phone, body, f"SMstudy{self.counter:08d}")

    def enrol(self, participants: int) -> None:
        self.people = population(participants, self.rng)
        naming = random.Random(f"{self.seed}|names")  # its own stream: the replies' stay as they were
        for person in self.people:
            name = f"{naming.choice(FIRST_NAMES)} {naming.choice(LAST_NAMES)}"
            self.names.append(name)
            response = self.env.api(
                "POST",
                "/conversation/participants",
                json_body={"phone_number": person.phone, "timezone": person.zone, "name": name},
            )
            person.pid = response.body["result"]["id"]
        for step in range(5):  # the intake, its last message the yes to the proposed time
            self.env.advance(timedelta(minutes=1))
            for person in self.people:
                self.text(person.phone, person.intake[step])

    def live(self, day_start: datetime) -> None:
        """One UTC day: the pump fires the prompts and check-ins; each participant answers after
        the check-in (a 9 pm prompt's check-in goes at 10 pm); a few text STOP at noon."""
        hour, minute = (int(x) for x in self.study.proximal_outcome.check_in_at.split(":"))
        plan: list[tuple[datetime, int, str]] = []
        for index, person in enumerate(self.people):
            if person.pid in self.stopped:
                continue
            local_day = day_start.astimezone(ZoneInfo(person.zone))
            check_in = local_day.replace(hour=hour, minute=minute, second=0, microsecond=0)
            check_in = max(check_in, local_day.replace(hour=LATEST_CHECK_IN[0], minute=LATEST_CHECK_IN[1]))
            plan.append(((check_in + timedelta(minutes=self.rng.randint(5, 90))).astimezone(UTC), index, "reply"))
            if day_start > self.env.clock.now() - timedelta(days=1) and self.rng.random() < self.stop_rate:
                plan.append((local_day.replace(hour=12).astimezone(UTC), index, "stop"))
        for at, index, what in sorted(plan):
            person = self.people[index]
            if at > self.env.clock.now():
                self.env.advance_to(at)
            if what == "stop":
                self.text(person.phone, "STOP")
                self.stopped.add(person.pid)
                continue
            answer = self.answer(person.pid, at)
            if answer is not None and person.pid not in self.stopped:
                self.text(person.phone, answer)
        self.env.advance_to(max(self.env.clock.now(), day_start + timedelta(days=1)))
        sweep_study(self.env.app)
        self.peak = max(self.peak or 0, resident_bytes() or 0) or None

    def answer(self, participant_id: str, at: datetime) -> str | None:
        """The answer to the day's check-in: after the arm drawn that day, when they were available
        and the check-in went out; nothing otherwise (the roll is drawn either way, so one
        participant's day never shifts another's replies)."""
        roll = random.Random(self.rng.random())
        log = self.env.app.decisions
        point = next((p for p in self.study.decision_points if p.at is DecisionPointAt.DAILY_PROMPT), None)
        if point is None:
            return None
        found = [r for r in log.for_participant(participant_id) if r.decision_point == point.name]
        found = [r for r in found if r.decided_at <= at]
        record = found[-1] if found else None
        window = timedelta(hours=self.study.proximal_outcome.window_hours)
        if record is None or not record.available or at - record.decided_at > window:
            return None
        return self.replies.answer(record.arm, roll)
