"""faust tables written from batch handlers, and their changelog topics.

Batch handlers run outside faust's per-event context, so the changelog partition (the
input record's partition: tables are co-partitioned with their input by key) is given
explicitly, and the RocksDB store, which takes the partition from the current event,
is written per partition.

Every table's changelog topic is created before the worker joins its group
(``ensure_changelogs``, called by ``streams.worker``). Left to faust, one could still be
missing at the first rebalance ("Ignoring missing topic"): the subscriptions' state
written then was not recovered after a kill -9, and a replayed change fired a second
time (1 of 6 runs). Sentiment and indicator state have the same race.
"""

from __future__ import annotations

from typing import Any

import faust
from confluent_kafka.admin import NewTopic

from streams.admin import create_missing


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


def changelog_topics(app: faust.App) -> list[NewTopic]:
    """The changelog topic of every table registered on ``app``, as faust would create
    it (partitions, the app's replication factor, compacted; windowed: also deleted)."""
    out = []
    for table in app.tables.values():
        policy = ",".join(
            p for p, on in (("compact", table._changelog_compacting),
                            ("delete", table._changelog_deleting)) if on
        )  # fmt: skip
        config = {**({"cleanup.policy": policy} if policy else {}), **table.extra_topic_configs}
        out.append(
            NewTopic(
                table.changelog_topic_name,
                table.partitions or app.conf.topic_partitions,
                app.conf.topic_replication_factor,
                config={k: str(v) for k, v in config.items()},
            )
        )
    return out


def ensure_changelogs(app: faust.App, bootstrap: str) -> list[str]:
    """Create the tables' changelog topics that do not exist yet; the ones created."""
    topics = changelog_topics(app)
    return create_missing(bootstrap, topics) if topics else []
