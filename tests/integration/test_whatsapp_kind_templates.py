"""WhatsApp templates per message kind (docs/architecture.md, "WhatsApp's 24-hour window").

Through the Meta messenger and the Graph API stand-in that enforces the window
(tests/integration/test_whatsapp_window.py): outside the window each business-initiated kind goes on
its own template, and a kind without one is skipped and recorded, never sent on the daily prompt's.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from promptpipe.adapters.messengers import WhatsAppCloudMessenger, WhatsAppTemplates
from promptpipe.adapters.whatsapp_templates import TemplateChoice
from promptpipe.models.messaging import OutboundKind, OutboundMessage
from promptpipe.settings import Settings
from tests.integration.test_whatsapp_window import PHONE, START, WindowEnforcingGraph

BASE = "/conversation/participants"
PROMPT_TEMPLATES = {"prompt": "daily_habit_prompt", "reengagement": "habit_checkin"}


def _whatsapp(env: Any, templates: WhatsAppTemplates) -> WindowEnforcingGraph:
    graph = WindowEnforcingGraph(env.clock)
    env.use_ports(
        messenger=WhatsAppCloudMessenger(
            "EAAG-token",
            "123456789012345",
            http_client=httpx.Client(transport=httpx.MockTransport(graph)),
            templates=templates,
            clock=env.clock,
            publish=False,
        )
    )
    return graph


def _enrol(env: Any) -> list[dict[str, Any]]:
    """Create a participant who never wrote (the greeting goes outside the window); their history."""
    created = env.api("POST", BASE, json_body={"phone_number": PHONE, "timezone": "America/Toronto", "name": "Ana"})
    assert created.status == 201
    env.drain()
    pid = created.body["result"]["id"]
    messages: list[dict[str, Any]] = env.api("GET", f"{BASE}/{pid}/history").body["result"]["messages"]
    return messages


def test_a_greeting_outside_the_window_goes_on_the_greeting_template(local_env_factory: Any) -> None:
    env = local_env_factory(start=START)
    graph = _whatsapp(env, WhatsAppTemplates(**PROMPT_TEMPLATES, greeting="habit_coach_welcome"))

    history = _enrol(env)

    [(_, body)] = graph.accepted
    assert body["type"] == "template"
    assert body["template"]["name"] == "habit_coach_welcome"
    [parameter] = body["template"]["components"][0]["parameters"]
    assert "Ana" in parameter["text"] and "\n" not in parameter["text"]
    [greeting] = [m for m in history if m["kind"] == "greeting"]
    assert greeting["delivery"]["status"] == "sent"


def test_a_greeting_without_its_template_is_skipped_and_recorded_not_sent_as_a_daily_prompt(
    local_env_factory: Any,
) -> None:
    env = local_env_factory(start=START)
    graph = _whatsapp(env, WhatsAppTemplates(**PROMPT_TEMPLATES))

    history = _enrol(env)

    # Nothing reached the Graph API: not on the daily prompt's template, not free-form
    assert graph.accepted == [] and graph.refused == []
    [greeting] = [m for m in history if m["kind"] == "greeting"]
    assert {k: greeting["delivery"][k] for k in ("status", "reason")} == {
        "status": "skipped",
        "reason": "outside_window_no_template",
    }


def _reminder(env: Any, graph: WindowEnforcingGraph) -> OutboundMessage:
    graph.last_inbound = env.clock.now() - timedelta(days=2)
    return OutboundMessage(
        participant_id="p1",
        to=PHONE,
        body="Just checking in: did you get to your walk today?",
        kind=OutboundKind.REMINDER,
        last_inbound_at=graph.last_inbound,
    )


def test_a_reminder_outside_the_window_goes_on_the_reminder_template(local_env_factory: Any) -> None:
    env = local_env_factory(start=START)
    graph = _whatsapp(env, WhatsAppTemplates(**PROMPT_TEMPLATES, reminder="habit_reminder"))

    result = env.app.messenger.send(_reminder(env, graph))

    [(_, body)] = graph.accepted
    assert (body["type"], body["template"]["name"]) == ("template", "habit_reminder")
    assert body["template"]["components"][0]["parameters"][0]["text"].startswith("Just checking in")
    assert (result.template, result.skipped) == ("habit_reminder", "")


def test_a_reminder_without_its_template_is_skipped_not_sent_on_another_kinds(local_env_factory: Any) -> None:
    env = local_env_factory(start=START)
    graph = _whatsapp(env, WhatsAppTemplates(**PROMPT_TEMPLATES, greeting="habit_coach_welcome"))

    result = env.app.messenger.send(_reminder(env, graph))

    assert graph.accepted == [] and graph.refused == []
    assert (result.skipped, result.template, result.provider_message_id) == ("outside_window_no_template", "", "")


def test_the_daily_prompt_keeps_its_template_and_the_reengagement_fallback() -> None:
    templates = WhatsAppTemplates(**PROMPT_TEMPLATES, greeting="habit_coach_welcome")
    prompt = OutboundMessage(participant_id="p1", to=PHONE, body="Walk after lunch.", kind=OutboundKind.DAILY_PROMPT)
    assert templates.for_message(prompt) == TemplateChoice("daily_habit_prompt", "Walk after lunch.")
    assert WhatsAppTemplates(reengagement="habit_checkin").for_message(prompt) == TemplateChoice("habit_checkin", None)
    # Only a greeting template: the daily prompt is skipped rather than sent on the greeting's
    assert WhatsAppTemplates(greeting="habit_coach_welcome").for_message(prompt) == "outside_window_no_template"


@pytest.mark.parametrize(
    ("env_name", "value"),
    [
        ("WHATSAPP_GREETING_TEMPLATE_NAME", "Habit Welcome"),
        ("WHATSAPP_REMINDER_TEMPLATE_NAME", "habit-reminder"),
        ("WHATSAPP_FEEDBACK_TEMPLATE_NAME", ""),
        ("TWILIO_GREETING_CONTENT_SID", "habit_coach_welcome"),
        ("TWILIO_REMINDER_CONTENT_SID", "HX123"),
        ("TWILIO_FEEDBACK_CONTENT_SID", "MG" + "0" * 32),
    ],
)
def test_a_bad_template_setting_fails_settings_loading_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch, env_name: str, value: str
) -> None:
    monkeypatch.setenv(env_name, value)
    with pytest.raises(ValidationError) as raised:
        Settings()
    assert env_name.lower() in str(raised.value)


def test_kind_templates_are_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WHATSAPP_GREETING_TEMPLATE_NAME", "habit_coach_welcome")
    monkeypatch.setenv("TWILIO_FEEDBACK_CONTENT_SID", "HX" + "a" * 32)
    settings = Settings()
    assert settings.whatsapp_greeting_template_name == "habit_coach_welcome"
    assert settings.twilio_feedback_content_sid == "HX" + "a" * 32
