"""System prompts in SSM Parameter Store (``PROMPT_STORE=ssm``): ``<PROMPT_STORE_PREFIX>/<name>``.

Reads go through Powertools Parameters (its own ``max_age`` cache on top of the prompt library's
TTL); ``push`` writes a new parameter version (``promptpipe prompts push``). A missing parameter is
``None``: the library then uses the ``prompts/`` file.
"""

from __future__ import annotations

from typing import Any

from promptpipe.settings import Settings


class SSMPromptStore:
    def __init__(self, prefix: str, client: Any, *, max_age: int = 300) -> None:
        from aws_lambda_powertools.utilities.parameters import SSMProvider

        self.prefix = prefix.rstrip("/")
        self.max_age = max_age
        self._client = client
        self._provider = SSMProvider(boto3_client=client)

    @classmethod
    def from_settings(cls, settings: Settings, client: Any | None = None) -> SSMPromptStore:
        from promptpipe.adapters.aws import aws_client

        return cls(
            settings.prompt_store_prefix, client or aws_client("ssm", settings), max_age=settings.prompt_cache_seconds
        )

    def parameter_name(self, name: str) -> str:
        return f"{self.prefix}/{name}"

    def fetch(self, name: str) -> str | None:
        from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError

        try:
            value = self._provider.get(self.parameter_name(name), max_age=self.max_age)
        except GetParameterError as exc:
            if "ParameterNotFound" in str(exc):
                return None
            raise
        return value if isinstance(value, str) else None

    def push(self, name: str, text: str) -> str:
        """Store ``text`` as the new version; returns the parameter's version number."""
        response = self._client.put_parameter(
            Name=self.parameter_name(name), Value=text, Type="String", Overwrite=True, Tier="Intelligent-Tiering"
        )
        return str(response.get("Version", ""))


def prompt_store_from_settings(settings: Settings) -> SSMPromptStore | None:
    """The configured store, or ``None`` for ``PROMPT_STORE=file`` (the default)."""
    return SSMPromptStore.from_settings(settings) if settings.prompt_store == "ssm" else None
