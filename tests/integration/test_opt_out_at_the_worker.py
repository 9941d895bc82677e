"""People first, through the worker handler on the local stack (docs/safety.md, "Where it runs"): a
turn the webhook did not read (put back on the queue by a redrive, or read under other keyword
lists) reaches the worker; there too the opt-out reader runs first. A pure opt-out pauses them and
confirms once; an opt-out that also reads as a crisis is honoured as an opt-out and the study team's
topic (moto SNS, named by the settings as deployed) still gets the safety alert; a crisis that is no
opt-out holds them and alerts."""

from __future__ import annotations

from typing import Any

import pytest

from promptpipe.local.environment import LocalEnvironment
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.models.messaging import InboundMessage
from tests.support import enroll_over_api
from tests.support.team_inbox import team_inbox

TOPIC_ARN = "arn:aws:sns:us-east-1:123456789012:promptpipe-safety-alerts"


def _queued_turn(env: LocalEnvironment, pid: str, phone: str, text: str, sid: str) -> None:
    """The turn as the worker receives it, on the inbound FIFO queue, the webhook bypassed."""
    message = InboundMessage(
        provider="twilio", provider_message_id=sid, from_phone=phone, body=text, received_at=env.clock.now()
    )
    env.app.queue.enqueue(
        TurnEvent(kind=TurnKind.MESSAGE, participant_id=pid, event_id=sid, message=message, enqueued_at=env.clock.now())
    )


@pytest.mark.parametrize(
    ("text", "opted_out", "alerted"),
    [
        ("ya no quiero seguir en el estudio", True, False),
        ("I don't want to be in this study anymore", True, False),
        ("ya no quiero seguir", True, True),
        ("STOP. i want to end it all", True, True),
        ("no quiero seguir viviendo", False, True),
        ("i don't want to live anymore", False, True),
    ],
)
def test_the_worker_reads_an_opt_out_first_and_a_crisis_still_reaches_the_team(
    local_env_factory: Any, text: str, opted_out: bool, alerted: bool
) -> None:
    env = local_env_factory(safety_alert_topic_arn=TOPIC_ARN)
    inbox = team_inbox(env.settings)
    assert inbox.topic_arn == TOPIC_ARN  # the topic the settings name
    phone = "+12125550171"
    pid = enroll_over_api(env, phone)
    env.drain()
    before = len(env.messages(pid))

    _queued_turn(env, pid, phone, text, "SMworker1")
    env.drain()

    participant = env.api("GET", f"/conversation/participants/{pid}").body["result"]
    state = env.api("GET", f"/conversation/participants/{pid}/state").body["result"]
    sent = [m.body_text for m in env.messages(pid)[before:]]
    assert participant["opted_out"] is opted_out
    assert participant["status"] == ("paused" if opted_out else "active")
    assert len(sent) == 1
    assert ("START" in sent[0]) is opted_out  # the confirmation, or else the safety reply
    assert (state["hold"] is not None and state["hold"]["reason"] == "safety") is alerted
    subjects = [alert["Subject"] for alert in inbox.received()]
    if alerted:
        assert f"Safety flag: participant {pid} (suicide)" in subjects
    else:
        assert subjects == []
