"""The composition root gives every application port (``AppContext`` has no optional one) and says
explicitly where a carrier opt-out's schedule changes go (``CoreConfig.schedule_changes_via_queue``)."""

from __future__ import annotations

from dataclasses import fields
from datetime import UTC, datetime

import pytest

from promptpipe.errors import ConfigurationError
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.settings import Settings
from promptpipe.usecases.context import AppContext
from promptpipe.wiring import NoQueue, build_app

QUEUE_URL = "https://sqs.us-east-1.amazonaws.com/000000000000/promptpipe-inbound.fifo"


def _settings(**overrides: str) -> Settings:
    return Settings(aws_region="us-east-1", openai_api_key=None, offline_coach=True, **overrides)


def test_every_port_of_the_application_context_is_required() -> None:
    optional = [f.name for f in fields(AppContext) if "None" in str(f.type)]
    assert optional == []


def test_a_function_given_the_queue_sends_opt_out_schedule_changes_through_it() -> None:
    app = build_app(_settings(inbound_queue_url=QUEUE_URL))  # clients only: no call is made
    assert app.config.schedule_changes_via_queue is True
    assert not isinstance(app.queue, NoQueue)


def test_a_function_without_the_queue_applies_them_and_its_queue_refuses_in_one_line() -> None:
    app = build_app(_settings())
    assert app.config.schedule_changes_via_queue is False
    event = TurnEvent(
        kind=TurnKind.GREETING, participant_id="p_1", event_id="greeting-p_1", enqueued_at=datetime.now(UTC)
    )
    with pytest.raises(ConfigurationError, match=r"no inbound queue configured \(INBOUND_QUEUE_URL\)"):
        app.queue.enqueue(event)
