"""In-memory retrieval indexes mirrored from the graph, grown incrementally.

One ``RetrievalIndex`` holds what the retrievers search: triples (text, embedding,
head/tail ids, validity, provenance), node embeddings and their clusters, documents and
their chunks (embeddings and a BM25 index), and the triple adjacency of every entity.
Searching a numpy matrix keeps every method well under the 50 ms p95 budget at 100k
triples on 2 cores; the graph stays the source of truth (``kg.retrieve.service`` loads
and refreshes the index from it; ``kg.graph.vectors`` creates the graph-side
vector indexes where the backend has them).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from pydantic import BaseModel, Field

from kg.retrieve.cluster import DEFAULT_THRESHOLD, ClusterCandidate, NodeClusters, select
from kg.retrieve.text import chunks, mention_key, query_spans, tokens
from kg.retrieve.types import ItemKind, Method, Provenance, RetrievedItem
from kg.retrieve.vectors import VectorSearch

Encode = Callable[[list[str]], np.ndarray]  # texts -> unit rows (passages)


class TripleRow(BaseModel):
    id: str
    head: str
    head_name: str = ""
    relation: str
    tail: str
    tail_name: str = ""
    valid_from: int | None = None
    valid_to: int | None = None
    sources: list[str] = Field(default_factory=list)
    doc_ids: list[str] = Field(default_factory=list)
    evidence: str = ""

    def text(self) -> str:
        rel = self.relation.replace("_", " ").lower()
        return f"{self.head_name or self.head} {rel} {self.tail_name or self.tail}"


class DocRow(BaseModel):
    id: str
    title: str = ""
    text: str = ""
    url: str = ""
    source: str = ""
    published_at: int | None = None
    entities: list[str] = Field(default_factory=list)


def top_indices(scores: np.ndarray, n: int) -> np.ndarray:
    """Indices of the n best scores, best first (ties: lower index first)."""
    if n <= 0 or len(scores) == 0:
        return np.zeros(0, dtype=np.int64)
    if n < len(scores):
        part = np.argpartition(-scores, n - 1)[:n]
    else:
        part = np.arange(len(scores))
    return part[np.lexsort((part, -scores[part]))]


def _valid(row: TripleRow, at: int | None) -> bool:
    if at is None:
        return True
    if row.valid_from is not None and row.valid_from > at:
        return False
    return row.valid_to is None or at < row.valid_to


@dataclass
class RetrievalIndex:
    dim: int
    cluster_threshold: float = DEFAULT_THRESHOLD
    top_n: int = 200  # TFR: candidates retrieved before the cluster allocation (n >> k)
    temperature: float = 1.0  # TFR softmax temperature (the seed's plain softmax: 1.0)
    chunk_size: int = 800
    triples: list[TripleRow] = field(default_factory=list)
    docs: list[DocRow] = field(default_factory=list)
    chunk_doc: list[int] = field(default_factory=list)  # chunk -> doc position
    chunk_text: list[str] = field(default_factory=list)
    chunk_no: list[int] = field(default_factory=list)  # chunk -> its number in its document
    names: dict[str, str] = field(default_factory=dict)  # entity id -> display name
    adjacency: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    mention_index: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def __post_init__(self) -> None:
        self._triple_vecs = VectorSearch(self.dim)
        self._chunk_vecs = VectorSearch(self.dim)
        self._node_vecs: dict[str, np.ndarray] = {}
        self.clusters = NodeClusters(dim=self.dim, threshold=self.cluster_threshold)
        self._triple_ids: set[str] = set()
        self._doc_ids: set[str] = set()
        self._chunk_pos: dict[str, int] = {}  # chunk id -> chunk position
        self._bm25: object | None = None
        self._bm25_dirty = True
        self._validity_cache: tuple[np.ndarray, np.ndarray] | None = None

    # -- upkeep ---------------------------------------------------------------------
    def add_names(self, names: dict[str, Sequence[str]]) -> None:
        """Entity id -> names and aliases under which a query may name it."""
        for eid, aliases in names.items():
            for alias in (eid, *aliases):
                key = mention_key(alias)
                if len(key.replace(" ", "")) >= 2:
                    self.mention_index[key].add(eid)
            if aliases and eid not in self.names:
                self.names[eid] = aliases[0]

    def add_triples(
        self,
        rows: Sequence[TripleRow],
        encode: Encode,
        *,
        triple_vecs: np.ndarray | None = None,
        node_vecs: dict[str, np.ndarray] | None = None,
    ) -> int:
        """Append unseen triples; embed them (or take the given vectors) and cluster any
        new nodes. Returns how many were added."""
        fresh = [(i, r) for i, r in enumerate(rows) if r.id not in self._triple_ids]
        if not fresh:
            return 0
        if triple_vecs is None:
            vecs = encode([r.text() for _, r in fresh])
        else:
            vecs = np.asarray(triple_vecs, dtype=np.float32)[[i for i, _ in fresh]]
        new_nodes: dict[str, str] = {}
        for _, r in fresh:
            for eid, name in ((r.head, r.head_name), (r.tail, r.tail_name)):
                self.names.setdefault(eid, name or eid)
                if eid not in self._node_vecs and eid not in new_nodes:
                    new_nodes[eid] = name or eid
        if new_nodes:
            ids = list(new_nodes)
            if node_vecs is not None:
                nv = np.stack([node_vecs[i] for i in ids]).astype(np.float32)
            else:
                nv = encode([new_nodes[i] for i in ids])
            for eid, v in zip(ids, nv, strict=True):
                self._node_vecs[eid] = v
                self.clusters.assign(eid, v)
            self.add_names({eid: [name] for eid, name in new_nodes.items()})
        base = len(self.triples)
        for j, (_, r) in enumerate(fresh):
            self.triples.append(r)
            self._triple_ids.add(r.id)
            self.adjacency[r.head].append(base + j)
            if r.tail != r.head:
                self.adjacency[r.tail].append(base + j)
        self._triple_vecs.extend(vecs)
        if self.clusters.stale:
            self.rebuild_clusters()
        return len(fresh)

    def rebuild_clusters(self) -> None:
        ids = list(self._node_vecs)
        vecs = np.stack([self._node_vecs[i] for i in ids]) if ids else np.zeros((0, self.dim))
        self.clusters.rebuild(ids, vecs)

    def add_documents(self, docs: Sequence[DocRow], encode: Encode) -> int:
        fresh = [d for d in docs if d.id not in self._doc_ids]
        texts: list[str] = []
        for d in fresh:
            pos = len(self.docs)
            self.docs.append(d)
            self._doc_ids.add(d.id)
            body = "\n".join(x for x in (d.title, d.text) if x)
            for n, c in enumerate(chunks(body, self.chunk_size) or [d.id]):
                self._chunk_pos[f"{d.id}#{n}"] = len(self.chunk_text)
                self.chunk_doc.append(pos)
                self.chunk_no.append(n)
                self.chunk_text.append(c)
                texts.append(c)
        if texts:
            self._chunk_vecs.extend(encode(texts))
            self._bm25_dirty = True
        return len(fresh)

    def chunk_id(self, ci: int) -> str:
        """``<doc id>#<n>``: the chunk's id in the graph's vector index."""
        return f"{self.docs[self.chunk_doc[ci]].id}#{self.chunk_no[ci]}"

    def chunk_rows(self, start: int, stop: int) -> tuple[list[str], list[str], np.ndarray]:
        """Ids, document ids and vectors of the chunks at positions ``start:stop``."""
        ids = [self.chunk_id(ci) for ci in range(start, stop)]
        docs = [self.docs[self.chunk_doc[ci]].id for ci in range(start, stop)]
        return ids, docs, self._chunk_vecs.rows.view[start:stop]

    # -- search ---------------------------------------------------------------------
    def triple_item(self, i: int, score: float, method: Method, cluster: str = "") -> RetrievedItem:
        r = self.triples[i]
        return RetrievedItem(
            id=r.id, kind=ItemKind.TRIPLE, text=r.text(), score=float(score), method=method,
            head=r.head, relation=r.relation, tail=r.tail, cluster=cluster,
            provenance=Provenance(sources=r.sources, doc_ids=r.doc_ids, valid_from=r.valid_from,
                                  valid_to=r.valid_to, evidence=r.evidence),
        )  # fmt: skip

    def _validity(self) -> tuple[np.ndarray, np.ndarray]:
        """valid_from / valid_to per triple as int64 arrays (open ends as extremes)."""
        if self._validity_cache is None or len(self._validity_cache[0]) != len(self.triples):
            lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
            vf = np.array([lo if r.valid_from is None else r.valid_from for r in self.triples],
                          dtype=np.int64)  # fmt: skip
            vt = np.array([hi if r.valid_to is None else r.valid_to for r in self.triples],
                          dtype=np.int64)  # fmt: skip
            self._validity_cache = (vf, vt)
        return self._validity_cache

    def _triple_scores(self, qvec: np.ndarray, at: int | None) -> tuple[np.ndarray, np.ndarray]:
        """Candidate triple positions and their similarities (invalid at ``at``: -inf)."""
        ids, scores = self._triple_vecs.search(qvec)
        if at is not None and len(scores):
            vf, vt = self._validity()
            scores = np.where((vf[ids] > at) | (vt[ids] <= at), -np.inf, scores)
        return ids, scores

    def _top_triples(self, qvec: np.ndarray, n: int, at: int | None) -> list[tuple[int, float]]:
        ids, scores = self._triple_scores(qvec, at)
        return [(int(ids[i]), float(scores[i])) for i in top_indices(scores, n)
                if np.isfinite(scores[i])]  # fmt: skip

    def dense_triples(self, qvec: np.ndarray, k: int, at: int | None = None) -> list[RetrievedItem]:
        return [self.triple_item(i, s, Method.TRIPLES) for i, s in self._top_triples(qvec, k, at)]

    def tfr_triples(self, qvec: np.ndarray, k: int, at: int | None = None) -> list[RetrievedItem]:
        top = self._top_triples(qvec, max(self.top_n, 4 * k), at)
        labels = self.clusters.labels
        cands = [
            ClusterCandidate(i, s, (labels.get(self.triples[i].head, -1),
                             labels.get(self.triples[i].tail, -1)))
            for i, s in top
        ]  # fmt: skip
        chosen = select(cands, k, temperature=self.temperature)
        return [
            self.triple_item(c.index, c.score, Method.TFR, f"{c.cluster[0]}|{c.cluster[1]}")
            for c in chosen
        ]

    def _doc_items(
        self, chunk_scores: np.ndarray, k: int, method: Method, at: int | None,
        chunk_ids: np.ndarray | None = None,
    ) -> list[RetrievedItem]:  # fmt: skip
        """Best chunk per document, k documents."""
        out: list[RetrievedItem] = []
        seen: set[int] = set()
        for pos_ in top_indices(chunk_scores, max(4 * k, 50)):
            s = float(chunk_scores[pos_])
            ci = int(chunk_ids[pos_]) if chunk_ids is not None else int(pos_)
            if not math.isfinite(s) or (s <= 0 and method is Method.BM25):
                break
            pos = self.chunk_doc[int(ci)]
            d = self.docs[pos]
            if pos in seen or (at is not None and d.published_at and d.published_at > at):
                continue
            seen.add(pos)
            out.append(RetrievedItem(
                id=d.id, kind=ItemKind.DOCUMENT, text=self.chunk_text[int(ci)], score=s,
                method=method, provenance=Provenance(sources=[d.source] if d.source else [],
                doc_ids=[d.id], url=d.url, valid_from=d.published_at),
            ))  # fmt: skip
            if len(out) == k:
                break
        return out

    def dense_docs(self, qvec: np.ndarray, k: int, at: int | None = None) -> list[RetrievedItem]:
        if not self.chunk_text:
            return []
        ids, scores = self._chunk_vecs.search(qvec)
        return self._doc_items(scores, k, Method.DENSE, at, ids)

    def dense_docs_scored(
        self, chunk_ids: Sequence[str], scores: np.ndarray, k: int, at: int | None = None
    ) -> list[RetrievedItem]:
        """``dense_docs`` over chunk candidates scored elsewhere (the graph's vector
        index): the same best chunk per document, ties broken by chunk position as in
        memory; chunks this mirror has not loaded yet are skipped."""
        pos = [self._chunk_pos.get(c, -1) for c in chunk_ids]
        keep = sorted((p, float(s)) for p, s in zip(pos, scores, strict=True) if p >= 0)
        if not keep:
            return []
        ids = np.array([p for p, _ in keep], dtype=np.int64)
        vals = np.array([s for _, s in keep], dtype=np.float32)
        return self._doc_items(vals, k, Method.DENSE, at, ids)

    def bm25_docs(self, query: str, k: int, at: int | None = None) -> list[RetrievedItem]:
        if not self.chunk_text:
            return []
        import bm25s  # optional: maintained BM25 implementation, 0.8 s to import

        if self._bm25_dirty or self._bm25 is None:
            self._bm25 = bm25s.BM25()
            self._bm25.index([tokens(c) or ["\x00"] for c in self.chunk_text],
                             show_progress=False)  # fmt: skip
            self._bm25_dirty = False
        q = tokens(query)
        scores = np.zeros(len(self.chunk_text), dtype=np.float32)
        if q:
            scores = np.asarray(self._bm25.get_scores(q), dtype=np.float32)
        return self._doc_items(scores, k, Method.BM25, at)

    def named_entities(self, query: str) -> list[str]:
        spans = query_spans(query, max_units=12)
        found: list[str] = []
        for key in sorted(spans, key=len, reverse=True):
            for eid in sorted(self.mention_index.get(key, ())):
                if eid not in found:
                    found.append(eid)
        return found

    def neighbourhood(
        self, query: str, qvec: np.ndarray | None, k: int, *, depth: int = 2, at: int | None = None
    ) -> list[RetrievedItem]:
        """Triples within ``depth`` hops of the entities the query names, valid at ``at``.

        Score: 1/hop, plus the triple's similarity to the query (when a query vector is
        given) to order triples at the same distance.
        """
        seeds = self.named_entities(query)
        if not seeds:
            return []
        cap = max(50 * k, 200)  # candidates enough to rank; bounds hub expansions
        frontier, seen_nodes, hop_of = list(seeds), set(seeds), {}
        for hop in range(1, depth + 1):
            nxt: list[str] = []
            for node in frontier:
                for ti in self.adjacency.get(node, ()):
                    if ti in hop_of or not _valid(self.triples[ti], at):
                        continue
                    hop_of[ti] = hop
                    r = self.triples[ti]
                    for other in (r.head, r.tail):
                        if other not in seen_nodes:
                            seen_nodes.add(other)
                            nxt.append(other)
                if len(hop_of) >= cap:
                    break
            frontier = nxt
            if len(hop_of) >= cap:
                break
        if not hop_of:
            return []
        ids = np.fromiter(hop_of, dtype=np.int64)
        base = np.array([1.0 / hop_of[i] for i in ids], dtype=np.float32)
        if qvec is not None:
            base = base + 0.5 * (self._triple_vecs.rows.view[ids] @ qvec)
        order = np.lexsort((ids, -base))[:k]
        return [self.triple_item(int(ids[o]), base[o], Method.GRAPH) for o in order]

    @property
    def triple_vectors(self) -> VectorSearch:
        """The triples' vectors (read-only use: the retrieval bench's bare reference)."""
        return self._triple_vecs

    @property
    def chunk_vectors(self) -> VectorSearch:
        """The chunks' vectors (read-only use: the retrieval bench's bare reference)."""
        return self._chunk_vecs

    @property
    def stats(self) -> dict[str, int]:
        return {
            "triples": len(self.triples),
            "documents": len(self.docs),
            "chunks": len(self.chunk_text),
            "nodes": len(self._node_vecs),
            "clusters": self.clusters.n_clusters,
            "cluster_rebuilds": self.clusters.rebuilds,
        }
