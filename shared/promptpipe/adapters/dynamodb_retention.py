"""The retention clock on a participant's items: the table's TTL attribute (docs/retention.md).

A deletion stamps what it leaves of the participant's partition. A withdrawal's expiry lives on the
flow state, and every commit stamps it on what it writes (the flow state, META, new transcript
entries); ``DynamoParticipantRepo.expire`` brings the items no commit rewrites (the earlier
transcript, the phone claim) in line, and clears them again when the participant is re-activated.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from promptpipe.adapters.aws import AwsClient
from promptpipe.adapters.dynamodb_items import PK, SK, Item
from promptpipe.adapters.dynamodb_table import TTL_ATTRIBUTE


def with_expiry(item: Item, at: datetime | None) -> Item:
    """The item expiring at ``at``, unless it already expires sooner (a sent-ledger record keeps its
    own); with ``None``, the item without an expiry."""
    if at is None:
        return {name: value for name, value in item.items() if name != TTL_ATTRIBUTE}
    stamp = int(at.timestamp())
    current = item.get(TTL_ATTRIBUTE, {}).get("N")
    return {**item, TTL_ATTRIBUTE: {"N": str(min(stamp, int(current)) if current else stamp)}}


def partition_pages(client: AwsClient, table: str, pk: str, sk_prefix: str = "") -> Iterator[list[Item]]:
    """Every item of the partition (whose sort key starts with ``sk_prefix``), page by page."""
    condition = f"{PK} = :pk" + (f" AND begins_with({SK}, :prefix)" if sk_prefix else "")
    values: dict[str, Any] = {":pk": {"S": pk}} | ({":prefix": {"S": sk_prefix}} if sk_prefix else {})
    paginator = client.get_paginator("query")
    pages = paginator.paginate(
        TableName=table, KeyConditionExpression=condition, ExpressionAttributeValues=values, ConsistentRead=True
    )
    for page in pages:
        yield page.get("Items", [])
