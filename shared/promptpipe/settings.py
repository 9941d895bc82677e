"""The one typed settings object. Nothing else in the code base reads ``os.environ``.

Every field is read from the environment variable of the same name in upper case (case does not
matter); values given to the constructor win over the environment. A plain pydantic model reads the
environment itself: ``pydantic-settings`` cost every function about 0.6x an ``import boto3`` at
cold start for the same scalar fields (docs/benchmarks.md). Booleans accept
true/1/yes/on and false/0/no/off. Durations accept Go-style strings (``15m``, ``3h``, ``1h30m``,
``90s``) or a number of seconds.
"""

# Annotations as objects, not strings: every function defines ``Settings`` at cold start, and pydantic
# compiles and evaluates each string annotation when a class is defined (as models/api.py).
import contextlib
import json
import os
import re
import typing
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import BeforeValidator, ConfigDict, Field, field_validator, model_validator

from promptpipe.config import DEFAULT_SAFETY_RESOURCES
from promptpipe.errors import ConfigurationError
from promptpipe.lazy_model import LazyModel
from promptpipe.models.llm_routes import LLMEndpoint, LLMRoute, endpoint_url
from promptpipe.rules.opt_words import OptKeywordKind
from promptpipe.rules.phone import is_known_region

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def _default_prompts_dir() -> Path:
    """``prompts/`` at the repository root, or beside the package inside a Lambda bundle."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent.parent / "prompts", here.parent / "prompts"):
        if candidate.is_dir():
            return candidate
    return here.parent.parent / "prompts"


PROMPTS_DIR = _default_prompts_dir()


def parse_duration(value: Any) -> timedelta:
    """``"15m"`` -> 15 minutes; ``"-1h"`` -> minus one hour; ``"0"`` or ``3600`` -> seconds."""
    if isinstance(value, timedelta):
        return value
    if isinstance(value, int | float):
        return timedelta(seconds=float(value))
    text = str(value).strip().lower()
    if not text:
        raise ValueError("empty duration")
    sign = -1.0 if text.startswith("-") else 1.0
    body = text.lstrip("+-")
    try:
        return timedelta(seconds=sign * float(body))
    except ValueError:
        pass
    parts = _DURATION_PART.findall(body)
    if not parts or "".join(n + u for n, u in parts) != body:
        raise ValueError(f"invalid duration {value!r}: use forms like 15m, 3h, 1h30m, 90s")
    return timedelta(seconds=sign * sum(float(n) * _UNIT_SECONDS[u] for n, u in parts))


Duration = Annotated[timedelta, BeforeValidator(parse_duration)]


META_TEMPLATE_NAME = r"^[a-z0-9_]{1,512}$"


class MessagingProvider(StrEnum):
    TWILIO = "twilio"
    WHATSAPP_CLOUD = "whatsapp_cloud"
    LOCAL = "local"


class Settings(LazyModel):
    """Configuration of every function and of local runs (see README, "Configuration")."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _from_environment(cls, data: Any) -> Any:
        """Fill every field the caller did not give from its environment variable (any case)."""
        if not isinstance(data, dict):
            return data
        environment = {key.lower(): value for key, value in os.environ.items()}
        given = {key.lower() for key in data}
        from_env: dict[str, Any] = {
            name: environment[name] for name in cls.model_fields if name not in given and name in environment
        }
        for name in from_env.keys() & _JSON_FIELDS:  # mappings are JSON in the environment
            with contextlib.suppress(ValueError):
                from_env[name] = json.loads(from_env[name])
        return {**from_env, **data}

    # --- storage -------------------------------------------------------------------------
    table_name: str = Field("promptpipe", min_length=3, max_length=255)
    participants_index_name: str = Field("gsi1", min_length=1)

    # --- language model --------------------------------------------------------------------
    genai_model: str = Field("gpt-4o-mini", min_length=1)
    genai_temperature: float = Field(0.1, ge=0.0, le=2.0)
    genai_max_tokens: int = Field(1000, ge=16, le=32000)
    genai_timeout_seconds: float = Field(30.0, gt=0, le=600)
    genai_max_retries: int = Field(2, ge=0, le=10)
    openai_api_key: str | None = None
    openai_base_url: str | None = None
    openai_secret_name: str | None = None
    llm_reasoning_capture: bool = False
    offline_coach: bool = False
    # Model routing (JSON): {"classifier": {"model": "gpt-4o-mini", "max_tokens": 60}, ...} per purpose
    # (intake, feedback, generator, classifier, synthesis), and per study {"study-a": {"intake": {...}}}.
    llm_routes: dict[str, LLMRoute] = Field(default_factory=dict)
    llm_study_routes: dict[str, dict[str, LLMRoute]] = Field(default_factory=dict)
    study_id: str = ""
    # Where a model route may send a call (docs/architecture.md#model-endpoints): the default endpoint
    # (OPENAI_BASE_URL, its key OPENAI_API_KEY / OPENAI_SECRET_NAME) with GENAI_MODEL, these models
    # and those LLM_ROUTES name; and each endpoint of LLM_ENDPOINTS (JSON {"name": {"base_url",
    # "models", "secret_name"}}) with its own models and key. A participant's route naming anything
    # else is refused (400); the model key goes nowhere else.
    genai_allowed_models: list[str] = Field(default_factory=list)
    llm_endpoints: dict[str, LLMEndpoint] = Field(default_factory=dict)

    # --- turn pipeline ---------------------------------------------------------------------
    max_inbound_tokens: int = Field(1024, ge=16, le=16384)  # estimated as characters/4
    max_tool_calls_per_response: int = Field(10, ge=1, le=50)
    intent_classifier_enabled: bool = False
    prompt_store: str = Field("file", pattern=r"^(file|ssm)$")
    prompt_store_prefix: str = Field("/promptpipe/prompts", pattern=r"^/[\w./-]+$")
    prompt_cache_seconds: int = Field(300, ge=0, le=86400)

    # --- conversation ----------------------------------------------------------------------
    chat_history_limit: int = Field(-1, ge=-1)
    scheduler_prep_time_minutes: int = Field(10, ge=0, le=720)
    promptpipe_debug: bool = False
    default_phone_region: str = Field("US", min_length=2, max_length=2)
    auto_enroll_new_users: bool = False
    intake_bot_prompt_file: Path = PROMPTS_DIR / "intake_bot_system.txt"
    prompt_generator_prompt_file: Path = PROMPTS_DIR / "prompt_generator_system.txt"
    feedback_tracker_prompt_file: Path = PROMPTS_DIR / "feedback_tracker_system.txt"
    conversation_fallback_prompt_file: Path = PROMPTS_DIR / "conversation_system_3bot.txt"
    # --- flow controller (docs/controller.md) ----------------------------------------------
    flows_dir: Path = PROMPTS_DIR / "flows"
    flow_cache_seconds: float = Field(60.0, ge=0, le=3600)
    intake_flow_id: str = Field("intake", pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")
    flow_controller_enabled: bool = True

    # --- timers ----------------------------------------------------------------------------
    daily_prompt_reminder_delay: Duration = timedelta(hours=5)
    auto_feedback_after_prompt_enabled: bool = True
    feedback_timers_enabled: bool = False
    feedback_initial_timeout: Duration = timedelta(minutes=15)
    feedback_followup_delay: Duration = timedelta(hours=3)
    schedule_group_name: str = Field("promptpipe", pattern=r"^[0-9a-zA-Z\-_.]{1,64}$")
    # Production-only: the stack sets them, the local environment supplies its own; required in Lambda.
    timers_function_arn: str | None = Field(None, pattern=r"^arn:aws[\w-]*:lambda:")
    scheduled_prompt_function_arn: str | None = Field(None, pattern=r"^arn:aws[\w-]*:lambda:")
    scheduler_role_arn: str | None = Field(None, pattern=r"^arn:aws[\w-]*:iam::")
    scheduler_dlq_arn: str | None = None
    scheduler_max_retry_attempts: int = Field(3, ge=0, le=185)
    scheduler_max_event_age_seconds: int = Field(3600, ge=60, le=86400)
    # Daily-prompt schedules fire anywhere in this many minutes after their time (EventBridge
    # Scheduler's flexible time window), capped at the prep time so a prompt still arrives by the
    # preferred time: the morning peak is spread (docs/scale.md). 0: exact time.
    daily_prompt_flexible_window_minutes: int = Field(5, ge=0, le=60)
    # Quiet hours in the participant's zone: reminders and nudges due inside move to the window's end
    # (or are dropped when stale by then); the daily prompt keeps its chosen time (docs/quiet-hours.md).
    quiet_hours_enabled: bool = True
    quiet_hours_start: str = Field("21:00", pattern=r"^([01]\d|2[0-3]):[0-5]\d$")
    quiet_hours_end: str = Field("08:00", pattern=r"^([01]\d|2[0-3]):[0-5]\d$")
    # A nudge moved past the window is dropped when it would arrive this much later than planned.
    quiet_hours_max_delay: Duration = timedelta(hours=12)

    # --- inbound / messaging ----------------------------------------------------------------
    inbound_queue_url: str | None = None
    messaging_provider: MessagingProvider = MessagingProvider.LOCAL
    channel_secret_name: str | None = None
    twilio_account_sid: str | None = None
    twilio_auth_token: str | None = None
    twilio_from_number: str | None = None
    twilio_messaging_service_sid: str | None = None
    twilio_channel: str = Field("sms", pattern=r"^(sms|whatsapp)$")
    whatsapp_app_secret: str | None = None
    whatsapp_verify_token: str | None = None
    whatsapp_access_token: str | None = None
    whatsapp_phone_number_id: str | None = None
    whatsapp_graph_api_version: str = Field("v21.0", pattern=r"^v\d+\.\d+$")
    # WhatsApp outside the 24-hour window (docs/architecture.md, "WhatsApp's 24-hour window"):
    # Cloud API template names (one {{1}} body parameter / none) and their language; Twilio Content SIDs.
    # Meta template names are lowercase letters, digits and underscores; a wrong one would be
    # refused at the first send, so it fails the cold start instead.
    whatsapp_template_name: str | None = Field(None, pattern=META_TEMPLATE_NAME)
    whatsapp_reengagement_template_name: str | None = Field(None, pattern=META_TEMPLATE_NAME)
    # One template per business-initiated kind; a kind without one is not sent outside the window.
    whatsapp_greeting_template_name: str | None = Field(None, pattern=META_TEMPLATE_NAME)
    whatsapp_reminder_template_name: str | None = Field(None, pattern=META_TEMPLATE_NAME)
    whatsapp_feedback_template_name: str | None = Field(None, pattern=META_TEMPLATE_NAME)
    whatsapp_template_language: str = Field("en_US", pattern=r"^[a-z]{2,3}(_[A-Za-z]{2,4})?$")
    whatsapp_template_quick_replies: bool = False
    twilio_template_content_sid: str | None = Field(None, pattern=r"^HX[0-9a-fA-F]{32}$")
    twilio_reengagement_content_sid: str | None = Field(None, pattern=r"^HX[0-9a-fA-F]{32}$")
    twilio_greeting_content_sid: str | None = Field(None, pattern=r"^HX[0-9a-fA-F]{32}$")
    twilio_reminder_content_sid: str | None = Field(None, pattern=r"^HX[0-9a-fA-F]{32}$")
    twilio_feedback_content_sid: str | None = Field(None, pattern=r"^HX[0-9a-fA-F]{32}$")
    # A staff message outside the window (docs/console.md): its template, one {{1}} parameter; without
    # one the console says the message cannot be sent.
    whatsapp_staff_template_name: str | None = Field(None, pattern=META_TEMPLATE_NAME)
    twilio_staff_content_sid: str | None = Field(None, pattern=r"^HX[0-9a-fA-F]{32}$")
    public_webhook_base_url: str | None = None
    # True only behind a proxy you run that sets X-Forwarded-Host itself (overwriting any client
    # value): then the Twilio signature is checked for that host when PUBLIC_WEBHOOK_BASE_URL is unset.
    webhook_trusted_proxy: bool = False
    local_dev_disable_signature_check: bool = False
    max_inbound_message_chars: int = Field(4096, ge=1, le=65536)
    # Request bodies over these sizes are answered 413 before they are read (API Gateway allows 10 MB).
    max_api_body_bytes: int = Field(64 * 1024, ge=1024, le=10 * 1024 * 1024)
    max_webhook_body_bytes: int = Field(1024 * 1024, ge=1024, le=10 * 1024 * 1024)
    # Opt-out, opt-in and HELP (docs/compliance.md). Whole-message keywords per kind and language
    # (JSON {"opt_out": {"en": [...], "fr": [...]}, "opt_in": {...}, "help": {...}}; the languages given
    # replace those lists, the others keep the defaults; the FCC's English opt-out words always count).
    opt_keywords: dict[OptKeywordKind, dict[str, list[str]]] = Field(default_factory=dict)
    # The fixed replies per language (JSON {"en": "...", "es": "..."}: {study} and {contact} filled in);
    # a language not given keeps the built-in text, English is the fallback.
    opt_out_texts: dict[str, str] = Field(default_factory=dict)
    opt_in_texts: dict[str, str] = Field(default_factory=dict)
    help_texts: dict[str, str] = Field(default_factory=dict)
    study_name: str = Field("Habit coach", min_length=1, max_length=60)
    study_contact: str = Field("", max_length=100)
    # What the offline coach's answers say of the study (docs/offline-coach.md, "Questions"): who runs
    # it ("the sleep lab at X") and what it sends; unset: "the study team", "one short habit prompt a day".
    study_team: str = Field("", max_length=100)
    study_sends: str = Field("", max_length=200)
    # Who answers the keywords the provider's own filter reads (Twilio on a long code without
    # Advanced Opt-Out: STOP, HELP, START as single words): "provider" records them and sends nothing.
    keyword_replies_by: Literal["project", "provider"] = "project"
    # The inbound queue's dead-letter queue: the worker's unanswered-turns sweep redrives it once the
    # model answers again (docs/reliability.md, "The record under faults").
    inbound_dlq_url: str | None = None

    # --- retention ------------------------------------------------------------------------
    # Days a deleted or withdrawn participant's transcript and state are kept before DynamoDB's TTL
    # removes them; unset (the default) keeps them (docs/retention.md).
    retention_days_after_delete: int | None = Field(None, ge=1, le=3650)

    # --- budgets and consent (docs/safety.md) ------------------------------------------------
    # Per participant, checked in the worker before any model call; 0 turns a limit off. Past one,
    # the participant gets one short fixed reply per window and later messages are answered together
    # with the first message after the window passes.
    budget_model_calls_per_hour: int = Field(20, ge=0, le=10_000)
    budget_model_calls_per_day: int = Field(100, ge=0, le=100_000)
    budget_input_chars_per_day: int = Field(20_000, ge=0, le=10_000_000)
    # Live daily-prompt schedules one participant may have: the scheduler tool refuses past it.
    # Live daily schedules a participant may have: the scheduler tool refuses one more, an import keeps
    # the first ones by time of day and reports the rest.
    max_live_daily_schedules: int = Field(3, ge=1, le=24)
    # The study's daily model spend cap is a CloudWatch alarm on the ModelCostUSD metric (the stack's
    # ``studyDailySpendCapUsd``) whose state the stack copies into an SSM parameter; while it says
    # ALARM the offline coach answers. The parameter's name (set by the stack; unset: no cap) and how
    # long a process caches it.
    spend_cap_parameter: str | None = Field(None, pattern=r"^/[\w./-]+$", max_length=1011)
    spend_cap_cache_seconds: int = Field(60, ge=0, le=3600)
    # API enrolment must carry ``consent`` (at, version, method), and nothing is sent to a
    # participant before their consent is on record.
    consent_required: bool = False

    # --- coordinator tools ---------------------------------------------------------------------
    # The participants API the coordinator commands (participants, transcript, export, console) call:
    # ``promptpipe serve`` by default; a deployed API's URL is signed with SigV4.
    promptpipe_api_url: str = Field("http://127.0.0.1:8000", pattern=r"^https?://")

    # --- safety (docs/safety.md) ----------------------------------------------------------------
    # The crisis screen before the coach; off only for a study that screens elsewhere.
    safety_screen_enabled: bool = True
    # What the safety reply names, per region of the participant's number and language (JSON):
    # {"US": {"en": "call or text 988 …", "es": "…"}}; a region not listed gets "your local
    # emergency number". Given, it replaces the default (which lists the US).
    safety_resources: dict[str, dict[str, str]] = Field(default_factory=lambda: dict(DEFAULT_SAFETY_RESOURCES))
    # The study team's alert topic (the stack sets it); unset: a WARNING log line instead.
    safety_alert_topic_arn: str | None = Field(None, pattern=r"^arn:aws[\w-]*:sns:")
    # The console's address as the study team opens it: each alert links the participant's page
    # (``<CONSOLE_URL>/participants/<id>``); unset: the alert says to open the console.
    console_url: str | None = Field(None, pattern=r"^https?://", max_length=500)
    # A hold's alert still pending this long after the hold began is published by the periodic sweep
    # (docs/safety.md, "Asking for a person"): the event that placed it was never redelivered.
    hold_alert_sweep_after: Duration = timedelta(minutes=15)

    # --- studies (docs/studies.md) ----------------------------------------------------------------
    # The study definitions: the deployment's one active study is ``<studies_dir>/<STUDY_ID>.json``
    # when that file exists (STUDY_ID above also names the study's model routes).
    studies_dir: Path = PROMPTS_DIR / "studies"

    # --- powertools / runtime -------------------------------------------------------------
    aws_region: str = "us-east-1"
    aws_endpoint_url: str | None = None

    # --- studies ------------------------------------------------------------------------------
    # The salt of the de-identified export's pseudonyms (docs/studies.md, "The de-identified export"):
    # kept for the study's life so pseudonyms stay stable across exports; deployed, put it in the
    # OpenAI or channel secret as EXPORT_PSEUDONYM_SALT instead.
    export_pseudonym_salt: str | None = Field(None, min_length=16, repr=False)

    def missing(self, names: tuple[str, ...]) -> list[str]:
        """Which of ``names`` are unset (``None`` or empty)."""
        return [name for name in names if not getattr(self, name)]

    @field_validator("default_phone_region", mode="before")
    @classmethod
    def _phone_region(cls, value: Any) -> Any:
        if not is_known_region(value):
            raise ValueError(
                f"DEFAULT_PHONE_REGION={value!r} is not a known region: use a two-letter ISO 3166 code such as US or FR"
            )
        return value.upper()

    @model_validator(mode="after")
    def _routes_within_endpoints(self) -> Self:
        """The deployment's own routes name only endpoints it lists, with their models; two
        endpoints never share a base URL (which key would a call carry?)."""
        urls = [endpoint.url for endpoint in self.llm_endpoints.values()]
        if len(set(urls)) != len(urls):
            raise ValueError("llm_endpoints: two endpoints have the same base_url")
        by_url = {endpoint.url: endpoint for endpoint in self.llm_endpoints.values()}
        routes = [(f"llm_routes.{n}", r) for n, r in self.llm_routes.items()] + [
            (f"llm_study_routes.{study}.{n}", r) for study, rs in self.llm_study_routes.items() for n, r in rs.items()
        ]
        for where, route in routes:
            if route.base_url is None:
                continue
            endpoint = by_url.get(endpoint_url(route.base_url))
            if endpoint is None:
                raise ValueError(f"{where}.base_url {route.base_url!r} is not an endpoint of LLM_ENDPOINTS")
            if route.model is None or route.model not in endpoint.models:
                raise ValueError(f"{where}: name one of the models LLM_ENDPOINTS allows at {route.base_url}")
        return self


_settings: Settings | None = None

# What every schedule names: its two possible targets and the role the scheduler assumes.
SCHEDULE_TARGETS = ("timers_function_arn", "scheduled_prompt_function_arn", "scheduler_role_arn")
# Every function may create or delete a schedule; a default would point at a fake account, so in
# Lambda their absence fails the cold start.
LAMBDA_REQUIRED = SCHEDULE_TARGETS


def get_settings() -> Settings:
    """The process-wide settings, read once (Lambda cold start, CLI start)."""
    global _settings
    if _settings is None:
        _settings = Settings()
    return _settings


def require_in_lambda(names: tuple[str, ...] = ()) -> None:
    """In Lambda (the runtime sets ``AWS_LAMBDA_FUNCTION_NAME``), read the settings now and fail the
    cold start when a production-only setting, or one the function names, is missing; elsewhere
    nothing (local runs supply their own values)."""
    settings = get_settings() if os.environ.get("AWS_LAMBDA_FUNCTION_NAME") else None
    if settings is None:
        return
    missing = settings.missing(LAMBDA_REQUIRED + tuple(names))
    if missing:
        raise ConfigurationError(
            "missing in this function's environment: " + ", ".join(name.upper() for name in missing)
        )


def set_settings(settings: Settings | None) -> None:
    """Install the settings of a local run or a test (``None``: read the environment again)."""
    global _settings
    _settings = settings


# --- readable configuration errors (CLI start-up) -----------------------------------------------
# Environment variables in these families are ours: one that matches no setting is most likely a typo.
_OWN_PREFIXES = (
    "GENAI_",
    "OPENAI_",
    "TWILIO_",
    "WHATSAPP_",
    "SCHEDULER_",
    "FEEDBACK_",
    "PROMPTPIPE_",
    "DAILY_PROMPT_",
    "AUTO_FEEDBACK_",
    "QUIET_HOURS_",
    "RETENTION_",
    "CHAT_HISTORY_",
    "BUDGET_",
    "CONSENT_",
    "SPEND_CAP_",
)


def _unless_none(annotation: Any) -> Any:
    """``X | None`` is described as ``X``: unset is always allowed, what a value may be is the point."""
    members = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
    if typing.get_args(annotation) and len(members) == 1 and type(None) in typing.get_args(annotation):
        return members[0]
    return annotation


def allowed_values(field_name: str) -> str:
    """What ``FIELD_NAME`` accepts, in words, from the field's type and constraints."""
    import annotated_types

    info = Settings.model_fields[field_name]
    annotation = _unless_none(info.annotation)
    if annotation is bool:
        return "true/1/yes/on or false/0/no/off"
    if field_name in _DURATION_FIELDS:
        return "a duration such as 15m, 3h, 1h30m, 90s, or a number of seconds"
    if typing.get_origin(annotation) is dict:
        return "a JSON object"
    if isinstance(annotation, type) and issubclass(annotation, StrEnum):
        return "one of " + ", ".join(member.value for member in annotation)
    bounds = []
    for item in info.metadata:
        for attr, word in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            if isinstance(item, getattr(annotated_types, attr.capitalize())):
                bounds.append(f"{word} {getattr(item, attr)}")
        if getattr(item, "pattern", None):
            bounds.append(f"matching {item.pattern}")
        if isinstance(item, annotated_types.MinLen) and item.min_length:
            bounds.append(f"at least {item.min_length} characters")
        if isinstance(item, annotated_types.MaxLen):
            bounds.append(f"at most {item.max_length} characters")
    kind = "a whole number" if annotation is int else "a number" if annotation is float else "text"
    return kind + (" " + ", ".join(bounds) if bounds else "")


_JSON_FIELDS = frozenset(
    name for name, info in Settings.model_fields.items() if typing.get_origin(info.annotation) in (dict, list)
)
_DURATION_FIELDS = frozenset(
    name for name, info in Settings.model_fields.items() if any(isinstance(m, BeforeValidator) for m in info.metadata)
)


def describe_settings_error(exc: Exception) -> list[str]:
    """One line per invalid environment variable: its name, the value given and what it accepts."""
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):
        return [str(exc)]
    lines = []
    for error in exc.errors():
        name = str(error["loc"][0]) if error.get("loc") else ""
        if name not in Settings.model_fields:
            lines.append(error.get("msg", "invalid configuration"))
            continue
        given = error.get("input")
        reason = str(error.get("msg", "")).removeprefix("Value error, ")
        lines.append(f"{name.upper()}={given!r} is not valid ({reason}); allowed: {allowed_values(name)}")
    return lines


def unknown_variables(environ: dict[str, str] | None = None) -> list[str]:
    """Environment variables in our families (GENAI_…, TWILIO_…, …) that match no setting, each with
    the nearest setting's name when one is close."""
    import difflib
    import os

    known = {name.upper() for name in Settings.model_fields}
    environ = dict(os.environ) if environ is None else environ
    lines = []
    for name in sorted(environ):
        upper = name.upper()
        if upper in known or not upper.startswith(_OWN_PREFIXES):
            continue
        close = difflib.get_close_matches(upper, sorted(known), n=1)
        lines.append(f"{upper} is not a setting" + (f" (did you mean {close[0]}?)" if close else ""))
    return lines
