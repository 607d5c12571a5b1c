"""``livekg eval retrieval``: precision@k, recall@k, nDCG@k, context precision and
cluster diversity per method on a labelled query set.

A query lists the entities its answer is about (``relevant_entities``); an item is
relevant when it is about one of them: a triple whose head or tail is one, a document
that mentions one. Recall divides by every such item in the index (per item kind the
method returns). Context precision is HybridRAG section 2.4.3 with these labels (the sum
of precision@i at each relevant rank i, over the relevant items in the top k). The
LLM-judged metrics of section 2.4 (faithfulness, answer relevance, context recall) are
not computed here (see docs/retrieval.md). The bundled set
(evaluation/evalsets/retrieval_eval.jsonl) was written over the bundled sample data before any
method was run on it, in two splits: ``tune`` (the TFR temperature and n are chosen on
it, ``tune_tfr``) and ``test`` (written after the first 12 queries had been seen, never
used for a choice: the figures to quote).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from core.records import CleanDocument, DocKind, content_hash
from kg.extract.pipeline import ExtractDoc, Extractor, bundled_index
from kg.graph import sink
from kg.graph.canonical import load_alias_index
from kg.graph.queries import cypher
from kg.graph.static import load_universe
from kg.graph.store import open_store
from kg.models.embed import make_embedder
from kg.retrieve.index import RetrievalIndex
from kg.retrieve.service import RetrievalService
from kg.retrieve.types import ItemKind, Method, RetrievedItem

BUNDLED = Path(__file__).resolve().parents[1] / "evalsets" / "retrieval_eval.jsonl"
SAMPLES = Path(__file__).resolve().parents[2] / "connectors" / "samples"


class EvalQuery(BaseModel):
    query: str
    relevant_entities: list[str] = Field(default_factory=list)
    relevant_ids: list[str] = Field(default_factory=list)  # item ids, if known
    split: str = "test"  # tune | test


def load_queries(path: Path | None = None, split: str | None = None) -> list[EvalQuery]:
    """The queries of ``path`` (default: the bundled set), of one split or all (None)."""
    lines = (path or BUNDLED).read_text(encoding="utf-8").splitlines()
    qs = [EvalQuery.model_validate_json(line) for line in lines if line.strip()]
    return [q for q in qs if split in (None, "all", q.split)]


def is_relevant(item: RetrievedItem, q: EvalQuery, doc_entities: dict[str, set[str]]) -> bool:
    if item.id in q.relevant_ids:
        return True
    want = set(q.relevant_entities)
    if item.kind is ItemKind.TRIPLE:
        return item.head in want or item.tail in want
    return bool(doc_entities.get(item.id, set()) & want)


def relevant_total(index: RetrievalIndex, q: EvalQuery, kinds: set[ItemKind]) -> int:
    want = set(q.relevant_entities)
    n = len(set(q.relevant_ids))
    if ItemKind.TRIPLE in kinds:
        n += sum(1 for t in index.triples if t.head in want or t.tail in want)
    if ItemKind.DOCUMENT in kinds:
        n += sum(1 for d in index.docs if set(d.entities) & want)
    return n


def precision_at_k(rel: Sequence[bool], k: int) -> float:
    return sum(rel[:k]) / k if k else 0.0


def recall_at_k(rel: Sequence[bool], k: int, total: int) -> float:
    return min(sum(rel[:k]) / total, 1.0) if total else 0.0


def ndcg_at_k(rel: Sequence[bool], k: int, total: int) -> float:
    dcg = sum(1.0 / math.log2(i + 2) for i, r in enumerate(rel[:k]) if r)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, total)))
    return dcg / ideal if ideal else 0.0


def context_precision(rel: Sequence[bool], k: int) -> float:
    """HybridRAG section 2.4.3: sum over ranks of precision@i times v_i, divided by the
    relevant items in the top k."""
    hits = 0
    total = 0.0
    for i, r in enumerate(rel[:k], 1):
        if r:
            hits += 1
            total += hits / i
    return total / hits if hits else 0.0


def cluster_diversity(items: Sequence[RetrievedItem]) -> float:
    """Distinct clusters (TFR) or distinct head entities (other triples) per triple."""
    triples = [i for i in items if i.kind is ItemKind.TRIPLE]
    if not triples:
        return 0.0
    keys = {i.cluster or i.head for i in triples}
    return len(keys) / len(triples)


KINDS = {
    Method.BM25: {ItemKind.DOCUMENT}, Method.DENSE: {ItemKind.DOCUMENT},
    Method.TRIPLES: {ItemKind.TRIPLE}, Method.TFR: {ItemKind.TRIPLE},
    Method.GRAPH: {ItemKind.TRIPLE}, Method.HYBRID: {ItemKind.TRIPLE, ItemKind.DOCUMENT},
}  # fmt: skip


async def evaluate(service: Any, queries: Sequence[EvalQuery], k: int,
                   methods: Sequence[str]) -> dict[str, Any]:  # fmt: skip
    await service.refresh(force=True)
    index: RetrievalIndex = service.index
    doc_entities = {d.id: set(d.entities) for d in index.docs}
    out: dict[str, Any] = {}
    for name in methods:
        method = Method(name.strip())
        rows: dict[str, list[float]] = {m: [] for m in
                                        ("precision", "recall", "ndcg", "context_precision",
                                         "diversity")}  # fmt: skip
        t0 = time.perf_counter()
        for q in queries:
            items = await service.search(q.query, method, k)
            rel = [is_relevant(i, q, doc_entities) for i in items]
            total = relevant_total(index, q, KINDS[method])
            kk = len(items) if method is Method.HYBRID else k  # hybrid returns up to 2k
            rows["precision"].append(precision_at_k(rel, max(kk, 1)))
            rows["recall"].append(recall_at_k(rel, max(kk, 1), total))
            rows["ndcg"].append(ndcg_at_k(rel, max(kk, 1), total))
            rows["context_precision"].append(context_precision(rel, max(kk, 1)))
            rows["diversity"].append(cluster_diversity(items))
        n = max(len(queries), 1)
        out[method.value] = {
            f"precision@{k}": round(sum(rows["precision"]) / n, 4),
            f"recall@{k}": round(sum(rows["recall"]) / n, 4),
            f"ndcg@{k}": round(sum(rows["ndcg"]) / n, 4),
            "context_precision": round(sum(rows["context_precision"]) / n, 4),
            "cluster_diversity": round(sum(rows["diversity"]) / n, 4),
            "seconds": round(time.perf_counter() - t0, 3),
        }
    return out


TFR_GRID = {"temperature": (0.01, 0.05, 0.1, 0.3, 1.0), "top_n": (20, 50, 200)}


async def tune_tfr(service: Any, tune: Sequence[EvalQuery], test: Sequence[EvalQuery], k: int,
                   grid: dict[str, Sequence[float]] = TFR_GRID) -> dict[str, Any]:  # fmt: skip
    """Choose the TFR softmax temperature and candidate count n on ``tune`` by nDCG@k
    (then precision@k; ties keep the seed's plain softmax, T=1, n=200), and report
    the choice and the seed's setting side by side on ``test``."""
    ix: RetrievalIndex = service.index
    saved = (ix.temperature, ix.top_n)
    rows = []
    try:
        for temp in grid["temperature"]:
            for n in grid["top_n"]:
                ix.temperature, ix.top_n = float(temp), int(n)
                m = (await evaluate(service, tune, k, ["tfr"]))["tfr"]
                rows.append({"temperature": temp, "top_n": n, **m})

        def score(r: dict[str, Any]) -> tuple[float, float, bool]:
            seed = r["temperature"] == 1.0 and r["top_n"] == 200
            return (r[f"ndcg@{k}"], r[f"precision@{k}"], seed)

        best = max(rows, key=score)
        out = {}
        for name, (temp, n) in {"chosen": (best["temperature"], best["top_n"]),
                                "seed_default": (1.0, 200)}.items():  # fmt: skip
            ix.temperature, ix.top_n = float(temp), int(n)
            out[name] = {"temperature": temp, "top_n": n,
                         **(await evaluate(service, test, k, ["tfr"]))["tfr"]}  # fmt: skip
    finally:
        ix.temperature, ix.top_n = saved
    return {"k": k, "tune_queries": len(tune), "test_queries": len(test), "grid": rows,
            "test": out}  # fmt: skip


async def load_sample_graph(store: Any) -> dict[str, int]:
    """The bundled sample universe, news and a few sample triples into ``store``
    (used when the evaluation runs on an empty temporary graph)."""
    await sink.ensure_schema(store)
    await load_universe(store)
    docs = []
    for i, line in enumerate((SAMPLES / "news.jsonl").read_text(encoding="utf-8").splitlines()):
        r = json.loads(line)
        text = r.get("body") or r["title"]
        docs.append(CleanDocument(
            id=f"sample-news-{i}", source=r["source"], event_time=r["event_time"],
            kind=DocKind.NEWS, raw_id=f"sample-news-{i}", title=r["title"], text=text,
            url=r.get("url", ""), lang=r.get("lang", "en"), entities=r.get("entities", []),
            content_hash=content_hash(text),
        ))  # fmt: skip
    await sink.write_documents(store, docs)
    index = await load_alias_index(store)
    # the facts the stream would extract from them (the LLM-free paths), so the graph
    # methods have news facts to find, not only the static universe
    extractor = Extractor(index=bundled_index())
    triples = [t for d in docs for t in (await extractor.extract(ExtractDoc.from_clean(d))).triples]
    await sink.write_triples(store, triples, index=index)
    return {"documents": len(docs), "triples": len(triples),
            "at": int(datetime.now(UTC).timestamp())}  # fmt: skip


async def scored_service(
    settings: Any, store: Any
) -> tuple[RetrievalService, dict[str, Any] | None]:
    """The retrieval service the retrieval and RAG evals score, built from the settings
    (``report.retrieve``) over ``store``; a store with no document is first loaded with the
    bundled samples. Returns the service and what was loaded (None: the graph as it was)."""
    loaded = None
    if not (await store.query(cypher("documents_count")))[0]["n"]:
        loaded = await load_sample_graph(store)
    r = settings.report.retrieve
    service = RetrievalService(store, make_embedder(settings.embed), refresh_s=1e9,
                               top_n=r.top_n, cluster_threshold=r.cluster_threshold,
                               temperature=r.temperature)  # fmt: skip
    return service, loaded


def run_eval(settings: Any, data: Path | None, k: int, methods: Sequence[str],
             split: str | None = "test", tune: bool = False, *,
             services: Callable[..., Any]) -> dict:  # fmt: skip
    """On the running graph, or a temporary one loaded with the bundled samples;
    ``tune``: the TFR grid on the tune split, judged on ``split``. ``services`` is the
    runtime's context manager (given by the CLI, so kg never imports the top floor)."""
    queries = load_queries(data, split)
    tune_qs = load_queries(data, "tune") if tune else None
    with services(settings) as (s, ep):
        return asyncio.run(_run_eval(s, ep.falkordb_url, queries, k, methods, tune_qs, split))


async def _run_eval(settings: Any, falkordb_url: str | None, queries: list[EvalQuery], k: int,
                    methods: Sequence[str], tune_qs: list[EvalQuery] | None = None,
                    split: str | None = None) -> dict:  # fmt: skip
    store = open_store(settings, falkordb_url)
    r = settings.report.retrieve
    try:
        service, loaded = await scored_service(settings, store)
        embedder = service.embedder
        if tune_qs is not None:
            await service.refresh(force=True)
            tuned = await tune_tfr(service, tune_qs, queries, k)
            results = None
        else:
            results = await evaluate(service, queries, k, methods)
    finally:
        await store.close()
    out = {"eval": "retrieval", "split": split or "all", "queries": len(queries), "k": k,
           "embedder": embedder.model_id, "loaded_samples": loaded is not None,
           "index": service.index.stats,
           "tfr": {"temperature": r.temperature, "top_n": r.top_n}}  # fmt: skip
    if tune_qs is not None:
        out["tune"] = tuned
    else:
        out["methods"] = results
    return out
