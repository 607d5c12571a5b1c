"""Lanes: batch consumption through librdkafka for the stateless hot-path agents.

faust's per-event stream machinery topped out at ~5,300-5,900 events/s here for an
agent that did nothing (``stream.take_events``), below the 10,000 events/s a worker
must sustain. A lane is one librdkafka consumer per worker that fetches whole batches
in C and hands each agent its slice; agents keep the same ``Handler`` as on faust.
Agents with faust tables (changelogs co-partitioned with their input) stay on faust;
which agents ride which lane is configuration (``streams.lanes``).

Each agent of a lane has its own queue and handles its parts of the fetched batches
one batch at a time, in fetch order; the lane goes on fetching while agents work (up
to ``streams.lane_max_in_flight`` records), so an agent waiting for the broker to
acknowledge its outputs holds up neither the next fetch nor the other agents, and an
idle agent starts on a record as soon as it is fetched (no batching window). Parts that
queued while an agent was busy are handled as one batch: batches grow with the load.
Before this (issue 31) a lane cycled fetch (a 20 ms window) -> every agent -> commit,
so each record waited for the window, the slowest agent and the hop before it.

Guarantees match the faust path: offsets are committed only up to records that every
agent of the lane finished with (outputs acknowledged by the broker, graph writes
done), in fetch order (``CommitTracker``): at-least-once. The commit is sent without
waiting for the broker's answer (librdkafka keeps commits in order); a commit lost in
a crash only means the batch is delivered again, and writes are idempotent. A
rebalance that takes partitions away waits (up to ``streams.rebalance_timeout_s``) for
the batches in flight and commits them, waiting; a lane stopped commits what its agents
finished, waiting, and never what they were cut short on.
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
import threading
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from confluent_kafka import (
    TIMESTAMP_NOT_AVAILABLE,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, OffsetSpec

from core import metrics
from core.batch import Inbound
from core.errors import ServiceUnavailable
from streams.context import Route, WorkerContext
from streams.kafka_compat import idle_pause
from streams.publisher import Ack, deferred_acks, settle

log = logging.getLogger(__name__)
REBUILD_BACKOFF_MAX_S = 30.0  # between rebuilds of a consumer that keeps failing fatally
COMMIT_EVERY_S = 0.1  # the most often a lane sends a commit
# An agent's batches whose outputs await the broker's acknowledgement. At 1,000 events/s
# the lane hands out batches of 2-20 records, so the former 8 were 10-30 ms of input: any
# slower acknowledgement (a busy broker, its collector) stopped the agent, graph writes
# included, for the rest of it (issue 31: 450 ms once). Under load batches are large and
# the lane's own bound (``streams.lane_max_in_flight`` records) binds first.
MAX_UNACKED = 64


class ConsumerFailed(Exception):
    """librdkafka failed the lane's consumer fatally: it will never fetch again."""


@dataclass
class Lane:
    """Agents sharing one consumer (one consumer group: ``<group>.<lane>``)."""

    name: str
    ctx: WorkerContext
    worker_id: str
    routes: list[Route] = field(default_factory=list)
    _tracker: CommitTracker = field(default_factory=lambda: CommitTracker(), init=False)
    _consumer: Consumer | None = field(default=None, init=False)
    _room: asyncio.Event = field(default_factory=asyncio.Event, init=False)
    _closing: bool = field(default=False, init=False)
    _committed_at: float = field(default=0.0, init=False)
    _pool: ThreadPoolExecutor | None = field(default=None, init=False)

    def add(self, route: Route) -> None:
        self.routes.append(route)

    def _consumer_new(self) -> Consumer:
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
                "fetch.wait.max.ms": s.kafka.fetch_wait_max_ms,
                "fetch.min.bytes": s.kafka.fetch_min_bytes,
                "fetch.error.backoff.ms": 10,
                "fetch.queue.backoff.ms": 10,
                "queued.max.messages.kbytes": 65_536,
            }
        )
        topics = sorted({self.ctx.physical(t) for r in self.routes for t in r.sources})
        consumer.subscribe(topics, on_revoke=self._on_revoke, on_lost=self._on_lost)
        return consumer

    async def run(self) -> None:
        """Fetch, hand each agent its part, commit finished batches in order; until
        cancelled (worker shutdown)."""
        s = self.ctx.settings.streams
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"lane-{self.name}")
        self._pool = pool
        loop = asyncio.get_running_loop()
        self._closing = False
        self._consumer = await loop.run_in_executor(pool, self._consumer_new)
        admin = AdminClient({"bootstrap.servers": self.ctx.endpoints.kafka_bootstrap})
        by_topic: dict[str, list[_RouteWorker]] = defaultdict(list)
        workers = [_RouteWorker(r, s.batch_size, self._finished) for r in self.routes]
        for w in workers:
            for t in w.route.sources:
                by_topic[t].append(w)
        tasks = [t for w in workers for t in w.tasks(self.name)]
        self._room = asyncio.Event()
        self._room.set()
        idle_s = s.idle_pause_ms / 1000.0
        idle_max_s = self.ctx.settings.ops.idle_max_pause_ms / 1000.0
        last_data = time.monotonic()
        rebuild_backoff = 1.0
        try:
            while True:
                _raise_if_failed(tasks)
                if self._tracker.records >= s.lane_max_in_flight:
                    self._room.clear()
                    await self._room.wait()  # every agent busy: let them catch up
                    continue
                if self._consumer is None:
                    self._consumer = await loop.run_in_executor(pool, self._consumer_new)
                consumer = self._consumer
                try:
                    msgs = await loop.run_in_executor(
                        pool, _fetch, consumer, s.batch_size, 0.0 if idle_s > 0 else 0.5
                    )
                    if not msgs and idle_s > 0:
                        # Idle: fetching would spin (the broker may not long-poll, see
                        # streams/kafka_compat.py), so pause until the log has new records,
                        # then wait for the first one and gather what is there.
                        pause = idle_pause(idle_s, idle_max_s, time.monotonic() - last_data)
                        waited = loop.run_in_executor(pool, _wait_for_data, consumer, admin, pause)
                        if await waited:
                            msgs = await loop.run_in_executor(
                                pool, _fetch, consumer, s.batch_size, 2.0
                            )
                    fetched = time.time()
                    self._commit_due()
                    items = self._inbound(msgs)
                except ConsumerFailed as exc:
                    # Nothing fetched from it since its last batch is lost: what is not
                    # committed comes again through the new consumer (at-least-once,
                    # idempotent writes). Its batches in flight finish first; their
                    # commits would only fail on the dead consumer.
                    metrics.ERRORS.labels(f"lane:{self.name}", "consumer_fatal").inc()
                    log.error("lane %s: consumer failed fatally; a new one in %.0fs: %s",
                              self.name, rebuild_backoff, exc)  # fmt: skip
                    self._consumer = None
                    await self._drained()
                    await loop.run_in_executor(pool, _close_quietly, consumer)
                    await asyncio.sleep(rebuild_backoff)
                    rebuild_backoff = min(rebuild_backoff * 2, REBUILD_BACKOFF_MAX_S)
                    continue
                if not items:
                    continue
                last_data = time.monotonic()
                rebuild_backoff = 1.0
                self._observe_fetch(msgs, fetched)
                self._hand_out(msgs, items, by_topic)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            consumer = self._consumer
            if consumer is not None:
                # only what every agent finished is committed (never a batch whose
                # handlers were cut short); waiting, so the last commit landed
                self._closing = True
                await loop.run_in_executor(pool, self._commit_finished, consumer, None)
                await loop.run_in_executor(pool, consumer.close)
            self._pool = None
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

    def _hand_out(
        self, msgs: Sequence[Message], items: list[Inbound], by_topic: dict[str, list[_RouteWorker]]
    ) -> None:
        """One ticket per fetch; each agent gets its part in its queue."""
        parts: dict[str, tuple[_RouteWorker, list[Inbound]]] = {}
        for item in items:
            for w in by_topic.get(item.topic, ()):
                parts.setdefault(w.route.agent, (w, []))[1].append(item)
        ticket = self._tracker.open(_next_offsets_of(msgs), len(parts), len(items))
        if not parts:
            self._finished(ticket)
        for w, part in parts.values():
            w.put(ticket, part)

    def _finished(self, ticket: _Ticket) -> None:
        """An agent is done with its part of ``ticket``."""
        self._tracker.finish(ticket)
        self._commit_due()
        if self._tracker.records < self.ctx.settings.streams.lane_max_in_flight:
            self._room.set()

    def _commit_due(self) -> None:
        """Commit what is finished (in fetch order), without waiting for the broker's
        answer, at most every ``COMMIT_EVERY_S``: each commit is an append to the
        broker's offsets log, and batches now finish hundreds of times a second. A
        crash redelivers at most that much more (writes are idempotent)."""
        now = time.monotonic()
        consumer, pool = self._consumer, self._pool
        if consumer is None or pool is None or now - self._committed_at < COMMIT_EVERY_S:
            return
        offsets = self._tracker.take_unsent()
        if offsets:
            self._committed_at = now
            # on the lane's thread, after the fetch in progress: the event loop never
            # calls into the consumer (a 4-worker run stalled every agent for the whole
            # rebalance timeout while the consumer was inside a rebalance callback)
            pool.submit(_commit, consumer, offsets, wait=False)

    async def _drained(self) -> None:
        while self._tracker.records:
            self._room.clear()
            await self._room.wait()

    def _commit_finished(self, consumer: Consumer, partitions: list[TopicPartition] | None) -> None:
        """Commit, waiting, the finished offsets (of ``partitions``; None: all) and forget
        them: a partition assigned again later starts from what the group committed."""
        offsets = self._tracker.take_finished(partitions)
        if offsets:
            _commit(consumer, offsets)

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """A rebalance takes ``partitions`` away (called inside ``consume``, on the lane's
        thread): let the batches in flight finish (bounded by the rebalance timeout) and
        commit them, so the next owner does not process them again."""
        if not self._closing:
            limit = self.ctx.settings.streams.rebalance_timeout_s
            deadline = time.monotonic() + limit
            while self._tracker.records and time.monotonic() < deadline:
                time.sleep(0.005)
            if self._tracker.records:
                log.warning("lane %s: revoked with %d records still in flight after %.0fs; "
                            "they will be delivered again", self.name, self._tracker.records,
                            limit)  # fmt: skip
        self._commit_finished(consumer, partitions)

    def _on_lost(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """Partitions lost (session expired): another member may own them; commit nothing."""
        self._tracker.take_finished(partitions)

    def _observe_fetch(self, msgs: Sequence[Message], fetched: float) -> None:
        """Per topic: time from each record's producer timestamp to its fetch (one hop
        through the broker plus the wait for the lane), in one pass per fetch."""
        by_topic: dict[str, list[float]] = defaultdict(list)
        for m in msgs:
            kind, ts = m.timestamp()
            if kind != TIMESTAMP_NOT_AVAILABLE and m.error() is None:
                by_topic[m.topic() or ""].append(fetched - ts / 1000.0)
        for topic, delays in by_topic.items():
            metrics.LANE_FETCH_DELAY.labels(self.name, self.ctx.logical(topic)).observe_many(delays)


@dataclass(eq=False)
class _Ticket:
    """One fetch: the next offset of each partition it read, the agents still working on
    their part of it, and its record count (for the lane's bound on work in flight)."""

    offsets: dict[tuple[str, int], int]
    pending: int
    records: int


class CommitTracker:
    """Fetched batches in fetch order; a batch's offsets become committable once every
    agent finished its part *and* every batch fetched before it is committable, so a
    commit never skips an unfinished record (at-least-once), whatever order the agents
    finish in. Thread-safe: the lane's consumer thread reads it during a rebalance."""

    def __init__(self) -> None:
        self._open: deque[_Ticket] = deque()
        self._finished: dict[tuple[str, int], int] = {}  # since the last waited commit
        self._unsent: dict[tuple[str, int], int] = {}  # since the last commit sent
        self._lock = threading.Lock()
        self.records = 0  # fetched, not yet committable

    def open(self, offsets: dict[tuple[str, int], int], pending: int, records: int) -> _Ticket:
        ticket = _Ticket(offsets, pending, records)
        with self._lock:
            self._open.append(ticket)
            self.records += records
        return ticket

    def finish(self, ticket: _Ticket) -> dict[tuple[str, int], int]:
        """One agent done with ``ticket``; the offsets that became committable."""
        out: dict[tuple[str, int], int] = {}
        with self._lock:
            ticket.pending -= 1
            while self._open and self._open[0].pending <= 0:
                done = self._open.popleft()
                self.records -= done.records
                out.update(done.offsets)
            self._finished.update(out)
            self._unsent.update(out)
        return out

    def take_unsent(self) -> dict[tuple[str, int], int]:
        """Committable offsets not yet sent in a commit."""
        with self._lock:
            out, self._unsent = self._unsent, {}
        return out

    def take_finished(
        self, partitions: Sequence[TopicPartition] | None
    ) -> dict[tuple[str, int], int]:
        """The committable offsets of ``partitions`` (None: all), forgotten here."""
        with self._lock:
            if partitions is None:
                out, self._finished, self._unsent = self._finished, {}, {}
                return out
            keys = [(tp.topic, tp.partition) for tp in partitions]
            for k in keys:
                self._unsent.pop(k, None)
            return {k: self._finished.pop(k) for k in keys if k in self._finished}


class _RouteWorker:
    """One agent's queue: its parts of the fetched batches, handled one batch at a time
    in fetch order (per-partition order kept). Parts that queued up while the agent was
    busy are handled together, up to ``batch_size`` records: under load batches grow,
    and an idle agent starts on the first record without waiting for a window.

    The agent's outputs are produced in order, but the wait for their acknowledgement
    (``publisher.deferred_acks``) is left to ``settle_in_order``, so the next batch is
    handled meanwhile (up to ``MAX_UNACKED`` batches wait). A batch is finished, and its
    offsets may be committed, only once its outputs are acknowledged; if that fails
    the batch is handled again, waiting this time, until it succeeds (at-least-once;
    its outputs may then follow a later batch's, as after any redelivery)."""

    def __init__(self, route: Route, batch_size: int, finished: Callable[[_Ticket], None]) -> None:
        self.route, self.batch_size, self.finished = route, batch_size, finished
        self.parts: deque[tuple[_Ticket, list[Inbound]]] = deque()
        self.wake = asyncio.Event()
        self.unacked: deque[tuple[list[_Ticket], list[Inbound], list[Ack]]] = deque()
        self.unacked_changed = asyncio.Event()
        metrics.LANE_ACK_WAIT.labels(route.agent)  # exported at 0 from the start

    def put(self, ticket: _Ticket, items: list[Inbound]) -> None:
        self.parts.append((ticket, items))
        self.wake.set()

    def tasks(self, lane: str) -> list[asyncio.Task[None]]:
        name = f"lane-{lane}-{self.route.agent}"
        return [asyncio.create_task(self.handle_in_order(), name=name),
                asyncio.create_task(self.settle_in_order(), name=f"{name}-acks")]  # fmt: skip

    async def handle_in_order(self) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            while self.parts:
                if len(self.unacked) >= MAX_UNACKED:
                    stopped = time.perf_counter()
                    while len(self.unacked) >= MAX_UNACKED:
                        self.unacked_changed.clear()
                        await self.unacked_changed.wait()
                    waited = time.perf_counter() - stopped
                    metrics.LANE_ACK_WAIT.labels(self.route.agent).inc(waited)
                tickets: list[_Ticket] = []
                batch: list[Inbound] = []
                while self.parts and (
                    not batch or len(batch) + len(self.parts[0][1]) <= self.batch_size
                ):
                    ticket, items = self.parts.popleft()
                    tickets.append(ticket)
                    batch.extend(items)
                with deferred_acks() as acks:
                    await self._handle(batch)
                if acks or self.unacked:
                    self.unacked.append((tickets, batch, acks))
                    self.unacked_changed.set()
                else:
                    for ticket in tickets:
                        self.finished(ticket)

    async def settle_in_order(self) -> None:
        while True:
            while not self.unacked:
                self.unacked_changed.clear()
                await self.unacked_changed.wait()
            tickets, batch, acks = self.unacked[0]
            try:
                await settle(acks)
            except (ServiceUnavailable, KafkaException) as exc:
                metrics.ERRORS.labels(self.route.agent, "dependency").inc()
                log.warning("%s: outputs not acknowledged (%s); handling the batch again",
                            self.route.agent, exc)  # fmt: skip
                await self._handle(batch)  # acknowledged before it returns (no deferral)
            self.unacked.popleft()
            self.unacked_changed.set()
            for ticket in tickets:
                self.finished(ticket)

    async def _handle(self, batch: list[Inbound]) -> None:
        agent = self.route.agent
        started = time.perf_counter()
        for topic, n in Counter(i.topic for i in batch).items():
            metrics.EVENTS_IN.labels(agent, topic).inc(n)
        await self.route.run(batch)  # handle_safely: retries, dead letters, never raises
        metrics.BATCH_SECONDS.labels(agent).observe(time.perf_counter() - started)
        metrics.BATCH_SIZE.labels(agent).observe(len(batch))


def _raise_if_failed(tasks: Sequence[asyncio.Task[None]]) -> None:
    """An agent's queue task ended (a bug: handlers never raise): stop the lane loudly
    rather than fetch on while nothing commits."""
    for task in tasks:
        if task.done():
            exc = task.exception() if not task.cancelled() else None
            raise RuntimeError(f"lane agent task {task.get_name()} ended") from exc


def _next_offsets_of(msgs: Sequence[Message]) -> dict[tuple[str, int], int]:
    """(topic, partition) -> the offset after the last record fetched from it."""
    out: dict[tuple[str, int], int] = {}
    for m in msgs:
        if m.error() is None:
            key = (m.topic() or "", m.partition() or 0)
            out[key] = max(out.get(key, 0), (m.offset() or 0) + 1)
    return out


def _fetch(consumer: Consumer, n: int, wait_s: float) -> list[Message]:
    """What the consumer holds now, up to ``n``; if nothing, wait up to ``wait_s`` for a
    first record, then take what came with it. Never waits for a batch to fill: at low
    load a record is handed out as soon as it is fetched."""
    msgs = _consume(consumer, n, 0)
    if msgs or wait_s <= 0:
        return msgs
    msgs = _consume(consumer, 1, wait_s)
    if msgs and n > 1:
        msgs += _consume(consumer, n - 1, 0)
    return msgs


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


def _commit(consumer: Consumer, offsets: dict[tuple[str, int], int], *, wait: bool = True) -> None:
    """Commit ``offsets`` ((topic, partition) -> next offset); ``wait``: until the broker
    answered (rebalance, shutdown), else sent and left to librdkafka (in order)."""
    tps = [TopicPartition(t, p, off) for (t, p), off in offsets.items()]
    try:
        consumer.commit(offsets=tps, asynchronous=not wait)
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
