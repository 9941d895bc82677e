"""WhatsApp's 24-hour window through the real handlers (moto, webhook, worker, scheduler pump).

The participant talks through the inbound webhook; the app sends through the WhatsApp Cloud
messenger whose HTTP transport is a stand-in for the Graph API that enforces the window as Meta
does: a free-form message more than 24 hours after the participant last wrote is refused with the
recorded 131047 error (tests/data/outbound_exchanges.json), a template is accepted.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx

from promptpipe.adapters.messengers import WhatsAppCloudMessenger, WhatsAppTemplates
from promptpipe.local.demo import send_sms
from promptpipe.rules.clock import Clock

EXCHANGES = json.loads((Path(__file__).parent.parent / "data" / "outbound_exchanges.json").read_text())
PHONE = "+14165550142"
TORONTO = ZoneInfo("America/Toronto")
START = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)  # 08:00 in Toronto


class WindowEnforcingGraph:
    """The Graph API's /messages as far as the window goes."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.last_inbound: datetime | None = None
        self.accepted: list[tuple[datetime, dict[str, Any]]] = []
        self.refused: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        now = self.clock.now()
        closed = self.last_inbound is None or now - self.last_inbound > timedelta(hours=24)
        if body["type"] != "template" and closed:
            self.refused.append(body)
            exchange = EXCHANGES["meta_outside_window"]
            return httpx.Response(exchange["status"], json=exchange["body"])
        self.accepted.append((now, body))
        return httpx.Response(200, json={"messages": [{"id": f"wamid.T{len(self.accepted)}"}]})


def test_a_participant_silent_for_two_days_still_gets_the_daily_prompt_as_a_template(local_env_factory: Any) -> None:
    env = local_env_factory(start=START)
    graph = WindowEnforcingGraph(env.clock)
    env.use_ports(
        messenger=WhatsAppCloudMessenger(
            "EAAG-token",
            "123456789012345",
            http_client=httpx.Client(transport=httpx.MockTransport(graph)),
            templates=WhatsAppTemplates(prompt="daily_habit_prompt", reengagement="habit_checkin"),
            clock=env.clock,
            publish=False,
        )
    )
    created = env.api(
        "POST", "/conversation/participants", json_body={"phone_number": PHONE, "timezone": "America/Toronto"}
    )
    assert created.status == 201
    # Intake, inside the window (the greeting, due before the participant ever wrote, is skipped:
    # no greeting template here; tests/integration/test_whatsapp_kind_templates.py)
    for n, text in enumerate(
        (
            "Hi! I'd like to exercise more.",
            "I want to feel more energetic during the day.",
            "Around 7:30am works for me.",
            "After my morning coffee.",
            "Yes, please.",  # the yes to the proposed daily time
        )
    ):
        env.advance(timedelta(minutes=1))
        graph.last_inbound = env.clock.now()
        assert send_sms(env, PHONE, text, f"SMwin{n:04d}") == 200
        env.drain()
    last_word = graph.last_inbound
    assert last_word is not None
    intake_sent = len(graph.accepted)

    # When three days pass in silence (prompts fire each morning at 07:20 Toronto)
    env.advance_to(START + timedelta(days=3, hours=1))

    # Then every daily prompt (07:20 Toronto) reached the participant: free-form inside the window,
    # the prompt template after it; the intensity poll waits for a day inside the window
    later = graph.accepted[intake_sent:]
    morning = [(at, body) for at, body in later if at.astimezone(TORONTO).strftime("%H:%M") == "07:20"]
    prompts = [(at, b) for at, b in morning if b["type"] == "template" or "Did you do it?" in json.dumps(b)]
    assert [at.date().isoformat() for at, _ in prompts] == ["2026-03-03", "2026-03-04", "2026-03-05"]
    for at, body in prompts:
        if at - last_word > timedelta(hours=24):
            assert body["type"] == "template"
            assert body["template"]["name"] == "daily_habit_prompt"
            [parameter] = body["template"]["components"][0]["parameters"]
            assert parameter["text"].strip() and "\n" not in parameter["text"]
        else:
            assert body["type"] == "interactive"
    assert [b["type"] for _, b in morning].count("template") == 2
    # And no free-form message was ever refused: each message carries when the participant last wrote
    # (the session adds it at emit), so the messenger picks the template up front (the refusal path,
    # switch to the template and retry once, is tested against recorded exchanges in test_messengers)
    assert graph.refused == []
