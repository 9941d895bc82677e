"""Participant budgets through the real path: the signed Twilio webhook, the FIFO queue, the worker
handler and the scripted model, counting the model calls (docs/safety.md#budgets)."""

from __future__ import annotations

from datetime import timedelta

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.flow.budget import HELD_HEADER, REPLY_FOR_AN_HOUR
from tests.integration.test_worker import BASE, text_in
from tests.support import enroll_over_api as enroll


def transcript(env, pid: str) -> list[tuple[str, str]]:
    entries: list[tuple[str, str]] = []
    token = None
    while True:
        query = {"include_audit": "false", "limit": "100", **({"next_token": token} if token else {})}
        response = env.api("GET", f"{BASE}/{pid}/history", query=query)
        assert response.status == 200, response.body
        entries += [(e["direction"], e["content"]) for e in response.body["result"]["messages"]]
        token = response.body["result"].get("next_token")
        if not token:
            return entries


def test_sixty_messages_in_a_minute_make_at_most_twenty_model_calls_and_all_are_recorded(local_env_factory) -> None:
    # Given a greeted participant under the default budget (20 model calls an hour); the scripted
    # model never calls a tool, so without the flow controller's hand-off (a hold, which calls no
    # model at all) the budget is what stops the calls
    llm = ScriptedLLM([ScriptedLLM.text(f"Reply {n}") for n in range(100)])
    env = local_env_factory(llm=llm, flow_controller_enabled=False)
    pid = enroll(env)
    env.drain()
    calls_before = llm.calls

    # When one phone sends 60 messages within one minute
    for n in range(60):
        text_in(env, f"message number {n} 🙂", f"SM-burst-{n}")
        env.clock.advance(timedelta(seconds=1))
    env.drain()

    # Then at most 20 model calls were made for them, every one of the 60 is in the transcript,
    # and the participant got one budget reply, not one per message
    assert llm.calls - calls_before <= 20
    entries = transcript(env, pid)
    inbound = [content for direction, content in entries if direction == "inbound"]
    assert inbound == [f"message number {n} 🙂" for n in range(60)]
    sent = [m.body for m in env.messages(pid)]
    assert sent.count(REPLY_FOR_AN_HOUR) == 1
    assert len(sent) == 1 + 20 + 1  # greeting, twenty answers, one budget reply

    # When the hour has passed and they write again
    env.clock.advance(timedelta(hours=1))
    text_in(env, "are you back?", "SM-after")
    env.drain()

    # Then one model call answers the held messages together with the new one
    assert llm.calls - calls_before == 21
    last_request = llm.requests[-1].messages[-1].content
    assert HELD_HEADER in last_request
    assert "message number 59 🙂" in last_request and "are you back?" in last_request
    assert [m.body for m in env.messages(pid)][-1] == "Reply 21"
