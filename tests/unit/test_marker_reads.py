"""The DynamoDB reads behind the needs-a-person markers (adapters/dynamodb_listing.py), on a stub
client: the hold-alert sweep's Query bounds the holds by the index's sort key and follows every
page; the records the markers name are read in BatchGetItems that retry unprocessed keys and then
fail loudly, as the list's flow states are."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from promptpipe.adapters.dynamodb import DynamoParticipantRepo
from promptpipe.errors import StoreError

SINCE = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def _marker(pid: str) -> dict[str, Any]:
    return {
        "participant_id": {"S": pid},
        "name": {"S": "Rosa"},
        "reason": {"S": "asked"},
        "since": {"S": "2026-03-02T11:00:00Z"},
        "detail": {"S": ""},
        "alert_pending": {"BOOL": True},
    }


class PagedQuery:
    """Answers a Query in two pages."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    def query(self, **request: Any) -> dict[str, Any]:
        self.requests.append(request)
        if "ExclusiveStartKey" not in request:
            return {"Items": [_marker("p_1")], "LastEvaluatedKey": {"pk": {"S": "after-p_1"}}}
        return {"Items": [_marker("p_2")]}


def test_the_pending_alerts_query_is_bounded_by_the_holds_start_and_follows_every_page() -> None:
    client = PagedQuery()
    found = DynamoParticipantRepo("t", client, "gsi1").pending_hold_alerts(SINCE)
    assert [m.participant_id for m in found] == ["p_1", "p_2"] and all(m.alert_pending for m in found)
    first, second = client.requests
    assert first["KeyConditionExpression"] == "gsi1pk = :g AND gsi1sk < :before"
    assert first["ExpressionAttributeValues"][":g"] == {"S": "NEEDS_PERSON"}
    assert first["ExpressionAttributeValues"][":before"] == {"S": "2026-03-02T12:00:00.000000Z"}
    assert first["FilterExpression"] == "alert_pending = :t"
    assert second["ExclusiveStartKey"] == {"pk": {"S": "after-p_1"}}


class Throttled:
    """A BatchGetItem that leaves every key unprocessed ``times`` times, then answers META items."""

    def __init__(self, times: int) -> None:
        self.times, self.calls = times, 0

    def batch_get_item(self, **kwargs: Any) -> dict[str, Any]:
        self.calls += 1
        if self.calls <= self.times:
            return {"Responses": {}, "UnprocessedKeys": kwargs["RequestItems"]}
        keys = kwargs["RequestItems"]["t"]["Keys"]
        return {
            "Responses": {
                "t": [
                    {
                        **k,
                        "id": {"S": k["pk"]["S"].removeprefix("PARTICIPANT#")},
                        "phone_number": {"S": "+14155550101"},
                        "enrolled_at": {"S": "2026-03-02T12:00:00Z"},
                        "created_at": {"S": "2026-03-02T12:00:00Z"},
                    }
                    for k in keys
                ]
            }
        }


def test_the_records_the_markers_name_are_read_in_batches_retrying_unprocessed_keys() -> None:
    pauses: list[float] = []
    client = Throttled(times=2)
    listed = DynamoParticipantRepo("t", client, "gsi1", sleep=pauses.append).listed(["p_1", "p_2", "p_1"])
    assert sorted(p.id for p in listed) == ["p_1", "p_2"]
    assert (client.calls, pauses) == (3, [0.05, 0.1])


@pytest.mark.parametrize("read", ["listed", "list_states"])
def test_a_batch_that_stays_throttled_is_a_store_error_not_fewer_rows(read: str) -> None:
    client = Throttled(times=100)
    repo = DynamoParticipantRepo("t", client, "gsi1", sleep=lambda _s: None)
    with pytest.raises(StoreError, match="could not be read") as raised:
        getattr(repo, read)(["p_1"])
    assert (raised.value.operation, raised.value.code) == (f"DynamoParticipantRepo.{read}", "UnprocessedKeys")
    assert client.calls == 8
