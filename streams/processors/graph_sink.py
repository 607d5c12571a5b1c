"""Sinks into the graph: docs.clean -> Document nodes, raw.ticks -> Observations.

A batch is written whole; if the database rejects it (not a connectivity problem,
which the shell retries), the batch is split in halves until the offending records
are isolated and dead-lettered, so one bad record never blocks its neighbours.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import faust

from kg import sink
from kg.errors import GraphError, TransientGraphError
from kg.store import GraphStore
from ops import metrics
from streams.batch import Inbound, dead_for, decode_batch
from streams.context import WorkerContext
from streams.processors.base import batch_agent, send_dead
from streams.records import DeadLetter, Record
from streams.topics import DOCS_CLEAN, RAW_TICKS

R = TypeVar("R", bound=Record)
Writer = Callable[[GraphStore, Sequence[R]], Awaitable[int]]


async def write_isolating(
    store: GraphStore,
    writer: Writer,
    records: list[R],
    origins: list[Inbound],
    agent: str,
) -> tuple[int, list[DeadLetter]]:
    """Write ``records``; bisect on non-transient errors and dead-letter the culprits."""
    try:
        return await writer(store, records), []
    except TransientGraphError:
        raise
    except GraphError as exc:
        if len(records) == 1:
            return 0, [dead_for(origins[0], exc, agent)]
    mid = len(records) // 2
    n1, d1 = await write_isolating(store, writer, records[:mid], origins[:mid], agent)
    n2, d2 = await write_isolating(store, writer, records[mid:], origins[mid:], agent)
    return n1 + n2, d1 + d2


def _sink(ctx: WorkerContext, agent: str, kind: str, writer: Writer):
    async def handle(items: Sequence[Inbound]) -> None:
        decoded = decode_batch(
            items, ctx.model_for, max_bytes=ctx.settings.streams.max_record_bytes, agent=agent
        )
        dead = list(decoded.dead)
        if decoded.records:
            store = await ctx.graph()
            written, failed = await write_isolating(
                store, writer, decoded.records, decoded.origins, agent
            )
            dead += failed
            metrics.GRAPH_WRITES.labels(kind).inc(written)
            now = time.time()
            hist = metrics.EVENT_LATENCY.labels(agent)
            for r in decoded.records:
                hist.observe(max(now - r.ingest_time.timestamp(), 0.0))
        await send_dead(ctx, agent, dead)

    return handle


def register(app: faust.App, ctx: WorkerContext) -> None:
    batch = ctx.settings.graph.write_batch

    async def docs(store: GraphStore, recs: Sequence) -> int:
        return await sink.write_documents(store, recs, batch)

    async def ticks(store: GraphStore, recs: Sequence) -> int:
        return await sink.write_ticks(store, recs, batch)

    batch_agent(
        app, ctx, name="doc_sink", sources=[DOCS_CLEAN.name], handler=_sink(ctx, "doc_sink", "document", docs)
    )
    batch_agent(
        app, ctx, name="tick_sink", sources=[RAW_TICKS.name], handler=_sink(ctx, "tick_sink", "tick", ticks)
    )
