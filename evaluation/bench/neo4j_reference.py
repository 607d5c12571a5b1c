"""The Neo4j side of the kg bench's same-work reference: the hand-written statements run
through the official ``neo4j`` driver alone (one auto-commit-free managed write
transaction per statement), without livekg's store, retries or parameter shaping."""

from __future__ import annotations

from typing import Any


def bare_neo4j_runner(uri: str, auth: tuple[str, str] | None, database: str) -> tuple[Any, Any]:
    """``(run, close)`` over the async driver alone (as ``bare_falkordb_runner``)."""
    import neo4j  # optional: the Neo4j driver is loaded only for a Neo4j run

    driver = neo4j.AsyncGraphDatabase.driver(uri, auth=auth, notifications_min_severity="OFF")

    async def write(tx: Any, cypher: str, params: dict[str, Any]) -> None:
        result = await tx.run(cypher, params)
        await result.consume()

    async def run(cypher: str, params: dict[str, Any]) -> None:
        async with driver.session(database=database) as session:
            await session.execute_write(write, cypher, params)

    async def close() -> None:
        await driver.close()

    return run, close
