"""raw.news / raw.social / raw.filings -> docs.clean (thin shell over streams.normalize)."""

from __future__ import annotations

import faust

from core.batch import Decoded, map_records
from core.topics import DOCS_CLEAN, RAW_DOC_TOPICS
from streams.context import WorkerContext
from streams.normalize import normalize
from streams.processors.base import Outcome, typed_agent

AGENT = "normalize"


def register(app: faust.App, ctx: WorkerContext) -> None:
    async def handle(decoded: Decoded) -> Outcome:
        docs, failed = map_records(decoded, normalize, AGENT)
        return Outcome(outputs={DOCS_CLEAN.name: docs}, dead=failed)

    typed_agent(app, ctx, name=AGENT, sources=[t.name for t in RAW_DOC_TOPICS], handler=handle)
