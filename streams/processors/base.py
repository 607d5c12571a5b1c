"""The shared shell of every batch agent: take a batch, decode it, handle it, send what
it produced, dead-letter what failed, never crash.

Processors register a typed handler with ``typed_agent``: it receives the batch already
decoded (``Decoded``: valid records with their origins; the undecodable ones are
dead-lettered here with their reason) and returns an ``Outcome``: records to produce
per topic, dead letters of records it could not handle, and work to do only once the
outputs are acknowledged (staged table writes). Failures of one record are the
handler's to put in ``Outcome.dead``. Here, what escapes a handler
is treated by kind: a dependency that is down (broker, graph) is retried without limit
so nothing is lost or skipped; a ``GraphHalt`` (an error every batch would hit) halts
the agent, logged with its cause and ``livekg_agent_halted`` set, retried slowly until
fixed; any other error is retried a few times and then the whole batch goes to the DLQ
with the reason, and the agent moves on.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import inspect
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field

import faust

from core import metrics
from core.batch import Decoded, Inbound, dead_for, decode_batch
from core.errors import GraphHalt, ServiceUnavailable, TransientGraphError
from core.records import DeadLetter, Record
from streams.context import Route, WorkerContext
from streams.lanes import Lane
from streams.publisher import settle_deferred

log = logging.getLogger(__name__)

Handler = Callable[[Sequence[Inbound]], Awaitable[None]]


@dataclass
class Outcome:
    """What a typed handler hands back to the shell."""

    outputs: dict[str, Sequence[Record]] = field(default_factory=dict)  # logical topic -> records
    dead: list[DeadLetter] = field(default_factory=list)
    # run once every output is acknowledged (staged state writes, bookkeeping)
    after_ack: Callable[[], object] | None = None  # awaited when it returns an awaitable


TypedHandler = Callable[[Decoded], Awaitable[Outcome]]
UNEXPECTED_RETRIES = 3
HALT_BACKOFF_MAX_S = 60.0
# Young-generation threshold of the cyclic garbage collector in a worker (default 700):
# a batch allocates tens of thousands of containers, nearly all freed by reference
# counting, so collecting every 700 allocations mostly re-scans live batch data.
GC_THRESHOLDS = (10_000, 20, 10)


def relax_gc() -> None:
    """Every object alive now (modules, settings, a sink's alias index) lives as long as
    the worker: move it out of the cyclic collector's reach (``gc.freeze``; frozen
    objects are still freed by reference counting), and collect the young generation
    less often (``GC_THRESHOLDS``; only ever raised). Called once by the worker after its
    agents are registered, and again after a big long-lived structure is loaded; the kg
    bench measured the collector at ~25% of the graph sink's CPU without it."""
    gc.freeze()
    if gc.get_threshold()[0] < GC_THRESHOLDS[0]:
        gc.set_threshold(*GC_THRESHOLDS)


def observe_latencies(
    hist: metrics.BulkHistogramChild, records: Iterable[Record], now: float
) -> None:
    """``hist.observe(now - ingest time)`` for every record, in one pass and one lock
    (``core.metrics.BulkHistogram``). Negative latencies (clock skew) count as 0."""
    hist.observe_many(now - r.ingest_time.timestamp() for r in records)


def to_inbound(ctx: WorkerContext, events: Sequence[faust.EventT]) -> list[Inbound]:
    items = []
    for ev in events:
        msg = ev.message
        items.append(
            Inbound(
                topic=ctx.logical(msg.topic),
                value=msg.value,
                key=msg.key,
                partition=msg.partition,
                offset=msg.offset,
            )
        )
    return items


async def handle_safely(
    ctx: WorkerContext, agent: str, items: Sequence[Inbound], handler: Handler
) -> None:
    attempt = 0
    backoff = 0.2
    while True:
        try:
            await handler(items)
            metrics.AGENT_HALTED.labels(agent).set(0)
            return
        except GraphHalt as exc:
            # Every batch would fail alike: stop here (offsets not committed, nothing
            # dead-lettered) and say why, until an operator fixes the cause.
            metrics.ERRORS.labels(agent, "halt").inc()
            metrics.AGENT_HALTED.labels(agent).set(1)
            log.error("%s: HALTED, fix the cause; retrying in %.0fs: %s", agent, backoff, exc)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, HALT_BACKOFF_MAX_S)
            continue
        except (ServiceUnavailable, TransientGraphError, ConnectionError) as exc:
            metrics.ERRORS.labels(agent, "dependency").inc()
            log.warning("%s: dependency unavailable, retrying in %.1fs: %s", agent, backoff, exc)
        except Exception as exc:
            attempt += 1
            metrics.ERRORS.labels(agent, "unexpected").inc()
            if attempt > UNEXPECTED_RETRIES:
                log.exception("%s: batch failed %d times; dead-lettering it", agent, attempt)
                dead = [dead_for(i, exc, agent) for i in items]
                await ctx.send("dlq", dead)
                for d in dead:
                    metrics.DLQ.labels(agent, d.error_type).inc()
                return
            log.warning("%s: batch failed (attempt %d): %r", agent, attempt, exc)
        await asyncio.sleep(backoff)
        backoff = min(backoff * 2, 10.0)


def batch_agent(
    app: faust.App,
    ctx: WorkerContext,
    *,
    name: str,
    sources: Sequence[str],
    handler: Handler,
) -> None:
    """Register an agent ``name`` consuming ``sources`` in batches through ``handler``.

    It runs on a librdkafka lane when ``streams.lanes`` names one for it (stateless
    hot-path agents), else as a faust agent (needed for agents with faust tables).
    """
    lane_name = ctx.settings.streams.lanes.get(name)
    if lane_name:
        run = functools.partial(handle_safely, ctx, name, handler=handler)
        _lane(app, ctx, lane_name).add(Route(agent=name, sources=list(sources), run=run))
        return
    channel = app.topic(
        *(ctx.physical(s) for s in sources), key_serializer="raw", value_serializer="raw"
    )
    size, within = ctx.settings.streams.batch_size, ctx.settings.streams.batch_within_s

    async def agent(stream: faust.StreamT) -> None:
        async for events in stream.take_events(size, within=within):
            started = time.perf_counter()
            items = to_inbound(ctx, events)
            for topic, n in Counter(item.topic for item in items).items():
                metrics.EVENTS_IN.labels(name, topic).inc(n)
            await handle_safely(ctx, name, items, handler)
            metrics.BATCH_SECONDS.labels(name).observe(time.perf_counter() - started)
            metrics.BATCH_SIZE.labels(name).observe(len(items))

    agent.__name__ = name
    app.agent(channel, name=name)(agent)


def _lane(app: faust.App, ctx: WorkerContext, name: str) -> Lane:
    lane = ctx.lanes.get(name)
    if not isinstance(lane, Lane):
        lane = ctx.lanes[name] = Lane(name=name, ctx=ctx, worker_id=ctx.worker_id)

        async def run_lane() -> None:
            await lane.run()

        run_lane.__name__ = f"lane_{name}"
        app.task(run_lane)
    return lane


def typed_shell(
    ctx: WorkerContext,
    name: str,
    handler: TypedHandler,
    *,
    dead_letter_undecodable: bool = True,
    observe_latency: bool = False,
) -> Handler:
    """The batch shell around a typed handler: decode, handle, produce (each record
    acknowledged), ``after_ack``, dead letters, metrics. ``dead_letter_undecodable=False``
    for an agent reading a topic another agent already dead-letters (counted only);
    ``observe_latency``: ingest-to-processed latency of each decoded record (the sinks
    and sentiment, whose processing latency the dashboards show)."""
    max_bytes = ctx.settings.streams.max_record_bytes

    async def shell(items: Sequence[Inbound]) -> None:
        decoded = decode_batch(items, ctx.model_for, max_bytes=max_bytes, agent=name)
        outcome = await handler(decoded)
        for topic, records in outcome.outputs.items():
            if records:
                await ctx.send(topic, records)
                metrics.EVENTS_OUT.labels(name, topic).inc(len(records))
        if outcome.after_ack is not None:
            await settle_deferred()  # on a lane the sends above may not be acknowledged yet
            done = outcome.after_ack()
            if inspect.isawaitable(done):
                await done
        if observe_latency and decoded.records:
            observe_latencies(metrics.EVENT_LATENCY.labels(name), decoded.records, time.time())
        if dead_letter_undecodable:
            await send_dead(ctx, name, [*decoded.dead, *outcome.dead])
        else:
            for d in decoded.dead:
                metrics.ERRORS.labels(name, f"skipped_{d.error_type}").inc()
            await send_dead(ctx, name, outcome.dead)

    return shell


def typed_agent(
    app: faust.App,
    ctx: WorkerContext,
    *,
    name: str,
    sources: Sequence[str],
    handler: TypedHandler,
    dead_letter_undecodable: bool = True,
    observe_latency: bool = False,
) -> None:
    """Register a typed handler on ``sources`` behind the batch shell (``typed_shell``)."""
    shell = typed_shell(
        ctx, name, handler,
        dead_letter_undecodable=dead_letter_undecodable, observe_latency=observe_latency,
    )  # fmt: skip
    batch_agent(app, ctx, name=name, sources=sources, handler=shell)


async def send_dead(ctx: WorkerContext, agent: str, dead: list) -> None:
    if dead:
        await ctx.send("dlq", dead)
        for d in dead:
            metrics.DLQ.labels(agent, d.error_type).inc()
