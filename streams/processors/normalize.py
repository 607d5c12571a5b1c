"""raw.news / raw.social / raw.filings -> docs.clean (thin shell over streams.normalize)."""

from __future__ import annotations

from collections.abc import Sequence

import faust

from core import metrics
from core.batch import Inbound, decode_batch, map_batch
from core.topics import DOCS_CLEAN, RAW_DOC_TOPICS
from streams.context import WorkerContext
from streams.normalize import normalize
from streams.processors.base import batch_agent, send_dead

AGENT = "normalize"


def register(app: faust.App, ctx: WorkerContext) -> None:
    async def handle(items: Sequence[Inbound]) -> None:
        decoded = decode_batch(
            items, ctx.model_for, max_bytes=ctx.settings.streams.max_record_bytes, agent=AGENT
        )
        docs, dead = map_batch(decoded, normalize, AGENT)  # type: ignore[arg-type]
        await ctx.send(DOCS_CLEAN.name, docs)
        await send_dead(ctx, AGENT, dead)
        metrics.EVENTS_OUT.labels(AGENT, DOCS_CLEAN.name).inc(len(docs))

    batch_agent(app, ctx, name=AGENT, sources=[t.name for t in RAW_DOC_TOPICS], handler=handle)
