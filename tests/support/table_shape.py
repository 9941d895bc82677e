"""A DynamoDB table as CloudFormation (the synthesized stack) or DescribeTable (the local table) states
it, reduced to the form of ``TableShape.canonical()``: the shape tests compare both with the one
declaration, ``promptpipe.adapters.dynamodb_table.TABLE``."""

from __future__ import annotations

from typing import Any


def shape_of(table: dict[str, Any], *, ttl_attribute: str | None) -> dict[str, Any]:
    """``table``: a CloudFormation table's Properties or DescribeTable's ``Table``; ``ttl_attribute``:
    the enabled TTL attribute (from TimeToLiveSpecification or DescribeTimeToLive), or None."""
    stream = table.get("StreamSpecification") or {}
    indexes = [
        {
            "IndexName": index["IndexName"],
            "KeySchema": index["KeySchema"],
            "Projection": {"ProjectionType": index["Projection"]["ProjectionType"]},
        }
        for index in table.get("GlobalSecondaryIndexes", [])
    ]
    return {
        "KeySchema": table["KeySchema"],
        "AttributeDefinitions": sorted(table["AttributeDefinitions"], key=lambda a: str(a["AttributeName"])),
        "GlobalSecondaryIndexes": sorted(indexes, key=lambda i: str(i["IndexName"])),
        "TimeToLiveAttribute": ttl_attribute,
        "StreamViewType": stream.get("StreamViewType") if stream.get("StreamEnabled", bool(stream)) else None,
    }
