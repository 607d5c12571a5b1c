"""Passage vectors in the graph's own vector index: the dense stage on Neo4j.

On Neo4j the retrieval service writes each document chunk it indexes as a ``:Chunk``
node (``id`` = ``<doc id>#<n>``, ``doc_id``, ``model``, ``embedding``; linked
``(:Document)-[:HAS_CHUNK]->(:Chunk)``) and answers dense searches with
``db.index.vector.queryNodes`` on ``CREATE VECTOR INDEX chunk_embedding_vec``. The
in-memory mirror keeps the chunk texts and document provenance that turn chunk ids
into items, so results have the same ids and cosine scores as the in-memory search.

A chunk is written once per embedder model: the ids already stored with the same
``model`` are skipped, so a second process on the same graph sends no vectors again.
A reader (``writer=False``: the question-answering path, which never writes to the
graph) creates nothing and uses the index only once every chunk it holds is stored.
FalkorDB keeps the in-memory search (its vector index was measured slower, see
docs/retrieval.md).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from kg.graph.store.base import GraphStore, IndexSpec
from kg.graph.store.neo4j import Neo4jStore
from kg.graph.vectors import (
    NEO4J_INDEX_DIMENSION,
    chunk_write_cypher,
    ensure_vector_index,
    index_name,
    stored_for_model_cypher,
    vector_query,
)

log = logging.getLogger(__name__)

LABEL = "Chunk"
WRITE_BATCH = 200  # rows of 384 floats per UNWIND (about 0.6 MB of parameters)


class VectorIndexMismatch(ValueError):
    """The graph's vector index was built for another dimension (another model)."""


def supported(store: GraphStore | None) -> bool:
    """Whether the dense stage goes through the graph's vector index on ``store``."""
    return isinstance(store, Neo4jStore)


class GraphChunkVectors:
    """Writes chunk vectors to the graph and searches them with its vector index."""

    def __init__(self, store: GraphStore, dim: int, model_id: str, *, writer: bool = True) -> None:
        if not isinstance(store, Neo4jStore):
            raise ValueError(f"no graph vector search on {store.provider}")
        self.store: Neo4jStore = store
        self.dim = dim
        self.model_id = model_id
        self.index = index_name(LABEL)
        self.query_cypher = vector_query(store.provider, LABEL)
        self.write_cypher = chunk_write_cypher(LABEL)
        self.stored_cypher = stored_for_model_cypher(LABEL)
        self.searches = 0  # vector-index queries sent (tests and stats)
        self.written = 0
        self.writer = writer
        self._ready = False

    async def ensure(self) -> bool:
        """The unique id constraint and the vector index, with this model's dimension
        (a reader only checks them); False when a reader finds no index yet."""
        if self._ready:
            return True
        if self.writer:
            await self.store.ensure_indexes([IndexSpec(LABEL)])
            await ensure_vector_index(self.store, LABEL, self.dim)
        rows = await self.store.query(NEO4J_INDEX_DIMENSION, {"name": self.index})
        if not rows:
            if self.writer:
                raise VectorIndexMismatch(f"the vector index {self.index} was not created")
            return False
        have = int(rows[0]["dim"]) if rows[0]["dim"] is not None else self.dim
        if have != self.dim:
            raise VectorIndexMismatch(
                f"the graph's vector index {self.index} has dimension {have}, the embedder "
                f"{self.model_id} {self.dim}: drop the index (DROP INDEX {self.index}) to "
                "re-index with this model"
            )
        self._ready = True
        return True

    async def stored(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` the graph holds with this model's vectors."""
        out: set[str] = set()
        for start in range(0, len(ids), 5000):
            chunk = list(ids[start : start + 5000])
            rows = await self.store.query(
                self.stored_cypher, {"ids": chunk, "model": self.model_id}
            )
            out.update(str(r["id"]) for r in rows)
        return out

    async def write(self, ids: Sequence[str], doc_ids: Sequence[str], vectors: np.ndarray) -> int:
        """Store the chunks not yet stored with this model; returns how many were sent.
        A reader sends nothing and returns how many are missing."""
        if not await self.ensure():
            return len(ids)
        if not ids:
            return 0
        stored = await self.stored(ids)
        if not self.writer:
            return len(ids) - len(stored)
        vecs = np.asarray(vectors, dtype=np.float32)
        rows_out = [
            {"id": i, "doc": d, "v": vecs[j].tolist()}
            for j, (i, d) in enumerate(zip(ids, doc_ids, strict=True))
            if i not in stored
        ]
        for start in range(0, len(rows_out), WRITE_BATCH):
            batch = rows_out[start : start + WRITE_BATCH]
            await self.store.execute(self.write_cypher, {"rows": batch, "model": self.model_id})
        self.written += len(rows_out)
        return len(rows_out)

    async def search(self, qvec: np.ndarray, n: int) -> tuple[list[str], np.ndarray]:
        """The ``n`` nearest chunk ids and their cosine similarities, best first."""
        await self.ensure()
        self.searches += 1
        rows = await self.store.query_procedure(
            self.query_cypher, {"k": int(n), "v": np.asarray(qvec, dtype=np.float32).tolist()}
        )
        return [str(r["id"]) for r in rows], np.array(
            [float(r["score"]) for r in rows], dtype=np.float32
        )
