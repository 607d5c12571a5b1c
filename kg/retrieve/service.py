"""The retrieval service: an index mirrored from the graph, and every method behind
``Retriever``.

``RetrievalService.refresh`` reads only what the graph gained since the last refresh
(fact edges and documents by their database ``written_at`` clock) and appends it to the
index, so indexes follow the stream incrementally; clusters are assigned as nodes
arrive and rebuilt in full when enough have arrived (``NodeClusters.stale``) or on
``rebuild``. Searches refresh first when the index is older than ``refresh_s``.

Dense document search on Neo4j goes through the graph's vector index
(``kg.retrieve.graph_vectors``): refresh starts a background write of each new chunk's
vector to a ``:Chunk`` node (a first refresh of a large graph never waits for it;
``sync_graph_vectors`` does), and ``dense_docs`` asks ``db.index.vector.queryNodes`` for
the candidates. Until every chunk of the mirror is in the graph (a failed write is
retried at the next refresh) and when the index query fails, the in-memory search
answers, with a warning.
Triple methods (dense triples, TFR, neighbourhood) and FalkorDB stay in memory.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import GraphError
from kg.graph.queries import cypher
from kg.graph.store.base import GraphStore
from kg.models.embed import Embedder
from kg.retrieve.graph_vectors import GraphChunkVectors, VectorIndexMismatch, supported
from kg.retrieve.index import DocRow, RetrievalIndex, TripleRow
from kg.retrieve.types import Method, RetrievedItem
from kg.retrieve.vector_cache import VectorCache, cache_path

log = logging.getLogger(__name__)

INTERNAL_RELATIONS = ("HAS_OBSERVATION", "HAS_DAILY", "MENTIONS")


def _strs(v: Any) -> list[str]:
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    return [str(x) for x in v if x]


def triple_row(r: dict[str, Any]) -> TripleRow:
    return TripleRow(
        id=str(r["id"]), head=str(r["head"]), head_name=str(r.get("head_name") or ""),
        relation=str(r["relation"]), tail=str(r["tail"]), tail_name=str(r.get("tail_name") or ""),
        valid_from=r.get("valid_from"), valid_to=r.get("valid_to"),
        sources=_strs(r.get("sources")), doc_ids=_strs(r.get("doc_ids")),
        evidence=str(r.get("evidence") or ""),
    )  # fmt: skip


def _log_failure(task: asyncio.Task[None]) -> None:
    """A background chunk write that failed unexpectedly: said, never lost silently."""
    if not task.cancelled() and task.exception() is not None:
        log.warning("background chunk-vector write failed: %r", task.exception())


class RetrievalService:
    def __init__(
        self,
        store: GraphStore | None,
        embedder: Embedder,
        *,
        refresh_s: float = 30.0,
        load_limit: int = 500_000,
        index: RetrievalIndex | None = None,
        cache_dir: Path | None = None,
        graph_vectors: bool | None = None,
        write_vectors: bool = True,
        **index_kw: Any,
    ) -> None:
        """``graph_vectors``: dense document search through the graph's vector index
        (default: where the graph has one that retrieval uses, Neo4j).
        ``write_vectors``: False on read-only paths (question answering): the service
        never writes, and uses the index once another process stored every chunk."""
        self.store = store
        self.embedder = embedder
        self.refresh_s = refresh_s
        self.load_limit = load_limit
        self.index = index or RetrievalIndex(dim=embedder.dim, **index_kw)
        self._since_triples = 0
        self._since_docs = 0
        self._refreshed_at = float("-inf")
        self._names_loaded = False
        self._lock = asyncio.Lock()
        self._refreshing: set[asyncio.Future[dict[str, int]]] = set()  # kept until done
        self.cache: VectorCache | None = None
        if cache_dir is not None:  # passage vectors on disk between processes
            self.cache = VectorCache(cache_path(cache_dir, self.embedder.model_id), embedder.dim)
        self._encode = self._embed if self.cache is None else self.cache.wrap(self._embed)
        use_graph = supported(store) if graph_vectors is None else graph_vectors
        self.graph_vectors: GraphChunkVectors | None = None
        if use_graph and store is not None:
            self.graph_vectors = GraphChunkVectors(
                store, embedder.dim, embedder.model_id, writer=write_vectors
            )
        self._graph_chunks = 0  # chunks (by mirror position) already in the graph's index
        self._sync_lock = asyncio.Lock()
        self._sync_task: asyncio.Task[None] | None = None

    def _embed(self, texts: list[str]) -> np.ndarray:
        return self.embedder.embed_sync(texts, "passage")

    async def refresh(self, *, force: bool = False) -> dict[str, int]:
        """Pull new facts and documents from the graph into the index.

        The work runs as its own task, shielded from the caller: a caller cancelled
        mid-refresh (the question path's retrieval timeout) leaves the refresh to finish
        under the lock. Cancelling it instead released the lock while its thread was
        still appending to the index, so the next search read triples whose vectors were
        not there yet (IndexError) and the next refresh added the same rows again."""
        if self.store is None:
            return {"triples": 0, "documents": 0}
        task = asyncio.ensure_future(self._refresh(force))
        self._refreshing.add(task)
        task.add_done_callback(self._refresh_done)
        return await asyncio.shield(task)

    def _refresh_done(self, task: asyncio.Future[dict[str, int]]) -> None:
        """Forget a finished refresh; its error reached the caller, or (a cancelled
        caller) the next refresh retries: read here so asyncio does not report it."""
        self._refreshing.discard(task)
        if not task.cancelled():
            task.exception()

    async def _refresh(self, force: bool) -> dict[str, int]:
        if self.store is None:
            return {"triples": 0, "documents": 0}
        async with self._lock:
            if not force and time.monotonic() - self._refreshed_at < self.refresh_s:
                return {"triples": 0, "documents": 0}
            if not self._names_loaded:
                rows = await self.store.query(cypher("retrieval_entity_names"))
                self.index.add_names({
                    str(r["id"]): [x for k in ("name", "name_zh", "short_name", "ticker")
                                   for x in _strs(r.get(k))] + _strs(r.get("aliases"))
                    for r in rows
                })  # fmt: skip
                self._names_loaded = True
            trows = await self.store.query(
                cypher("retrieval_new_facts"),
                {"since": self._since_triples, "internal": list(INTERNAL_RELATIONS),
                 "limit": self.load_limit},
            )  # fmt: skip
            drows = await self.store.query(
                cypher("retrieval_new_documents"),
                {"since": self._since_docs, "limit": self.load_limit},
            )
            triples = [triple_row(r) for r in trows]
            docs = [
                DocRow(id=str(r["id"]), title=str(r.get("title") or ""),
                       text=str(r.get("text") or ""), url=str(r.get("url") or ""),
                       source=str(r.get("source") or ""), published_at=r.get("published_at"),
                       entities=_strs(r.get("entities")))
                for r in drows
            ]  # fmt: skip
            added_t = await asyncio.to_thread(self.index.add_triples, triples, self._encode)
            added_d = await asyncio.to_thread(self.index.add_documents, docs, self._encode)
            self._start_graph_sync()
            if self.cache is not None and self.cache.dirty:
                await asyncio.to_thread(self.cache.save)
            for r in trows:
                self._since_triples = max(self._since_triples, int(r["written_at"] or 0))
            for r in drows:
                self._since_docs = max(self._since_docs, int(r["written_at"] or 0))
            self._refreshed_at = time.monotonic()
            return {"triples": added_t, "documents": added_d}

    def _start_graph_sync(self) -> None:
        """Write new chunks to the graph in the background (searches meanwhile in memory)."""
        if self.graph_vectors is None or self._graph_chunks >= len(self.index.chunk_text):
            return
        if self._sync_task is None or self._sync_task.done():
            self._sync_task = asyncio.create_task(self._sync_graph_vectors())
            self._sync_task.add_done_callback(_log_failure)

    async def sync_graph_vectors(self) -> bool:
        """Write every chunk the graph's vector index lacks, waiting for a write in
        progress; True when dense search now goes through the graph."""
        if self._sync_task is not None and not self._sync_task.done():
            await asyncio.shield(self._sync_task)
        await self._sync_graph_vectors()
        return self.dense_in_graph

    async def _sync_graph_vectors(self) -> None:
        async with self._sync_lock:
            total = len(self.index.chunk_text)
            if self.graph_vectors is None or self._graph_chunks >= total:
                return
            ids, doc_ids, vecs = self.index.chunk_rows(self._graph_chunks, total)
            try:
                missing = await self.graph_vectors.write(ids, doc_ids, vecs)
                if not self.graph_vectors.writer and missing:
                    return  # a reader: another process has not stored them all yet
            except VectorIndexMismatch as exc:  # lasting: this service searches in memory
                log.error("%s; dense search stays in memory", exc)
                self.graph_vectors = None
                return
            except GraphError as exc:
                log.warning("chunk vectors not written to the graph (in-memory dense search "
                            "until a later refresh writes them): %s", exc)  # fmt: skip
                return
            self._graph_chunks = total

    @property
    def dense_in_graph(self) -> bool:
        """True when dense document search goes through the graph's vector index."""
        return self.graph_vectors is not None and self._graph_chunks == len(self.index.chunk_text)

    async def dense_docs(
        self, qvec: np.ndarray, k: int, at: int | None = None
    ) -> list[RetrievedItem]:
        """The ``k`` best documents by their best chunk: the graph's vector index on
        Neo4j (candidates as many as the in-memory search ranks), else the mirror."""
        ix = self.index
        if self.graph_vectors is None or not ix.chunk_text:
            return ix.dense_docs(qvec, k, at)
        if self.dense_in_graph:
            try:
                chunk_ids, scores = await self.graph_vectors.search(qvec, max(4 * k, 50))
                return ix.dense_docs_scored(chunk_ids, scores, k, at)
            except GraphError as exc:
                log.warning("graph vector search failed, in-memory dense search: %s", exc)
        return ix.dense_docs(qvec, k, at)

    async def rebuild(self) -> None:
        """The periodic full cluster rebuild (assignments drift as the graph grows)."""
        await asyncio.to_thread(self.index.rebuild_clusters)

    async def query_vector(self, query: str) -> np.ndarray:
        return (await self.embedder.embed([query], "query"))[0]

    async def search(
        self, query: str, method: Method | str, k: int = 10, *, at: int | None = None
    ) -> list[RetrievedItem]:
        method = Method(method)
        if k < 1 or not query.strip():
            return []
        await self.refresh()
        ix = self.index
        if method is Method.BM25:
            return ix.bm25_docs(query, k, at)
        if method is Method.HYBRID:
            return await self.hybrid(query, k, at=at)
        qvec = await self.query_vector(query)
        if method is Method.DENSE:
            return await self.dense_docs(qvec, k, at)
        if method is Method.TRIPLES:
            return ix.dense_triples(qvec, k, at)
        if method is Method.TFR:
            return ix.tfr_triples(qvec, k, at)
        return ix.neighbourhood(query, qvec, k, at=at)

    async def hybrid(
        self, query: str, k: int = 10, *, k_graph: int | None = None, at: int | None = None
    ) -> list[RetrievedItem]:
        """HybridRAG context (HybridRAG section 4.4): the vector context (dense chunks)
        first, then the graph context (the named entities' neighbourhood; when the query
        names none, the cluster-based triples stand in). Up to ``k + k_graph`` items."""
        await self.refresh()
        qvec = await self.query_vector(query)
        ix = self.index
        kg_ = k if k_graph is None else k_graph
        vector = await self.dense_docs(qvec, k, at)
        graph = ix.neighbourhood(query, qvec, kg_, at=at) or ix.tfr_triples(qvec, kg_, at)
        return [*vector, *graph]


class MethodRetriever:
    """One method of a service as a ``Retriever``."""

    def __init__(self, service: RetrievalService, method: Method | str) -> None:
        self.service = service
        self.method = Method(method)

    async def search(self, query: str, k: int, *, at: int | None = None) -> list[RetrievedItem]:
        return await self.service.search(query, self.method, k, at=at)


_SERVICES: dict[tuple[int, int], RetrievalService] = {}


async def hybrid_search(
    store: GraphStore,
    embedder: Embedder,
    query: str,
    k: int = 10,
    *,
    k_graph: int | None = None,
    at: int | None = None,
) -> list[RetrievedItem]:
    """HybridRAG retrieval over ``store`` (one cached service per store and embedder)."""
    key = (id(store), id(embedder))
    service = _SERVICES.get(key)
    if service is None:  # the question path: reads the graph, never writes to it
        service = _SERVICES[key] = RetrievalService(store, embedder, write_vectors=False)
    return await service.hybrid(query, k, k_graph=k_graph, at=at)


def context_text(items: Sequence[RetrievedItem], limit_chars: int = 4000) -> str:
    """Numbered context lines for a prompt, within a character budget."""
    lines, used = [], 0
    for i, it in enumerate(items, 1):
        line = f"[{i}] {it.text.strip()}"
        if used + len(line) > limit_chars:
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)
