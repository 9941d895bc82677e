"""Corrupt stored state values are read as empty, with a warning (key only) and a reported metric."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from promptpipe.flow.budget import read_usage
from promptpipe.flow.study import progress
from promptpipe.models.budget import BudgetUsage
from promptpipe.models.state import DataKey, StateData, on_corrupt_value

SECRET = "my private barrier text"
DEEP = "[" * 5000 + "]" * 5000
COMMON = ["{not json", "[1, 2", "42", '"a string"', DEEP, "\udcff\udcfe"]
# Values of the right JSON kind but the wrong shape, per key (some carry text that must not be logged).
WRONG_SHAPE: dict[DataKey, list[str]] = {
    DataKey.CONVERSATION_HISTORY: ['{"messages": [{"role": 1}]}', f'{{"messages": "{SECRET}"}}', "[1]"],
    DataKey.USER_PROFILE: ["[1]", f'{{"intensity": "{SECRET}"}}', '{"success_count": "many"}'],
    DataKey.DAILY_PROMPT_PENDING: [f'{{"sent_at": "{SECRET}"}}', "[]"],
    DataKey.SCHEDULE_REGISTRY: [f'[{{"id": "{SECRET}"}}]', '{"a": 1}'],
    DataKey.ANSWERED_QUESTIONS: ["[1]", "null"],
    DataKey.PENDING_TRANSITION: [f'{{"target_state": "{SECRET}"}}', "{}"],
    DataKey.LAST_PROMPT_SENT_AT: [SECRET, "2026-13-45T99:00:00Z"],
    DataKey.PENDING_TIMERS: [f'{{"t1": {{"name": "{SECRET}"}}}}', '{"t1": 5}', "[]"],
    DataKey.CONTROLLER_STATE: [f'{{"flowId": "{SECRET}"}}', '{"flowId": "intake", "flowVersion": "one"}', "[]"],
    DataKey.MODEL_BUDGET: [f'{{"hour_calls": "{SECRET}"}}', '{"held": "x"}', "[]"],
    DataKey.STUDY: [f'{{"decided": "{SECRET}"}}', '{"closed": "maybe"}', "[]"],
}

# accessor, the key it reads, and what "empty" is for it
ACCESSORS: dict[DataKey, tuple[Callable[[StateData], Any], Callable[[Any], bool]]] = {
    DataKey.CONVERSATION_HISTORY: (lambda d: d.history(), lambda v: v == []),
    DataKey.USER_PROFILE: (
        lambda d: d.profile(),
        lambda v: v.success_count == 0 and not v.habit_domain and v.intensity.value == "normal",
    ),
    DataKey.DAILY_PROMPT_PENDING: (lambda d: d.daily_prompt_pending(), lambda v: v is None),
    DataKey.SCHEDULE_REGISTRY: (lambda d: d.schedules(), lambda v: v == []),
    DataKey.ANSWERED_QUESTIONS: (lambda d: d.answered_questions(), lambda v: v == {}),
    DataKey.PENDING_TRANSITION: (lambda d: d.pending_transition(), lambda v: v is None),
    DataKey.LAST_PROMPT_SENT_AT: (lambda d: d.get_time(DataKey.LAST_PROMPT_SENT_AT), lambda v: v is None),
    DataKey.PENDING_TIMERS: (lambda d: d.pending_timers(), lambda v: v == {}),
    DataKey.CONTROLLER_STATE: (lambda d: d.controller_state(), lambda v: v is None),  # the flow starts afresh
    # read outside StateData, through the same reader: counting starts again, the study afresh
    DataKey.MODEL_BUDGET: (read_usage, lambda v: v == BudgetUsage()),
    DataKey.STUDY: (progress, lambda v: not v.decided and v.check_in is None and not v.closed),
}
CASES = [(key, value) for key in ACCESSORS for value in [*COMMON, *WRONG_SHAPE[key]]]


@pytest.fixture
def reported() -> Iterator[list[str]]:
    keys: list[str] = []
    remove = on_corrupt_value(keys.append)
    yield keys
    remove()


@pytest.mark.parametrize(("key", "value"), CASES, ids=[f"{k.value}-{i}" for i, (k, _) in enumerate(CASES)])
def test_a_corrupt_value_reads_as_empty_with_a_warning_and_a_report(
    key: DataKey, value: str, reported: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    # Given a stored value that cannot be read
    read, is_empty = ACCESSORS[key]
    data = StateData({key.value: value})
    # When it is read / Then it is empty, never an exception
    with caplog.at_level(logging.DEBUG):
        result = read(data)
    assert is_empty(result)
    # And it was reported (metric) and logged once as a warning naming the key, not the value
    assert reported == [key.value]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and key.value in warnings[0].getMessage()
    logged = " ".join(r.getMessage() + repr(r.__dict__) for r in caplog.records)
    assert SECRET not in logged and "{not json" not in logged


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (DataKey.SCHEDULE_REGISTRY, "[]"),
        (DataKey.SCHEDULE_REGISTRY, "null"),  # an empty Go slice
        (DataKey.USER_PROFILE, "{}"),
        (DataKey.CONVERSATION_HISTORY, '{"messages": null}'),
        (DataKey.ANSWERED_QUESTIONS, "{}"),
        (DataKey.PENDING_TIMERS, "{}"),
    ],
)
def test_empty_values_of_the_right_shape_are_not_corrupt(key: DataKey, value: str, reported: list[str]) -> None:
    read, is_empty = ACCESSORS[key]
    assert is_empty(read(StateData({key.value: value})))
    assert reported == []


def test_each_corrupt_key_is_reported_once_per_state_read() -> None:
    keys: list[str] = []
    remove = on_corrupt_value(keys.append)
    try:
        data = StateData({DataKey.USER_PROFILE.value: "{bad", DataKey.SCHEDULE_REGISTRY.value: "{bad"})
        data.profile()
        data.profile()
        data.schedules()
    finally:
        remove()
    assert keys == [DataKey.USER_PROFILE.value, DataKey.SCHEDULE_REGISTRY.value]


@pytest.mark.logs_errors  # the listener's failure is logged at ERROR by design
def test_a_failing_listener_does_not_break_the_read() -> None:
    def broken(_key: str) -> None:
        raise RuntimeError("metrics backend down")

    remove = on_corrupt_value(broken)
    try:
        assert StateData({DataKey.USER_PROFILE.value: "{bad"}).profile().success_count == 0
    finally:
        remove()


def test_writing_after_a_corrupt_read_replaces_the_value() -> None:
    data = StateData({DataKey.USER_PROFILE.value: "{bad"})
    profile = data.profile()
    profile.success_count = 1
    data.set_profile(profile)
    assert StateData(dict(data.raw)).profile().success_count == 1


def test_the_state_view_and_the_import_see_which_values_were_unreadable() -> None:
    data = StateData({DataKey.USER_PROFILE.value: "{bad", DataKey.PENDING_TIMERS.value: "{}"})
    assert data.unreadable_keys == frozenset()
    data.profile()
    data.pending_timers()
    assert data.unreadable_keys == {DataKey.USER_PROFILE.value}
