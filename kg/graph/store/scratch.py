"""A graph of its own for benchmarks: never the configured production graph.

FalkorDB: a new graph key on the same server, deleted afterwards. Neo4j: a new
database (``CREATE DATABASE``, Enterprise/Aura), dropped afterwards; where the server
cannot create one (Community), the caller names an empty scratch database, which is
checked to be empty and different from the configured one, and emptied afterwards
(everything in it was written by this run).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from core.errors import ConfigError
from core.settings import GraphBackend, Settings
from kg.graph.store.base import GraphStore
from kg.graph.store.factory import open_store
from kg.graph.store.neo4j import Neo4jStore

EMPTY_BATCH = 5000


async def empty_database(store: GraphStore) -> None:
    """Delete every node in ``store`` in bounded transactions (scratch databases only)."""
    while True:
        rows = await store.execute(
            f"MATCH (n) WITH n LIMIT {EMPTY_BATCH} DETACH DELETE n RETURN count(*) AS n"
        )
        if not rows or int(rows[0]["n"]) == 0:
            return


@asynccontextmanager
async def scratch_graph(
    settings: Settings,
    falkordb_url: str | None,
    *,
    purpose: str = "bench",
    database: str | None = None,
    private_server: bool = False,
) -> AsyncIterator[tuple[Settings, GraphStore]]:
    """Settings and a store for a graph of its own; removed when the block ends.

    ``private_server`` (Neo4j): the configured server was started for this caller alone
    (a throwaway local Neo4j), so its configured database, checked empty, is the scratch
    graph."""
    tag = uuid.uuid4().hex[:8]
    g = settings.graph
    if g.backend != GraphBackend.NEO4J:
        scoped = settings.with_overrides(graph={"graph_name": f"{purpose}_{tag}"})
        store = open_store(scoped, falkordb_url)
        try:
            yield scoped, store
        finally:
            try:
                await store.delete_graph()  # type: ignore[attr-defined]
            finally:
                await store.close()
        return
    created = database is None and not private_server
    name = database or (g.neo4j_database if private_server else f"livekg-{purpose}-{tag}")
    if name == g.neo4j_database and not private_server:
        raise ConfigError(
            f"{name!r} is the configured graph database (LIVEKG_GRAPH__NEO4J_DATABASE); "
            "a benchmark needs an empty database of its own"
        )
    scoped = settings.with_overrides(graph={"neo4j_database": name})
    store = open_store(scoped)
    assert isinstance(store, Neo4jStore)
    try:
        if created:
            await store.create_database()
        elif await store.node_count():
            raise ConfigError(
                f"scratch database {name!r} is not empty: refusing to write into it "
                "(and to empty it afterwards)"
            )
    except BaseException:
        await store.close()
        raise
    try:
        yield scoped, store
    finally:
        try:
            if created:
                await store.drop_database()
            else:
                await empty_database(store)
        finally:
            await store.close()
