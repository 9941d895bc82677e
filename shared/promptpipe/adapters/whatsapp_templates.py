"""Approved WhatsApp templates per message kind, for business-initiated messages outside the 24-hour
window (docs/architecture.md, "WhatsApp's 24-hour window").

Each kind goes on its own template or not at all: a greeting or a reminder on the daily-prompt
template would read "Your habit for today: Hi <name>!…". A kind without a template is skipped and
recorded (``SendResult.skipped = "outside_window_no_template"``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from promptpipe.errors import ConfigurationError
from promptpipe.models.messaging import OutboundKind, OutboundMessage

# Meta: a template body parameter may not hold a newline or tab, nor more than 4 consecutive spaces.
_PARAM_SPACES = re.compile(r"\s+")

# Why a message was not sent outside the window.
SKIPPED_INTENSITY_POLL = "outside_window"
SKIPPED_NO_TEMPLATE = "outside_window_no_template"


@dataclass(frozen=True)
class TemplateChoice:
    """The template to send (name or Content SID) and its one body parameter, or ``None`` for a
    template without parameters."""

    name: str
    parameter: str | None


@dataclass(frozen=True)
class WhatsAppTemplates:
    """Approved templates for business-initiated WhatsApp messages outside the 24-hour window.

    ``prompt``: the daily prompt's template, whose body has one text parameter ``{{1}}`` that
    carries our text (a Cloud API template name, or a Twilio Content SID). ``reengagement``: a fixed
    template without parameters, used for the daily prompt when ``prompt`` is not configured or the
    text cannot be a parameter. ``greeting``, ``reminder``, ``feedback``: one ``{{1}}`` parameter
    each, for the greeting, the reminder and the feedback follow-up. The Cloud API also needs the
    templates' ``language`` code. See docs/architecture.md for examples.
    """

    prompt: str | None = None
    reengagement: str | None = None
    language: str = "en_US"
    # Longest text passed as the parameter (Meta caps a template body at 1,024 characters).
    max_parameter_chars: int = 900
    # The prompt template has quick-reply buttons matching the question (Done / Next time).
    quick_replies: bool = False
    greeting: str | None = None
    reminder: str | None = None
    feedback: str | None = None
    staff: str | None = None  # a message from the study team (docs/console.md)

    @property
    def configured(self) -> bool:
        return any((self.prompt, self.reengagement, self.greeting, self.reminder, self.feedback, self.staff))

    def for_message(self, message: OutboundMessage) -> TemplateChoice | str:
        """The template for ``message`` outside the window, or why it is not sent (the skip reason)."""
        text = message.body or (message.question.text if message.question else "")
        if message.kind is OutboundKind.DAILY_PROMPT:
            return self._daily_prompt(text) or SKIPPED_NO_TEMPLATE
        if message.kind is OutboundKind.INTENSITY_POLL and not message.body.strip():
            # A second template a day would double the cost of a silent participant: the poll
            # waits for a day the participant wrote.
            return SKIPPED_INTENSITY_POLL
        own = {
            OutboundKind.GREETING: self.greeting,
            OutboundKind.REMINDER: self.reminder,
            OutboundKind.FEEDBACK_NUDGE: self.feedback,
            OutboundKind.STAFF: self.staff,
        }.get(message.kind)
        if not own:
            return SKIPPED_NO_TEMPLATE
        return TemplateChoice(own, self._parameter(text) or " ")

    def choose(self, text: str) -> tuple[str, str | None]:
        """(template, its parameter or ``None``) for a daily prompt's ``text``."""
        choice = self._daily_prompt(text)
        if choice is None:
            raise ConfigurationError("no WhatsApp template configured")
        return choice.name, choice.parameter

    def _daily_prompt(self, text: str) -> TemplateChoice | None:
        parameter = _PARAM_SPACES.sub(" ", text).strip()
        if self.prompt and parameter and len(parameter) <= self.max_parameter_chars:
            return TemplateChoice(self.prompt, parameter)
        if self.reengagement:
            return TemplateChoice(self.reengagement, None)
        if self.prompt:
            return TemplateChoice(self.prompt, self._parameter(text) or " ")
        return None

    def _parameter(self, text: str) -> str:
        parameter = _PARAM_SPACES.sub(" ", text).strip()
        if len(parameter) <= self.max_parameter_chars:
            return parameter
        return parameter[: self.max_parameter_chars - 1].rstrip() + "…"
