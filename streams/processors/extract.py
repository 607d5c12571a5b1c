"""docs.clean -> extraction -> kg.triples, in two stages so a slow LLM never blocks.

* ``extract`` (LLM-free, stream speed): every clean document is chunked and run through
  the fast extractors (patterns, tables, spaCy, jieba cues); verified triples go to
  ``kg.triples`` at once. Documents whose kind is configured for an LLM mode are then
  forwarded to ``extract.pending``.
* ``extract_llm``: consumes ``extract.pending`` with at most ``extract.concurrency``
  documents in flight; the LLM's verified proposals (only those the fast stage did not
  already produce) go to ``kg.triples``. When the LLM is unreachable the batch raises
  ``LLMUnavailable`` (a ``ServiceUnavailable``): the shared shell retries it with backoff
  without committing, so the documents stay parked in ``extract.pending`` and resume
  when the LLM is back; nothing is lost and the fast stage keeps flowing.

Chunks already processed (content hash + prompt version) are skipped within a worker
(a bounded in-memory set; not persisted across restarts).

CPU only where it yields: the LLM stage runs by default only against a served model
(``llm.base_url`` configured by the operator). livekg's own embedded model (the small
model server ``livekg up`` starts, or the in-process backend) kept no triple through
verification on the sample, so with it the stage is off unless
``extract.llm_on_embedded`` is set. And a running stage stops itself (per worker, until
restart) once ``extract.llm_min_yield_docs`` documents produced no kept triple at all.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any

from core import metrics
from core.batch import Decoded, dead_for
from core.records import CleanDocument, Triple
from core.settings import Settings
from core.topics import DOCS_CLEAN, EXTRACT_PENDING, KG_TRIPLES
from kg.extract.model_tier import needs_model
from kg.extract.pipeline import ExtractDoc, Extractor, bundled_index
from kg.extract.types import Mode
from kg.graph.canonical import load_alias_index
from kg.models.llm import make_llm_client
from kg.models.llm_errors import LLMUnavailable
from streams.context import WorkerContext
from streams.processors import extract_llm
from streams.processors.base import Outcome, typed_agent

log = logging.getLogger(__name__)

AGENT = "extract"
LLM_AGENT = "extract_llm"


def llm_configured(ctx: WorkerContext) -> bool:
    """An LLM to ask: a server (embedded or configured) or an explicit in-process model.

    ``livekg up --no-llm`` starts none: extraction then runs LLM-free only, instead of
    loading a model inside the worker.
    """
    llm = ctx.settings.llm
    return bool(ctx.endpoints.llm_base_url or llm.base_url or llm.backend == "inprocess")


def llm_extraction_wanted(settings: Settings, llm_base_url: str | None) -> bool:
    """Whether the LLM stage runs: a served model (``llm.base_url`` set by the operator,
    not the runtime's own server) always; the embedded model only on request
    (``extract.llm_on_embedded``); never with ``extract.llm`` off or no model at all."""
    llm, cfg = settings.llm, settings.extract
    if not cfg.llm:
        return False
    if llm.base_url and not llm.embedded_server:
        return True
    embedded = bool(llm_base_url or llm.base_url or llm.backend == "inprocess")
    return embedded and cfg.llm_on_embedded


def yield_exhausted(docs: int, kept: int, min_docs: int) -> bool:
    """The LLM stage has read ``min_docs`` documents (0: never stop) and kept nothing."""
    return min_docs > 0 and docs >= min_docs and kept == 0


def mode_for(doc: CleanDocument, ctx: WorkerContext, *, stopped: bool = False) -> Mode:
    cfg = ctx.settings.extract
    if stopped or not llm_configured(ctx):
        return Mode.FAST
    if extract_llm.tier_wanted(ctx.settings, ctx.endpoints.llm_base_url):  # the model tier
        return Mode.FAST if doc.kind.value == "social" else Mode.AUTO
    if not llm_extraction_wanted(ctx.settings, ctx.endpoints.llm_base_url):
        return Mode.FAST
    return Mode(cfg.modes.get(doc.kind.value, cfg.default_mode))


def _count(result_triples: Sequence[Triple], stats: Any) -> None:
    for t in result_triples:
        metrics.EXTRACT_TRIPLES.labels(t.extractor.split(":")[0]).inc()
    for reason, n in stats.dropped.items():
        metrics.EXTRACT_DROPPED.labels(reason.split(":")[0]).inc(n)


class ExtractStage:
    """Holds the extractors of one worker (alias index from the graph, refreshed)."""

    def __init__(self, ctx: WorkerContext) -> None:
        self.ctx = ctx
        self._fast: Extractor | None = None
        self._llm: Extractor | None = None
        self._loaded_at = 0.0
        self._sem = asyncio.Semaphore(max(1, ctx.settings.extract.concurrency))
        self._lock = asyncio.Lock()
        self.llm_docs = 0  # documents the LLM stage read, and the LLM triples it kept
        self.llm_kept = 0
        self.llm_stopped = False

    async def _index(self) -> Any:
        try:
            store = await self.ctx.graph()
            index = await load_alias_index(store)
            if len(index):
                return index
        except Exception as exc:  # the graph may be starting; the bundled universe will do
            log.warning("extract: alias index from graph failed (%s); using bundled", exc)
        return bundled_index()

    async def extractors(self) -> tuple[Extractor, Extractor | None]:
        cfg = self.ctx.settings.extract
        async with self._lock:
            stale = time.monotonic() - self._loaded_at > self.ctx.settings.kg.alias_refresh_s
            if self._fast is None or stale:
                index = await self._index()
                common: dict[str, Any] = {
                    "index": index, "max_chunk_tokens": cfg.max_chunk_tokens, "n_max": cfg.n_max,
                    "llm_max_chars": cfg.llm_max_chars, "use_nlp": cfg.use_nlp,
                    "seen_limit": cfg.seen_limit, "llm_max_chunks": cfg.max_llm_chunks_per_doc,
                }  # fmt: skip
                self._fast = Extractor(**common)
                if self.llm_on():
                    client = self._llm.llm.client if self._llm and self._llm.llm else None
                    if client is None:
                        client = make_llm_client(self.ctx.settings, self.ctx.endpoints.llm_base_url)
                        self.ctx.closers.append(client.aclose)
                    self._llm = Extractor(client=client, **common)
                self._loaded_at = time.monotonic()
        assert self._fast is not None
        return self._fast, self._llm

    def llm_on(self) -> bool:
        ctx = self.ctx
        return (
            not self.llm_stopped
            and llm_configured(ctx)
            and llm_extraction_wanted(ctx.settings, ctx.endpoints.llm_base_url)
        )

    def count_yield(self, docs: int, kept: int) -> None:
        """Count what the LLM stage kept; stop it when it keeps nothing (see module)."""
        self.llm_docs += docs
        self.llm_kept += kept
        min_docs = self.ctx.settings.extract.llm_min_yield_docs
        if not self.llm_stopped and yield_exhausted(self.llm_docs, self.llm_kept, min_docs):
            self.llm_stopped = True
            log.warning(
                "extract: the LLM stage kept no triple from %d documents; it stops here "
                "(fast extraction goes on; extract.llm_min_yield_docs)",
                self.llm_docs,
            )

    # -- stage 1: LLM-free -----------------------------------------------------------
    async def handle_fast(self, batch: Decoded) -> Outcome:
        ctx = self.ctx
        fast, _ = await self.extractors()
        triples: list[Triple] = []
        pending: list[CleanDocument] = []
        dead = []
        for doc, origin in zip(batch.records, batch.origins, strict=True):
            try:
                result = await fast.extract(ExtractDoc.from_clean(doc), Mode.FAST, skip_seen=True)
            except Exception as exc:  # one bad document must not stop the others
                log.exception("extract: document %s failed", doc.id)
                dead.append(dead_for(origin, exc, AGENT))
                continue
            for c in result.chunks:
                metrics.EXTRACT_CHUNKS.labels("fast", "skipped" if c.skipped else "done").inc()
            _count(result.triples, result.stats)
            triples += result.triples
            mode = mode_for(doc, ctx, stopped=self.llm_stopped)
            if mode == Mode.AUTO and not needs_model(result, ctx.settings.extract.tier.max_chars):
                continue  # the tier would read nothing here: not forwarded
            if mode != Mode.FAST:
                pending.append(doc)
        return Outcome(outputs={KG_TRIPLES.name: triples, EXTRACT_PENDING.name: pending}, dead=dead)

    # -- stage 2: LLM ----------------------------------------------------------------
    async def _one_llm(self, llm: Extractor, fast: Extractor, doc: CleanDocument) -> list[Triple]:
        mode = mode_for(doc, self.ctx)
        async with self._sem:
            result = await llm.extract(ExtractDoc.from_clean(doc), mode, skip_seen=True)
        llm_triples = [t for t in result.triples if t.extractor.startswith("llm")]
        for c in result.chunks:
            if c.llm.calls:
                metrics.EXTRACT_LLM_SECONDS.labels(mode.value).observe(c.llm.latency_s)
                metrics.EXTRACT_LLM_CALLS.labels(mode.value).inc(c.llm.calls)
                if mode == Mode.REFLECTION:
                    metrics.EXTRACT_REFLECTION_ROUNDS.observe(c.llm.iterations)
            metrics.EXTRACT_CHUNKS.labels("llm", "skipped" if c.skipped else "done").inc()
        _count(llm_triples, result.stats)
        return llm_triples

    async def handle_llm(self, batch: Decoded) -> Outcome:
        fast, llm = await self.extractors()
        if llm is None or self.llm_stopped or not batch.records:
            return Outcome()  # committed: these documents' fast triples went out in stage 1
        metrics.EXTRACT_BACKLOG.set(len(batch.records))
        try:
            results = await asyncio.gather(
                *(self._one_llm(llm, fast, d) for d in batch.records), return_exceptions=True
            )
        finally:
            metrics.EXTRACT_BACKLOG.set(0)
        triples: list[Triple] = []
        dead = []
        for res, origin in zip(results, batch.origins, strict=True):
            if isinstance(res, LLMUnavailable):
                metrics.EXTRACT_LLM_PARKED.inc()
                # forget what this batch did so the retry redoes the parked documents
                llm.forget_seen()
                raise res  # ServiceUnavailable: retried by the shell, offsets not committed
            if isinstance(res, BaseException):
                dead.append(dead_for(origin, res, LLM_AGENT))
                continue
            triples += res
        self.count_yield(len(batch.records) - len(dead), len(triples))
        return Outcome(outputs={KG_TRIPLES.name: triples}, dead=dead)


def register(app: Any, ctx: WorkerContext) -> None:
    if not ctx.settings.extract.enabled:
        return
    stage = ExtractStage(ctx)
    typed_agent(app, ctx, name=AGENT, sources=[DOCS_CLEAN.name], handler=stage.handle_fast)
    if llm_configured(ctx) and extract_llm.tier_wanted(ctx.settings, ctx.endpoints.llm_base_url):
        extract_llm.register(app, ctx)  # the model tier consumes extract.pending
    elif llm_configured(ctx) and llm_extraction_wanted(ctx.settings, ctx.endpoints.llm_base_url):
        typed_agent(
            app, ctx, name=LLM_AGENT, sources=[EXTRACT_PENDING.name], handler=stage.handle_llm
        )
