"""Secrets Manager: the OpenAI key and the messaging channel credentials.

The template never holds a secret: both secrets are created with a generated value in one key and
empty placeholders in the others. After the first deploy, fill them (values are JSON objects):

    aws secretsmanager put-secret-value --secret-id <prefix>/openai \
        --secret-string '{"OPENAI_API_KEY": "sk-..."}'
    aws secretsmanager put-secret-value --secret-id <prefix>/channel --secret-string \
        '{"TWILIO_ACCOUNT_SID": "AC...", "TWILIO_AUTH_TOKEN": "...", "WHATSAPP_APP_SECRET": "...",
          "WHATSAPP_VERIFY_TOKEN": "<keep the generated one or choose>", "WHATSAPP_ACCESS_TOKEN": "..."}'

Functions cache secret values for a few minutes (Powertools parameters), so a change reaches warm
functions after that delay.
"""

from __future__ import annotations

import json

from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra.components import acknowledge

CHANNEL_KEYS = (
    "TWILIO_ACCOUNT_SID",
    "TWILIO_AUTH_TOKEN",
    "WHATSAPP_APP_SECRET",
    "WHATSAPP_ACCESS_TOKEN",
)
_NO_ROTATION = (
    "AwsSolutions-SMG4",
    "Third-party credentials (OpenAI, Twilio, Meta) are issued and rotated in the provider's console; "
    "there is no API a rotation Lambda could call. Operators put the new value with put-secret-value.",
)


class Secrets(Construct):
    """``openai`` ({"OPENAI_API_KEY"}) and ``channel`` (Twilio and WhatsApp credentials), and
    their names ``openai_name`` / ``channel_name`` as plain strings (the construct's ``secret_name``
    is parsed from the ARN at deploy time and cuts names that contain a hyphen)."""

    def __init__(self, scope: Construct, construct_id: str, *, prefix: str) -> None:
        super().__init__(scope, construct_id)
        self.openai_name = f"{prefix}/openai"
        self.channel_name = f"{prefix}/channel"
        self.openai = self._build_openai()
        self.channel = self._build_channel()

    def _build_openai(self) -> secretsmanager.Secret:
        secret = secretsmanager.Secret(
            self,
            "OpenAi",
            secret_name=self.openai_name,
            description="OpenAI API key, JSON {OPENAI_API_KEY}. Generated placeholder: replace it.",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                secret_string_template=json.dumps({}),
                generate_string_key="OPENAI_API_KEY",
                exclude_punctuation=True,
            ),
        )
        acknowledge(secret, _NO_ROTATION)
        return secret

    def _build_channel(self) -> secretsmanager.Secret:
        secret = secretsmanager.Secret(
            self,
            "Channel",
            secret_name=self.channel_name,
            description="Twilio / WhatsApp credentials (JSON). Empty placeholders: fill them.",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                secret_string_template=json.dumps(dict.fromkeys(CHANNEL_KEYS, "")),
                # A random verify token is directly usable: give the same value to Meta.
                generate_string_key="WHATSAPP_VERIFY_TOKEN",
                exclude_punctuation=True,
                password_length=40,
            ),
        )
        acknowledge(secret, _NO_ROTATION)
        return secret
