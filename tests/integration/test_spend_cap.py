"""The study's daily spend cap at run time (docs/safety.md#budgets): the model-calling functions read
the alarm's state from its SSM parameter (moto) through the cached settings reader; past the cap the
offline coach answers instead of the model, and no read or write is added per model call."""

from __future__ import annotations

from typing import Any

import boto3

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.adapters.spend_cap import SpendCapSwitch
from tests.integration.test_worker import text_in
from tests.support import enroll_over_api as enroll

PARAMETER = "/promptpipe/spend-cap/state"


def set_state(value: str) -> None:
    boto3.client("ssm", region_name="us-east-1").put_parameter(
        Name=PARAMETER, Value=value, Type="String", Overwrite=True
    )


def test_past_the_cap_the_offline_coach_answers_and_the_model_is_not_called(local_env_factory) -> None:
    # Given a deployment with a spend cap whose alarm is OK, and a participant greeted by the model
    llm = ScriptedLLM([ScriptedLLM.text("Hello from the model!"), ScriptedLLM.text("The model again.")])
    env = local_env_factory(llm=llm, spend_cap_parameter=PARAMETER, spend_cap_cache_seconds=0)
    set_state("OK")
    pid = enroll(env)
    env.drain()
    assert [m.body for m in env.messages(pid)] == ["Hello from the model!"]

    # When the alarm goes to ALARM (the stack copies its state into the parameter) and they write
    set_state("ALARM")
    text_in(env, "hi, can we set up my walking habit?", "SM-capped")
    env.drain()

    # Then the model is not called; the offline coach answered
    assert llm.calls == 1
    replies = [m.body for m in env.messages(pid)]
    assert len(replies) == 2 and replies[-1] not in ("", "The model again.")

    # When the alarm clears, the model answers again
    set_state("OK")
    text_in(env, "thanks", "SM-cleared")
    env.drain()
    assert llm.calls == 2 and env.messages(pid)[-1].body == "The model again."


class CountingProvider:
    def __init__(self, values: list[Any]) -> None:
        self.values = values
        self.calls: list[tuple[str, int]] = []

    def get(self, name: str, *, max_age: int) -> Any:
        self.calls.append((name, max_age))
        value = self.values.pop(0)
        if isinstance(value, Exception):
            raise value
        return value


def test_the_switch_reads_through_the_cache_and_an_unreadable_state_keeps_the_last_one() -> None:
    provider = CountingProvider(["OK", "ALARM", RuntimeError("throttled"), "insufficient_data"])
    switch = SpendCapSwitch(PARAMETER, lambda: provider, max_age=60)
    assert [switch.over_cap() for _ in range(4)] == [False, True, True, False]
    assert provider.calls == [(PARAMETER, 60)] * 4  # every read names the cache's max age


def test_a_parameter_that_never_was_readable_leaves_the_model_answering() -> None:
    provider = CountingProvider([RuntimeError("ParameterNotFound")])
    assert SpendCapSwitch(PARAMETER, lambda: provider, max_age=60).over_cap() is False
