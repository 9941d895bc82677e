"""Play the conversation corpus through the real pipeline and count what went wrong.

Each conversation runs on its own local stack (``promptpipe.local.environment``: moto, the real
Lambda handlers, the SQS FIFO worker, the scheduler pump): enrollment through the participants API,
every message through a signed Twilio webhook, daily prompts from EventBridge schedules fired by the
pump. The model is whatever ``LLM`` the caller gives (the competent-model stand-in for the gate, the
OpenAI adapter for ``make eval-llm``), wrapped in an ``ObservedLLM`` that records every request.

Per turn (one participant message): **stranded** = a tool the message needs was not offered;
**forced** = ``tool_choice="required"`` while the message needs no tool; **unanswered** = no
intake/feedback request was made for the message (expected when the turn says ``max_model_calls: 0``);
**model calls** above the turn's ``max_model_calls`` and **replies** other than the turn's ``replies``
are problems of the turn. Per conversation: **completed** = it ended as the corpus expects (sub-state,
profile fields, daily schedule, no hand-off; and when the corpus gives them, the done count, the
opt-out, and the daily prompts delivered in the days after the last message).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from promptpipe.models.llm import ChatRequest, ChatResponse
from promptpipe.ports import LLM
from scripts.corpus.model import ANY_SCHEDULE, Conversation, Turn
from scripts.corpus.standin import Cursor, fulfilled, purpose_of

DAY0 = date(2026, 3, 2)  # a Monday
AFTER_PROMPT = timedelta(minutes=6)
PROMPT_SEARCH_LIMIT = timedelta(days=3)
MODULE_PURPOSES = ("intake", "feedback")


@dataclass
class Observation:
    """One model call: what was offered and what came back."""

    turn_index: int | None
    purpose: str
    offered: tuple[str, ...]
    tool_choice: str | None
    response: ChatResponse | None
    request: ChatRequest


class ObservedLLM:
    """An ``LLM`` that records every request and response against the cursor's turn."""

    def __init__(self, inner: LLM, cursor: Cursor) -> None:
        self.inner, self.cursor = inner, cursor
        self.observations: list[Observation] = []
        self._lock = threading.Lock()

    def complete(self, request: ChatRequest) -> ChatResponse:
        position = self.cursor.position
        observation = Observation(
            turn_index=position.turn_index,
            purpose=purpose_of(request),
            offered=tuple(t.name for t in request.tools),
            tool_choice=request.tool_choice,
            response=None,
            request=request.model_copy(deep=True),
        )
        with self._lock:
            self.observations.append(observation)
        observation.response = self.inner.complete(request)
        return observation.response

    def take(self) -> list[Observation]:
        with self._lock:
            taken, self.observations = self.observations, []
        return taken


@dataclass
class TurnOutcome:
    index: int
    say: str
    needed: tuple[str, ...]
    offered: tuple[str, ...]
    tool_choice: str | None
    answered: bool
    observations: list[Observation] = field(default_factory=list)
    max_model_calls: int | None = None
    expected_replies: int | None = None
    replies: int = 0
    # What the checks of the coach's claims read (scripts/corpus/claims.py): the participant's local
    # time when the message was sent, the daily prompts delivered before it, the daily schedules after it.
    local_time: datetime | None = None
    delivered_before: int = 0
    schedules_after: tuple[str, ...] = ()

    @property
    def model_calls(self) -> int:
        return len(self.observations)

    @property
    def stranded(self) -> tuple[str, ...]:
        if not self.answered:
            return ()
        return tuple(sorted(tool for tool in set(self.needed) if not fulfilled(tool, self.offered)))

    @property
    def forced(self) -> bool:
        return self.answered and self.tool_choice == "required" and not self.needed

    @property
    def problems(self) -> list[str]:
        found = []
        # A message whose one expected action is the opt-out may be honoured before any model reads
        # it (the opt-out reader at the webhook): the end checks (opted out, prompts after) judge it.
        if not self.answered and self.max_model_calls != 0 and set(self.needed) != {"opt_out"}:
            found.append("no intake/feedback request for this message")
        if self.max_model_calls is not None and self.model_calls > self.max_model_calls:
            purposes = ", ".join(o.purpose for o in self.observations)
            found.append(f"{self.model_calls} model call(s) ({purposes}), at most {self.max_model_calls} expected")
        if self.expected_replies is not None and self.replies != self.expected_replies:
            found.append(f"{self.replies} message(s) sent in answer, {self.expected_replies} expected")
        if self.stranded:
            found.append(f"stranded: needed {', '.join(self.stranded)}; offered [{', '.join(self.offered)}]")
        if self.forced:
            found.append(f"forced: tool_choice=required with [{', '.join(self.offered)}], nothing needed")
        return found


@dataclass
class ConversationOutcome:
    conversation: Conversation
    turns: list[TurnOutcome]
    state: dict[str, Any]
    end_problems: list[str]
    observations: list[Observation]
    prompts_delivered: int = 0  # daily prompts the participant received
    participant: dict[str, Any] = field(default_factory=dict)  # the participants API's record, at the end

    @property
    def completed(self) -> bool:
        return not self.end_problems

    @property
    def passed(self) -> bool:
        """Ended as expected with no problem in any turn: what a split's pass rate counts."""
        return self.completed and not any(t.problems for t in self.turns)

    @property
    def stranded(self) -> int:
        return sum(1 for t in self.turns if t.stranded)

    @property
    def forced(self) -> int:
        return sum(1 for t in self.turns if t.forced)

    @property
    def unanswered(self) -> int:
        return sum(1 for t in self.turns if not t.answered and t.max_model_calls != 0)

    @property
    def turn_problems(self) -> int:
        """Turns with any problem (stranded, forced, unanswered, model calls, replies)."""
        return sum(1 for t in self.turns if t.problems)

    def failure_lines(self) -> list[str]:
        """Everything wrong with this conversation, one line each (empty when it passed)."""
        lines = [f"{self.conversation.id}: end: {problem}" for problem in self.end_problems]
        for turn in self.turns:
            lines += [f"{self.conversation.id} turn {turn.index + 1} {turn.say!r}: {p}" for p in turn.problems]
        return lines


def end_problems(
    conversation: Conversation,
    state: dict[str, Any],
    participant: dict[str, Any] | None = None,
    prompts_after: int | None = None,
) -> list[str]:
    """How the final state differs from ``conversation.expect``: ``state`` is the participants API's
    state view, ``participant`` its participant record, ``prompts_after`` the daily prompts delivered in
    the ``expect.after.days`` after the last message."""
    expect, problems = conversation.expect, []
    if state.get("sub_state") != expect.sub_state:
        problems.append(f"sub_state {state.get('sub_state')}, expected {expect.sub_state}")
    profile = state.get("profile") or {}
    missing = [name for name in expect.profile if not str(profile.get(name) or "").strip()]
    if missing:
        problems.append(f"profile lacks {', '.join(missing)}")
    times = sorted(_timing(s) for s in state.get("schedules") or [])
    wanted = [expect.schedule] if expect.schedule else []
    if expect.schedule != ANY_SCHEDULE and times != wanted:
        problems.append(f"daily schedule {times or 'none'}, expected {wanted or 'none'}")
    controller = state.get("controller") or {}
    if controller.get("needs_person"):
        problems.append(f"handed off to a person (hold: {controller.get('hold')})")
    if expect.done is not None and profile.get("success_count") != expect.done:
        problems.append(f"done count {profile.get('success_count')}, expected {expect.done}")
    if expect.opted_out is not None:
        opted_out = bool((participant or {}).get("opted_out"))
        if opted_out != expect.opted_out:
            status = (participant or {}).get("status")
            problems.append(f"opted out {opted_out} (status {status}), expected {expect.opted_out}")
    if expect.after is not None and prompts_after != expect.after.daily_prompts:
        problems.append(
            f"{prompts_after} daily prompt(s) in the {expect.after.days} day(s) after the last message, "
            f"expected {expect.after.daily_prompts}"
        )
    return problems


def _timing(schedule: dict[str, Any]) -> str:
    """``HH:MM`` of a fixed schedule, ``HH:MM-HH:MM`` of a random window."""
    if schedule.get("fixed_time"):
        return str(schedule["fixed_time"])
    return f"{schedule.get('random_start_time')}-{schedule.get('random_end_time')}"


def local_start(conversation: Conversation) -> datetime:
    hour, minute = (int(x) for x in conversation.start.split(":"))
    zone = ZoneInfo(conversation.timezone)
    return datetime(DAY0.year, DAY0.month, DAY0.day, hour, minute, tzinfo=zone).astimezone(UTC)


def _turn_outcome(index: int, turn: Turn, observations: list[Observation], replies: int = 0) -> TurnOutcome:
    module_calls = [o for o in observations if o.purpose in MODULE_PURPOSES]
    first = module_calls[0] if module_calls else None
    return TurnOutcome(
        index=index,
        say=turn.say,
        needed=tuple(sorted(turn.needed_tools)),
        offered=first.offered if first else (),
        tool_choice=first.tool_choice if first else None,
        answered=first is not None,
        observations=observations,
        max_model_calls=turn.max_model_calls,
        expected_replies=turn.replies,
        replies=replies,
    )


def _daily_prompts(env: Any, pid: str) -> int:
    return len([m for m in env.messages(pid) if m.kind == "daily_prompt"])


class Player:
    """Plays conversations one by one, each on a fresh local stack, with ``make_llm(cursor)``.
    ``cursor``: one to share with a model served elsewhere in the process (the tests of eval-llm)."""

    def __init__(
        self,
        make_llm: Callable[[Cursor], LLM],
        *,
        cursor: Cursor | None = None,
        settings_overrides: dict[str, Any] | None = None,
    ) -> None:
        self.cursor = cursor or Cursor()
        self.llm = ObservedLLM(make_llm(self.cursor), self.cursor)
        self.settings_overrides = settings_overrides or {}

    def play_all(self, conversations: Iterable[Conversation]) -> list[ConversationOutcome]:
        """Each conversation in turn, numbered from 0 (the number seeds its stack and its phone)."""
        return [self.play(conversation, number) for number, conversation in enumerate(conversations)]

    def play(self, conversation: Conversation, number: int = 0) -> ConversationOutcome:
        from promptpipe.local.demo import send_sms
        from promptpipe.local.environment import LocalEnvironment, local_settings

        settings = local_settings(**{"offline_coach": False, "openai_api_key": None, **self.settings_overrides})
        self.llm.take()
        env = LocalEnvironment(start=local_start(conversation), llm=self.llm, seed=number, settings=settings)
        try:
            self.cursor.move(conversation)
            phone = f"+1416555{number % 10000:04d}"
            enrolled = env.api(
                "POST",
                "/conversation/participants",
                json_body={"phone_number": phone, "name": conversation.name, "timezone": conversation.timezone},
            )
            if enrolled.status != 201:
                raise RuntimeError(f"{conversation.id}: enrollment failed: {enrolled.body}")
            pid = enrolled.body["result"]["id"]
            everything = self.llm.take()
            turns = []
            for index, turn in enumerate(conversation.turns):
                self._wait(env, pid, turn)
                everything += self.llm.take()
                self.cursor.move(conversation, index)
                delivered_before = _daily_prompts(env, pid)
                local_time = env.clock.now().astimezone(ZoneInfo(conversation.timezone))
                sent_before = len(env.messages(pid))
                status = send_sms(env, phone, turn.say, f"SM{number:04d}{index:04d}")
                replies = len(env.messages(pid)) - sent_before
                self.cursor.move(conversation)
                if status != 200:
                    raise RuntimeError(f"{conversation.id} turn {index + 1}: the webhook answered {status}")
                observed = self.llm.take()
                everything += observed
                mine = [o for o in observed if o.turn_index == index]
                after = env.api("GET", f"/conversation/participants/{pid}/state").body["result"]
                turns.append(
                    replace(
                        _turn_outcome(index, turn, mine, replies),
                        local_time=local_time,
                        delivered_before=delivered_before,
                        schedules_after=tuple(sorted(_timing(s) for s in after.get("schedules") or [])),
                    )
                )
            state = env.api("GET", f"/conversation/participants/{pid}/state").body["result"]
            participant = env.api("GET", f"/conversation/participants/{pid}").body["result"]
            prompts_after = None
            if conversation.expect.after is not None:
                before = _daily_prompts(env, pid)
                env.advance(timedelta(days=conversation.expect.after.days))
                everything += self.llm.take()
                prompts_after = _daily_prompts(env, pid) - before
            delivered = _daily_prompts(env, pid)
        finally:
            self.cursor.move(None)
            env.close()
        problems = end_problems(conversation, state, participant, prompts_after)
        return ConversationOutcome(
            conversation, turns, state, problems, everything, prompts_delivered=delivered, participant=participant
        )

    @staticmethod
    def _wait(env: Any, pid: str, turn: Turn) -> None:
        delta = turn.wait_delta()
        if delta is not None:
            env.advance(delta)
            return
        seen = len([m for m in env.messages(pid) if m.kind == "daily_prompt"])
        deadline = env.clock.now() + PROMPT_SEARCH_LIMIT
        while True:  # schedule by schedule, in time order, until this participant gets a prompt
            due = env.pump.next_due()
            if due is None or due > deadline:
                env.advance_to(deadline)  # no prompt is coming: the message is sent anyway, later
                return
            env.advance_to(due)
            if len([m for m in env.messages(pid) if m.kind == "daily_prompt"]) > seen:
                env.advance(AFTER_PROMPT)
                return


@dataclass
class CorpusFigures:
    conversations: int
    messages: int
    stranded: int
    forced: int
    unanswered: int
    completed: int
    passed: int = 0  # completed with no turn problem (stranded, forced, unanswered, model calls, replies)
    split: str = ""

    @classmethod
    def of(cls, outcomes: list[ConversationOutcome], split: str = "") -> CorpusFigures:
        return cls(
            conversations=len(outcomes),
            messages=sum(len(o.turns) for o in outcomes),
            stranded=sum(o.stranded for o in outcomes),
            forced=sum(o.forced for o in outcomes),
            unanswered=sum(o.unanswered for o in outcomes),
            completed=sum(1 for o in outcomes if o.completed),
            passed=sum(1 for o in outcomes if o.passed),
            split=split,
        )

    @property
    def pass_rate(self) -> float:
        return self.passed / self.conversations if self.conversations else 0.0

    def line(self) -> str:
        return (
            f"{self.split + ': ' if self.split else ''}"
            f"conversations {self.conversations}, participant messages {self.messages}, "
            f"stranded turns {self.stranded}, forced turns {self.forced}, unanswered turns {self.unanswered}, "
            f"completed {self.completed}/{self.conversations}, "
            f"passed {self.passed}/{self.conversations} ({self.pass_rate:.0%})"
        )


def print_report(figures: Any, problems: Sequence[str], *, as_json: bool) -> None:
    """A corpus report: the figures' line, then one indented line per problem; or both as JSON.
    ``figures``: a dataclass with a ``line()`` (``CorpusFigures``, the offline coach's parity figures)."""
    if as_json:
        print(json.dumps({"figures": asdict(figures), "problems": list(problems)}, indent=2, ensure_ascii=False))
        return
    print(figures.line())
    for line in problems:
        print(f"  {line}")


def split_report(split: str, outcomes: list[ConversationOutcome]) -> dict[str, Any]:
    """One split's figures, problems and per-conversation verdicts (``passed`` and its reasons)."""
    return {
        "figures": asdict(CorpusFigures.of(outcomes, split)),
        "problems": [line for outcome in outcomes for line in outcome.failure_lines()],
        "conversations": [
            {"id": o.conversation.id, "passed": o.passed, "reasons": o.failure_lines()} for o in outcomes
        ],
    }


def print_splits(played: dict[str, list[ConversationOutcome]], *, as_json: bool) -> None:
    """``make corpus``: per split its figures' line and problems; the held-out split also one verdict
    line per conversation (it is reported, not gated: each failure is named)."""
    reports = {split: split_report(split, outcomes) for split, outcomes in played.items()}
    if as_json:
        print(json.dumps(reports, indent=2, ensure_ascii=False))
        return
    for split, outcomes in played.items():
        print(CorpusFigures.of(outcomes, split).line())
        if split == "held_out":
            for o in outcomes:
                print(f"  {'PASS' if o.passed else 'FAIL'} {o.conversation.id}")
        for line in reports[split]["problems"]:
            print(f"  {line}")
