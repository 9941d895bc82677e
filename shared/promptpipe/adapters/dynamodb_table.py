"""The main table's shape, stated once (docs/architecture.md#state).

The CDK stack (``infra/``) builds the table from ``TABLE``; the local stack (moto, ``make demo``, the
tests) creates it from ``TABLE.create_table_request``; the adapters name its key attributes through
it. Only the shape lives here, independent of the table's name: keys, indexes, the TTL attribute and
the stream (none). What the items look like is ``promptpipe.adapters.dynamodb_items``.

Plain data on purpose: no boto3 and no CDK import, so both sides can read it.
``TableShape.canonical`` is the comparable form the tests check the synthesized stack and the local
table against (tests/infra/test_table_shape.py, tests/integration/test_dynamodb_store.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

AttributeType = Literal["S", "N", "B"]
ProjectionType = Literal["ALL", "KEYS_ONLY"]


# Records, so named tuples: immutable like a frozen dataclass, and every function that reads the
# table defines them at import (a frozen dataclass generates its methods there: cold start,
# docs/benchmarks.md section 2).
class KeyAttribute(NamedTuple):
    name: str
    type: AttributeType = "S"


class Index(NamedTuple):
    """A global secondary index."""

    name: str
    partition_key: KeyAttribute
    sort_key: KeyAttribute | None = None
    projection: ProjectionType = "ALL"

    def key_schema(self) -> list[dict[str, str]]:
        return _key_schema(self.partition_key, self.sort_key)


@dataclass(frozen=True)
class TableShape:
    partition_key: KeyAttribute
    sort_key: KeyAttribute | None
    indexes: tuple[Index, ...]
    ttl_attribute: str
    stream: str | None = None  # a StreamViewType (NEW_IMAGE …); None: no stream

    def index(self, name: str) -> Index:
        (found,) = [index for index in self.indexes if index.name == name]
        return found

    @property
    def key_names(self) -> tuple[str, ...]:
        """The base table's key attribute names (partition first)."""
        return tuple(key.name for key in (self.partition_key, self.sort_key) if key is not None)

    def key_schema(self) -> list[dict[str, str]]:
        return _key_schema(self.partition_key, self.sort_key)

    def attribute_definitions(self) -> list[dict[str, str]]:
        """Every key attribute of the table and its indexes, once, sorted by name."""
        keys = [self.partition_key, self.sort_key]
        for index in self.indexes:
            keys += [index.partition_key, index.sort_key]
        by_name = {key.name: key.type for key in keys if key is not None}
        return [{"AttributeName": name, "AttributeType": kind} for name, kind in sorted(by_name.items())]

    def global_secondary_indexes(self) -> list[dict[str, Any]]:
        return [
            {
                "IndexName": index.name,
                "KeySchema": index.key_schema(),
                "Projection": {"ProjectionType": index.projection},
            }
            for index in self.indexes
        ]

    def create_table_request(self, table_name: str) -> dict[str, Any]:
        """The ``CreateTable`` parameters of this shape, on demand (TTL is a separate call)."""
        request: dict[str, Any] = {
            "TableName": table_name,
            "KeySchema": self.key_schema(),
            "AttributeDefinitions": self.attribute_definitions(),
            "BillingMode": "PAY_PER_REQUEST",
        }
        if self.indexes:
            request["GlobalSecondaryIndexes"] = self.global_secondary_indexes()
        if self.stream is not None:
            request["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": self.stream}
        return request

    def canonical(self) -> dict[str, Any]:
        """The shape as one comparable value: what a described or synthesized table reduces to."""
        return {
            "KeySchema": self.key_schema(),
            "AttributeDefinitions": self.attribute_definitions(),
            "GlobalSecondaryIndexes": sorted(self.global_secondary_indexes(), key=lambda i: str(i["IndexName"])),
            "TimeToLiveAttribute": self.ttl_attribute,
            "StreamViewType": self.stream,
        }


def _key_schema(partition_key: KeyAttribute, sort_key: KeyAttribute | None) -> list[dict[str, str]]:
    schema = [{"AttributeName": partition_key.name, "KeyType": "HASH"}]
    if sort_key is not None:
        schema.append({"AttributeName": sort_key.name, "KeyType": "RANGE"})
    return schema


PK = KeyAttribute("pk")
SK = KeyAttribute("sk")
GSI1PK = KeyAttribute("gsi1pk")
GSI1SK = KeyAttribute("gsi1sk")
TTL_ATTRIBUTE = "expires_at"

# Participants, newest first: every META item carries gsi1pk = PARTICIPANTS.
PARTICIPANTS_INDEX = Index("gsi1", partition_key=GSI1PK, sort_key=GSI1SK, projection="ALL")

TABLE = TableShape(
    partition_key=PK,
    sort_key=SK,
    indexes=(PARTICIPANTS_INDEX,),
    ttl_attribute=TTL_ATTRIBUTE,
    stream=None,
)
