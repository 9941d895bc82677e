"""What the core reads of the configuration: a small frozen object built by the composition root.

``Settings`` holds every function's configuration (credentials, ARNs, table and queue names, model
client options); the use cases and the flow engine need only the behaviour switches below. Giving
them this object instead keeps the core from depending on values it must not use, and a test states
exactly the behaviour it configures (``CoreConfig(feedback_timers_enabled=True)``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from promptpipe.models.llm_routes import LLMEndpoint, LLMRoute


# The study name of a deployment that gave none (STUDY_NAME): the fixed texts name it.
DEFAULT_STUDY_NAME = "Habit coach"
# The safety reply's resources by the region of the participant's number (docs/safety.md); a region not
# listed gets "your local emergency number".
DEFAULT_SAFETY_RESOURCES: dict[str, dict[str, str]] = {
    "US": {
        "en": "call or text 988 (Suicide & Crisis Lifeline), or call 911 in an emergency",
        "es": (
            "llama o envía un mensaje de texto al 988 (Línea de Prevención del Suicidio y Crisis), "
            "o llama al 911 en una emergencia"
        ),
    },
    # Canada's 9-8-8 Suicide Crisis Helpline (call or text) since November 2023.
    "CA": {
        "en": "call or text 988 (Suicide Crisis Helpline), or call 911 in an emergency",
        "es": "llama o envía un mensaje de texto al 988 (Suicide Crisis Helpline), o llama al 911 en una emergencia",
    },
}


@dataclass(frozen=True, slots=True)
class CoreConfig:
    # --- participants and inbound text ----------------------------------------------------
    default_phone_region: str = "US"
    auto_enroll_new_users: bool = False
    max_inbound_message_chars: int = 4096
    # Days a withdrawn participant's items are kept (docs/retention.md); None: kept.
    retention_days_after_delete: int | None = None
    # Opt-out, opt-in and HELP (docs/compliance.md; Settings has what each means).
    opt_keywords: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    opt_out_texts: dict[str, str] = field(default_factory=dict)
    opt_in_texts: dict[str, str] = field(default_factory=dict)
    help_texts: dict[str, str] = field(default_factory=dict)
    study_name: str = DEFAULT_STUDY_NAME
    study_contact: str = ""
    keyword_replies_by: str = "project"
    # --- the conversation -----------------------------------------------------------------
    promptpipe_debug: bool = False
    chat_history_limit: int = -1
    max_inbound_tokens: int = 1024
    max_tool_calls_per_response: int = 10
    intent_classifier_enabled: bool = False
    flow_controller_enabled: bool = True
    intake_flow_id: str = "intake"
    # --- model routing (docs/pipeline.md) ---------------------------------------------------
    llm_routes: dict[str, LLMRoute] = field(default_factory=dict)
    llm_study_routes: dict[str, dict[str, LLMRoute]] = field(default_factory=dict)
    study_id: str = ""
    # Where a route may send a call: the default endpoint with these models, or a listed endpoint
    # (flow/routing.py, ``allowed``).
    genai_model: str = "gpt-4o-mini"
    genai_allowed_models: list[str] = field(default_factory=list)
    llm_endpoints: dict[str, LLMEndpoint] = field(default_factory=dict)
    # --- daily prompt and timers ----------------------------------------------------------
    scheduler_prep_time_minutes: int = 10
    daily_prompt_reminder_delay: timedelta = timedelta(hours=5)
    auto_feedback_after_prompt_enabled: bool = True
    feedback_timers_enabled: bool = False
    feedback_initial_timeout: timedelta = timedelta(minutes=15)
    feedback_followup_delay: timedelta = timedelta(hours=3)
    # The participant's channel is SMS (Twilio SMS): the daily prompt with its questions is held to one
    # segment and carries the day's intensity poll; coach replies are held to one segment unless asked
    # for more (docs/behaviour.md#sms).
    sms_channel: bool = False
    # --- quiet hours (docs/quiet-hours.md) ------------------------------------------------
    quiet_hours_enabled: bool = True
    quiet_hours_start: str = "21:00"
    quiet_hours_end: str = "08:00"
    quiet_hours_max_delay: timedelta = timedelta(hours=12)
    # --- budgets and consent (docs/safety.md) ----------------------------------------------
    budget_model_calls_per_hour: int = 20
    budget_model_calls_per_day: int = 100
    budget_input_chars_per_day: int = 20_000
    max_live_daily_schedules: int = 3
    consent_required: bool = False
    # --- the process ----------------------------------------------------------------------
    # The schedule changes of a carrier opt-out go to the worker through the inbound queue instead
    # of to the Scheduler (``usecases/carrier_opt_out.py``): set by the composition root for the
    # functions given the queue (``wiring.build_app``), the public webhook holding no Scheduler rights.
    schedule_changes_via_queue: bool = False
    # --- safety (docs/safety.md) ----------------------------------------------------------
    safety_screen_enabled: bool = True
    safety_resources: dict[str, dict[str, str]] = field(default_factory=lambda: dict(DEFAULT_SAFETY_RESOURCES))
    hold_alert_sweep_after: timedelta = timedelta(minutes=15)  # usecases/hold_alerts.py, the sweep
    # --- staff messages (docs/console.md) ---------------------------------------------------
    # The channel is WhatsApp (its 24-hour window applies), and a staff template is configured for outside it.
    whatsapp_channel: bool = False
    staff_template: bool = False

    @classmethod
    def from_settings(cls, settings: Any, **overrides: Any) -> CoreConfig:
        """The core's part of ``Settings`` (validated there), plus what is derived from it."""
        values = {f.name: getattr(settings, f.name) for f in fields(cls) if f.name not in _DERIVED}
        values["sms_channel"] = settings.messaging_provider == "twilio" and settings.twilio_channel == "sms"
        values["whatsapp_channel"] = settings.messaging_provider == "whatsapp_cloud" or (
            settings.messaging_provider == "twilio" and settings.twilio_channel == "whatsapp"
        )
        values["staff_template"] = bool(
            settings.whatsapp_staff_template_name
            if settings.messaging_provider == "whatsapp_cloud"
            else settings.twilio_staff_content_sid
        )
        return cls(**{**values, **overrides})


_DERIVED = frozenset({"sms_channel", "schedule_changes_via_queue", "whatsapp_channel", "staff_template"})
