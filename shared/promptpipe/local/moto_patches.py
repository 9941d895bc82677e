"""Two moto DynamoDB shortcuts for local runs: a partition-level transaction rollback and a
partition-level Query.

moto backs up a transaction by deep-copying every table it touches, once per item of the
transaction: O(table size) per commit, so a local simulation slows down as the table grows, which
real DynamoDB does not. This patch snapshots only the partitions the transaction names and restores
them when it is cancelled — the same all-or-nothing behaviour (our transactions use Put, Delete and
ConditionCheck only; moto's in-place Update is covered too because the snapshot copies items).
"""

from __future__ import annotations

import copy
import functools
import types
from typing import Any

_PATCHED = False


def speed_up_moto_transactions() -> None:
    global _PATCHED
    if _PATCHED:
        return
    from moto.dynamodb import models as dynamodb_models
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.models.table import Table

    real_deepcopy = copy.deepcopy

    def deepcopy_except_tables(value: Any, memo: Any = None) -> Any:
        # The backend's own backup becomes a no-op for tables; partitions are snapshotted below.
        return value if isinstance(value, Table) else real_deepcopy(value, memo)

    dynamodb_models.copy = types.SimpleNamespace(deepcopy=deepcopy_except_tables)  # type: ignore[attr-defined,assignment]
    original = dynamodb_models.DynamoDBBackend.transact_write_items

    @functools.wraps(original)
    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        snapshots: list[tuple[Table, Any, bool, Any]] = []
        for entry in transact_items:
            op = next(iter(entry.values()))
            table = self.tables.get(op.get("TableName"))
            key = op.get("Key") or op.get("Item") or {}
            if table is None or table.hash_key_attr not in key:
                continue
            hash_value = DynamoType(key[table.hash_key_attr])
            present = hash_value in table.items
            snapshots.append((table, hash_value, present, real_deepcopy(table.items[hash_value]) if present else None))
        try:
            original(self, transact_items)
        except Exception:
            for table, hash_value, present, partition in reversed(snapshots):
                if present:
                    table.items[hash_value] = partition
                else:
                    table.items.pop(hash_value, None)
            raise

    dynamodb_models.DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]

    # moto answers a Query on the base table by sorting every item of the table (O(n log n) per
    # Query); DynamoDB reads one partition. Hand the query only the partition it names.
    original_query = Table.query

    @functools.wraps(original_query)
    def query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = kwargs.get("index_name", args[6] if len(args) > 6 else None)
        if index_name or hash_key is None or not self.range_key_attr:
            return original_query(self, hash_key, *args, **kwargs)
        partition = self.items.get(hash_key, {})
        items = sorted(partition.values(), key=lambda item: item.range_key)
        self.all_items = lambda: items  # shadows the method for this call only
        try:
            return original_query(self, hash_key, *args, **kwargs)
        finally:
            del self.all_items

    Table.query = query  # type: ignore[method-assign]
    _PATCHED = True
