"""The study decisions in the main table (``DecisionLog``, docs/studies.md#the-decision-record).

Each decision is written by the commit of the event that made it (``adapters/dynamodb_commit.py``);
this adapter reads them back and fills in what is learnt later (the delivery, the proximal outcome)
with a ``PutItem`` conditional on the item existing, so an update never creates a record without its
decision. Keys: ``adapters/dynamodb_items.py``.
"""

from __future__ import annotations

from typing import Any

from promptpipe.adapters.aws import AwsClient, TableAdapter
from promptpipe.adapters.aws_errors import condition_held, store_operation
from promptpipe.adapters.dynamodb_items import (
    DECISION_SK_PREFIX,
    DECISIONS_GSI_PREFIX,
    GSI_PK,
    KEY_ATTRIBUTES,
    PK,
    SK,
    decision_from_item,
    decision_item,
    decision_key,
    decode_token,
    encode_token,
    index_partition_query,
    participant_pk,
)
from promptpipe.errors import ValidationFailed
from promptpipe.models.decision import DecisionRecord


def _parts(decision_id: str) -> tuple[str, str, int] | None:
    participant_id, _, rest = decision_id.partition("#")
    point, _, day = rest.rpartition("#")
    return (participant_id, point, int(day)) if point and day.isdigit() else None


class DynamoDecisionLog(TableAdapter):
    def __init__(self, table_name: str, client: AwsClient, *, index_name: str) -> None:
        super().__init__(table_name, client)
        self._index = index_name

    @store_operation
    def get(self, decision_id: str) -> DecisionRecord | None:
        parts = _parts(decision_id)
        if parts is None:
            return None
        item = self._client.get_item(TableName=self._table, Key=decision_key(*parts), ConsistentRead=True).get("Item")
        return decision_from_item(item) if item else None

    @store_operation
    def for_participant(self, participant_id: str) -> list[DecisionRecord]:
        return self._query(
            {
                "TableName": self._table,
                "KeyConditionExpression": f"{PK} = :pk AND begins_with({SK}, :d)",
                "ExpressionAttributeValues": {
                    ":pk": {"S": participant_pk(participant_id)},
                    ":d": {"S": DECISION_SK_PREFIX},
                },
                "ConsistentRead": True,
            }
        )

    @store_operation
    def all(self, study_id: str) -> list[DecisionRecord]:
        return self._query(index_partition_query(self._table, self._index, f"{DECISIONS_GSI_PREFIX}{study_id}"))

    @store_operation
    def page(
        self, study_id: str, *, limit: int, next_token: str | None = None
    ) -> tuple[list[DecisionRecord], str | None]:
        """One page off the index (the API's decisions route); the token is the last key read."""
        if limit < 1:
            raise ValidationFailed("limit must be at least 1", field="limit")
        partition = f"{DECISIONS_GSI_PREFIX}{study_id}"
        request = index_partition_query(self._table, self._index, partition)
        if next_token is not None:
            request["ExclusiveStartKey"] = decode_token(
                next_token,
                keys=KEY_ATTRIBUTES,
                check=lambda key: key[GSI_PK] == partition and key[SK].startswith(DECISION_SK_PREFIX),
            )
        # One more than asked, so that the last page carries no token (DynamoDB gives a
        # LastEvaluatedKey whenever Limit is reached, even with nothing after it).
        response = self._client.query(**request, Limit=limit + 1)
        items: list[dict[str, Any]] = response.get("Items", [])
        last_key = {name: items[limit - 1][name] for name in KEY_ATTRIBUTES} if len(items) > limit else None
        last_key = last_key or response.get("LastEvaluatedKey")  # a page cut short at 1 MB
        token = encode_token(last_key) if last_key else None
        return [decision_from_item(item) for item in items[:limit]], token

    @store_operation
    def update(self, record: DecisionRecord) -> None:
        # A lost condition: no decision, no record; an update never creates one (the participant's
        # items erased).
        condition_held(
            self._client.put_item,
            TableName=self._table,
            Item=decision_item(record),
            ConditionExpression=f"attribute_exists({SK})",
        )

    def _query(self, request: dict[str, Any]) -> list[DecisionRecord]:
        records: list[DecisionRecord] = []
        start: dict[str, Any] | None = None
        while True:
            paging = {"ExclusiveStartKey": start} if start else {}
            page = self._client.query(**request, **paging)
            records += [decision_from_item(item) for item in page.get("Items", [])]
            start = page.get("LastEvaluatedKey")
            if not start:
                return records
