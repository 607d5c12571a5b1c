"""The pure parts of dense search through a graph's vector index: the DDL and query text
per backend, and turning scored chunk ids back into the in-memory search's items."""

from __future__ import annotations

import numpy as np
import pytest

from kg.graph.store.base import GraphProvider
from kg.graph.vectors import index_name, vector_index_ddl, vector_query
from kg.retrieve.index import DocRow, RetrievalIndex


def test_neo4j_index_is_exact_cosine_and_query_returns_the_cosine() -> None:
    (ddl,) = vector_index_ddl(GraphProvider.NEO4J, "Chunk", 384)
    assert ddl.startswith("CREATE VECTOR INDEX chunk_embedding_vec IF NOT EXISTS")
    assert "`vector.dimensions`: 384" in ddl and "'cosine'" in ddl
    assert "`vector.quantization.enabled`: false" in ddl  # int8 would reorder neighbours
    q = vector_query(GraphProvider.NEO4J, "Chunk")
    assert "db.index.vector.queryNodes('chunk_embedding_vec', $k, $v)" in q
    assert "2.0 * score - 1.0 AS score" in q  # Neo4j's (1 + cos) / 2 back to cos
    assert "1.0 - score AS score" in vector_query(GraphProvider.FALKORDB, "Chunk")
    assert index_name("Chunk") == "chunk_embedding_vec"
    with pytest.raises(ValueError):
        vector_index_ddl(GraphProvider.NEO4J, "Chunk) DETACH DELETE (n", 4)


def _index() -> tuple[RetrievalIndex, np.ndarray]:
    rng = np.random.default_rng(3)
    ix = RetrievalIndex(dim=8, chunk_size=40)
    docs = [DocRow(id=f"d{i}", text=f"passage number {i} " * (1 + 4 * (i % 3)),
                   published_at=1000 * i) for i in range(12)]  # fmt: skip

    def encode(texts: list[str]) -> np.ndarray:
        v = rng.standard_normal((len(texts), 8)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    ix.add_documents(docs, encode)
    q = rng.standard_normal(8).astype(np.float32)
    return ix, q / np.linalg.norm(q)


def test_scored_chunk_ids_give_the_in_memory_items() -> None:
    ix, q = _index()
    n = len(ix.chunk_text)
    assert n > 12 and len(set(ix.chunk_id(c) for c in range(n))) == n
    ids, docs, vecs = ix.chunk_rows(0, n)
    assert ids[0] == "d0#0" and docs[0] == "d0" and vecs.shape == (n, 8)
    scores = vecs @ q
    order = np.argsort(-scores)  # a graph answers best first, not by position
    for k, at in ((1, None), (3, None), (5, 6000)):
        got = ix.dense_docs_scored([ids[i] for i in order], scores[order], k, at)
        want = ix.dense_docs(q, k, at)
        assert [(i.id, i.text) for i in got] == [(i.id, i.text) for i in want]
        assert [i.score for i in got] == pytest.approx([i.score for i in want])
    # chunks the mirror has not loaded (written by another process) are skipped
    assert ix.dense_docs_scored(["other#0"], np.array([0.9], dtype=np.float32), 3) == []


def test_the_index_shows_its_vectors_for_the_benches_bare_reference() -> None:
    ix, _q = _index()
    n = len(ix.chunk_text)
    assert ix.chunk_vectors.rows.view.shape == (n, 8)
    assert ix.triple_vectors.rows.view.shape == (0, 8)  # no triples added
