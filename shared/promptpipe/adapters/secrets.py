"""Secrets from AWS Secrets Manager through Powertools Parameters (cached for 5 minutes)."""

from __future__ import annotations

from collections.abc import Callable

from promptpipe.errors import ConfigurationError
from promptpipe.models.llm_routes import endpoint_url
from promptpipe.settings import Settings


def _read_json_secret(name: str) -> dict[str, str]:
    from aws_lambda_powertools.utilities import parameters

    try:
        value = parameters.get_secret(name, transform="json")
    except parameters.exceptions.GetParameterError as exc:
        raise ConfigurationError(f"secret {name!r} could not be read: {exc}") from exc
    except parameters.exceptions.TransformParameterError as exc:
        raise ConfigurationError(f"secret {name!r} is not a JSON object: {exc}") from exc
    if not isinstance(value, dict):
        raise ConfigurationError(f"secret {name!r} must be a JSON object of setting names to values")
    return {str(k).lower(): str(v) for k, v in value.items() if v not in (None, "")}


def endpoint_key_reader(settings: Settings) -> Callable[[str], str | None]:
    """The key of each ``LLM_ENDPOINTS`` endpoint by base URL, read from its own secret
    (``{"API_KEY": "…"}``) when a call first goes there; ``None`` for a URL not listed."""
    by_url = {endpoint.url: endpoint for endpoint in settings.llm_endpoints.values()}

    def key_for(url: str) -> str | None:
        endpoint = by_url.get(endpoint_url(url))
        if endpoint is None:
            return None
        key = _read_json_secret(endpoint.secret_name).get("api_key")
        if not key:
            raise ConfigurationError(f"secret {endpoint.secret_name!r} has no API_KEY for {endpoint.url}")
        return key

    return key_for


def load_secrets(settings: Settings) -> dict[str, str]:
    """The OpenAI and channel secrets (JSON objects) merged into one mapping; empty locally."""
    names = [n for n in (settings.openai_secret_name, settings.channel_secret_name) if n]
    if not names:
        return {}
    merged: dict[str, str] = {}
    for name in names:
        merged.update(_read_json_secret(name))
    return merged


def pseudonym_salt(settings: Settings) -> str | None:
    """The de-identified export's salt: ``EXPORT_PSEUDONYM_SALT`` in the settings (local), else in
    the OpenAI or channel secret (deployed); ``None`` when neither holds one."""
    return settings.export_pseudonym_salt or load_secrets(settings).get("export_pseudonym_salt") or None
