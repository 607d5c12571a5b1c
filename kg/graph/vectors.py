"""Graph-side vector indexes, generated per backend (FalkorDB and Neo4j 5 both have one).

On Neo4j the retrieval service's dense stage searches ``:Chunk`` vectors through these
(``kg.retrieve.graph_vectors``); on FalkorDB the retrievers search the in-memory mirror
(``kg.retrieve.index``) and the index serves Cypher users. ``vector_query`` returns the
cosine similarity on both, as the in-memory search does. Labels come from code, never
from input.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence

import numpy as np

from kg.graph.store.base import GraphProvider, GraphStore

FALKOR_INDEX_STATUS = (
    "CALL db.indexes() YIELD label, types, status WHERE label = $label RETURN label, types, status"
)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _check(*names: str) -> None:
    for n in names:
        if not _IDENT.match(n):
            raise ValueError(f"invalid identifier {n!r}")


def vector_index_ddl(
    provider: GraphProvider, label: str, dim: int, prop: str = "embedding"
) -> list[str]:
    """DDL creating a cosine vector index on ``label.prop`` (idempotent on Neo4j;
    FalkorDB raises on a duplicate, which ``ensure_vector_index`` ignores)."""
    _check(label, prop)
    if dim < 1:
        raise ValueError("dim must be >= 1")
    if provider == GraphProvider.NEO4J:
        return [
            f"CREATE VECTOR INDEX {index_name(label, prop)} IF NOT EXISTS "
            f"FOR (n:{label}) ON (n.{prop}) "
            f"OPTIONS {{indexConfig: {{`vector.dimensions`: {dim}, "
            "`vector.similarity_function`: 'cosine', "
            # 5.26 quantizes to int8 by default: scores then differ from the cosine by
            # ~0.02 and reorder close candidates; full floats keep them exact
            "`vector.quantization.enabled`: false}}"
        ]
    return [
        f"CREATE VECTOR INDEX FOR (n:{label}) ON (n.{prop}) "
        f"OPTIONS {{dimension: {dim}, similarityFunction: 'cosine'}}"
    ]


def index_name(label: str, prop: str = "embedding") -> str:
    """Neo4j's name of the vector index on ``label.prop``."""
    _check(label, prop)
    return f"{label.lower()}_{prop}_vec"


def vector_query(provider: GraphProvider, label: str, prop: str = "embedding") -> str:
    """Cypher returning ``id`` and ``score`` (the cosine similarity, as the in-memory
    search gives it) of the ``$k`` nodes nearest ``$v``, best first."""
    _check(label, prop)
    if provider == GraphProvider.NEO4J:
        # Neo4j's cosine score is (1 + cosine) / 2, in [0, 1]
        return (
            f"CALL db.index.vector.queryNodes('{index_name(label, prop)}', $k, $v) "
            "YIELD node, score RETURN node.id AS id, 2.0 * score - 1.0 AS score"
        )
    # FalkorDB returns a cosine distance; 1 - distance is the similarity.
    return (
        f"CALL db.idx.vector.queryNodes('{label}', '{prop}', $k, vecf32($v)) "
        "YIELD node, score RETURN node.id AS id, 1.0 - score AS score"
    )


# Neo4j: the dimension a vector index was built with, by the index's name (no row: no index)
NEO4J_INDEX_DIMENSION = (
    "SHOW VECTOR INDEXES YIELD name, options WHERE name = $name "
    "RETURN options.indexConfig['vector.dimensions'] AS dim"
)


def chunk_write_cypher(label: str, prop: str = "embedding") -> str:
    """Neo4j: upsert passage nodes ``label`` (``$rows`` of ``id``, ``doc``, ``v``) with
    their vector and ``$model``, each linked ``(:Document)-[:HAS_CHUNK]->`` from its
    document (``kg.retrieve.graph_vectors``)."""
    _check(label, prop)
    return (
        f"UNWIND $rows AS r MERGE (c:{label} {{id: r.id}}) "
        f"SET c.doc_id = r.doc, c.model = $model, c.{prop} = r.v "
        "WITH c, r MATCH (d:Document {id: r.doc}) MERGE (d)-[:HAS_CHUNK]->(c)"
    )


def stored_for_model_cypher(label: str) -> str:
    """The ids among ``$ids`` of ``label`` nodes stored with the vectors of ``$model``."""
    _check(label)
    return f"UNWIND $ids AS i MATCH (c:{label} {{id: i}}) WHERE c.model = $model RETURN c.id AS id"


def write_cypher(provider: GraphProvider, label: str, prop: str = "embedding") -> str:
    _check(label, prop)
    value = "r.v" if provider == GraphProvider.NEO4J else "vecf32(r.v)"
    return f"UNWIND $rows AS r MATCH (n:{label} {{id: r.id}}) SET n.{prop} = {value}"


async def ensure_vector_index(
    store: GraphStore, label: str, dim: int, *, timeout_s: float = 60.0
) -> None:
    """Create the index if missing; on FalkorDB also wait until it is operational: it
    indexes existing nodes in the background, and a vector query meanwhile fails with
    "Invalid arguments for procedure" (seen on the loaded test machine)."""
    for ddl in vector_index_ddl(store.provider, label, dim):
        try:
            await store.execute(ddl)
        except Exception as exc:  # FalkorDB: "already indexed"
            if "already" not in str(exc).lower():
                raise
    if store.provider != GraphProvider.FALKORDB:
        return  # Neo4j: a vector query on a populating index waits for it
    deadline = time.monotonic() + timeout_s
    while True:
        rows = await store.execute(FALKOR_INDEX_STATUS, {"label": label})
        if rows and all(r["status"] == "OPERATIONAL" for r in rows):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"FalkorDB's vector index on {label} not operational: {rows}")
        await asyncio.sleep(0.1)


async def write_embeddings(
    store: GraphStore, label: str, ids: Sequence[str], vectors: np.ndarray
) -> int:
    rows = [{"id": i, "v": [float(x) for x in v]} for i, v in zip(ids, vectors, strict=True)]
    return await store.execute_batches(write_cypher(store.provider, label), rows, batch=500)
