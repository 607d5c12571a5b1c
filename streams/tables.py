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

import asyncio
import inspect
from types import SimpleNamespace
from typing import Any

import faust
from confluent_kafka.admin import NewTopic
from faust.stores.rocksdb import Store as RocksDBStore
from faust.types import RecordMetadata

from core.errors import ServiceUnavailable
from streams.admin import create_missing

CHANGELOG_ACK_TIMEOUT_S = 300.0  # then the batch is retried (handle_safely), not skipped


class TableState:
    """JSON-able values in a faust table, keyed by entity/indicator id."""

    def __init__(self, table: faust.Table) -> None:
        self.table = table

    def get(self, key: str) -> Any:
        return self.table.get(key)

    def dump(self, value: Any) -> Any:
        """The stored (JSON-able) form of a value; subclasses with typed values override."""
        return value

    def send_changelog(self, key: str, raw: Any, partition: int) -> Any:
        """Queue the changelog record of a dumped value; the future faust resolves once
        the broker has it (None for a table without a partition)."""
        return self.table.send_changelog(partition, key, raw) if partition >= 0 else None

    def put_local(
        self, key: str, raw: Any, partition: int, sent: RecordMetadata | None = None
    ) -> None:
        """Write the local store once the changelog record ``sent`` was acknowledged.
        The RocksDB store takes the partition from the current faust event, which a batch
        handler does not have: it is handed the record as the changelog event it is,
        through its public ``apply_changelog_batch`` (what a restore does)."""
        store = self.table.data
        if partition >= 0 and sent is not None and isinstance(store, RocksDBStore):
            message = SimpleNamespace(
                tp=sent.topic_partition,
                offset=sent.offset,
                partition=partition,
                key=store.app.serializers.dumps_key(
                    store.key_type, key, serializer=store.key_serializer
                ),
                value=store.app.serializers.dumps_value(
                    store.value_type, raw, serializer=store.value_serializer
                ),
            )
            store.apply_changelog_batch(
                [SimpleNamespace(message=message)], to_key=_same, to_value=_same
            )
        else:
            store[key] = raw


def _same(x: Any) -> Any:
    return x


class StagedWrites:
    """One batch's table writes, applied only after the batch's outputs were acknowledged.

    A changelog record can be flushed at any moment. Written before the batch's alerts
    were acknowledged and followed by a crash, it lets the redelivered batch see its own
    effect (an alert cool-down, a newer tick) and never send those alerts again: the 53
    alerts the 100,000-event worker_kill drill lost. Written after, a crash leaves either
    the old state (the batch is folded again and sends the same alert ids) or the new one
    (the fold skips the score ids it already folded: ``kg.sentiment.state.update``).

    ``write_acked`` (the ``after_ack`` of an agent) also waits until the broker has the
    changelog records, and only then updates the local store: faust queues a changelog
    record in its producer buffer, and the flush before an offset commit gives up after
    0.1 s (``ProducerBuffer.flush_atmost``) or misses a record its pump already took, so
    on a loaded machine a batch's offsets could be committed before its changelog was
    sent. A kill -9 then restored a state without that batch, never replayed: later
    shift alerts of those entities differed (worker_kill on Neo4j: 3 of 385 missing, 2
    unexpected). A failed or timed-out send raises, the local state is left as it was,
    and the retried batch folds and sends the same records again.
    """

    def __init__(self, table: TableState) -> None:
        self.table = table
        self._new: dict[str, tuple[Any, int]] = {}

    def get(self, key: str) -> Any:
        return self._new[key][0] if key in self._new else self.table.get(key)

    def set(self, key: str, value: Any, partition: int) -> None:
        self._new[key] = (value, partition)

    async def write_acked(self) -> int:
        """Send the changelog records, wait until the broker acknowledged them all, then
        write the local store: offsets acknowledged after this can only be committed
        with their state in the changelog."""
        raws = {key: (self.table.dump(value), p) for key, (value, p) in self._new.items()}
        sent = {key: self.table.send_changelog(key, raw, p) for key, (raw, p) in raws.items()}
        pending = {k: asyncio.ensure_future(f) for k, f in sent.items() if inspect.isawaitable(f)}
        if pending:
            # asyncio.wait, not wait_for: a timeout must not cancel faust's futures
            done, late = await asyncio.wait(pending.values(), timeout=CHANGELOG_ACK_TIMEOUT_S)
            if late:
                raise ServiceUnavailable(
                    f"{len(late)} changelog records not acknowledged in "
                    f"{CHANGELOG_ACK_TIMEOUT_S:.0f}s"
                )
            for fut in done:
                fut.result()  # a failed send raises: the batch is retried
        for key, (raw, p) in raws.items():
            acked = pending.get(key)
            self.table.put_local(key, raw, p, acked.result() if acked is not None else None)
        return len(raws)


def changelog_topics(app: faust.App) -> list[NewTopic]:
    """The changelog topic of every table registered on ``app``, as faust would create
    it (partitions, the app's replication factor, compacted; windowed: also deleted)."""
    out = []
    for table in app.tables.values():
        topic = table.changelog_topic  # faust's own description of the topic
        policy = ",".join(
            p for p, on in (("compact", topic.compacting), ("delete", topic.deleting)) if on
        )
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
