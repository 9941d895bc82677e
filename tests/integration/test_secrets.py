"""Secrets read at cold start from Secrets Manager (moto): present, missing, not JSON, not an object."""

from __future__ import annotations

import json
from collections.abc import Iterator

import boto3
import pytest
from aws_lambda_powertools.utilities import parameters

from promptpipe.adapters.secrets import load_secrets
from promptpipe.errors import ConfigurationError
from promptpipe.settings import Settings


@pytest.fixture
def secretsmanager(aws: None) -> Iterator[object]:
    parameters.clear_caches()  # Powertools caches secrets for 5 minutes, across tests too
    yield boto3.client("secretsmanager")
    parameters.clear_caches()


def _settings(**values: str) -> Settings:
    return Settings.model_validate(values)


def test_no_secret_names_reads_nothing() -> None:
    assert load_secrets(_settings()) == {}


def test_both_secrets_are_merged_with_lower_case_names_and_empty_values_dropped(secretsmanager) -> None:
    secretsmanager.create_secret(Name="pp/openai", SecretString=json.dumps({"OPENAI_API_KEY": "sk-1", "unused": ""}))
    secretsmanager.create_secret(
        Name="pp/channel", SecretString=json.dumps({"twilio_auth_token": "tok", "TWILIO_ACCOUNT_SID": "AC1"})
    )
    merged = load_secrets(_settings(openai_secret_name="pp/openai", channel_secret_name="pp/channel"))
    assert merged == {"openai_api_key": "sk-1", "twilio_auth_token": "tok", "twilio_account_sid": "AC1"}


def test_only_the_named_secret_is_read(secretsmanager) -> None:
    secretsmanager.create_secret(Name="pp/channel", SecretString=json.dumps({"whatsapp_access_token": 7}))
    assert load_secrets(_settings(channel_secret_name="pp/channel")) == {"whatsapp_access_token": "7"}


def test_a_missing_secret_is_a_configuration_error(secretsmanager) -> None:
    with pytest.raises(ConfigurationError, match=r"^secret 'pp/absent' could not be read"):
        load_secrets(_settings(openai_secret_name="pp/absent"))


def test_a_secret_that_is_not_json_is_a_configuration_error(secretsmanager) -> None:
    secretsmanager.create_secret(Name="pp/text", SecretString="sk-plain-text")
    with pytest.raises(ConfigurationError, match=r"^secret 'pp/text' is not a JSON object"):
        load_secrets(_settings(openai_secret_name="pp/text"))


@pytest.mark.parametrize("value", [["a", "b"], "just a string", 42])
def test_a_secret_that_is_json_but_not_an_object_is_a_configuration_error(secretsmanager, value: object) -> None:
    secretsmanager.create_secret(Name="pp/list", SecretString=json.dumps(value))
    with pytest.raises(ConfigurationError, match=r"^secret 'pp/list' must be a JSON object of setting names"):
        load_secrets(_settings(channel_secret_name="pp/list"))


# --- model endpoint keys (docs/architecture.md#model-endpoints) ---------------------------------------


def _with_endpoint(secret_name: str) -> Settings:
    endpoint = {"base_url": "https://llm.example.org/v1/", "models": ["m"], "secret_name": secret_name}
    return Settings.model_validate({"llm_endpoints": {"study": endpoint}})


def test_an_endpoint_key_comes_from_its_own_secret_when_first_needed(secretsmanager) -> None:
    from promptpipe.adapters.secrets import endpoint_key_reader

    key_for = endpoint_key_reader(_with_endpoint("pp/study-llm"))  # nothing read yet: the secret may come later
    secretsmanager.create_secret(Name="pp/study-llm", SecretString=json.dumps({"API_KEY": "sk-study"}))
    assert key_for("https://llm.example.org/v1") == "sk-study"  # trailing slashes do not matter
    assert key_for("https://elsewhere.example/v1") is None  # not listed: no key, never called


def test_an_endpoint_secret_without_api_key_is_a_configuration_error(secretsmanager) -> None:
    from promptpipe.adapters.secrets import endpoint_key_reader

    secretsmanager.create_secret(Name="pp/no-key", SecretString=json.dumps({"OPENAI_API_KEY": "sk-wrong-name"}))
    with pytest.raises(ConfigurationError, match=r"^secret 'pp/no-key' has no API_KEY for https://llm.example.org/v1$"):
        endpoint_key_reader(_with_endpoint("pp/no-key"))("https://llm.example.org/v1")
