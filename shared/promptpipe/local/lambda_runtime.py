"""Lambda-shaped events and contexts, so local runs call the real handlers exactly as AWS would."""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode


@dataclass
class FakeLambdaContext:
    function_name: str = "promptpipe-local"
    memory_limit_in_mb: int = 1024
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:000000000000:function:promptpipe-local"
    remaining_ms: int = 60_000

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


def http_api_event(
    method: str,
    path: str,
    *,
    body: str | bytes | None = None,
    headers: dict[str, str] | None = None,
    query: dict[str, str] | None = None,
    base64_body: bool = False,
    now: datetime | None = None,
    domain: str = "localhost",
    iam: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An API Gateway HTTP API (payload v2.0) event; ``iam``: the IAM authoriser's caller
    (``requestContext.authorizer.iam``, as API Gateway sets it for a SigV4-signed call)."""
    raw_query = urlencode(query or {})
    headers = {k.lower(): v for k, v in (headers or {}).items()}
    domain = headers.setdefault("host", domain)
    if isinstance(body, bytes) or base64_body:
        data = body.encode() if isinstance(body, str) else (body or b"")
        body_text: str | None = base64.b64encode(data).decode()
        is_base64 = True
    else:
        body_text, is_base64 = body, False
    epoch_ms = int(now.timestamp() * 1000) if now else 0
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": raw_query,
        "headers": headers,
        "queryStringParameters": dict(query) if query else None,
        "requestContext": {
            "accountId": "000000000000",
            "apiId": "local",
            "domainName": domain,
            "domainPrefix": domain.split(".", maxsplit=1)[0],
            "http": {
                "method": method.upper(),
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": "promptpipe-local",
            },
            "requestId": str(uuid.uuid4()),
            "routeKey": "$default",
            "stage": "$default",
            "time": "",
            "timeEpoch": epoch_ms,
            **({"authorizer": {"iam": iam}} if iam is not None else {}),
        },
        "body": body_text,
        "isBase64Encoded": is_base64,
    }


def sqs_record(message: dict[str, Any], queue_arn: str, region: str = "us-east-1") -> dict[str, Any]:
    """An SQS event record built from a ReceiveMessage result."""
    attributes = message.get("Attributes", {})
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": {
            "ApproximateReceiveCount": attributes.get("ApproximateReceiveCount", "1"),
            "SentTimestamp": attributes.get("SentTimestamp", "0"),
            "SenderId": attributes.get("SenderId", "local"),
            "ApproximateFirstReceiveTimestamp": attributes.get("ApproximateFirstReceiveTimestamp", "0"),
            "MessageGroupId": attributes.get("MessageGroupId", ""),
            "MessageDeduplicationId": attributes.get("MessageDeduplicationId", ""),
            "SequenceNumber": attributes.get("SequenceNumber", "0"),
        },
        "messageAttributes": {},
        "md5OfBody": hashlib.md5(message["Body"].encode()).hexdigest(),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": region,
    }


def response_json(response: dict[str, Any]) -> Any:
    body = response.get("body") or ""
    if response.get("isBase64Encoded"):
        body = base64.b64decode(body).decode()
    try:
        return json.loads(body) if body else None
    except ValueError:
        return body
