"""WhatsApp templates per message kind from CDK context: read, validated at synth, passed to the functions."""

from __future__ import annotations

from typing import Any

import pytest

from infra.constants import Config


class _Context:
    def __init__(self, values: dict[str, Any]) -> None:
        self._values = values

    def try_get_context(self, key: str) -> Any:
        return self._values.get(key)


def test_kind_templates_from_context() -> None:
    config = Config.from_context(
        _Context(
            {
                "whatsappGreetingTemplateName": "habit_coach_welcome",
                "whatsappReminderTemplateName": "habit_reminder",
                "whatsappFeedbackTemplateName": "habit_feedback_followup",
                "twilioGreetingContentSid": "HX" + "b" * 32,
            }
        )
    )
    assert (
        config.whatsapp_greeting_template_name,
        config.whatsapp_reminder_template_name,
        config.whatsapp_feedback_template_name,
        config.twilio_greeting_content_sid,
    ) == ("habit_coach_welcome", "habit_reminder", "habit_feedback_followup", "HX" + "b" * 32)


@pytest.mark.parametrize(
    "context",
    [
        {"whatsappGreetingTemplateName": "Habit Welcome"},
        {"whatsappReminderTemplateName": "habit-reminder"},
        {"whatsappTemplateName": "Daily Prompt"},
        {"twilioFeedbackContentSid": "HX123"},
        {"twilioReminderContentSid": "habit_reminder"},
    ],
)
def test_a_bad_kind_template_fails_the_synth_naming_the_context_key(context: dict[str, str]) -> None:
    [key] = context
    with pytest.raises(ValueError, match=key):
        Config.from_context(_Context(context))
