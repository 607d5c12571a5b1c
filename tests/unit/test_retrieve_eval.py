"""Retrieval metrics, hand-computed, and the index's methods on a tiny corpus."""

from __future__ import annotations

import math

import pytest

from evaluation.scorers.retrieval import (
    EvalQuery,
    cluster_diversity,
    context_precision,
    is_relevant,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
)
from kg.retrieve.index import DocRow, RetrievalIndex, TripleRow
from kg.retrieve.types import ItemKind, Method, RetrievedItem
from tests.fakes.embed import FakeEmbedder


def test_metrics_hand_computed() -> None:
    rel = [True, False, True, False, False]
    assert precision_at_k(rel, 5) == pytest.approx(0.4)
    assert recall_at_k(rel, 5, 4) == pytest.approx(0.5)
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4) + 1 / math.log2(5)
    assert ndcg_at_k(rel, 5, 4) == pytest.approx((1 + 1 / math.log2(4)) / ideal)
    # context precision: (1/1 + 2/3) / 2
    assert context_precision(rel, 5) == pytest.approx((1 + 2 / 3) / 2)
    assert context_precision([False, False], 2) == 0.0 and recall_at_k(rel, 5, 0) == 0.0


def _triple(i: int, head: str, tail: str, cluster: str = "") -> RetrievedItem:
    return RetrievedItem(id=f"t{i}", kind=ItemKind.TRIPLE, text="", score=1.0,
                         method=Method.TFR, head=head, tail=tail, cluster=cluster)  # fmt: skip


def test_relevance_and_diversity() -> None:
    q = EvalQuery(query="x", relevant_entities=["AAPL"])
    assert is_relevant(_triple(1, "AAPL", "X"), q, {})
    assert not is_relevant(_triple(2, "MSFT", "X"), q, {})
    doc = RetrievedItem(id="d1", kind=ItemKind.DOCUMENT, text="", score=1, method=Method.BM25)
    assert is_relevant(doc, q, {"d1": {"AAPL"}}) and not is_relevant(doc, q, {})
    items = [_triple(1, "A", "B", "0|1"), _triple(2, "A", "C", "0|1"), _triple(3, "D", "E", "2|2")]
    assert cluster_diversity(items) == pytest.approx(2 / 3)


def test_index_methods_on_a_tiny_corpus() -> None:
    emb = FakeEmbedder(dim=16)
    ix = RetrievalIndex(dim=16)

    def enc(texts: list[str]):
        return emb.embed_sync(texts, "passage")

    rows = [
        TripleRow(id="f1", head="PBOC", head_name="People's Bank of China", relation="SETS",
                  tail="LPR", tail_name="loan prime rate", valid_from=100, valid_to=200),
        TripleRow(id="f2", head="PBOC", head_name="People's Bank of China", relation="SETS",
                  tail="RRR", tail_name="reserve requirement ratio", valid_from=150),
        TripleRow(id="f3", head="FED", head_name="Federal Reserve", relation="SETS",
                  tail="FFR", tail_name="federal funds rate"),
    ]  # fmt: skip
    assert ix.add_triples(rows, enc) == 3 and ix.add_triples(rows, enc) == 0
    ix.add_documents([DocRow(id="d1", title="PBOC cuts rates", text="The central bank cut."),
                      DocRow(id="d2", title="Fed holds", text="No change.")], enc)  # fmt: skip
    assert [i.id for i in ix.bm25_docs("PBOC cuts", 5)] == ["d1"]
    q = emb.embed_sync(["People's Bank of China sets loan prime rate"], "passage")[0]
    assert ix.dense_triples(q, 1)[0].id == "f1"  # the same text: similarity 1
    assert len(ix.tfr_triples(q, 2)) == 2
    graph = ix.neighbourhood("What did the People's Bank of China do?", q, 5)
    assert {i.id for i in graph} == {"f1", "f2"}
    # time-aware: at 160 both PBOC facts hold, at 250 f1 has ended, at 120 f2 not begun
    assert {i.id for i in ix.neighbourhood("PBOC", q, 5, at=250)} == {"f2"}
    assert {i.id for i in ix.neighbourhood("PBOC", q, 5, at=120)} == {"f1"}
    assert {i.id for i in ix.dense_triples(q, 3, at=250)} == {"f2", "f3"}


def test_vector_cache_survives_a_restart(tmp_path) -> None:
    from kg.retrieve.vector_cache import VectorCache, cache_path

    emb = FakeEmbedder(dim=8)
    path = cache_path(tmp_path, emb.model_id)
    first = VectorCache(path, 8)
    enc = first.wrap(lambda texts: emb.embed_sync(texts, "passage"))
    a = enc(["x", "y"])
    first.save()
    emb.encoded.clear()
    second = VectorCache(path, 8)
    b = second.wrap(lambda texts: emb.embed_sync(texts, "passage"))(["y", "x", "z"])
    assert emb.encoded == ["z"] and second.hits == 2  # only the new text reached the model
    assert (b[0] == a[1]).all() and (b[1] == a[0]).all()
    assert VectorCache(path, 4)._vecs == {}  # another dimension: ignored, not mixed in


def test_ivf_search_matches_exact_top_k_and_takes_new_rows() -> None:
    import numpy as np

    from kg.retrieve.vectors import VectorSearch

    rng = np.random.default_rng(0)
    centers = rng.standard_normal((20, 32)).astype(np.float32)
    data = centers[rng.integers(0, 20, 3000)] + 0.2 * rng.standard_normal((3000, 32))
    data = (data / np.linalg.norm(data, axis=1, keepdims=True)).astype(np.float32)
    vs = VectorSearch(32, ivf_min=2000, nprobe=12)
    vs.extend(data[:1000])
    assert vs.centroids is None  # exact below ivf_min
    vs.extend(data[1000:2500])
    assert vs.centroids is not None and vs.trained_n == 2500
    vs.extend(data[2500:])  # joins the nearest lists, no retraining yet
    assert vs.trained_n == 2500 and sum(lst.n for lst in vs.lists) == 3000
    hits = 0
    for qi in range(0, 3000, 150):
        q = data[qi]
        ids, scores = vs.search(q)
        got = set(ids[np.argsort(-scores)[:10]].tolist())
        hits += len(got & set(np.argsort(-(data @ q))[:10].tolist()))
    assert hits / (20 * 10) >= 0.9  # approximate, but close to exact on clustered data
