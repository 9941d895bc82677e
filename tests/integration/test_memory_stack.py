"""The local stack's in-memory adapters against their AWS twins on moto (``local/memory_stack.py``):
the pump fires from ``InMemoryTimers`` what it fires from the Scheduler, the in-memory inbound
queue keeps SQS FIFO's rules, and a study rehearsal records the same decisions on both stacks."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest

from promptpipe.adapters.aws import INBOUND_MAX_RECEIVE_COUNT, aws_client, create_local_resources
from promptpipe.adapters.eventbridge_timers import EventBridgeTimers
from promptpipe.adapters.memory_queue import InMemoryTurnQueue
from promptpipe.adapters.memory_timers import InMemoryTimers
from promptpipe.adapters.sqs_queue import SqsTurnQueue
from promptpipe.local.environment import InboundLine, SqsInboundLine
from promptpipe.local.memory_stack import MemoryScheduleSource
from promptpipe.local.pump import SchedulerPump
from promptpipe.local.study_rehearsal import ReplyModel, run_study_rehearsal
from promptpipe.models.events import ScheduledPromptPayload, TimerKind, TimerPayload, TurnEvent, TurnKind
from promptpipe.models.messaging import InboundMessage
from promptpipe.ports import Timers, TurnQueue
from promptpipe.rules.clock import ManualClock
from promptpipe.settings import Settings
from promptpipe.usecases.studies import parse_study

GROUP = "promptpipe-test"
TIMERS_ARN = "arn:aws:lambda:us-east-1:123456789012:function:timers"
PROMPT_ARN = "arn:aws:lambda:us-east-1:123456789012:function:scheduled-prompt"
ROLE_ARN = "arn:aws:iam::123456789012:role/scheduler"
START = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
EXAMPLE = Path(__file__).resolve().parents[2] / "prompts" / "studies" / "example-mrt.json"


def _on_moto(clock: ManualClock, dispatch: Callable[[str, dict[str, Any]], None]) -> tuple[Timers, SchedulerPump]:
    client = boto3.client("scheduler", region_name="us-east-1")
    client.create_schedule_group(Name=GROUP)
    timers = EventBridgeTimers(
        client,
        group_name=GROUP,
        timers_function_arn=TIMERS_ARN,
        scheduled_prompt_function_arn=PROMPT_ARN,
        role_arn=ROLE_ARN,
        dlq_arn=None,
        daily_window_minutes=10,
    )
    return timers, SchedulerPump(client, group_name=GROUP, clock=clock, dispatch=dispatch, seed=5)


def _in_memory(clock: ManualClock, dispatch: Callable[[str, dict[str, Any]], None]) -> tuple[Timers, SchedulerPump]:
    timers = InMemoryTimers(
        timers_arn=TIMERS_ARN, scheduled_prompt_arn=PROMPT_ARN, role_arn=ROLE_ARN, daily_window_minutes=10
    )
    source = MemoryScheduleSource(timers, group_name=GROUP, arn_prefix="arn:aws:scheduler:us-east-1:123456789012")
    return timers, SchedulerPump(None, group_name=GROUP, clock=clock, dispatch=dispatch, seed=5, source=source)


def _fired(stack: Callable[..., tuple[Timers, SchedulerPump]]) -> list[tuple[Any, ...]]:
    """Two daily prompts, one-shots, a replacement, a cancel and a one-shot armed while firing,
    over three days; what fired (name, when, nominal time, target, the event)."""
    clock = ManualClock(START)
    calls: list[tuple[str, dict[str, Any], datetime]] = []
    timers: Timers

    def dispatch(target: str, event: dict[str, Any]) -> None:
        calls.append((target, event, clock.now()))
        if event.get("kind") == TimerKind.DAILY_PROMPT_REMINDER.value and event.get("participant_id") == "p1":
            follow = TimerPayload(
                kind=TimerKind.AUTO_FEEDBACK, participant_id="p1", timer_id="fb-p1", due_at=clock.now()
            )
            timers.schedule_timer(name="fb-p1", at=clock.now() + timedelta(minutes=30), payload=follow)

    timers, pump = stack(clock, dispatch)
    prompt = ScheduledPromptPayload(participant_id="p1", schedule_id="daily-p1", created_at=START)
    timers.schedule_daily_prompt(name="daily-p1", hour=8, minute=30, timezone="America/Toronto", payload=prompt)
    other = ScheduledPromptPayload(participant_id="p2", schedule_id="daily-p2", created_at=START)
    timers.schedule_daily_prompt(name="daily-p2", hour=21, minute=0, timezone="Asia/Tokyo", payload=other)
    for name, hours in (("rem-p1", 3), ("rem-p2", 5), ("gone-p2", 7)):
        payload = TimerPayload(kind=TimerKind.DAILY_PROMPT_REMINDER, participant_id=name[-2:], timer_id=name)
        timers.schedule_timer(name=name, at=START + timedelta(hours=hours), payload=payload)
    firings = pump.run_until(START + timedelta(hours=4))
    replaced = TimerPayload(
        kind=TimerKind.DAILY_PROMPT_REMINDER, participant_id="p2", timer_id="rem-p2", due_at=clock.now()
    )
    timers.schedule_timer(name="rem-p2", at=START + timedelta(hours=9), payload=replaced)
    timers.cancel("gone-p2")
    firings += pump.run_until(START + timedelta(days=3))
    assert sorted(timers.list_names("")) == ["daily-p1", "daily-p2"]  # the one-shots deleted once fired
    return [
        (f.name, f.at, f.scheduled_time, f.target_arn, f.execution_id, json.dumps(event, sort_keys=True), at)
        for f, (_, event, at) in zip(firings, calls, strict=True)
    ]


def test_the_pump_fires_from_memory_timers_what_it_fires_from_the_scheduler(aws: None) -> None:
    on_moto = _fired(_on_moto)
    assert [row[0] for row in on_moto].count("daily-p1") == 3 and "gone-p2" not in [row[0] for row in on_moto]
    assert (
        sorted({row[0] for row in on_moto}) == ["daily-p1", "daily-p2", "fb-p1", "rem-p1", "rem-p2"]
        and len(on_moto) == 8
    )
    assert _fired(_in_memory) == on_moto


def _turn(participant_id: str, event_id: str) -> TurnEvent:
    message = InboundMessage(
        provider="twilio", provider_message_id=event_id, from_phone="+15551230001", body=event_id, received_at=START
    )
    return TurnEvent(
        kind=TurnKind.MESSAGE, participant_id=participant_id, event_id=event_id, message=message, enqueued_at=START
    )


@pytest.fixture(params=["sqs", "memory"])
def line(request: pytest.FixtureRequest, aws: None) -> Iterator[tuple[TurnQueue, InboundLine]]:
    if request.param == "memory":
        queue = InMemoryTurnQueue(ManualClock(START).now, max_receives=INBOUND_MAX_RECEIVE_COUNT)
        yield queue, queue
        return
    settings = Settings(table_name="memory-stack-test", aws_region="us-east-1", aws_endpoint_url=None)
    resources = create_local_resources(settings)
    sqs = aws_client("sqs", settings)
    yield SqsTurnQueue(resources.inbound_queue_url, sqs), SqsInboundLine(sqs, resources.inbound_queue_url)


def _bodies(messages: list[dict[str, Any]]) -> list[str]:
    return [TurnEvent.model_validate_json(m["Body"]).event_id for m in messages]


def test_the_inbound_line_keeps_each_participants_order_and_delivers_an_event_once(
    line: tuple[TurnQueue, InboundLine],
) -> None:
    queue, inbound = line
    for participant, event in (("p1", "a"), ("p2", "x"), ("p1", "b"), ("p1", "a"), ("p1", "c")):
        queue.enqueue(_turn(participant, event))
    received: list[dict[str, Any]] = []
    while batch := inbound.receive(10):
        received += batch
        for message in batch:
            inbound.delete(message["ReceiptHandle"])
    by_group: dict[str, list[str]] = {}
    for message in received:
        by_group.setdefault(message["Attributes"]["MessageGroupId"], []).append(_bodies([message])[0])
    assert by_group == {"p1": ["a", "b", "c"], "p2": ["x"]}  # the repeated "a" went once


def test_a_released_turn_comes_back_first_in_its_line(line: tuple[TurnQueue, InboundLine]) -> None:
    queue, inbound = line
    queue.enqueue(_turn("p1", "a"))
    queue.enqueue(_turn("p1", "b"))
    first = inbound.receive(1)
    assert _bodies(first) == ["a"]
    inbound.release(first[0]["ReceiptHandle"])
    again = inbound.receive(1)
    assert _bodies(again) == ["a"] and again[0]["Attributes"]["ApproximateReceiveCount"] == "2"


def test_the_memory_queue_holds_a_line_in_flight_and_dead_letters_after_the_last_receive() -> None:
    clock = ManualClock(START)
    queue = InMemoryTurnQueue(clock.now, max_receives=2)
    for participant, event in (("p1", "a"), ("p1", "b"), ("p2", "x")):
        queue.enqueue(_turn(participant, event))
    first = queue.receive(1)
    assert _bodies(first) == ["a"]
    assert _bodies(queue.receive(10)) == ["x"]  # p1's line waits for "a"
    queue.release(first[0]["ReceiptHandle"])
    second = queue.receive(1)
    assert _bodies(second) == ["a"]
    queue.release(second[0]["ReceiptHandle"])
    assert _bodies(queue.receive(10)) == ["b"]  # "a" had its two receives: set aside
    assert _bodies(queue.dead_letters) == ["a"]
    assert queue.dead_letters[0]["Attributes"]["ApproximateReceiveCount"] == "2"
    assert queue.waiting() == 2  # "x" and "b", in flight
    # the dedup window is five minutes of the clock: the same event later is a new message
    queue.enqueue(_turn("p3", "y"))
    queue.enqueue(_turn("p3", "y"))
    clock.advance(timedelta(minutes=5))
    queue.enqueue(_turn("p3", "y"))
    assert _bodies(queue.receive(10)) == ["y", "y"]


@pytest.mark.slow
def test_a_rehearsal_records_the_same_decisions_on_both_stacks() -> None:
    study = parse_study(EXAMPLE.read_text())
    records = {}
    for stack in ("moto", "memory"):
        run = run_study_rehearsal(
            study, 3, 2, seed=11, replies=ReplyModel(effects={"framing_a": 0.2}), stop_rate=0.2, stack=stack
        )
        try:
            records[stack] = [r.model_dump(mode="json") for r in run.decisions]
        finally:
            run.close()
    assert records["memory"] == records["moto"]
    assert {r["available"] for r in records["moto"]} == {True, False}  # a STOP made some days unavailable
    assert any(r["outcome"] for r in records["moto"])
