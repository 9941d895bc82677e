"""A webhook deployed without its signing secret (missing, or its channel secret unreadable) answers
503, logs at ERROR and raises the ``WebhookMisconfigured`` metric the stack alarms on."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from aws_lambda_powertools.utilities import parameters

from promptpipe.local.environment import LocalEnvironment
from promptpipe.local.signing import meta_signature, twilio_form

TWILIO_FORM = {"From": "+14155550101", "Body": "hi", "MessageSid": "SM-misconfigured", "To": "+14155550000"}
META_BODY = {"object": "whatsapp_business_account", "entry": []}


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def webhook_logs(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Records]:
    """The functions' Powertools logger (it does not propagate to the root) and its EMF metrics on."""
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)
    records = _Records()
    target = logging.getLogger("promptpipe")
    target.addHandler(records)
    yield records
    target.removeHandler(records)


def _post_both(env: LocalEnvironment) -> tuple[Any, Any]:
    twilio = env.api(
        "POST",
        "/webhooks/twilio",
        body=twilio_form(TWILIO_FORM),
        headers={"content-type": "application/x-www-form-urlencoded", "x-twilio-signature": "unchecked"},
        base64_body=True,
    )
    raw = json.dumps(META_BODY).encode()
    meta = env.api(
        "POST",
        "/webhooks/whatsapp",
        body=raw.decode(),
        headers={"content-type": "application/json", "x-hub-signature-256": meta_signature(raw, "unchecked")},
    )
    return twilio, meta


def _misconfigured_metrics(output: str) -> list[dict[str, Any]]:
    blobs = [json.loads(line) for line in output.splitlines() if line.startswith("{") and '"_aws"' in line]
    return [
        blob
        for blob in blobs
        if any(
            metric["Name"] == "WebhookMisconfigured"
            for directive in blob["_aws"]["CloudWatchMetrics"]
            for metric in directive["Metrics"]
        )
    ]


def _assert_misconfigured(
    responses: tuple[Any, Any], records: _Records, output: str, settings: tuple[str, str], problem: str
) -> None:
    # Then both answer 503 (the providers retry) with the same envelope as before
    assert [r.status for r in responses] == [503, 503]
    assert all(r.body == {"status": "error", "message": "not_configured"} for r in responses)
    # And each request logged one ERROR naming the setting (never a secret's value) …
    errors = [r for r in records.records if r.levelno == logging.ERROR]
    assert [(r.getMessage(), getattr(r, "setting", None)) for r in errors] == [
        ("webhook signing secret not configured", settings[0]),
        ("webhook signing secret not configured", settings[1]),
    ]
    assert all(problem in getattr(r, "problem", "") for r in errors)
    # … and raised WebhookMisconfigured once, in namespace PromptPipe with only the service dimension
    # (the dimension set the stack's alarm watches)
    metrics = _misconfigured_metrics(output)
    assert len(metrics) == 2
    for blob in metrics:
        assert blob["WebhookMisconfigured"] == [1.0] and blob["service"] == "promptpipe"
        [directive] = blob["_aws"]["CloudWatchMetrics"]
        assert directive["Namespace"] == "PromptPipe" and directive["Dimensions"] == [["service"]]


@pytest.mark.logs_errors
def test_a_missing_signing_secret_is_an_error_with_a_metric(
    local_env_factory: Any, webhook_logs: _Records, capfd: pytest.CaptureFixture[str]
) -> None:
    # Given a deployment where neither channel's signing secret is set
    env = local_env_factory(twilio_auth_token=None, whatsapp_app_secret=None)
    capfd.readouterr()
    # When each provider posts
    responses = _post_both(env)
    output = capfd.readouterr().out
    _assert_misconfigured(responses, webhook_logs, output, ("twilio_auth_token", "whatsapp_app_secret"), "missing")


@pytest.mark.logs_errors
def test_an_unreadable_channel_secret_is_an_error_with_a_metric(
    local_env_factory: Any, webhook_logs: _Records, capfd: pytest.CaptureFixture[str]
) -> None:
    # Given a deployment whose channel secret (Secrets Manager) does not exist, no value in the environment
    parameters.clear_caches()  # Powertools caches secrets for 5 minutes, across tests too
    env = local_env_factory(twilio_auth_token=None, whatsapp_app_secret=None, channel_secret_name="pp/absent")
    capfd.readouterr()
    # When each provider posts
    responses = _post_both(env)
    output = capfd.readouterr().out
    _assert_misconfigured(
        responses, webhook_logs, output, ("twilio_auth_token", "whatsapp_app_secret"), "could not be read"
    )
    parameters.clear_caches()
