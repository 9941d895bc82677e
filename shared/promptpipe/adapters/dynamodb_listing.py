"""The participants list's reads (``ParticipantRepo.page``, ``count``, ``list_states``,
``needs_person_queue``) over the
main table: a page of META records from the participants index (status filtered by DynamoDB), how
many there are, and the page's flow states projected to the keys a list row shows, in one
``BatchGetItem``. Docs: docs/console.md ("The list's reads"), docs/architecture.md#state.

The base of ``DynamoParticipantRepo`` (``adapters/dynamodb.py``): a ``TableAdapter`` that also uses
that class's ``_index``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from promptpipe.adapters.aws import TableAdapter
from promptpipe.adapters.aws_errors import store_operation
from promptpipe.adapters.dynamodb_items import (
    FLOW_SK,
    GSI_PK,
    GSI_SK,
    KEY_ATTRIBUTES,
    META_SK,
    NEEDS_PERSON_GSI_PK,
    PARTICIPANT_PREFIX,
    PARTICIPANTS_GSI_PK,
    PK,
    SK,
    Item,
    decode_token,
    encode_token,
    from_attribute,
    index_partition_query,
    key,
    needs_person_from_item,
    participant_pk,
    sortable_timestamp,
)
from promptpipe.errors import StoreError, ValidationFailed
from promptpipe.models.participant_rows import LISTED_FIELDS, ROW_STATE_KEYS, ListedParticipant
from promptpipe.models.safety import NeedsPerson


def _start_key(token: str) -> Item:
    """A ``page`` cursor as the index key it stands for (``ValidationFailed`` for anything else)."""
    return decode_token(
        token,
        keys=KEY_ATTRIBUTES,
        check=lambda k: k[GSI_PK] == PARTICIPANTS_GSI_PK and k[PK].startswith(PARTICIPANT_PREFIX) and k[SK] == META_SK,
    )


# BatchGetItem takes at most 100 keys a call.
_BATCH_GET_SIZE = 100
_BATCH_GET_RETRIES = 8


class DynamoParticipantListing(TableAdapter):
    """The list's reads; the base of ``DynamoParticipantRepo``."""

    _index: str
    _sleep: Callable[[float], None]

    @store_operation
    def needs_person_queue(self, limit: int) -> list[NeedsPerson]:
        """The needs-a-person markers, the longest wait first: one Query of the index's
        ``NEEDS_PERSON`` partition, whatever the study's size (docs/console.md, "Nobody missed")."""
        request = index_partition_query(self._table, self._index, NEEDS_PERSON_GSI_PK)
        response = self._client.query(**request, Limit=limit)
        return [entry for item in response.get("Items", []) if (entry := needs_person_from_item(item)) is not None]

    @store_operation
    def pending_hold_alerts(self, started_before: datetime) -> list[NeedsPerson]:
        """The markers of holds begun before ``started_before`` whose alert is still pending: one Query
        of the ``NEEDS_PERSON`` partition, the sort key (the hold's start first) bounding the holds,
        a filter keeping the pending ones, every page followed."""
        request: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": self._index,
            "KeyConditionExpression": f"{GSI_PK} = :g AND {GSI_SK} < :before",
            "FilterExpression": "alert_pending = :t",
            "ExpressionAttributeValues": {
                ":g": {"S": NEEDS_PERSON_GSI_PK},
                ":before": {"S": sortable_timestamp(started_before)},
                ":t": {"BOOL": True},
            },
        }
        found: list[NeedsPerson] = []
        while True:
            response = self._client.query(**request)
            found += [e for item in response.get("Items", []) if (e := needs_person_from_item(item)) is not None]
            if "LastEvaluatedKey" not in response:
                return found
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def _index_request(
        self, status: str | None, *, projected: bool = False, next_token: str | None = None
    ) -> dict[str, Any]:
        """A Query of the participants index, newest first: of ``status`` (all when None), from
        ``next_token`` (a ``page`` cursor) on, ``projected`` to the listed fields and the keys."""
        names: dict[str, str] = {}
        request = index_partition_query(self._table, self._index, PARTICIPANTS_GSI_PK) | {"ScanIndexForward": False}
        if status:
            request["FilterExpression"] = "#status = :status"
            names["#status"] = "status"
            request["ExpressionAttributeValues"][":status"] = {"S": status}
        if projected:  # the record's listed fields and the keys (a cursor is made of them)
            fields = {f"#f{n}": name for n, name in enumerate((*sorted(KEY_ATTRIBUTES), *LISTED_FIELDS))}
            request["ProjectionExpression"] = ", ".join(fields)
            names |= fields
        if names:
            request["ExpressionAttributeNames"] = names
        if next_token is not None:
            request["ExclusiveStartKey"] = _start_key(next_token)
        return request

    @store_operation
    def page(
        self, *, limit: int, next_token: str | None, status: str | None = None
    ) -> tuple[list[ListedParticipant], str | None]:
        """Newest first, at most ``limit`` of ``status`` (all when None), only the listed fields:
        DynamoDB filters, so a page reads only what it returns plus what the filter drops (and one
        item to know there is more)."""
        if limit < 1:
            raise ValidationFailed("limit must be at least 1", field="limit")
        request = self._index_request(status, projected=True, next_token=next_token)
        found: list[Item] = []
        while True:
            # One more than still wanted: a page that ends the listing then carries no token.
            response = self._client.query(**request, Limit=limit - len(found) + 1)
            found += response.get("Items", [])
            last_key = response.get("LastEvaluatedKey")
            if len(found) > limit:
                found = found[:limit]
                token: str | None = encode_token({name: found[-1][name] for name in sorted(KEY_ATTRIBUTES)})
                break
            if not last_key:
                token = None
                break
            request["ExclusiveStartKey"] = last_key
        return [
            ListedParticipant.model_validate({k: from_attribute(v) for k, v in item.items() if k not in KEY_ATTRIBUTES})
            for item in found
        ], token

    @store_operation
    def count(self, *, status: str | None = None, through: str | None = None) -> int:
        """How many participants (of ``status``): ``Select=COUNT`` returns no item, only the number.
        With ``through`` (a ``page`` cursor): those up to the cursor's place, newest first (its
        index key and every greater one), so a page's first row is counted when the page is read."""
        request = self._index_request(status)
        if through is not None:
            request["KeyConditionExpression"] += f" AND {GSI_SK} >= :through"
            request["ExpressionAttributeValues"][":through"] = _start_key(through)[GSI_SK]
        total = 0
        while True:
            response = self._client.query(**request, Select="COUNT")
            total += int(response.get("Count", 0))
            last_key = response.get("LastEvaluatedKey")
            if not last_key:
                return total
            request["ExclusiveStartKey"] = last_key

    @store_operation
    def list_states(self, participant_ids: Sequence[str]) -> dict[str, dict[str, str]]:
        """The ``state_data`` keys of ``ROW_STATE_KEYS`` of each participant's flow state, in
        ``BatchGetItem`` calls of up to 100 keys (a participant without a flow item is left out)."""
        names = {f"#k{n}": name.value for n, name in enumerate(ROW_STATE_KEYS)}
        projection = ", ".join([f"#{PK}", *(f"state_data.{alias}" for alias in names)])
        states: dict[str, dict[str, str]] = {}
        for item in self._batch_get(participant_ids, FLOW_SK, projection, {f"#{PK}": PK, **names}, "list_states"):
            participant_id = item[PK]["S"][len(PARTICIPANT_PREFIX) :]
            data = item.get("state_data", {}).get("M", {})
            states[participant_id] = {name: value["S"] for name, value in data.items() if "S" in value}
        return states

    @store_operation
    def listed(self, participant_ids: Sequence[str]) -> list[ListedParticipant]:
        """The listed fields of each participant's record (META), in ``BatchGetItem`` calls of up to
        100 keys; a participant gone is left out."""
        names = {f"#f{n}": name for n, name in enumerate(LISTED_FIELDS)}
        items = self._batch_get(participant_ids, META_SK, ", ".join(names), names, "listed")
        return [
            ListedParticipant.model_validate({k: from_attribute(v) for k, v in item.items() if k not in KEY_ATTRIBUTES})
            for item in items
        ]

    def _batch_get(
        self, participant_ids: Sequence[str], sk: str, projection: str, names: dict[str, str], operation: str
    ) -> list[Item]:
        """The item ``sk`` of each participant, projected, 100 keys a call; unprocessed keys asked for
        again with backoff (throttling), then a ``StoreError``."""
        found: list[Item] = []
        unique = list(dict.fromkeys(participant_ids))
        for start in range(0, len(unique), _BATCH_GET_SIZE):
            keys = [key(participant_pk(pid), sk) for pid in unique[start : start + _BATCH_GET_SIZE]]
            request: dict[str, Any] = {
                self._table: {"Keys": keys, "ProjectionExpression": projection, "ExpressionAttributeNames": names}
            }
            for attempt in range(_BATCH_GET_RETRIES):
                response = self._client.batch_get_item(RequestItems=request)
                found += response.get("Responses", {}).get(self._table, [])
                request = response.get("UnprocessedKeys") or {}
                if not request:
                    break
                self._sleep(min(0.05 * 2**attempt, 2.0))  # unprocessed keys mean throttling
            else:
                raise StoreError(
                    f"DynamoParticipantRepo.{operation}: items could not be read (throttled)",
                    operation=f"DynamoParticipantRepo.{operation}",
                    code="UnprocessedKeys",
                )
        return found
