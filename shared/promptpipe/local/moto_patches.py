"""A faster rollback for moto's DynamoDB ``transact_write_items`` (local runs only).

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

    dynamodb_models.copy = types.SimpleNamespace(deepcopy=deepcopy_except_tables)  # type: ignore[attr-defined]
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
    _PATCHED = True
