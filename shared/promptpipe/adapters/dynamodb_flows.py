"""The ``FlowDefinitionStore`` port over the main DynamoDB table.

| item            | pk             | sk                    |
|-----------------|----------------|-----------------------|
| one version     | ``FLOW#{id}``  | ``V#{version:06d}``   |
| latest (a copy) | ``FLOW#{id}``  | ``LATEST``            |

Each item holds the definition as a JSON string. ``LATEST`` carries a full copy of the newest
version, so reading the latest definition is one ``GetItem``; a new version and the pointer are
written in one transaction, conditional on the pointer still naming the previous version.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from promptpipe.adapters.aws import AwsClient
from promptpipe.clock import parse_rfc3339, to_rfc3339
from promptpipe.controller.definition import FlowDefinition
from promptpipe.controller.ports import FlowVersionConflict, FlowVersionInfo, StoredFlow

FLOW_PK_PREFIX = "FLOW#"
VERSION_SK_PREFIX = "V#"
LATEST_SK = "LATEST"


def flow_pk(flow_id: str) -> str:
    return f"{FLOW_PK_PREFIX}{flow_id}"


def version_sk(version: int) -> str:
    return f"{VERSION_SK_PREFIX}{version:06d}"


def _item(stored: StoredFlow, sk: str) -> dict[str, Any]:
    definition = stored.definition
    return {
        "pk": {"S": flow_pk(definition.id)},
        "sk": {"S": sk},
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


class DynamoFlowDefinitionStore:
    def __init__(self, table_name: str, client: AwsClient) -> None:
        self._table = table_name
        self._client = client

    def _get(self, flow_id: str, sk: str) -> StoredFlow | None:
        response = self._client.get_item(
            TableName=self._table, Key={"pk": {"S": flow_pk(flow_id)}, "sk": {"S": sk}}, ConsistentRead=True
        )
        item = response.get("Item")
        return _stored(item) if item else None

    def latest(self, flow_id: str) -> StoredFlow | None:
        return self._get(flow_id, LATEST_SK)

    def get(self, flow_id: str, version: int) -> StoredFlow | None:
        return self._get(flow_id, version_sk(version))

    def put(self, stored: StoredFlow) -> None:
        version = stored.definition.version
        if version == 1:
            pointer_condition: dict[str, Any] = {"ConditionExpression": "attribute_not_exists(pk)"}
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
                            "Item": _item(stored, version_sk(version)),
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    },
                    {"Put": {"TableName": self._table, "Item": _item(stored, LATEST_SK), **pointer_condition}},
                ]
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "TransactionCanceledException":
                raise FlowVersionConflict(f"{stored.definition.id}: version {version} is not next") from exc
            raise

    def versions(self, flow_id: str) -> list[FlowVersionInfo]:
        result: list[FlowVersionInfo] = []
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": {":pk": {"S": flow_pk(flow_id)}, ":prefix": {"S": VERSION_SK_PREFIX}},
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
