"""boto3 clients built from ``Settings``, and the resources a moto or local run needs.

In AWS the CDK stack owns the table, queues and schedule group; ``create_local_resources`` creates
the same shapes for moto (tests, ``make demo``) so that code under test sees what it sees in AWS.
"""

from __future__ import annotations

import json
import threading
from typing import Any, TypeAlias

import botocore.session
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
    ReadTimeoutError,
    SSOError,
)

from promptpipe.adapters.aws_errors import error_code
from promptpipe.adapters.dynamodb_table import TABLE, TableShape
from promptpipe.lazy_model import LazyModel
from promptpipe.settings import Settings

# boto3 generates client classes at run time; there is no static type to name here.
AwsClient: TypeAlias = Any


class TableAdapter:
    """An adapter over one DynamoDB table, called through a low-level client."""

    def __init__(self, table_name: str, client: AwsClient) -> None:
        self._table = table_name
        self._client = client


INBOUND_QUEUE_NAME = "promptpipe-inbound.fifo"
INBOUND_DLQ_NAME = "promptpipe-inbound-dlq.fifo"
INBOUND_MAX_RECEIVE_COUNT = 3


# Throttling and transient 5xx are retried by botocore itself ("standard" mode); short timeouts keep
# a stuck call from eating the Lambda's budget.
_CLIENT_CONFIG = Config(retries={"mode": "standard", "max_attempts": 5}, connect_timeout=2, read_timeout=10)


_sessions: list[botocore.session.Session] = []  # the one session of the process, once made
_session_lock = threading.Lock()  # botocore sessions are not thread-safe: clients are made under it


def aws_client(service: str, settings: Settings) -> AwsClient:
    """A client for ``service`` in the configured region (and endpoint, for moto server/local).

    Built from one botocore session, not through ``boto3.client``: the clients are the same, but
    ``import boto3`` also imports s3transfer, which no function uses (cold start, docs/benchmarks.md).
    botocore's own data loader: the Lambda assets carry its data for their services only
    (``infra/aws_sdk.py``); the CLI and local tools read all of it (profiles with roles or SSO).
    """
    with _session_lock:
        if not _sessions:
            _sessions.append(botocore.session.get_session())
        return _sessions[0].create_client(
            service,
            region_name=settings.aws_region,
            endpoint_url=settings.aws_endpoint_url,
            config=_CLIENT_CONFIG,
        )


def aws_failure(exc: BaseException) -> tuple[str, str] | None:
    """What an AWS call's failure means to a person at a terminal: ``("config", why)`` (credentials
    or region missing), ``("unavailable", why)`` (the endpoint cannot be reached) or ``("failed", why)``
    (AWS answered an error); ``None`` when ``exc`` is not an AWS failure."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, BotoCoreError | ClientError):
        # Powertools' parameter errors wrap the botocore one, raised from it or while handling it
        cause = cause.__cause__ or (None if cause.__suppress_context__ else cause.__context__)
    if cause is None:
        return None
    if isinstance(cause, NoCredentialsError | PartialCredentialsError | NoRegionError):
        return "config", f"AWS: {cause} (configure a profile or set AWS_ACCESS_KEY_ID and AWS_REGION)"
    if isinstance(cause, SSOError):  # an SSO profile without a live sign-in
        return "config", f"AWS: {cause} (sign in with `aws sso login` for this profile)"
    if isinstance(cause, EndpointConnectionError | ConnectTimeoutError | ReadTimeoutError):
        return "unavailable", f"AWS: {cause}"
    if isinstance(cause, ClientError):
        error = cause.response.get("Error", {})
        return "failed", f"AWS: {error.get('Code', 'error')}: {error.get('Message', cause)}"
    return "failed", f"AWS: {cause}"


class LocalResources(LazyModel):
    """What ``create_local_resources`` made (or found)."""

    table_name: str
    inbound_queue_url: str
    inbound_queue_arn: str
    inbound_dlq_url: str
    inbound_dlq_arn: str
    schedule_group_name: str
    schedule_group_arn: str


def create_local_resources(
    settings: Settings,
    *,
    dynamodb: AwsClient | None = None,
    sqs: AwsClient | None = None,
    scheduler: AwsClient | None = None,
) -> LocalResources:
    """Create the single table (the shape of ``dynamodb_table.TABLE``, as the CDK stack builds it),
    the inbound FIFO queue with its DLQ and the schedule group. Idempotent: resources that already
    exist are reused."""
    dynamodb = dynamodb or aws_client("dynamodb", settings)
    sqs = sqs or aws_client("sqs", settings)
    scheduler = scheduler or aws_client("scheduler", settings)

    _ensure_table(dynamodb, settings.table_name, TABLE)
    dlq_url, dlq_arn = _ensure_queue(sqs, INBOUND_DLQ_NAME, _fifo_attributes())
    redrive = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(INBOUND_MAX_RECEIVE_COUNT)})
    queue_url, queue_arn = _ensure_queue(sqs, INBOUND_QUEUE_NAME, {**_fifo_attributes(), "RedrivePolicy": redrive})
    group_arn = _ensure_schedule_group(scheduler, settings.schedule_group_name)
    return LocalResources(
        table_name=settings.table_name,
        inbound_queue_url=queue_url,
        inbound_queue_arn=queue_arn,
        inbound_dlq_url=dlq_url,
        inbound_dlq_arn=dlq_arn,
        schedule_group_name=settings.schedule_group_name,
        schedule_group_arn=group_arn,
    )


def _ensure_table(client: AwsClient, name: str, shape: TableShape) -> None:
    try:
        client.create_table(**shape.create_table_request(name))
    except ClientError as exc:
        if error_code(exc) != "ResourceInUseException":
            raise
    client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    ttl = client.describe_time_to_live(TableName=name).get("TimeToLiveDescription", {})
    # Enabling TTL twice is an error in AWS ("TimeToLive is already enabled").
    if ttl.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING"):
        client.update_time_to_live(
            TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": shape.ttl_attribute}
        )


def _fifo_attributes() -> dict[str, str]:
    return {"FifoQueue": "true", "ContentBasedDeduplication": "false"}


def _ensure_queue(client: AwsClient, name: str, attributes: dict[str, str]) -> tuple[str, str]:
    # create_queue with attributes that differ in form from the stored ones fails, so look first.
    try:
        url = str(client.get_queue_url(QueueName=name)["QueueUrl"])
    except ClientError as exc:
        if error_code(exc) not in ("AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"):
            raise
        url = str(client.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"])
    arn = client.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, str(arn)


def _ensure_schedule_group(client: AwsClient, name: str) -> str:
    try:
        return str(client.create_schedule_group(Name=name)["ScheduleGroupArn"])
    except ClientError as exc:
        if error_code(exc) != "ConflictException":
            raise
    return str(client.get_schedule_group(Name=name)["Arn"])
