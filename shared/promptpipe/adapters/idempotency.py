"""Powertools Idempotency on its own DynamoDB table (docs/architecture.md#state: not in the single table, where all
records would share one partition)."""

from __future__ import annotations

from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer, IdempotencyConfig

from promptpipe.adapters.aws import aws_client
from promptpipe.settings import Settings

# A committed event stays deduplicated for a day: past Twilio's, SQS's and the scheduler's retries.
IDEMPOTENCY_TTL_SECONDS = 24 * 3600


def persistence_layer(settings: Settings) -> DynamoDBPersistenceLayer:
    """One instance per decorated function (Powertools keeps the first config it sees)."""
    return DynamoDBPersistenceLayer(
        table_name=settings.idempotency_table_name, boto3_client=aws_client("dynamodb", settings)
    )


def event_config(key_path: str = "event_id") -> IdempotencyConfig:
    return IdempotencyConfig(
        event_key_jmespath=key_path,
        raise_on_no_idempotency_key=True,
        expires_after_seconds=IDEMPOTENCY_TTL_SECONDS,
    )
