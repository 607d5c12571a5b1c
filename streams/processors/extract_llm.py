"""extract.pending -> extraction's model tier -> kg.triples (issue 42).

The fast agent (``streams/processors/extract.py``) emits every document's LLM-free facts
at once and forwards to ``extract.pending`` only documents where the model tier has
something to read (``kg.extract.model_tier.needs_model``: a factual text chunk with no
kept fact, or a candidate the rule critic flagged). This agent runs the same code as
``livekg eval extract --mode auto``: the fast extraction of the document (recomputed
here, cheap beside the model, and not emitted again), then ``ModelTier.run``; only the
tier's new verified facts go to ``kg.triples``.

A budget, not a backlog: the documents of a batch wait in one bounded ``TierQueue``
per worker, most urgent profile first (earnings calls, central-bank news, Chinese bond
commentary, then company news, then filings); one drain task runs them under the
tier's ``ModelBudget`` (default: one core's worth of model time). The batch is committed
only once its documents are done, so Kafka's consumer lag is the backlog and nothing
piles up in memory; with nothing queued the drain task waits on an empty queue. When
the model is unreachable the batch raises ``LLMUnavailable`` and the shared shell
retries it later without committing: the documents stay parked on ``extract.pending``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from core import metrics
from core.batch import Decoded, dead_for
from core.records import Triple
from core.settings import Settings
from core.topics import EXTRACT_PENDING, KG_TRIPLES
from kg.extract.model_tier import ModelTier, TierQueue, drain, make_tier, priority_of
from kg.extract.pipeline import ExtractDoc, Extractor, bundled_index
from kg.extract.types import Mode
from kg.graph.canonical import load_alias_index
from kg.models.llm import make_llm_client
from kg.models.llm_errors import LLMUnavailable
from streams.context import WorkerContext
from streams.processors.base import Outcome, typed_agent

log = logging.getLogger(__name__)

AGENT = "extract_llm"


def tier_wanted(settings: Settings, llm_base_url: str | None) -> bool:
    """The model tier runs with a served model (``llm.base_url`` set by the operator) and
    with the embedded instruction model; not with the old 135M embedded model (it kept
    no verified fact), unless ``extract.llm_on_embedded`` asks for it."""
    llm, cfg = settings.llm, settings.extract
    if not (cfg.llm and cfg.tier.enabled):
        return False
    if llm.base_url and not llm.embedded_server:
        return True
    embedded = bool(llm_base_url or llm.base_url or llm.backend == "inprocess")
    capable = "smollm" not in llm.model.lower()
    return embedded and (capable or cfg.llm_on_embedded)


def is_tier_triple(t: Triple) -> bool:
    return t.mode == Mode.AUTO.value and t.extractor.startswith("llm:")


class TierStage:
    """One worker's tier: the extractor (alias index from the graph, refreshed), the
    queue and its drain task."""

    def __init__(self, ctx: WorkerContext, client: Any | None = None) -> None:
        self.ctx = ctx
        self._client = client
        self._ex: Extractor | None = None
        self._loaded_at = 0.0
        self._lock = asyncio.Lock()
        self.queue = TierQueue(ctx.settings.extract.tier.queue_bound)
        self._drain: asyncio.Task[None] | None = None
        self.tier: ModelTier | None = None

    async def _index(self) -> Any:
        try:
            index = await load_alias_index(await self.ctx.graph())
            if len(index):
                return index
        except Exception as exc:  # the graph may be starting; the bundled universe will do
            log.warning("extract_llm: alias index from graph failed (%s); using bundled", exc)
        return bundled_index()

    async def extractor(self) -> Extractor:
        cfg = self.ctx.settings.extract
        async with self._lock:
            stale = time.monotonic() - self._loaded_at > self.ctx.settings.kg.alias_refresh_s
            if self._ex is None or stale:
                if self._client is None:
                    self._client = make_llm_client(self.ctx.settings,
                                                   self.ctx.endpoints.llm_base_url)  # fmt: skip
                    self.ctx.closers.append(self._client.aclose)
                ex = Extractor(index=await self._index(), max_chunk_tokens=cfg.max_chunk_tokens,
                               use_nlp=cfg.use_nlp, seen_limit=cfg.seen_limit)  # fmt: skip
                tier = make_tier(ex, self._client, cfg.tier)
                if self.tier is not None:  # keep the budget and what was read across refreshes
                    tier.carry_over(self.tier)
                ex.tier = self.tier = tier
                self._ex = ex
                self._loaded_at = time.monotonic()
        assert self._ex is not None
        return self._ex

    def _ensure_drain(self) -> None:
        if self._drain is None or self._drain.done():
            # the tier may be swapped on an index refresh: the drain reads the current one
            self._drain = asyncio.create_task(drain(self.queue, _Current(self)))

    async def handle(self, batch: Decoded) -> Outcome:
        if not batch.records:
            return Outcome()
        ex = await self.extractor()
        self._ensure_drain()
        loop = asyncio.get_running_loop()
        waiting: list[tuple[asyncio.Future[int], Any, Any]] = []
        dead = []
        for doc, origin in zip(batch.records, batch.origins, strict=True):
            try:
                result = await ex.extract(ExtractDoc.from_clean(doc), Mode.FAST)
            except Exception as exc:  # one bad document must not stop the others
                log.exception("extract_llm: document %s failed", doc.id)
                dead.append(dead_for(origin, exc, AGENT))
                continue
            fut: asyncio.Future[int] = loop.create_future()
            await self.queue.put((result, fut), priority_of(ModelTier.profile(result)))
            metrics.EXTRACT_BACKLOG.set(self.queue.qsize())
            waiting.append((fut, result, origin))
        done = await asyncio.gather(*(w[0] for w in waiting), return_exceptions=True)
        metrics.EXTRACT_BACKLOG.set(self.queue.qsize())
        triples: list[Triple] = []
        for res, (_, result, origin) in zip(done, waiting, strict=True):
            if isinstance(res, LLMUnavailable):
                metrics.EXTRACT_LLM_PARKED.inc()
                assert self.tier is not None
                self.tier.forget_seen()  # the retry redoes the parked documents
                raise res  # ServiceUnavailable: retried by the shell, offsets not committed
            if isinstance(res, BaseException):
                dead.append(dead_for(origin, res, AGENT))
                continue
            for c in result.chunks:
                if c.llm.calls:
                    metrics.EXTRACT_LLM_SECONDS.labels(Mode.AUTO.value).observe(c.llm.latency_s)
                    metrics.EXTRACT_LLM_CALLS.labels(Mode.AUTO.value).inc(c.llm.calls)
                    metrics.EXTRACT_REFLECTION_ROUNDS.observe(c.llm.iterations)
            mine = [t for t in result.triples if is_tier_triple(t)]
            metrics.EXTRACT_TRIPLES.labels("llm").inc(len(mine))
            triples += mine
        return Outcome(outputs={KG_TRIPLES.name: triples}, dead=dead)


class _Current:
    """The stage's current tier (``drain`` reads ``run`` through it on every document)."""

    def __init__(self, stage: TierStage) -> None:
        self.stage = stage

    async def run(self, result: Any) -> int:
        assert self.stage.tier is not None
        return await self.stage.tier.run(result)


def register(app: Any, ctx: WorkerContext) -> TierStage:
    stage = TierStage(ctx)
    typed_agent(app, ctx, name=AGENT, sources=[EXTRACT_PENDING.name], handler=stage.handle)
    return stage


__all__ = ["AGENT", "TierStage", "is_tier_triple", "register", "tier_wanted"]
