"""The core's frozen config, and settings that must be present in Lambda (docs/architecture.md)."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

from promptpipe.config import CoreConfig
from promptpipe.errors import ConfigurationError
from promptpipe.settings import MessagingProvider, Settings, require_in_lambda, set_settings

ARNS = {
    "timers_function_arn": "arn:aws:lambda:us-east-1:123456789012:function:timers",
    "scheduled_prompt_function_arn": "arn:aws:lambda:us-east-1:123456789012:function:prompt",
    "scheduler_role_arn": "arn:aws:iam::123456789012:role/scheduler",
}


def test_core_config_takes_the_core_settings_and_nothing_else() -> None:
    settings = Settings(
        feedback_timers_enabled=True,
        feedback_followup_delay="45m",
        default_phone_region="fr",
        chat_history_limit=7,
        twilio_auth_token="secret",
    )
    config = CoreConfig.from_settings(settings)
    assert config.feedback_timers_enabled is True
    assert config.feedback_followup_delay == timedelta(minutes=45)
    assert config.default_phone_region == "FR"
    assert config.chat_history_limit == 7
    assert not hasattr(config, "twilio_auth_token")  # credentials never reach the core
    assert not hasattr(config, "table_name")


@pytest.mark.parametrize(
    ("provider", "channel", "inline"),
    [
        (MessagingProvider.TWILIO, "sms", True),
        (MessagingProvider.TWILIO, "whatsapp", False),
        (MessagingProvider.LOCAL, "sms", False),
    ],
)
def test_the_poll_travels_inside_the_prompt_only_on_twilio_sms(
    provider: MessagingProvider, channel: str, inline: bool
) -> None:
    settings = Settings(messaging_provider=provider, twilio_channel=channel)
    assert CoreConfig.from_settings(settings).sms_channel is inline


def test_core_config_is_frozen() -> None:
    config = CoreConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.promptpipe_debug = True  # type: ignore[misc]


@pytest.fixture
def in_lambda(monkeypatch: pytest.MonkeyPatch):
    """A process that looks like a Lambda function's, with settings read afresh from its environment."""
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "promptpipe-webhook")
    for name in (*ARNS, "inbound_queue_url"):
        monkeypatch.delenv(name.upper(), raising=False)
    set_settings(None)
    yield monkeypatch
    set_settings(None)


def test_a_lambda_without_the_scheduler_arns_fails_its_cold_start(in_lambda: pytest.MonkeyPatch) -> None:
    in_lambda.setenv("SCHEDULER_ROLE_ARN", ARNS["scheduler_role_arn"])
    with pytest.raises(ConfigurationError, match=r"^missing in this function's environment: TIMERS_FUNCTION_ARN, "):
        require_in_lambda()


def test_a_lambda_without_the_settings_it_names_fails_its_cold_start(in_lambda: pytest.MonkeyPatch) -> None:
    for name, value in ARNS.items():
        in_lambda.setenv(name.upper(), value)
    with pytest.raises(ConfigurationError, match=r"INBOUND_QUEUE_URL$"):
        require_in_lambda(("inbound_queue_url",))
    set_settings(None)
    in_lambda.setenv("INBOUND_QUEUE_URL", "https://sqs.us-east-1.amazonaws.com/123456789012/inbound.fifo")
    require_in_lambda(("inbound_queue_url",))  # all there: no error


def test_outside_lambda_nothing_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)
    set_settings(Settings(table_name="nothing-else-set"))
    try:
        require_in_lambda(("inbound_queue_url",))
    finally:
        set_settings(None)


def test_the_handler_stack_checks_its_settings_at_import_time(in_lambda: pytest.MonkeyPatch) -> None:
    from functions.common import lambda_entry

    with pytest.raises(ConfigurationError, match="TIMERS_FUNCTION_ARN"):
        lambda_entry("webhook", requires=("inbound_queue_url",))


def test_a_fake_arn_is_refused() -> None:
    with pytest.raises(ValueError, match="timers_function_arn"):
        Settings(timers_function_arn="promptpipe-timers")


def test_schedules_cannot_be_built_without_their_targets() -> None:
    from promptpipe.adapters.eventbridge_timers import EventBridgeTimers

    with pytest.raises(ConfigurationError, match=r"^schedules need TIMERS_FUNCTION_ARN, SCHEDULER_ROLE_ARN$"):
        EventBridgeTimers.from_settings(
            Settings(scheduled_prompt_function_arn=ARNS["scheduled_prompt_function_arn"]), client=object()
        )


def test_every_core_setting_exists_in_settings() -> None:
    # from_settings copies by name: a renamed setting would otherwise keep the core's default silently.
    # derived from other settings, or set by the composition root
    derived = {"sms_channel", "schedule_changes_via_queue", "whatsapp_channel", "staff_template"}
    names = {f.name for f in dataclasses.fields(CoreConfig)} - derived
    assert names <= set(Settings.model_fields), names - set(Settings.model_fields)
    defaults = Settings()
    config = CoreConfig.from_settings(defaults)
    for name in names:  # and the defaults agree, so a CoreConfig() in a test is the deployed default
        assert getattr(CoreConfig(), name) == getattr(config, name), name


def test_a_handler_requiring_an_unknown_setting_is_refused_everywhere() -> None:
    from functions.common import lambda_entry

    with pytest.raises(ConfigurationError, match="webhook requires unknown settings: inbound_queue"):
        lambda_entry("webhook", requires=("inbound_queue",))


def test_the_opt_out_settings_are_read_as_json_and_reach_the_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPT_KEYWORDS", '{"opt_out": {"fr": ["arret", "stop"]}}')
    monkeypatch.setenv("HELP_TEXTS", '{"fr": "{study}: aide au {contact}."}')
    monkeypatch.setenv("KEYWORD_REPLIES_BY", "provider")
    monkeypatch.setenv("STUDY_NAME", "Walk Study")
    config = CoreConfig.from_settings(Settings())
    assert config.opt_keywords == {"opt_out": {"fr": ["arret", "stop"]}}
    assert config.help_texts == {"fr": "{study}: aide au {contact}."}
    assert (config.keyword_replies_by, config.study_name) == ("provider", "Walk Study")


@pytest.mark.parametrize(
    "values", [{"opt_keywords": {"unsubscribe": {"en": ["x"]}}}, {"keyword_replies_by": "carrier"}, {"study_name": ""}]
)
def test_invalid_opt_out_settings_are_refused(values: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Settings(**values)  # type: ignore[arg-type]
