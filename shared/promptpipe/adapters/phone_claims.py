"""Moving a participant's phone claim to a new number, atomically (WhatsApp "changed number").

One DynamoDB transaction: the old claim released (only if it is this participant's), the new claim
taken (only if nobody holds it), the participant's ``phone_number`` changed (only if it is still the
old number), and the flow state's ``version`` moved on (only if it is still the version read), so a
turn committing at the same time with the participant it loaded (and its old number) conflicts and
replays against the new one instead of writing the old number back.

``MemoryPhoneClaims`` does the same on ``InMemoryStore`` for unit tests. Store failures other than
the lost conditions are ``StoreError`` (``aws_errors.store_operation``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from botocore.exceptions import ClientError

from promptpipe.adapters.aws import TableAdapter
from promptpipe.adapters.aws_errors import cancellation_codes, condition_failed, is_cancellation, store_operation
from promptpipe.adapters.dynamodb_items import PK, flow_key, meta_key, phone_claim_item, phone_claim_key
from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.errors import ParticipantNotFound, StateConflict
from promptpipe.settings import Settings

MAX_ATTEMPTS = 4


class PhoneMove(StrEnum):
    MOVED = "moved"
    ALREADY = "already"  # the participant already has the new number (a repeated notice)
    CONFLICT = "conflict"  # the new number belongs to another participant: nothing changed
    STALE = "stale"  # the participant's number is neither the old nor the new one: nothing changed


class DynamoPhoneClaims(TableAdapter):
    @store_operation
    def move(self, participant_id: str, old_phone: str, new_phone: str) -> PhoneMove:
        for _ in range(MAX_ATTEMPTS):
            current = self._current(participant_id)
            if current is None:
                raise ParticipantNotFound(participant_id)
            phone, version = current
            if phone == new_phone:
                return PhoneMove.ALREADY
            if phone != old_phone:
                return PhoneMove.STALE
            try:
                self._client.transact_write_items(
                    TransactItems=self._actions(participant_id, old_phone, new_phone, version)
                )
                return PhoneMove.MOVED
            except ClientError as exc:
                if not is_cancellation(exc):
                    raise
                if condition_failed(cancellation_codes(exc), 1):
                    return PhoneMove.CONFLICT
                # The number or the version moved meanwhile: read again and decide again.
        raise StateConflict(f"could not move the phone claim of {participant_id}")

    def _current(self, participant_id: str) -> tuple[str, int] | None:
        meta = self._get(meta_key(participant_id))
        if not meta:
            return None
        flow = self._get(flow_key(participant_id))
        version = int(flow["version"]["N"]) if flow else 0
        return meta["phone_number"]["S"], version

    def _get(self, item_key: dict[str, Any]) -> dict[str, Any] | None:
        item: dict[str, Any] | None = self._client.get_item(
            TableName=self._table, Key=item_key, ConsistentRead=True
        ).get("Item")
        return item

    def _actions(self, participant_id: str, old: str, new: str, version: int) -> list[dict[str, Any]]:
        return [
            {
                "Delete": {
                    "TableName": self._table,
                    "Key": phone_claim_key(old),
                    "ConditionExpression": f"attribute_not_exists({PK}) OR participant_id = :id",
                    "ExpressionAttributeValues": {":id": {"S": participant_id}},
                }
            },
            {
                "Put": {
                    "TableName": self._table,
                    "Item": phone_claim_item(new, participant_id),
                    "ConditionExpression": f"attribute_not_exists({PK})",
                }
            },
            {
                "Update": {
                    "TableName": self._table,
                    "Key": meta_key(participant_id),
                    "UpdateExpression": "SET phone_number = :new",
                    "ConditionExpression": "phone_number = :old",
                    "ExpressionAttributeValues": {":new": {"S": new}, ":old": {"S": old}},
                }
            },
            {
                "Update": {
                    "TableName": self._table,
                    "Key": flow_key(participant_id),
                    "UpdateExpression": "SET #v = :next",
                    "ConditionExpression": f"attribute_not_exists({PK}) OR #v = :expected",
                    "ExpressionAttributeNames": {"#v": "version"},
                    "ExpressionAttributeValues": {":next": {"N": str(version + 1)}, ":expected": {"N": str(version)}},
                }
            },
        ]


def phone_claims_for(repo: object, settings: Settings) -> DynamoPhoneClaims | MemoryPhoneClaims:
    """The claims of the app's own participant store: in memory for an ``InMemoryStore``, else the
    DynamoDB table of ``settings``."""
    if isinstance(repo, InMemoryStore):
        return MemoryPhoneClaims(repo)
    from promptpipe.adapters.aws import aws_client

    return DynamoPhoneClaims(settings.table_name, aws_client("dynamodb", settings))


class MemoryPhoneClaims:
    """``InMemoryStore``'s claims: the same decisions under the store's lock."""

    def __init__(self, store: InMemoryStore) -> None:
        self._store = store

    def move(self, participant_id: str, old_phone: str, new_phone: str) -> PhoneMove:
        store = self._store
        with store._lock:
            participant = store.participants.get(participant_id)
            if participant is None:
                raise ParticipantNotFound(participant_id)
            if participant.phone_number == new_phone:
                return PhoneMove.ALREADY
            if participant.phone_number != old_phone:
                return PhoneMove.STALE
            if store.phones.get(new_phone, participant_id) != participant_id:
                return PhoneMove.CONFLICT
            if store.phones.get(old_phone) == participant_id:
                del store.phones[old_phone]
            store.phones[new_phone] = participant_id
            store.participants[participant_id] = participant.model_copy(update={"phone_number": new_phone})
            flow = store.flows.get(participant_id)
            if flow is not None:
                store.flows[participant_id] = flow.model_copy(update={"version": flow.version + 1})
            return PhoneMove.MOVED
