"""Lanes: batch consumption through librdkafka for the stateless hot-path agents.

faust's per-event stream machinery topped out at ~5,300-5,900 events/s here for an
agent that did nothing (``stream.take_events``), below the 10,000 events/s a worker
must sustain. A lane is one librdkafka consumer per worker that fetches whole batches
in C and hands each agent its slice; agents keep the same ``Handler`` as on faust.
Agents with faust tables (changelogs co-partitioned with their input) stay on faust;
which agents ride which lane is configuration (``streams.lanes``).

Guarantees match the faust path: a batch's offsets are committed only after every
handler in the lane finished with it (outputs acknowledged by the broker, graph
writes done): at-least-once. Static membership (``group.instance.id``) lets a worker
restarted after a crash take its partitions back at once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, KafkaError, Message

from ops import metrics
from streams.batch import Inbound
from streams.context import WorkerContext

log = logging.getLogger(__name__)


@dataclass
class Route:
    agent: str
    sources: list[str]  # logical topic names
    handler: Any  # Handler: Callable[[Sequence[Inbound]], Awaitable[None]]


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
        consumer = await loop.run_in_executor(pool, self._consumer)
        by_topic: dict[str, list[Route]] = defaultdict(list)
        for route in self.routes:
            for t in route.sources:
                by_topic[t].append(route)
        idle_s = s.idle_pause_ms / 1000.0
        try:
            while True:
                msgs = await loop.run_in_executor(
                    pool, consumer.consume, s.batch_size, s.batch_within_s
                )
                items = self._inbound(msgs)
                if not items:
                    if idle_s > 0:  # see streams/kafka_compat.py: the broker may not long-poll
                        await loop.run_in_executor(pool, _pause_idle, consumer, idle_s)
                    continue
                await self._dispatch(items, by_topic)
                await loop.run_in_executor(pool, _commit, consumer)
        finally:
            await loop.run_in_executor(pool, consumer.close)
            pool.shutdown(wait=False)

    def _inbound(self, msgs: Sequence[Message]) -> list[Inbound]:
        items = []
        for m in msgs:
            err = m.error()
            if err is not None:
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
        from streams.processors.base import handle_safely

        per_route: dict[str, tuple[Route, list[Inbound]]] = {}
        for item in items:
            for route in by_topic.get(item.topic, ()):
                per_route.setdefault(route.agent, (route, []))[1].append(item)

        async def run(route: Route, batch: list[Inbound]) -> None:
            started = time.perf_counter()
            for topic, n in Counter(i.topic for i in batch).items():
                metrics.EVENTS_IN.labels(route.agent, topic).inc(n)
            await handle_safely(self.ctx, route.agent, batch, route.handler)
            metrics.BATCH_SECONDS.labels(route.agent).observe(time.perf_counter() - started)
            metrics.BATCH_SIZE.labels(route.agent).observe(len(batch))

        await asyncio.gather(*(run(r, b) for r, b in per_route.values()))


def _commit(consumer: Consumer) -> None:
    """Commit the positions (next offsets) of everything consumed so far."""
    try:
        consumer.commit(asynchronous=False)
    except Exception as exc:  # nothing to commit, or a rebalance: redelivery is safe
        if "NO_OFFSET" not in str(exc):
            log.warning("commit failed (redelivery is safe, writes are idempotent): %s", exc)


def _pause_idle(consumer: Consumer, seconds: float) -> None:
    assignment = consumer.assignment()
    if assignment:
        consumer.pause(assignment)
    time.sleep(seconds)
    if assignment:
        consumer.resume(assignment)
