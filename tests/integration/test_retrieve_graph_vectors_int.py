"""Dense retrieval through Neo4j's vector index, on the session's real Neo4j 5 Community.

The service writes each chunk's vector to a ``:Chunk`` node and asks
``db.index.vector.queryNodes`` for the candidates; these tests check that the answers
are those of the in-memory search (same ids, texts and cosine scores), that they really
come from the graph's index (its read count grows, a vector changed in the graph changes
the answer), and that a second process on the same graph writes nothing again. On
FalkorDB the service keeps the in-memory search.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from core.records import CleanDocument, DocKind, content_hash
from kg.graph import sink
from kg.graph.store import GraphStore, open_store
from kg.retrieve import RetrievalService, hybrid_search
from kg.retrieve.graph_vectors import LABEL, VectorIndexMismatch
from tests.conftest import Isolated
from tests.fakes.embed import FakeEmbedder

WORDS = ("yield", "curve", "repo", "liquidity", "central", "bank", "bond", "spread",
         "inflation", "rate", "credit", "default", "policy", "easing", "tightening")  # fmt: skip
QUERIES = ["repo liquidity injection", "bond spread widening", "central bank easing policy",
           "inflation and rate path", "credit default risk"]  # fmt: skip
BASE = datetime(2024, 9, 1, tzinfo=UTC)


def _docs(n: int = 40) -> list[CleanDocument]:
    """Synthetic documents (source says so); every tenth is long enough for two chunks."""
    out = []
    for i in range(n):
        words = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(6)]
        text = f"Synthetic note {i}: " + " ".join(words) + "."
        if i % 10 == 0:
            text += " " + " ".join(f"Extra sentence {j} about {words[j % 6]}." for j in range(40))
        out.append(CleanDocument(
            id=f"doc-{i}", source="synthetic-test", event_time=BASE + timedelta(hours=i),
            kind=DocKind.NEWS, raw_id=f"raw-{i}", title=f"Note {i}", text=text, lang="en",
            content_hash=content_hash(text),
        ))  # fmt: skip
    return out


@pytest.fixture
async def store(iso: Isolated) -> AsyncIterator[GraphStore]:
    s = open_store(iso.settings)
    await sink.ensure_schema(s)
    await sink.write_documents(s, _docs())
    yield s
    await s.close()


@pytest.mark.parametrize("iso", ["neo4j"], indirect=True)
async def test_dense_goes_through_neo4j_vector_index(
    store: GraphStore, caplog: pytest.LogCaptureFixture
) -> None:
    emb = FakeEmbedder(dim=32)
    graph = RetrievalService(store, emb, refresh_s=1e9)
    memory = RetrievalService(store, emb, refresh_s=1e9, graph_vectors=False)
    await graph.refresh(force=True)
    await memory.refresh(force=True)
    assert graph.graph_vectors is not None and memory.graph_vectors is None
    assert await graph.sync_graph_vectors()  # refresh started the write in the background
    chunks = len(graph.index.chunk_text)
    assert chunks > 40  # the long documents have more than one chunk
    assert graph.dense_in_graph and graph.graph_vectors.written == chunks
    rows = await store.query(
        f"MATCH (d:Document)-[:HAS_CHUNK]->(c:{LABEL}) WHERE c.embedding IS NOT NULL "
        "RETURN count(c) AS n, count(DISTINCT c.model) AS models"
    )
    assert rows == [{"n": chunks, "models": 1}]

    for q in QUERIES:
        for k in (1, 5):
            got = await graph.search(q, "dense", k)
            want = await memory.search(q, "dense", k)
            assert [i.id for i in got] == [i.id for i in want], q
            assert [i.text for i in got] == [i.text for i in want]
            assert [i.score for i in got] == pytest.approx([i.score for i in want], abs=1e-4)
            assert all(i.method.value == "dense" and i.kind.value == "document" for i in got)
    hybrid = await graph.hybrid(QUERIES[0], 3)
    assert [i.id for i in hybrid[:3]] == [i.id for i in await memory.search(QUERIES[0], "dense", 3)]
    searches = graph.graph_vectors.searches
    assert searches == 2 * len(QUERIES) + 1

    # the answer is the graph's: a chunk given the query's own vector there comes first
    qvec = await graph.query_vector(QUERIES[1])
    before = [i.id for i in await memory.search(QUERIES[1], "dense", 5)]
    outsider = next(d.id for d in graph.index.docs if d.id not in before)
    await store.execute(
        f"MATCH (c:{LABEL} {{id: $id}}) SET c.embedding = $v",
        {"id": f"{outsider}#0", "v": qvec.tolist()},
    )
    top = (await graph.search(QUERIES[1], "dense", 5))[0]
    assert top.id == outsider and top.score == pytest.approx(1.0, abs=1e-4)
    assert [i.id for i in await memory.search(QUERIES[1], "dense", 5)] == before

    # a second process on the same graph and model finds every chunk stored: no writes
    again = RetrievalService(store, FakeEmbedder(dim=32), refresh_s=1e9)
    await again.refresh(force=True)
    assert await again.sync_graph_vectors() and again.graph_vectors is not None
    assert again.graph_vectors.written == 0

    # without the index the query fails: the answer falls back to memory, and says so
    await store.execute("DROP INDEX chunk_embedding_vec")
    got = await again.search(QUERIES[2], "dense", 5)
    assert [i.id for i in got] == [i.id for i in await memory.search(QUERIES[2], "dense", 5)]
    assert "graph vector search failed" in caplog.text


@pytest.mark.parametrize("iso", ["neo4j"], indirect=True)
async def test_dense_as_of_filters_like_memory(store: GraphStore) -> None:
    """``at`` hides documents published later, on the graph path as in memory."""
    emb = FakeEmbedder(dim=32)
    graph = RetrievalService(store, emb, refresh_s=1e9)
    memory = RetrievalService(store, emb, refresh_s=1e9, graph_vectors=False)
    at = int((BASE + timedelta(hours=15)).timestamp() * 1000)
    await graph.refresh(force=True)
    assert await graph.sync_graph_vectors()
    for q in QUERIES:
        got = await graph.search(q, "dense", 5, at=at)
        want = await memory.search(q, "dense", 5, at=at)
        assert [i.id for i in got] == [i.id for i in want] and got
        assert all((i.provenance.valid_from or 0) <= at for i in got)


@pytest.mark.parametrize("iso", ["neo4j"], indirect=True)
async def test_wrong_dimension_index_is_refused(
    store: GraphStore, caplog: pytest.LogCaptureFixture
) -> None:
    """An index built for another model's dimension is named, never silently empty:
    the service falls back to the in-memory search and says why."""
    first = RetrievalService(store, FakeEmbedder(dim=32), refresh_s=1e9)
    await first.refresh(force=True)
    assert await first.sync_graph_vectors()
    other = RetrievalService(store, FakeEmbedder(dim=16), refresh_s=1e9)
    assert other.graph_vectors is not None
    with pytest.raises(VectorIndexMismatch, match="dimension 32"):
        await other.graph_vectors.ensure()
    await other.refresh(force=True)
    assert not await other.sync_graph_vectors()
    assert other.graph_vectors is None and "dimension 32" in caplog.text
    assert len(await other.search(QUERIES[0], "dense", 5)) == 5


@pytest.mark.parametrize("iso", ["falkordb"], indirect=True)
async def test_falkordb_keeps_the_in_memory_search(store: GraphStore) -> None:
    service = RetrievalService(store, FakeEmbedder(dim=32), refresh_s=1e9)
    assert service.graph_vectors is None and not service.dense_in_graph
    got = await service.search(QUERIES[0], "dense", 5)
    assert len(got) == 5 and all(np.isfinite(i.score) for i in got)
    assert not await store.query(f"MATCH (c:{LABEL}) RETURN c.id AS id LIMIT 1")


@pytest.mark.parametrize("iso", ["neo4j"], indirect=True)
async def test_question_path_reads_the_index_but_never_writes(store: GraphStore) -> None:
    """``hybrid_search`` (the question path) writes nothing: in memory until a writer
    stored every chunk, then through the index."""

    async def counts() -> tuple[int, int]:
        n = await store.query("MATCH (n) RETURN count(n) AS n")
        r = await store.query("MATCH ()-[r]->() RETURN count(r) AS n")
        return int(n[0]["n"]), int(r[0]["n"])

    before = await counts()
    reader = RetrievalService(store, FakeEmbedder(dim=32), refresh_s=1e9, write_vectors=False)
    got = await reader.hybrid(QUERIES[0], 3)
    assert got and not await reader.sync_graph_vectors()
    assert await counts() == before  # no :Chunk, no constraint or index needed

    writer = RetrievalService(store, FakeEmbedder(dim=32), refresh_s=1e9)
    await writer.refresh(force=True)
    assert await writer.sync_graph_vectors()
    assert await reader.sync_graph_vectors() and reader.graph_vectors is not None
    assert [i.id for i in await reader.search(QUERIES[0], "dense", 3)] == [i.id for i in got[:3]]
    assert reader.graph_vectors.searches == 1 and reader.graph_vectors.written == 0
    emb = FakeEmbedder(dim=32)
    assert await hybrid_search(store, emb, QUERIES[1], 3)  # its cached reader service
