"""Participant budgets (docs/safety.md#budgets): the windows and their limits (models/budget.py),
and the turn's gate (flow/budget.py) with in-memory fakes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.flow.budget import HELD_HEADER, REPLY_FOR_A_DAY, REPLY_FOR_AN_HOUR, read_usage
from promptpipe.models.budget import BudgetLimits, BudgetUsage
from promptpipe.models.state import DataKey, StateData
from promptpipe.settings import Settings
from tests.support import memory_harness
from tests.support import turn as one_turn

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


# -- the windows --------------------------------------------------------------------------------
def test_the_hour_window_starts_at_the_first_call_and_reopens_an_hour_later() -> None:
    limits = BudgetLimits(model_calls_per_hour=2, model_calls_per_day=0, input_chars_per_day=0)
    usage = BudgetUsage().charged(T0, calls=1, chars=5).charged(T0 + timedelta(minutes=30), calls=1, chars=5)
    assert usage.over_until(limits, T0 + timedelta(minutes=59), 1) == T0 + timedelta(hours=1)
    assert usage.over_until(limits, T0 + timedelta(hours=1), 1) is None
    assert usage.charged(T0 + timedelta(hours=1), calls=1, chars=1).hour_calls == 1


def test_the_day_limits_count_calls_and_input_characters() -> None:
    calls = BudgetLimits(model_calls_per_hour=0, model_calls_per_day=3, input_chars_per_day=0)
    usage = BudgetUsage().charged(T0, calls=3, chars=10)
    assert usage.over_until(calls, T0 + timedelta(hours=5), 1) == T0 + timedelta(days=1)
    assert usage.over_until(calls, T0 + timedelta(days=1), 1) is None

    chars = BudgetLimits(model_calls_per_hour=0, model_calls_per_day=0, input_chars_per_day=100)
    used = BudgetUsage().charged(T0, calls=1, chars=90)
    assert used.over_until(chars, T0, 10) is None  # exactly at the limit is within it
    assert used.over_until(chars, T0, 11) == T0 + timedelta(days=1)


def test_zero_turns_every_limit_off() -> None:
    off = BudgetLimits(model_calls_per_hour=0, model_calls_per_day=0, input_chars_per_day=0)
    assert BudgetUsage().charged(T0, calls=10_000, chars=10**7).over_until(off, T0, 10**6) is None


def test_the_latest_of_two_exceeded_windows_is_when_the_budget_reopens() -> None:
    limits = BudgetLimits(model_calls_per_hour=1, model_calls_per_day=1, input_chars_per_day=0)
    assert BudgetUsage().charged(T0, calls=1, chars=1).over_until(limits, T0, 1) == T0 + timedelta(days=1)


# -- the turn's gate ----------------------------------------------------------------------------
def turn(h, participant, text):
    """A turn, then a second on the clock: the windows count turns by their time."""
    outcome = one_turn(h, participant, text)
    h.clock.advance(timedelta(seconds=1))
    return outcome


def usage(h, pid) -> BudgetUsage:
    return read_usage(StateData(dict(h.data(pid))))


def test_past_the_day_budget_one_reply_for_the_day_then_silence_then_the_held_messages_are_answered() -> None:
    # Given a participant allowed two model calls a day
    h = memory_harness(
        ScriptedLLM([ScriptedLLM.text(f"answer {n}") for n in range(3)]),
        settings=Settings(budget_model_calls_per_day=2, budget_model_calls_per_hour=0),
    )
    p = h.enroll()
    turn(h, p, "one")
    turn(h, p, "two")

    # When they write three more times the same day
    outcomes = [turn(h, p, text) for text in ("three", "four", "five")]

    # Then only the first of them gets the day's fixed reply, no model is called, and the texts are held
    assert h.scripted.calls == 2
    bodies = [m.body for m in h.outbox.messages()]
    assert bodies == ["answer 0", "answer 1", REPLY_FOR_A_DAY]
    assert [o.turn.audit for o in outcomes] == [{"skipped": "over budget"}] * 3
    assert usage(h, p.id).held == ["three", "four", "five"]
    assert ("BudgetExceeded", (("window", "day"),)) in [(m.name, m.dimensions) for m in outcomes[0].metrics]

    # When the day has passed and they write again
    h.clock.advance(timedelta(days=1))
    turn(h, p, "six")

    # Then one call answers everything held with the new message, and the held texts are gone
    assert h.scripted.calls == 3
    request = h.scripted.requests[-1].messages[-1].content
    assert request.startswith(HELD_HEADER) and request.index("three") < request.index("five") < request.index("six")
    assert usage(h, p.id).held == [] and usage(h, p.id).day_calls == 1
    assert h.outbox.messages()[-1].body == "answer 2"


def test_the_hour_reply_is_sent_again_in_the_next_window_only() -> None:
    h = memory_harness(
        ScriptedLLM([ScriptedLLM.text("a"), ScriptedLLM.text("b")]),
        settings=Settings(budget_model_calls_per_hour=1, budget_model_calls_per_day=0),
    )
    p = h.enroll()
    turn(h, p, "hi")
    turn(h, p, "again")
    turn(h, p, "and again")
    assert [m.body for m in h.outbox.messages()] == ["a", REPLY_FOR_AN_HOUR]
    h.clock.advance(timedelta(hours=1))
    turn(h, p, "back")  # answered with the held two: the new window has one call
    turn(h, p, "more")  # over again in the new window: a new reply
    assert [m.body for m in h.outbox.messages()] == ["a", REPLY_FOR_AN_HOUR, "b", REPLY_FOR_AN_HOUR]


def test_held_messages_keep_only_what_the_model_can_be_given() -> None:
    h = memory_harness(
        ScriptedLLM([ScriptedLLM.text("a")]),
        settings=Settings(budget_model_calls_per_hour=1, budget_model_calls_per_day=0, max_inbound_message_chars=30),
    )
    p = h.enroll()
    turn(h, p, "hi")
    for text in ("x" * 20, "y" * 20, "z" * 5):
        turn(h, p, text)
    assert usage(h, p.id).held == ["y" * 20, "z" * 5]


def test_an_unreadable_budget_counts_from_zero() -> None:
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("a")]))
    p = h.enroll()
    h.data(p.id)[DataKey.MODEL_BUDGET.value] = "{not json"
    turn(h, p, "hi")
    assert h.scripted.calls == 1
    assert json.loads(h.data(p.id)[DataKey.MODEL_BUDGET.value])["hour_calls"] == 1
