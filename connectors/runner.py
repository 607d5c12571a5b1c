"""The runner: polls a connector, produces keyed records, checkpoints after delivery.

Guarantee: every source row reaches its raw topic exactly once across crashes and
restarts, as long as the connector's cursors are stable (same row, same cursor and id).

How:
1. Items at or below a stream's high-water mark are skipped.
2. Records are produced keyed by entity with an idempotent producer; each carries
   headers naming the source, stream, record id and cursor.
3. Every ``checkpoint_every`` records (and at the end of a poll) the producer is
   flushed, every delivery report is checked, and only then is the checkpoint written
   (atomically) with the new mark and the partition offsets after our last delivery.
4. A crash between a delivery and the next checkpoint leaves records in the topic that
   the checkpoint does not cover. On start the runner scans the log after the
   checkpointed offsets, reads those records' headers and skips them when the source
   returns them again. So: no duplicates, and since the mark moves only past delivered
   records, no gaps.

Dedupe by content hash (within a window) drops the same content arriving twice,
e.g. one story syndicated by two feeds or a source re-sending a row under a new cursor.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from connectors.base import Batch, Connector, Item, SourceError
from connectors.checkpoint import Checkpoint, CheckpointStore, touch
from connectors.policy import RateLimiter
from connectors.replay import producer as make_producer
from core.metrics import (
    CONNECTOR_LAG,
    CONNECTOR_LAST_SUCCESS,
    CONNECTOR_PRODUCED,
    CONNECTOR_ROWS,
    CONNECTOR_SKIPPED,
)
from core.records import Record, content_hash, utcnow
from core.runtime_state import endpoints
from core.settings import ConnectorSettings, Settings

log = logging.getLogger(__name__)

H_SOURCE, H_STREAM, H_ID, H_CURSOR = "lk.src", "lk.stream", "lk.id", "lk.cursor"
_HASH_EXCLUDE = {"id", "ingest_time", "source", "schema_version", "url"}


class DeliveryError(SourceError):
    """The broker did not acknowledge every record; no checkpoint was written."""


class RecordTooLarge(ValueError):
    """Larger than ``streams.max_record_bytes``: rejected here, the broker would refuse it."""


def kafka_bootstrap(settings: Settings) -> str:
    """Connectors need only the broker: a configured one, else the running embedded one."""
    if settings.kafka.bootstrap_servers:
        return settings.kafka.bootstrap_servers

    return endpoints(settings).kafka_bootstrap


def checkpoint_dir(settings: Settings) -> Path:
    return settings.connectors.checkpoint_dir or (Path(settings.data_dir) / "connectors")


def content_key(record: Record) -> str:
    """Hash of what the record says (not where or when we saw it)."""
    data = record.model_dump(mode="json", exclude=_HASH_EXCLUDE)
    return content_hash(
        type(record).__name__ + orjson.dumps(data, option=orjson.OPT_SORT_KEYS).decode()
    )


class DedupeWindow:
    """Content hashes seen recently (bounded by count and age)."""

    def __init__(self, size: int, ttl_s: float) -> None:
        self.size, self.ttl_s = size, ttl_s
        self._seen: OrderedDict[str, float] = OrderedDict()

    def __contains__(self, key: str) -> bool:
        at = self._seen.get(key)
        return at is not None and time.monotonic() - at < self.ttl_s

    def add_all(self, keys: list[str]) -> None:
        now = time.monotonic()
        for k in keys:
            self._seen[k] = now
            self._seen.move_to_end(k)
        while len(self._seen) > self.size:
            self._seen.popitem(last=False)


@dataclass
class StreamReport:
    stream: str
    rows: int = 0
    produced: int = 0
    skipped_checkpoint: int = 0
    skipped_recovered: int = 0
    duplicates: int = 0
    rejected: int = 0
    cursor: str | None = None
    error: str | None = None
    errors: list[str] = field(default_factory=list)


@dataclass
class PollReport:
    source: str
    streams: list[StreamReport] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def produced(self) -> int:
        return sum(s.produced for s in self.streams)

    @property
    def failed(self) -> list[StreamReport]:
        return [s for s in self.streams if s.error]

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "produced": self.produced,
            "rows": sum(s.rows for s in self.streams),
            "duplicates": sum(s.duplicates for s in self.streams),
            "rejected": sum(s.rejected for s in self.streams),
            "skipped": sum(s.skipped_checkpoint + s.skipped_recovered for s in self.streams),
            "errors": [f"{s.stream}: {s.error}" for s in self.failed]
            + [e for s in self.streams for e in s.errors[:5]],
            "seconds": round(self.seconds, 3),
        }


class Runner:
    """Runs one connector against one broker; one instance per process and source."""

    def __init__(
        self,
        connector: Connector,
        *,
        bootstrap: str,
        settings: Settings,
        prefix: str | None = None,
        producer: Producer | None = None,
        before_checkpoint: Callable[[int], None] | None = None,
    ) -> None:
        self.c = connector
        self.bootstrap = bootstrap
        self.cfg: ConnectorSettings = settings.connectors
        self.prefix = settings.kafka.topic_prefix if prefix is None else prefix
        self.store = CheckpointStore(checkpoint_dir(settings))
        self._fatal: str | None = None
        self.replaced = 0  # producers replaced after a fatal error
        self.producer = producer or self._new_producer()
        self.max_bytes = settings.streams.max_record_bytes
        self.dedupe = DedupeWindow(self.cfg.dedupe_window, self.cfg.dedupe_ttl_s)
        self.before_checkpoint = before_checkpoint  # test seam: crash after delivery
        self.cp: Checkpoint | None = None
        self._recovered: dict[str, dict[str, str]] = {}  # stream -> id -> cursor
        self._resume_offsets: dict[str, dict[str, int]] = {}
        self._delivered_offsets: dict[str, dict[str, int]] = {}
        self._failures: list[str] = []
        self._acked: dict[str, int] = {}
        self._commits = 0

    def physical(self, topic: str) -> str:
        return self.prefix + topic

    def _new_producer(self) -> Producer:
        return make_producer(
            self.bootstrap, **{"message.max.bytes": 4_000_000, "error_cb": self._on_error}
        )

    def _on_error(self, err: KafkaError) -> None:
        if err.fatal():
            self._fatal = str(err)

    def _replace_fatal_producer(self) -> None:
        """An idempotent producer that failed fatally (e.g. OUT_OF_ORDER_SEQUENCE_NUMBER
        after a broker restart) never recovers. Swap in a fresh one and forget the
        in-memory progress: the next poll starts again from the checkpoint on disk and
        scans what was delivered after it, exactly as after a crash, so nothing is lost
        and nothing is sent twice."""
        log.warning("%s: producer failed fatally (%s): replacing it", self.c.name, self._fatal)
        old, self.producer = self.producer, self._new_producer()
        self._fatal = None
        self.replaced += 1
        with contextlib.suppress(KafkaException):
            old.purge()
        self.cp = None
        self._recovered, self._delivered_offsets, self._acked = {}, {}, {}

    # -- start: load checkpoint, find records delivered after it --------------------
    def start(self) -> None:
        if self.cp is not None:
            return
        cp = self.store.load(self.c.name)
        topics = [self.physical(t) for t in self.c.topics]
        if cp is None:
            # First run: remember where the log ends now, so a crash before the first
            # checkpoint can still be recovered by scanning only what we wrote.
            cp = Checkpoint(source=self.c.name, offsets=end_offsets(self.bootstrap, topics))
            self.store.save(cp)
        else:
            self._recovered = scan_delivered(self.bootstrap, self.c.name, topics, cp.offsets)
            n = sum(len(v) for v in self._recovered.values())
            if n:
                log.info("%s: %d records delivered after the last checkpoint", self.c.name, n)
        self.cp = cp
        self._resume_offsets = {t: dict(p) for t, p in cp.offsets.items()}

    # -- delivery ------------------------------------------------------------------
    def _on_delivery(self, err: Any, msg: Any) -> None:
        if err is not None:
            self._failures.append(str(err))
            if isinstance(err, KafkaError) and err.fatal():
                self._fatal = str(err)
            return
        topic, part = msg.topic(), str(msg.partition())
        parts = self._delivered_offsets.setdefault(topic, {})
        parts[part] = max(parts.get(part, 0), msg.offset() + 1)
        self._acked[topic] = self._acked.get(topic, 0) + 1

    def _produce(self, stream: str, item: Item) -> None:
        rec = item.record
        headers = [
            (H_SOURCE, self.c.name.encode()),
            (H_STREAM, stream.encode()),
            (H_ID, rec.id.encode()),
            (H_CURSOR, item.cursor.encode()),
        ]
        value = rec.__pydantic_serializer__.to_json(rec)
        if len(value) > self.max_bytes:
            raise RecordTooLarge(f"record {rec.id} is {len(value)} bytes > {self.max_bytes}")
        while True:
            try:
                self.producer.produce(
                    self.physical(item.topic),
                    key=rec.key().encode(),
                    value=value,
                    headers=headers,
                    on_delivery=self._on_delivery,
                )
                return
            except BufferError:
                self.producer.poll(0.05)

    async def _commit(self, stream: str, cursor: str | None, state: dict[str, Any] | None) -> int:
        """Flush, check every delivery, then persist the checkpoint. Returns records acked."""
        assert self.cp is not None
        try:
            remaining = await asyncio.to_thread(self.producer.flush, 60)
        except KafkaException as exc:  # librdkafka may raise a fatal error out of flush()
            error = exc.args[0] if exc.args else None
            if isinstance(error, KafkaError):
                self._on_error(error)
            remaining = len(self.producer)
        acked, self._acked = self._acked, {}
        failures, self._failures = self._failures, []
        for topic, n in acked.items():
            CONNECTOR_PRODUCED.labels(self.c.name, topic.removeprefix(self.prefix)).inc(n)
        if self._fatal is not None:
            why = self._fatal
            self._replace_fatal_producer()
            raise DeliveryError(f"producer failed fatally ({why}); replaced, the next poll "
                                "resumes from the checkpoint")  # fmt: skip
        if remaining or failures:
            raise DeliveryError(
                f"{remaining} records undelivered, {len(failures)} failed: {failures[:3]}"
            )
        total = sum(acked.values())
        if self.before_checkpoint is not None:
            self.before_checkpoint(total)
        touch(self.cp.stream(stream), cursor, state)
        rec = self._recovered.get(stream)
        if rec and cursor is not None:
            for rid in [r for r, c in rec.items() if c <= cursor]:
                del rec[rid]
        self._advance_offsets()
        self.store.save(self.cp)
        self._commits += 1
        return total

    def _advance_offsets(self) -> None:
        """Move scan offsets past our deliveries once no recovered record is uncovered."""
        assert self.cp is not None
        if any(self._recovered.values()):
            return  # keep scanning from where recovery started until they are covered
        for topic, parts in self._delivered_offsets.items():
            target = self.cp.offsets.setdefault(topic, {})
            for p, off in parts.items():
                target[p] = max(target.get(p, 0), off)

    # -- one poll --------------------------------------------------------------------
    async def poll_stream(self, stream: str) -> StreamReport:
        self.start()  # again after a replaced producer: reload the checkpoint, rescan
        assert self.cp is not None
        report = StreamReport(stream)
        sc = self.cp.stream(stream)
        try:
            batch: Batch = await self.c.fetch(stream, sc.cursor, dict(sc.state))
        except SourceError as exc:
            report.error = str(exc)
            log.error("%s/%s: %s", self.c.name, stream, exc)
            return report
        report.rows, report.rejected = batch.rows, batch.rejected
        report.errors = batch.errors[:20]
        CONNECTOR_ROWS.labels(self.c.name).inc(batch.rows)
        if batch.rejected:
            CONNECTOR_SKIPPED.labels(self.c.name, "invalid").inc(batch.rejected)
        recovered = self._recovered.get(stream, {})
        items = sorted(batch.items, key=lambda i: i.cursor)
        pending_hashes: list[str] = []
        batch_hashes: set[str] = set()
        last_cursor: str | None = None
        newest: float | None = None
        since_commit = 0
        rate = getattr(self.c, "produce_rate", None)
        pace = RateLimiter(rate) if rate else None
        try:
            for idx, item in enumerate(items):
                if sc.cursor is not None and item.cursor <= sc.cursor:
                    report.skipped_checkpoint += 1
                    continue
                last_cursor = item.cursor
                if item.record.id in recovered:
                    report.skipped_recovered += 1
                    continue
                h = content_key(item.record)
                if h in batch_hashes or h in self.dedupe:
                    report.duplicates += 1
                    continue
                try:
                    self._produce(stream, item)
                except RecordTooLarge as exc:
                    report.rejected += 1
                    report.errors.append(str(exc))
                    CONNECTOR_SKIPPED.labels(self.c.name, "invalid").inc()
                    continue
                batch_hashes.add(h)
                pending_hashes.append(h)
                if pace:
                    await pace.acquire()
                since_commit += 1
                ts = item.record.event_time.timestamp()
                newest = ts if newest is None else max(newest, ts)
                if since_commit >= self.cfg.checkpoint_every:
                    nxt = items[idx + 1].cursor if idx + 1 < len(items) else None
                    if nxt is None or nxt > item.cursor:  # never split equal cursors
                        report.produced += await self._commit(stream, item.cursor, None)
                        self.dedupe.add_all(pending_hashes)
                        pending_hashes, since_commit = [], 0
                else:
                    self.producer.poll(0)
            report.produced += await self._commit(stream, last_cursor, batch.state)
            self.dedupe.add_all(pending_hashes)
        except SourceError as exc:
            report.error = str(exc)
            log.error("%s/%s: %s", self.c.name, stream, exc)
            return report
        skipped = report.skipped_checkpoint + report.skipped_recovered
        if skipped:
            CONNECTOR_SKIPPED.labels(self.c.name, "checkpoint").inc(skipped)
        if report.duplicates:
            CONNECTOR_SKIPPED.labels(self.c.name, "duplicate").inc(report.duplicates)
        if newest is not None:
            CONNECTOR_LAG.labels(self.c.name).set(max(0.0, utcnow().timestamp() - newest))
        report.cursor = self.cp.stream(stream).cursor
        return report

    async def poll_once(self) -> PollReport:
        self.start()
        started = time.perf_counter()
        report = PollReport(self.c.name)
        for stream in list(self.c.streams()):
            report.streams.append(await self.poll_stream(stream))
        if not report.failed:
            CONNECTOR_LAST_SUCCESS.labels(self.c.name).set(time.time())
        report.seconds = time.perf_counter() - started
        return report

    async def run(
        self,
        *,
        once: bool = False,
        stop: asyncio.Event | None = None,
        on_report: Callable[[PollReport], None] | None = None,
    ) -> PollReport:
        """Poll now, then every ``interval_s`` until ``stop`` is set (or once)."""
        stop = stop or asyncio.Event()
        while True:
            report = await self.poll_once()
            if on_report is not None:
                on_report(report)
            if once or stop.is_set():
                return report
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), max(self.c.interval_s, 0.1))
            if stop.is_set():
                return report

    def close(self) -> None:
        self.producer.flush(10)


# -- recovery helpers ------------------------------------------------------------------


def end_offsets(
    bootstrap: str, topics: list[str], timeout: float = 10.0
) -> dict[str, dict[str, int]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "livekg-connector-offsets"})
    try:
        meta = consumer.list_topics(timeout=timeout)
        out: dict[str, dict[str, int]] = {}
        for topic in topics:
            tmeta = meta.topics.get(topic)
            if tmeta is None or tmeta.error is not None:
                raise SourceError(f"topic {topic} does not exist; run `livekg topics create`")
            out[topic] = {
                str(p): consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout)[1]
                for p in tmeta.partitions
            }
        return out
    finally:
        consumer.close()


def scan_delivered(
    bootstrap: str,
    source: str,
    topics: list[str],
    offsets: dict[str, dict[str, int]],
    timeout: float = 10.0,
) -> dict[str, dict[str, str]]:
    """Records of ``source`` in the log after ``offsets``: stream -> {id: cursor}."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"livekg-connector-recover-{source}",
            "enable.auto.commit": False,
            "enable.partition.eof": False,
        }
    )
    found: dict[str, dict[str, str]] = {}
    try:
        meta = consumer.list_topics(timeout=timeout)
        assign: list[TopicPartition] = []
        ends: dict[tuple[str, int], int] = {}
        for topic in topics:
            tmeta = meta.topics.get(topic)
            if tmeta is None or tmeta.error is not None:
                continue
            for p in tmeta.partitions:
                lo, hi = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout)
                start = max(offsets.get(topic, {}).get(str(p), lo), lo)
                if start < hi:
                    assign.append(TopicPartition(topic, p, start))
                    ends[(topic, p)] = hi
        if not assign:
            return found
        consumer.assign(assign)
        deadline = time.monotonic() + 120
        while ends and time.monotonic() < deadline:
            for msg in consumer.consume(5000, timeout=1.0):
                if msg.error() is not None:
                    continue
                tp = (msg.topic(), msg.partition())
                headers = dict(msg.headers() or [])
                if headers.get(H_SOURCE) == source.encode():
                    stream = headers[H_STREAM].decode()
                    found.setdefault(stream, {})[headers[H_ID].decode()] = headers[
                        H_CURSOR
                    ].decode()
                if tp in ends and msg.offset() + 1 >= ends[tp]:
                    del ends[tp]
        if ends:
            raise KafkaException(f"recovery scan did not reach the log end of {sorted(ends)}")
        return found
    finally:
        consumer.close()
