"""The shared shell of every batch agent: take a batch, handle it, never crash.

A handler gets ``Inbound`` items and does its work (decode, transform, write, send).
Failures of one record are the handler's to dead-letter. Here, what escapes a handler
is treated by kind: a dependency that is down (broker, graph) is retried without limit
so nothing is lost or skipped; a ``GraphHalt`` (an error every batch would hit) halts
the agent, logged with its cause and ``livekg_agent_halted`` set, retried slowly until
fixed; any other error is retried a few times and then the whole batch goes to the DLQ
with the reason, and the agent moves on.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence

import faust

from core import metrics
from core.batch import Inbound, dead_for
from core.errors import GraphHalt, ServiceUnavailable, TransientGraphError
from streams.context import Route, WorkerContext
from streams.lanes import Lane

log = logging.getLogger(__name__)

Handler = Callable[[Sequence[Inbound]], Awaitable[None]]
UNEXPECTED_RETRIES = 3
HALT_BACKOFF_MAX_S = 60.0


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


async def send_dead(ctx: WorkerContext, agent: str, dead: list) -> None:
    if dead:
        await ctx.send("dlq", dead)
        for d in dead:
            metrics.DLQ.labels(agent, d.error_type).inc()
