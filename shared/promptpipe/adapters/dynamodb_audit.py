"""The ``AuditLog`` port over the main DynamoDB table.

| item         | pk              | sk                                                  |
|--------------|-----------------|-----------------------------------------------------|
| audit record | ``AUDIT#study`` | ``{participant id or -}#{utc, fixed width}#{record id}`` |

One partition for the study's audit: coordinators' actions are few (a handful a participant), so the
export reads them all with one ``Query`` a page, and a participant's with ``begins_with``. The items
sit outside the participant's partition: deleting or erasing the participant leaves them (an
erasure blanks their reasons, ``redact``). No TTL: they are the study's record.
"""

from __future__ import annotations

from datetime import UTC
from typing import Any

from promptpipe.adapters.aws import TableAdapter
from promptpipe.adapters.aws_errors import store_operation
from promptpipe.adapters.dynamodb_items import PK, SK, key
from promptpipe.models.audit import AuditRecord

AUDIT_PK = "AUDIT#study"  # one partition for the study (AUDIT# as the other items prefix theirs)
STUDY = "-"  # the sk prefix of an action on the study (the export)


def audit_sk(record: AuditRecord) -> str:
    at = record.at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # fixed width: sorts by time
    return f"{record.participant_id or STUDY}#{at}#{record.record_id}"


class DynamoAuditLog(TableAdapter):
    @store_operation
    def append(self, record: AuditRecord) -> None:
        self._client.put_item(
            TableName=self._table,
            Item={**key(AUDIT_PK, audit_sk(record)), "record": {"S": record.model_dump_json()}},
            ConditionExpression=f"attribute_not_exists({PK})",
        )

    def _query(self, participant_id: str | None) -> list[dict[str, Any]]:
        request: dict[str, Any] = {"TableName": self._table, "ConsistentRead": True}
        if participant_id is None:
            request["KeyConditionExpression"] = f"{PK} = :pk"
            request["ExpressionAttributeValues"] = {":pk": {"S": AUDIT_PK}}
        else:
            request["KeyConditionExpression"] = f"{PK} = :pk AND begins_with({SK}, :prefix)"
            request["ExpressionAttributeValues"] = {":pk": {"S": AUDIT_PK}, ":prefix": {"S": f"{participant_id}#"}}
        items: list[dict[str, Any]] = []
        while True:
            response = self._client.query(**request)
            items.extend(response.get("Items", []))
            if "LastEvaluatedKey" not in response:
                return items
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    @store_operation
    def records(self, participant_id: str | None = None) -> list[AuditRecord]:
        return [AuditRecord.model_validate_json(item["record"]["S"]) for item in self._query(participant_id)]

    @store_operation
    def redact(self, participant_id: str) -> None:
        for item in self._query(participant_id):
            record = AuditRecord.model_validate_json(item["record"]["S"])
            if record.redacted:
                continue
            erased = record.model_copy(update={"reason": "", "redacted": True})
            self._client.put_item(
                TableName=self._table,
                Item={**key(AUDIT_PK, item[SK]["S"]), "record": {"S": erased.model_dump_json()}},
            )
