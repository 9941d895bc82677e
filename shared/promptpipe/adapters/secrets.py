"""Secrets from AWS Secrets Manager through Powertools Parameters (cached for 5 minutes)."""

from __future__ import annotations

from promptpipe.errors import ConfigurationError
from promptpipe.settings import Settings


def load_secrets(settings: Settings) -> dict[str, str]:
    """The OpenAI and channel secrets (JSON objects) merged into one mapping; empty locally."""
    names = [n for n in (settings.openai_secret_name, settings.channel_secret_name) if n]
    if not names:
        return {}
    from aws_lambda_powertools.utilities import parameters

    merged: dict[str, str] = {}
    for name in names:
        try:
            value = parameters.get_secret(name, transform="json")
        except parameters.exceptions.GetParameterError as exc:
            raise ConfigurationError(f"secret {name!r} could not be read: {exc}") from exc
        except parameters.exceptions.TransformParameterError as exc:
            raise ConfigurationError(f"secret {name!r} is not a JSON object: {exc}") from exc
        if not isinstance(value, dict):
            raise ConfigurationError(f"secret {name!r} must be a JSON object of setting names to values")
        merged.update({str(k).lower(): str(v) for k, v in value.items() if v not in (None, "")})
    return merged
