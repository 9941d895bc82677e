"""Two moto DynamoDB shortcuts for local runs, so that the cost of a local event does not grow with
the participant's history (DynamoDB's does not):

- **transactions**: moto backs a transaction up by deep-copying every table it touches, once per
  action. Here the backend's copy is a no-op, and the patch snapshots only the items the transaction
  names (each key once), restoring them if the transaction is cancelled: the same all-or-nothing
  behaviour, whatever the actions (Put, Delete, ConditionCheck, and moto's in-place Update, since the
  snapshot copies items).
- **Query**: moto answers a base-table Query by sorting every item of the table and walking the
  result. Here each partition of a table with a sort key is a ``SortedPartition`` (a dict whose keys
  are kept in order with ``bisect``), and the patch hands moto only the slice of the partition that
  the key condition (``=``, ``<``, ``<=``, ``>``, ``>=``, BETWEEN, begins_with), ExclusiveStartKey
  and Limit select, in ScanIndexForward order. A Query on an index gets only the items whose
  index partition key matches (moto itself sorts the whole table on every index Query, ~0.5 s at
  1,000 participants; the console's list makes two: docs/console.md); moto then sorts those by the
  index keys and applies the rest as usual. Queries with a legacy QueryFilter go to moto unchanged.
"""

from __future__ import annotations

import bisect
import copy
import functools
import types
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

_PATCHED = False


# moto's key-condition operators, by either of its spellings
_COMPARISONS = {
    "=": "EQ",
    "<": "LT",
    "<=": "LE",
    ">": "GT",
    ">=": "GE",
    "between": "BETWEEN",
    "begins_with": "BEGINS_WITH",
}
_SUPPORTED = frozenset({*_COMPARISONS, *_COMPARISONS.values()})


class SortedPartition(dict[Any, Any]):
    """A partition (sort key -> item) that also keeps its sort keys in order.

    moto mutates a partition with ``p[k] = item``, ``p.pop(k)`` and ``del p[k]``; those keep the
    order (``bisect.insort``: O(log n) comparisons and one list move, negligible at study sizes).
    """

    __slots__ = ("_order",)

    def __init__(self, items: Iterable[tuple[Any, Any]] = ()) -> None:
        super().__init__()
        self._order: list[Any] = []
        for key, value in items:
            self[key] = value

    def __setitem__(self, key: Any, value: Any) -> None:
        if key not in self:
            bisect.insort(self._order, key)
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        super().__delitem__(key)
        del self._order[bisect.bisect_left(self._order, key)]

    def pop(self, key: Any, *default: Any) -> Any:
        if key not in self:
            if default:
                return default[0]
            raise KeyError(key)
        value = super().pop(key)
        del self._order[bisect.bisect_left(self._order, key)]
        return value

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def clear(self) -> None:
        super().clear()
        self._order.clear()

    def popitem(self) -> tuple[Any, Any]:
        key, value = super().popitem()
        del self._order[bisect.bisect_left(self._order, key)]
        return key, value

    def __deepcopy__(self, memo: dict[int, Any]) -> SortedPartition:
        clone = SortedPartition()
        dict.update(clone, {key: copy.deepcopy(value, memo) for key, value in self.items()})
        clone._order = list(self._order)  # the keys are immutable DynamoTypes of the same values
        return clone

    def __reduce__(self) -> Any:
        return (SortedPartition, (list(self.items()),))

    def select(
        self,
        comparison: str | None,
        bounds: list[Any],
        *,
        forward: bool,
        after: Any = None,
        limit: int | None = None,
    ) -> list[Any]:
        """The items whose sort key satisfies ``comparison`` against ``bounds`` (moto's names: EQ,
        LT, LE, GT, GE, BETWEEN, BEGINS_WITH, or =, <, <=, >, >=; None: every key), strictly after ``after`` in the
        direction of reading, at most ``limit`` of them, in reading order."""
        order = self._order
        lo, hi = 0, len(order)
        comparison = _COMPARISONS.get(comparison, comparison) if comparison else None
        if comparison == "EQ":
            lo, hi = bisect.bisect_left(order, bounds[0]), bisect.bisect_right(order, bounds[0])
        elif comparison == "LT":
            hi = bisect.bisect_left(order, bounds[0])
        elif comparison == "LE":
            hi = bisect.bisect_right(order, bounds[0])
        elif comparison == "GT":
            lo = bisect.bisect_right(order, bounds[0])
        elif comparison == "GE":
            lo = bisect.bisect_left(order, bounds[0])
        elif comparison == "BETWEEN":
            lo, hi = bisect.bisect_left(order, bounds[0]), bisect.bisect_right(order, bounds[1])
        elif comparison == "BEGINS_WITH":
            prefix = bounds[0].cast_value
            lo = bisect.bisect_left(order, bounds[0])
            # From the prefix on, the keys that start with it form one run: find where it ends.
            hi = bisect.bisect_left(order, True, lo=lo, key=lambda key: not key.cast_value.startswith(prefix))
        elif comparison is not None:
            raise ValueError(f"unsupported sort-key comparison {comparison}")
        if after is not None:
            if forward:
                lo = max(lo, bisect.bisect_right(order, after))
            else:
                hi = min(hi, bisect.bisect_left(order, after))
        if lo >= hi:
            return []
        if limit is not None:
            lo, hi = (lo, min(hi, lo + limit)) if forward else (max(lo, hi - limit), hi)
        keys = order[lo:hi] if forward else order[hi - 1 : lo - 1 if lo else None : -1]
        return [dict.__getitem__(self, key) for key in keys]


def speed_up_moto_transactions() -> None:
    """Install both patches (idempotent)."""
    global _PATCHED
    if _PATCHED:
        return
    from moto.dynamodb.models.table import Table

    original_init = Table.__init__

    @functools.wraps(original_init)
    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        if self.range_key_attr:
            self.items = defaultdict(SortedPartition)

    Table.__init__ = init  # type: ignore[method-assign]
    _patch_transactions()
    _patch_query()
    _PATCHED = True


def _patch_transactions() -> None:
    from moto.dynamodb import models as dynamodb_models
    from moto.dynamodb.models.table import Table

    real_deepcopy = copy.deepcopy

    def deepcopy_except_tables(value: Any, memo: Any = None) -> Any:
        # The backend's own backup becomes a no-op for tables; named items are snapshotted below.
        return value if isinstance(value, Table) else real_deepcopy(value, memo)

    dynamodb_models.copy = types.SimpleNamespace(deepcopy=deepcopy_except_tables)  # type: ignore[attr-defined,assignment]
    original = dynamodb_models.DynamoDBBackend.transact_write_items

    @functools.wraps(original)
    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        snapshots = _snapshot(self.tables, transact_items)
        try:
            original(self, transact_items)
        except Exception:
            for (_, hash_value, range_value), (table, existed, item) in snapshots.items():
                _restore(table, hash_value, range_value, existed, item)
            raise

    dynamodb_models.DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]


def _snapshot(tables: dict[str, Any], transact_items: list[dict[str, Any]]) -> dict[tuple[str, Any, Any], Any]:
    """(table, hash, range) -> (table, partition existed, deep copy of the item or None), for each
    key the transaction names, once."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    snapshots: dict[tuple[str, Any, Any], Any] = {}
    for entry in transact_items:
        op = next(iter(entry.values()))
        table = tables.get(op.get("TableName"))
        key = op.get("Key") or op.get("Item") or {}
        if table is None or table.hash_key_attr not in key:
            continue
        hash_value, range_value = DynamoType(key[table.hash_key_attr]), None
        if table.range_key_attr:
            if table.range_key_attr not in key:
                continue  # moto rejects the transaction before writing anything
            range_value = DynamoType(key[table.range_key_attr])
        ident = (table.name, hash_value, range_value)
        if ident in snapshots:
            continue
        partition = table.items.get(hash_value)
        item = partition if range_value is None or partition is None else partition.get(range_value)
        snapshots[ident] = (table, partition is not None, None if item is None else copy.deepcopy(item))
    return snapshots


# Keyword arguments of moto's Table.query that are not a legacy QueryFilter.
_QUERY_KEYWORDS = frozenset(
    {
        "index_name",
        "consistent_read",
        "filter_expression",
        "hash_key_conditions",
        "range_key_conditions",
        "projection_expressions",
    }
)


def _patch_query() -> None:
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.models.table import Table

    original_query = Table.query

    @functools.wraps(original_query)
    def query(self: Any, *args: Any, **kwargs: Any) -> Any:
        # moto's positional order: hash_key, range_comparison, range_objs, limit,
        # exclusive_start_key, scan_index_forward, projection_expressions, index_name, ...
        hash_key, range_comparison, range_objs, limit, exclusive_start_key, scan_index_forward = args[:6]
        index_name = kwargs.get("index_name", args[7] if len(args) > 7 else None)
        legacy_filter = any(name not in _QUERY_KEYWORDS for name in kwargs)
        partition = None if hash_key is None else self.items.get(hash_key)
        unsupported = range_comparison is not None and range_comparison not in _SUPPORTED
        if index_name and not legacy_filter and kwargs.get("hash_key_conditions"):
            self.all_items = lambda: _index_partition(self, kwargs["hash_key_conditions"])
            try:
                return original_query(self, *args, **kwargs)
            finally:
                del self.all_items
        if index_name or legacy_filter or unsupported or not self.range_key_attr:
            return original_query(self, *args, **kwargs)
        if partition is None:
            partition = SortedPartition()  # no such partition: an empty answer, as moto gives
        elif not isinstance(partition, SortedPartition):  # a table created before the patch
            return original_query(self, *args, **kwargs)
        after = None
        if exclusive_start_key is not None and self.range_key_attr in exclusive_start_key:
            after = DynamoType(exclusive_start_key[self.range_key_attr])
        forward = scan_index_forward is not False
        # one more than Limit, so that moto sets LastEvaluatedKey exactly as it would
        items = partition.select(
            range_comparison,
            range_objs,
            forward=forward,
            after=after,
            limit=None if limit is None else limit + 1,
        )
        if not forward:
            items.reverse()  # moto sorts what it is handed, then reverses it
        self.all_items = lambda: items  # shadows the method for this call only
        try:
            return original_query(self, *args, **kwargs)
        finally:
            del self.all_items

    Table.query = query  # type: ignore[method-assign]


def _index_partition(table: Any, conditions: list[tuple[str, Any]]) -> list[Any]:
    """The items carrying every ``(attribute, value)`` of an index Query's partition key, unsorted
    (moto sorts its candidates by the index's keys, then the table's: a total order)."""
    found = []
    for partition in table.items.values():
        for item in partition.values() if table.range_key_attr else (partition,):
            if all(name in item.attrs and item.attrs[name] == value for name, value in conditions):
                found.append(item)
    return found


def _restore(table: Any, hash_value: Any, range_value: Any, existed: bool, item: Any) -> None:
    """Put one named key back as the snapshot found it."""
    if range_value is None:
        if item is None:
            table.items.pop(hash_value, None)
        else:
            table.items[hash_value] = item
        return
    partition = table.items.get(hash_value)
    if item is not None:
        if partition is None:
            partition = table.items[hash_value]
        partition[range_value] = item
    elif partition is not None:
        partition.pop(range_value, None)
        if not partition and not existed:
            table.items.pop(hash_value, None)
