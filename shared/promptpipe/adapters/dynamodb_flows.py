"""The ``FlowDefinitionStore`` port over the main DynamoDB table (keys: ``dynamodb_items``).

| item            | pk             | sk                    |
|-----------------|----------------|-----------------------|
| one version     | ``FLOW#{id}``  | ``V#{version:06d}``   |
| latest (a copy) | ``FLOW#{id}``  | ``LATEST``            |

Each item holds the definition as a JSON string. ``LATEST`` carries a full copy of the newest
version, so reading the latest definition is one ``GetItem``; a new version and the pointer are
written in one transaction, conditional on the pointer still naming the previous version. Store
failures other than that lost condition are ``StoreError`` (``aws_errors.store_operation``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from promptpipe.adapters.aws import TableAdapter
from promptpipe.adapters.aws_errors import (
    CONDITION_FAILED,
    TRANSACTION_CONFLICT,
    cancellation_codes,
    is_cancellation,
    store_operation,
)
from promptpipe.adapters.dynamodb_items import (
    FLOW_LATEST_SK,
    FLOW_VERSION_SK_PREFIX,
    PK,
    SK,
    flow_definition_pk,
    flow_version_sk,
    key,
)
from promptpipe.controller.definition import FlowDefinition
from promptpipe.controller.ports import FlowVersionConflict, FlowVersionInfo, StoredFlow
from promptpipe.rules.clock import parse_rfc3339, to_rfc3339


def _item(stored: StoredFlow, sk: str) -> dict[str, Any]:
    definition = stored.definition
    return {
        **key(flow_definition_pk(definition.id), sk),
        "version": {"N": str(definition.version)},
        "definition": {"S": definition.model_dump_json(by_alias=True)},
        "created_at": {"S": to_rfc3339(stored.created_at)},
        "created_by": {"S": stored.created_by},
    }


def _stored(item: dict[str, Any]) -> StoredFlow:
    return StoredFlow(
        definition=FlowDefinition.model_validate_json(item["definition"]["S"]),
        created_at=parse_rfc3339(item["created_at"]["S"]),
        created_by=item.get("created_by", {}).get("S", ""),
    )


class DynamoFlowDefinitionStore(TableAdapter):
    def _get(self, flow_id: str, sk: str) -> StoredFlow | None:
        response = self._client.get_item(
            TableName=self._table, Key=key(flow_definition_pk(flow_id), sk), ConsistentRead=True
        )
        item = response.get("Item")
        return _stored(item) if item else None

    @store_operation
    def latest(self, flow_id: str) -> StoredFlow | None:
        return self._get(flow_id, FLOW_LATEST_SK)

    @store_operation
    def get(self, flow_id: str, version: int) -> StoredFlow | None:
        return self._get(flow_id, flow_version_sk(version))

    @store_operation
    def put(self, stored: StoredFlow) -> None:
        version = stored.definition.version
        if version == 1:
            pointer_condition: dict[str, Any] = {"ConditionExpression": f"attribute_not_exists({PK})"}
        else:
            pointer_condition = {
                "ConditionExpression": "version = :previous",
                "ExpressionAttributeValues": {":previous": {"N": str(version - 1)}},
            }
        try:
            self._client.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": self._table,
                            "Item": _item(stored, flow_version_sk(version)),
                            "ConditionExpression": f"attribute_not_exists({PK})",
                        }
                    },
                    {"Put": {"TableName": self._table, "Item": _item(stored, FLOW_LATEST_SK), **pointer_condition}},
                ]
            )
        except ClientError as exc:
            if not is_cancellation(exc):
                raise
            codes = cancellation_codes(exc)
            # A lost condition or a concurrent writer; any other reason (throttling) is a store failure.
            if not codes or CONDITION_FAILED in codes or TRANSACTION_CONFLICT in codes:
                raise FlowVersionConflict(f"{stored.definition.id}: version {version} is not next") from exc
            raise

    @store_operation
    def versions(self, flow_id: str) -> list[FlowVersionInfo]:
        result: list[FlowVersionInfo] = []
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": f"{PK} = :pk AND begins_with({SK}, :prefix)",
            "ExpressionAttributeValues": {
                ":pk": {"S": flow_definition_pk(flow_id)},
                ":prefix": {"S": FLOW_VERSION_SK_PREFIX},
            },
            "ProjectionExpression": "version, created_at, created_by",
        }
        while True:
            response = self._client.query(**request)
            for item in response.get("Items", []):
                result.append(
                    FlowVersionInfo(
                        version=int(item["version"]["N"]),
                        created_at=_parse(item["created_at"]["S"]),
                        created_by=item.get("created_by", {}).get("S", ""),
                    )
                )
            if "LastEvaluatedKey" not in response:
                return result
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def _parse(text: str) -> datetime:
    return parse_rfc3339(text)
