"""faust tables written from batch handlers.

Batch handlers run outside faust's per-event context, so the changelog partition (the
input record's partition: tables are co-partitioned with their input by key) is given
explicitly, and the RocksDB store, which takes the partition from the current event,
is written per partition.
"""

from __future__ import annotations

from typing import Any

import faust


class TableState:
    """JSON-able values in a faust table, keyed by entity/indicator id."""

    def __init__(self, table: faust.Table) -> None:
        self.table = table

    def get(self, key: str) -> Any:
        return self.table.get(key)

    def set(self, key: str, value: Any, partition: int) -> None:
        store = self.table.data
        if partition >= 0 and hasattr(store, "_db_for_partition"):
            # The RocksDB store asserts a current faust event to pick the partition.
            raw_key = store._encode_key(key)
            store._db_for_partition(partition).put(raw_key, store._encode_value(value))
            store._key_index[raw_key] = partition
        else:
            store[key] = value
        if partition >= 0:
            self.table.send_changelog(partition, key, value)


class StagedWrites:
    """One batch's table writes, applied only after the batch's outputs were acknowledged.

    A changelog record can be flushed at any moment. Written before the batch's alerts
    were acknowledged and followed by a crash, it lets the redelivered batch see its own
    effect (an alert cool-down, a newer tick) and never send those alerts again: the 53
    alerts the 100,000-event worker_kill drill lost. Written after, a crash leaves either
    the old state (the batch is folded again and sends the same alert ids) or the new one
    (the fold skips the score ids it already folded: ``kg.sentiment.state.update``).
    """

    def __init__(self, table: TableState) -> None:
        self.table = table
        self._new: dict[str, tuple[Any, int]] = {}

    def get(self, key: str) -> Any:
        return self._new[key][0] if key in self._new else self.table.get(key)

    def set(self, key: str, value: Any, partition: int) -> None:
        self._new[key] = (value, partition)

    def write(self) -> int:
        for key, (value, partition) in self._new.items():
            self.table.set(key, value, partition)
        return len(self._new)
