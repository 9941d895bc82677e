"""The hold alerts left pending, on the local stack (docs/safety.md, "Asking for a person"): a hold
committed whose event died before its alert went out and is never redelivered reaches the team
through the timers function's periodic sweep (``{"sweep": "pending_effects"}``), on moto's SNS and
DynamoDB, once; a second run publishes nothing."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from functions.timers import handler as timers
from promptpipe.adapters.dynamodb_items import needs_person_key
from promptpipe.adapters.team_alerts import SnsTeamAlerts
from promptpipe.local.lambda_runtime import FakeLambdaContext
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.models.messaging import InboundMessage
from promptpipe.usecases.events import process_turn
from tests.support import enroll_over_api
from tests.support.team_inbox import TeamInbox, team_inbox

SWEEP = {"sweep": "pending_effects"}


class QuerySpy:
    """The repository's DynamoDB client, recording each Query's request."""

    def __init__(self, client: Any) -> None:
        self.client, self.queries = client, list[dict[str, Any]]()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.client, name)
        if name != "query":
            return attribute

        def query(**request: Any) -> Any:
            self.queries.append(request)
            return attribute(**request)

        return query


def _team_inbox(env: Any) -> tuple[SnsTeamAlerts, TeamInbox]:
    inbox = team_inbox(env.settings)
    return SnsTeamAlerts(inbox.topic_arn, inbox.sns, "https://console.example.org"), inbox


def _held_and_killed(env: Any, phone: str, name: str, sid: str) -> str:
    """The participant asks for a person; the worker commits the hold, then dies before any effect,
    and the turn is never redelivered (its dead-letter queue expires unredriven)."""
    pid = enroll_over_api(env, phone, name=name)
    env.drain()
    message = InboundMessage(
        provider="twilio",
        provider_message_id=sid,
        from_phone=phone,
        body="can I talk to a real person please",
        received_at=env.clock.now(),
    )
    event = TurnEvent(
        kind=TurnKind.MESSAGE, participant_id=pid, event_id=sid, message=message, enqueued_at=env.clock.now()
    )
    process_turn(env.app, event)
    return pid


def _pending(env: Any, pid: str) -> bool:
    item = env.app.repo._client.get_item(TableName=env.settings.table_name, Key=needs_person_key(pid))["Item"]
    return bool(item["alert_pending"]["BOOL"])


def test_the_periodic_sweep_publishes_an_alert_left_pending_once(local_env_factory: Any) -> None:
    env = local_env_factory()
    alerts, inbox = _team_inbox(env)
    env.use_ports(alerts=alerts)
    rosa = _held_and_killed(env, "+12125550163", "Rosa", "SMrosa")
    env.clock.advance(timedelta(minutes=5))
    lee = _held_and_killed(env, "+12125550164", "Lee", "SMlee")
    assert _pending(env, rosa) and _pending(env, lee) and inbox.received() == []

    env.clock.advance(timedelta(minutes=12))  # Rosa's hold has waited 17 minutes, Lee's 12
    spy = QuerySpy(env.app.repo._client)
    env.app.repo._client = spy
    result = timers.handler(SWEEP, FakeLambdaContext(function_name="timers"))

    assert result["hold_alerts"] == 1
    [alert] = inbox.received()
    assert alert["Subject"] == f"Needs a person: participant {rosa} (asked for a person)"
    assert f"Their page: https://console.example.org/participants/{rosa}" in alert["Message"]
    assert f"Hold reference: {rosa}@" in alert["Message"]
    assert not _pending(env, rosa) and _pending(env, lee)
    # the markers read with one Query of the index (besides the pending-effects markers' own)
    [query] = [q for q in spy.queries if "NEEDS_PERSON" in json.dumps(q)]
    assert query["IndexName"] and "FilterExpression" in query
    env.app.repo._client = spy.client

    env.clock.advance(timedelta(minutes=5))
    assert timers.handler(SWEEP, FakeLambdaContext(function_name="timers"))["hold_alerts"] == 1
    [later] = inbox.received()
    assert later["Subject"] == f"Needs a person: participant {lee} (asked for a person)"

    assert timers.handler(SWEEP, FakeLambdaContext(function_name="timers"))["hold_alerts"] == 0  # nothing left
    assert inbox.received() == []
