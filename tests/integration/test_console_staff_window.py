"""A staff message on WhatsApp outside the 24-hour window, sent from the console (docs/console.md, "A
person in the conversation"): without a staff template the console says it cannot be sent, and
nothing reaches the outbox or the transcript; the coach is not held."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx

from promptpipe.console.app import ConsoleServer
from promptpipe.console.identity import Role, TokenBook, form_token
from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.local.api_transport import InProcessTransport
from tests.support import enroll_over_api


def test_outside_the_window_without_a_template_the_console_says_it_cannot_be_sent(
    local_env_factory: Any, tmp_path: Path
) -> None:
    env = local_env_factory()
    env.app.deps.config = replace(env.app.deps.config, whatsapp_channel=True, staff_template=False)
    pid = enroll_over_api(env, "+14165550142", name="Sam")
    env.advance(timedelta(hours=30))  # they never wrote: the window is closed
    sent_before = len(env.outbox.messages())
    book = TokenBook(tmp_path / "console-tokens.json")
    token = book.add("Ana", Role.COORDINATOR)
    console = ConsoleServer(CoordinatorClient(InProcessTransport(env)), port=0, tokens=book).start()
    try:
        answer = httpx.post(
            f"{console.url}/participants/{pid}/staff",
            data={"token": form_token(console.console.door.form_secret, token), "body": "Hi Sam, it's Ana."},
            headers={"cookie": f"{console.console.cookie_name}={token}", "origin": console.url},
            timeout=60,
        )
    finally:
        console.stop()
    assert answer.status_code == 400
    assert "This message cannot be sent: on WhatsApp the participant last wrote more than 24 hours ago" in answer.text
    assert len(env.outbox.messages()) == sent_before
    history = env.api("GET", f"/conversation/participants/{pid}/history").body["result"]["messages"]
    assert not [m for m in history if m["kind"] == "staff"]
    assert env.api("GET", f"/conversation/participants/{pid}/state").body["result"]["hold"] is None
