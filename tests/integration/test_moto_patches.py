"""The local moto shortcuts (promptpipe.local.moto_patches) answer as DynamoDB does: a cancelled
transaction leaves every item it names untouched, and a Query by sort-key range reads the partition
in order, with Limit, ExclusiveStartKey and ScanIndexForward, including items written after an
earlier Query."""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from promptpipe.adapters.dynamodb_table import TABLE as MAIN_TABLE
from promptpipe.local.moto_patches import SortedPartition, speed_up_moto_transactions

TABLE = "patched"


@pytest.fixture
def ddb(aws: None) -> Iterator[Any]:
    speed_up_moto_transactions()
    client = boto3.client("dynamodb", region_name="us-east-1")
    client.create_table(**MAIN_TABLE.create_table_request(TABLE))
    yield client


def _put(client: Any, pk: str, sk: str, value: str = "v") -> None:
    client.put_item(TableName=TABLE, Item={"pk": {"S": pk}, "sk": {"S": sk}, "value": {"S": value}})


def _all(client: Any) -> list[dict[str, Any]]:
    return sorted(client.scan(TableName=TABLE)["Items"], key=lambda i: (i["pk"]["S"], i["sk"]["S"]))


def _query_all(client: Any, **request: Any) -> list[str]:
    """Every page of a Query; the sort keys in the order returned."""
    keys: list[str] = []
    while True:
        response = client.query(TableName=TABLE, **request)
        keys += [item["sk"]["S"] for item in response["Items"]]
        if "LastEvaluatedKey" not in response:
            return keys
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def test_cancelled_transaction_leaves_every_named_item_untouched(ddb: Any) -> None:
    # Given a partition with a state item, two entries, and a neighbour partition
    _put(ddb, "P#1", "STATE", "s1")
    _put(ddb, "P#1", "MSG#1", "m1")
    _put(ddb, "P#1", "MSG#2", "m2")
    _put(ddb, "P#2", "STATE", "other")
    before = _all(ddb)
    # When a transaction puts a new item, replaces one, updates one, deletes one, creates a new
    # partition, and then fails its last condition
    with pytest.raises(ClientError) as error:
        ddb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "P#1"}, "sk": {"S": "MSG#3"}}}},
                {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "P#1"}, "sk": {"S": "STATE"}, "value": {"S": "s2"}}}},
                {
                    "Update": {
                        "TableName": TABLE,
                        "Key": {"pk": {"S": "P#1"}, "sk": {"S": "MSG#1"}},
                        "UpdateExpression": "SET #v = :v",
                        "ExpressionAttributeNames": {"#v": "value"},
                        "ExpressionAttributeValues": {":v": {"S": "changed"}},
                    }
                },
                {"Delete": {"TableName": TABLE, "Key": {"pk": {"S": "P#1"}, "sk": {"S": "MSG#2"}}}},
                {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "P#9"}, "sk": {"S": "STATE"}}}},
                {
                    "ConditionCheck": {
                        "TableName": TABLE,
                        "Key": {"pk": {"S": "P#2"}, "sk": {"S": "STATE"}},
                        "ConditionExpression": "#v = :x",
                        "ExpressionAttributeNames": {"#v": "value"},
                        "ExpressionAttributeValues": {":x": {"S": "not it"}},
                    }
                },
            ]
        )
    # Then it was cancelled, and every item is as before: nothing written, nothing lost
    assert error.value.response["Error"]["Code"] == "TransactionCanceledException"
    assert _all(ddb) == before
    assert _query_all(ddb, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "P#1"}}) == [
        "MSG#1",
        "MSG#2",
        "STATE",
    ]
    assert _query_all(ddb, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "P#9"}}) == []


def test_committed_transaction_writes_everything(ddb: Any) -> None:
    _put(ddb, "P#1", "STATE", "s1")
    ddb.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "P#1"}, "sk": {"S": "MSG#1"}, "value": {"S": "m"}}}},
            {"Delete": {"TableName": TABLE, "Key": {"pk": {"S": "P#1"}, "sk": {"S": "STATE"}}}},
        ]
    )
    assert [(i["sk"]["S"], i["value"]["S"]) for i in _all(ddb)] == [("MSG#1", "m")]


def test_query_sees_items_written_after_a_previous_query(ddb: Any) -> None:
    values = {":p": {"S": "P#1"}, ":m": {"S": "MSG#"}}
    condition = "pk = :p AND begins_with(sk, :m)"
    _put(ddb, "P#1", "MSG#2")
    assert _query_all(ddb, KeyConditionExpression=condition, ExpressionAttributeValues=values) == ["MSG#2"]
    _put(ddb, "P#1", "MSG#1")
    _put(ddb, "P#1", "MSG#3")
    ddb.delete_item(TableName=TABLE, Key={"pk": {"S": "P#1"}, "sk": {"S": "MSG#2"}})
    ddb.transact_write_items(
        TransactItems=[{"Put": {"TableName": TABLE, "Item": {"pk": {"S": "P#1"}, "sk": {"S": "MSG#0"}}}}]
    )
    assert _query_all(ddb, KeyConditionExpression=condition, ExpressionAttributeValues=values) == [
        "MSG#0",
        "MSG#1",
        "MSG#3",
    ]


_CONDITIONS = [
    ("pk = :p", {}, lambda k: True),
    ("pk = :p AND sk = :a", {":a": "B#05"}, lambda k: k == "B#05"),
    ("pk = :p AND sk < :a", {":a": "B#05"}, lambda k: k < "B#05"),
    ("pk = :p AND sk <= :a", {":a": "B#05"}, lambda k: k <= "B#05"),
    ("pk = :p AND sk > :a", {":a": "B#05"}, lambda k: k > "B#05"),
    ("pk = :p AND sk >= :a", {":a": "B#05"}, lambda k: k >= "B#05"),
    ("pk = :p AND sk BETWEEN :a AND :b", {":a": "A#03", ":b": "B#02"}, lambda k: "A#03" <= k <= "B#02"),
    ("pk = :p AND begins_with(sk, :a)", {":a": "B#"}, lambda k: k.startswith("B#")),
    ("pk = :p AND begins_with(sk, :a)", {":a": "Z"}, lambda k: k.startswith("Z")),
]


@pytest.mark.parametrize(("condition", "bounds", "matches"), _CONDITIONS)
def test_query_by_range_matches_a_sorted_reading(
    ddb: Any, condition: str, bounds: dict[str, str], matches: Any
) -> None:
    # Given a partition written in random order, and its neighbours
    rng = random.Random(condition)
    keys = [f"{prefix}#{n:02d}" for prefix in "ABC" for n in range(8)] + ["B", "Bz"]
    for key in rng.sample(keys, len(keys)):
        _put(ddb, "P#1", key)
        _put(ddb, "P#0", key)
        _put(ddb, "P#2", key)
    values = {":p": {"S": "P#1"}, **{name: {"S": value} for name, value in bounds.items()}}
    expected = sorted(k for k in keys if matches(k))
    for forward in (True, False):
        want = expected if forward else expected[::-1]
        # Then every page size and direction reads exactly the matching keys, in order
        for limit in (None, 1, 2, 5, 100):
            request: dict[str, Any] = {
                "KeyConditionExpression": condition,
                "ExpressionAttributeValues": values,
                "ScanIndexForward": forward,
            }
            if limit is not None:
                request["Limit"] = limit
            assert _query_all(ddb, **request) == want, (forward, limit)


def test_a_query_page_stops_at_limit_with_a_last_evaluated_key(ddb: Any) -> None:
    for n in range(5):
        _put(ddb, "P#1", f"MSG#{n}")
    response = ddb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "P#1"}},
        ScanIndexForward=False,
        Limit=2,
    )
    assert [i["sk"]["S"] for i in response["Items"]] == ["MSG#4", "MSG#3"]
    assert response["LastEvaluatedKey"] == {"pk": {"S": "P#1"}, "sk": {"S": "MSG#3"}}
    assert response["Count"] == 2


def test_sorted_partition_keeps_order_through_every_mutation() -> None:
    partition = SortedPartition()
    for key in ["c", "a", "d", "b"]:
        partition[key] = key.upper()
    partition["a"] = "A2"  # replacing keeps one key
    del partition["c"]
    assert partition.pop("zz", None) is None
    assert partition.pop("d") == "D"
    partition.setdefault("e", "E")
    partition.update({"0": "zero"})
    clone = copy.deepcopy(partition)
    partition.clear()
    assert list(clone.select(None, [], forward=True)) == ["zero", "A2", "B", "E"]
    assert list(clone.select(None, [], forward=False, limit=2)) == ["E", "B"]
    assert partition.select(None, [], forward=True) == []


def test_an_index_query_answers_as_unpatched_moto(ddb: Any) -> None:
    # Given participants on the participants index among other items (state, transcript, claims)
    # and one more on another index partition
    rng = random.Random(7)
    for n in rng.sample(range(200), 60):
        pk = f"PARTICIPANT#p{n:03d}"
        at = f"2026-03-{1 + n % 28:02d}T{n % 24:02d}:00:00Z#p{n:03d}"
        status = "active" if n % 3 else "paused"
        ddb.put_item(
            TableName=TABLE,
            Item={
                "pk": {"S": pk},
                "sk": {"S": "META"},
                "gsi1pk": {"S": "PARTICIPANTS"},
                "gsi1sk": {"S": at},
                "status": {"S": status},
            },
        )
        _put(ddb, pk, "FLOW#conversation")
        _put(ddb, pk, f"MSG#{n}")
    ddb.put_item(
        TableName=TABLE,
        Item={
            "pk": {"S": "PARTICIPANT#x"},
            "sk": {"S": "FLOW#conversation#pending"},
            "gsi1pk": {"S": "PENDING_EFFECTS"},
            "gsi1sk": {"S": "2026"},
        },
    )
    requests: list[dict[str, Any]] = [
        {"ScanIndexForward": False, "Limit": 7},
        {"ScanIndexForward": True, "Limit": 11},
        {
            "ScanIndexForward": False,
            "Limit": 5,
            "FilterExpression": "#s = :s",
            "ExpressionAttributeNames": {"#s": "status"},
            "ExpressionAttributeValues": {":s": {"S": "paused"}},
        },
        {"Select": "COUNT"},
    ]
    from moto.dynamodb.models.table import Table

    def pages(patched: bool, request: dict[str, Any]) -> list[Any]:
        base = {"IndexName": "gsi1", "KeyConditionExpression": "gsi1pk = :g"}
        values = {":g": {"S": "PARTICIPANTS"}, **request.get("ExpressionAttributeValues", {})}
        answer = []
        query = {**base, **request, "ExpressionAttributeValues": values}
        while True:
            response = ddb.query(TableName=TABLE, **query)
            answer.append((response.get("Count"), response.get("Items"), response.get("LastEvaluatedKey")))
            if "LastEvaluatedKey" not in response:
                return answer
            query["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    # When each request is paged through, with the patch and with moto's own query
    patched = [pages(True, r) for r in requests]
    patched_query = Table.query
    Table.query = patched_query.__wrapped__  # type: ignore[attr-defined]
    try:
        unpatched = [pages(False, r) for r in requests]
    finally:
        Table.query = patched_query  # type: ignore[method-assign]
    # Then every page, item, count and last key is the same
    assert patched == unpatched
    assert patched[3][0][0] == 60 and len(patched[0]) == 9  # 60 participants; 8 full pages of 7 and 4 more
