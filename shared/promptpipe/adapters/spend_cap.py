"""The study's daily model spend cap at run time (docs/safety.md#budgets).

The stack keeps the state of the spend-cap alarm (CloudWatch, on the ModelCostUSD metric summed over
a day) in one SSM parameter: ``ALARM`` while the day's estimated spend is past the cap, ``OK`` (or
``INSUFFICIENT_DATA``) otherwise. The model-calling functions read it through Powertools Parameters'
cache, so a turn adds no call (and no write) per model call: at most one read per process every
``SPEND_CAP_CACHE_SECONDS``. While it says ``ALARM`` the offline coach answers instead of the model.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from promptpipe.models.llm import ChatRequest, ChatResponse
from promptpipe.ports import LLM

logger = logging.getLogger(__name__)

OVER_CAP = "ALARM"


class SpendCapSwitch:
    """Whether the study is past its daily spend cap, read from the parameter (cached)."""

    def __init__(self, parameter_name: str, provider: Callable[[], Any], *, max_age: int) -> None:
        self.parameter_name = parameter_name
        self.max_age = max_age
        # Made at the first model call, not at the cold start: a Powertools SSMProvider (or a
        # stand-in with ``get``).
        self._provider_factory = provider
        self._provider: Any = None
        self._last = False

    def over_cap(self) -> bool:
        """``True`` while the alarm is in ALARM. A parameter that cannot be read keeps the last
        state read (the model keeps answering if it never was): the cap must not stop the coach."""
        try:
            if self._provider is None:
                self._provider = self._provider_factory()
            value = self._provider.get(self.parameter_name, max_age=self.max_age)
        except Exception:  # any read failure: log, keep the last known state
            logger.warning("spend-cap state unreadable; keeping the last one", extra={"over_cap": self._last})
            return self._last
        over = str(value).strip().upper() == OVER_CAP
        if over != self._last:
            logger.warning("study spend cap %s", "reached: the offline coach answers" if over else "cleared")
        self._last = over
        return over


class SpendCappedLLM:
    """The model while the study is under its daily spend cap; the offline coach past it."""

    def __init__(self, model: LLM, switch: SpendCapSwitch, offline: Callable[[], LLM]) -> None:
        self._model = model
        self._switch = switch
        self._offline_factory = offline
        self._offline: LLM | None = None
        self._lock = threading.Lock()

    def complete(self, request: ChatRequest) -> ChatResponse:
        if not self._switch.over_cap():
            return self._model.complete(request)
        with self._lock:
            if self._offline is None:
                self._offline = self._offline_factory()
        return self._offline.complete(request)


def spend_cap_switch(parameter_name: str, client: Callable[[], Any], *, max_age: int) -> SpendCapSwitch:
    """The switch over an SSM client made by ``client()`` at the first read."""

    def provider() -> Any:
        from aws_lambda_powertools.utilities.parameters import SSMProvider

        return SSMProvider(boto3_client=client())

    return SpendCapSwitch(parameter_name, provider, max_age=max_age)
