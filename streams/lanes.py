"""Lanes: batch consumption through librdkafka for the stateless hot-path agents.

faust's per-event stream machinery topped out at ~5,300-5,900 events/s here for an
agent that did nothing (``stream.take_events``), below the 10,000 events/s a worker
must sustain. A lane is one librdkafka consumer per worker that fetches whole batches
in C and hands each agent its slice; agents keep the same ``Handler`` as on faust.
Agents with faust tables (changelogs co-partitioned with their input) stay on faust;
which agents ride which lane is configuration (``streams.lanes``).

Guarantees match the faust path: a batch's offsets are committed only after every
handler in the lane finished with it (outputs acknowledged by the broker, graph
writes done): at-least-once. The commit is sent without waiting for the broker's
answer (one round trip less per batch; librdkafka keeps commits in order); a commit
lost in a crash only means the batch is delivered again, and writes are idempotent.
A lane stopped between batches commits once more, waiting, so its last commit landed.
Static membership (``group.instance.id``) lets a worker restarted after a crash take
its partitions back at once.

A consumer that librdkafka failed *fatally* never fetches again; the lane closes it and
builds a new one (same group, same instance id) that resumes from the committed offsets.
The fatal error we met: a static member whose session expired on the client side while
the group coordinator's broker was dead rejoins and is fenced by its own earlier member
id ("Static consumer fenced by other consumer with same group.instance.id",
librdkafka issue #3437). Before, the lane logged it as any consumer error and went on
calling ``consume()`` on the dead consumer: a worker alive, nothing fetched, the lag
never drained (the three-broker drill's stall, docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from core import metrics
from core.batch import Inbound
from streams.context import Route, WorkerContext
from streams.kafka_compat import idle_pause

log = logging.getLogger(__name__)
REBUILD_BACKOFF_MAX_S = 30.0  # between rebuilds of a consumer that keeps failing fatally


class ConsumerFailed(Exception):
    """librdkafka failed the lane's consumer fatally: it will never fetch again."""


@dataclass
class Lane:
    """Agents sharing one consumer (one consumer group: ``<group>.<lane>``)."""

    name: str
    ctx: WorkerContext
    worker_id: str
    routes: list[Route] = field(default_factory=list)

    def add(self, route: Route) -> None:
        self.routes.append(route)

    def _consumer(self) -> Consumer:
        s = self.ctx.settings
        group = f"{s.kafka.consumer_group}.{self.name}"
        consumer = Consumer(
            {
                "bootstrap.servers": self.ctx.endpoints.kafka_bootstrap,
                "group.id": group,
                "group.instance.id": f"{group}-worker-{self.worker_id}",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": int(s.streams.broker_session_timeout_s * 1000),
                "max.poll.interval.ms": 600_000,
                "fetch.wait.max.ms": 100,
                "fetch.error.backoff.ms": 10,
                "fetch.queue.backoff.ms": 10,
                "queued.max.messages.kbytes": 65_536,
            }
        )
        topics = sorted({self.ctx.physical(t) for r in self.routes for t in r.sources})
        consumer.subscribe(topics)
        return consumer

    async def run(self) -> None:
        """Consume, dispatch, commit; until cancelled (worker shutdown)."""
        s = self.ctx.settings.streams
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"lane-{self.name}")
        loop = asyncio.get_running_loop()
        consumer: Consumer | None = await loop.run_in_executor(pool, self._consumer)
        admin = AdminClient({"bootstrap.servers": self.ctx.endpoints.kafka_bootstrap})
        by_topic: dict[str, list[Route]] = defaultdict(list)
        for route in self.routes:
            for t in route.sources:
                by_topic[t].append(route)
        idle_s = s.idle_pause_ms / 1000.0
        idle_max_s = self.ctx.settings.ops.idle_max_pause_ms / 1000.0
        last_data = time.monotonic()
        between_batches = True  # nothing consumed that is not handled and committed
        rebuild_backoff = 1.0
        try:
            while True:
                if consumer is None:
                    consumer = await loop.run_in_executor(pool, self._consumer)
                between_batches = False
                try:
                    msgs = await loop.run_in_executor(
                        pool, _consume, consumer, s.batch_size, s.batch_within_s
                    )
                    if not msgs and idle_s > 0:
                        # Idle: fetching would spin (the broker may not long-poll, see
                        # streams/kafka_compat.py), so pause until the log has new records,
                        # then wait for the first one and gather a batch as usual.
                        pause = idle_pause(idle_s, idle_max_s, time.monotonic() - last_data)
                        waited = loop.run_in_executor(pool, _wait_for_data, consumer, admin, pause)
                        if await waited:
                            msgs = await loop.run_in_executor(pool, _consume, consumer, 1, 2.0)
                        if msgs:
                            msgs += await loop.run_in_executor(
                                pool, _consume, consumer, s.batch_size - 1, s.batch_within_s
                            )
                    items = self._inbound(msgs)
                except ConsumerFailed as exc:
                    # Nothing of this batch was handled; what is not committed comes again
                    # through the new consumer (at-least-once, idempotent writes).
                    metrics.ERRORS.labels(f"lane:{self.name}", "consumer_fatal").inc()
                    log.error("lane %s: consumer failed fatally; a new one in %.0fs: %s",
                              self.name, rebuild_backoff, exc)  # fmt: skip
                    failed, consumer = consumer, None
                    await loop.run_in_executor(pool, _close_quietly, failed)
                    between_batches = True
                    await asyncio.sleep(rebuild_backoff)
                    rebuild_backoff = min(rebuild_backoff * 2, REBUILD_BACKOFF_MAX_S)
                    continue
                if not items:
                    between_batches = True
                    continue
                last_data = time.monotonic()
                rebuild_backoff = 1.0
                await self._dispatch(items, by_topic)
                _commit(consumer, wait=False)
                between_batches = True
        finally:
            if consumer is not None:
                if between_batches:  # never commit a batch whose handlers were cut short
                    await loop.run_in_executor(pool, _commit, consumer)
                await loop.run_in_executor(pool, consumer.close)
            pool.shutdown(wait=False)

    def _inbound(self, msgs: Sequence[Message]) -> list[Inbound]:
        items = []
        for m in msgs:
            err = m.error()
            if err is not None:
                if _is_fatal(err):
                    raise ConsumerFailed(str(err))
                if err.code() != KafkaError._PARTITION_EOF:
                    log.warning("lane %s: consumer error: %s", self.name, err)
                    metrics.ERRORS.labels(f"lane:{self.name}", "consumer").inc()
                continue
            items.append(
                Inbound(
                    topic=self.ctx.logical(m.topic() or ""),
                    value=m.value(),
                    key=m.key(),
                    partition=m.partition() or 0,
                    offset=m.offset() or 0,
                )
            )
        return items

    async def _dispatch(self, items: list[Inbound], by_topic: dict[str, list[Route]]) -> None:
        per_route: dict[str, tuple[Route, list[Inbound]]] = {}
        for item in items:
            for route in by_topic.get(item.topic, ()):
                per_route.setdefault(route.agent, (route, []))[1].append(item)

        async def run(route: Route, batch: list[Inbound]) -> None:
            started = time.perf_counter()
            for topic, n in Counter(i.topic for i in batch).items():
                metrics.EVENTS_IN.labels(route.agent, topic).inc(n)
            await route.run(batch)
            metrics.BATCH_SECONDS.labels(route.agent).observe(time.perf_counter() - started)
            metrics.BATCH_SIZE.labels(route.agent).observe(len(batch))

        await asyncio.gather(*(run(r, b) for r, b in per_route.values()))


def _consume(consumer: Consumer, n: int, timeout: float) -> list[Message]:
    """``consumer.consume``; a fatal error raised out of it becomes ``ConsumerFailed``."""
    try:
        return consumer.consume(n, timeout)
    except KafkaException as exc:
        err = exc.args[0] if exc.args else None
        if isinstance(err, KafkaError) and _is_fatal(err):
            raise ConsumerFailed(str(err)) from exc
        raise


def _is_fatal(err: KafkaError) -> bool:
    """A fatal error reaches ``consume()`` as code ``_FATAL`` without ``fatal()`` set."""
    return err.fatal() or err.code() == KafkaError._FATAL


def _close_quietly(consumer: Consumer) -> None:
    """Close a fatally failed consumer (it cannot commit or leave; it only lets go)."""
    try:
        consumer.close()
    except (KafkaException, RuntimeError) as exc:
        log.warning("closing a failed consumer: %s", exc)


def _commit(consumer: Consumer, *, wait: bool = True) -> None:
    """Commit the positions (next offsets) of everything consumed so far; ``wait``:
    until the broker answered (at shutdown), else sent and left to librdkafka."""
    try:
        consumer.commit(asynchronous=not wait)
    except Exception as exc:  # nothing to commit, or a rebalance: redelivery is safe
        if "NO_OFFSET" not in str(exc):
            log.warning("commit failed (redelivery is safe, writes are idempotent): %s", exc)


def _wait_for_data(
    consumer: Consumer, admin: AdminClient, poll_s: float, max_wait_s: float = 1.0
) -> bool:
    """Pause fetching; every ``poll_s`` compare each partition's log end with where we
    would read next. True once one has new records; False after ``max_wait_s`` so the
    caller's consume can serve rebalances.
    """
    assignment = consumer.assignment()
    if not assignment:
        time.sleep(poll_s)
        return False
    consumer.pause(assignment)
    try:
        next_offsets = _next_offsets(consumer, assignment)
        deadline = time.monotonic() + max_wait_s
        while time.monotonic() < deadline:
            time.sleep(poll_s)
            ends = admin.list_offsets({tp: OffsetSpec.latest() for tp in next_offsets})
            for tp, fut in ends.items():  # one ListOffsets request for every partition
                if fut.result(timeout=5.0).offset > next_offsets[tp]:
                    return True
        return False
    except (KafkaException, TimeoutError) as exc:
        # The broker is unreachable (restarting?): this pause is an optimisation, so say
        # "no data yet" and let consume(), which reconnects, carry on (found by the
        # broker-restart drill: this exception used to crash the whole worker).
        log.debug("lane idle wait: broker unavailable: %s", exc)
        time.sleep(poll_s)
        return False
    finally:
        consumer.resume(assignment)
        # A request wakes librdkafka's broker thread, which otherwise may sleep up to a
        # second with every partition paused before it acts on the resume.
        with contextlib.suppress(KafkaException):
            consumer.get_watermark_offsets(assignment[0], timeout=2.0, cached=False)


def _next_offsets(
    consumer: Consumer, assignment: list[TopicPartition]
) -> dict[TopicPartition, int]:
    """Our position; else the committed offset; else the log start (auto.offset.reset)."""
    out: dict[TopicPartition, int] = {}
    unknown = []
    for tp in consumer.position(assignment):
        if tp.offset >= 0:
            out[TopicPartition(tp.topic, tp.partition)] = tp.offset
        else:
            unknown.append(TopicPartition(tp.topic, tp.partition))
    if unknown:
        for tp in consumer.committed(unknown, timeout=5.0):
            key = TopicPartition(tp.topic, tp.partition)
            if tp.offset >= 0:
                out[key] = tp.offset
            else:
                low, _high = consumer.get_watermark_offsets(key, timeout=2.0, cached=False)
                out[key] = low
    return out
