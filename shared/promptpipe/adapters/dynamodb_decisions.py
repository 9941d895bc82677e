"""The study decisions in the main table (``DecisionLog``, docs/studies.md#the-decision-record).

Each decision is written by the commit of the event that made it (``adapters/dynamodb_commit.py``);
this adapter reads them back and fills in what is learnt later (the delivery, the proximal outcome)
with a ``PutItem`` conditional on the item existing, so an update never creates a record without its
decision. Keys: ``adapters/dynamodb_items.py``.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from promptpipe.adapters.aws import AwsClient, TableAdapter
from promptpipe.adapters.aws_errors import CONDITIONAL_CHECK_FAILED, error_code, store_operation
from promptpipe.adapters.dynamodb_items import (
    DECISION_SK_PREFIX,
    DECISIONS_GSI_PREFIX,
    GSI_PK,
    PK,
    SK,
    decision_from_item,
    decision_item,
    decision_key,
    participant_pk,
)
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
        return self._query(
            {
                "IndexName": self._index,
                "KeyConditionExpression": f"{GSI_PK} = :g",
                "ExpressionAttributeValues": {":g": {"S": f"{DECISIONS_GSI_PREFIX}{study_id}"}},
            }
        )

    @store_operation
    def update(self, record: DecisionRecord) -> None:
        try:
            self._client.put_item(
                TableName=self._table, Item=decision_item(record), ConditionExpression=f"attribute_exists({SK})"
            )
        except ClientError as exc:
            if error_code(exc) != CONDITIONAL_CHECK_FAILED:
                raise
            # No decision, no record: an update never creates one (the participant's items erased).

    def _query(self, request: dict[str, Any]) -> list[DecisionRecord]:
        records: list[DecisionRecord] = []
        start: dict[str, Any] | None = None
        while True:
            paging = {"ExclusiveStartKey": start} if start else {}
            page = self._client.query(TableName=self._table, **request, **paging)
            records += [decision_from_item(item) for item in page.get("Items", [])]
            start = page.get("LastEvaluatedKey")
            if not start:
                return records
