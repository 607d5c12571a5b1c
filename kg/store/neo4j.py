"""Neo4j 5 backend (production) with the official async ``neo4j`` driver.

Not runnable on this machine (no Neo4j server); its Cypher is shared with FalkorDB and
exercised there, and its driver handling has focused unit tests with a mocked driver.
"""

from __future__ import annotations

from typing import Any

from kg.errors import GraphError, ServiceUnavailable, TransientGraphError
from kg.store.base import GraphProvider, GraphStore, IndexSpec, Row


def _plain(value: Any) -> Any:
    import neo4j.graph as g

    if isinstance(value, g.Node):
        return {**dict(value), "_labels": sorted(value.labels)}
    if isinstance(value, g.Relationship):
        return {**dict(value), "_type": value.type}
    if isinstance(value, g.Path):
        return {
            "nodes": [_plain(n) for n in value.nodes],
            "edges": [_plain(r) for r in value.relationships],
        }
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "to_native"):  # neo4j.time types -> datetime/date/time/timedelta
        # (our own writes never store them: times are epoch-ms ints on both backends)
        return value.to_native()
    return value


class Neo4jStore(GraphStore):
    provider = GraphProvider.NEO4J

    def __init__(
        self,
        uri: str,
        user: str,
        password: str,
        database: str = "neo4j",
        *,
        driver: Any | None = None,
    ) -> None:
        import neo4j

        self.uri, self.database = uri, database
        self._driver = driver or neo4j.AsyncGraphDatabase.driver(uri, auth=(user, password))

    async def _run(self, cypher: str, params: dict[str, Any], *, read_only: bool) -> list[Row]:
        import neo4j

        access = neo4j.READ_ACCESS if read_only else neo4j.WRITE_ACCESS
        try:
            async with self._driver.session(
                database=self.database, default_access_mode=access
            ) as s:
                if read_only:
                    return await s.execute_read(_collect, cypher, params)
                return await s.execute_write(_collect, cypher, params)
        except Exception as exc:
            translated = self._translate(exc)
            if translated is exc:
                raise
            raise translated from exc

    def _translate(self, exc: Exception) -> Exception:
        """Driver errors -> kg.errors: retryable ones become TransientGraphError."""
        import neo4j.exceptions as nx

        if isinstance(exc, nx.ServiceUnavailable | nx.SessionExpired):
            return TransientGraphError(f"neo4j at {self.uri}: {exc}")
        if isinstance(exc, nx.TransientError) or (
            isinstance(exc, nx.Neo4jError) and exc.is_retryable()
        ):
            return TransientGraphError(f"neo4j transient: {exc}")
        if isinstance(exc, nx.ConnectionAcquisitionTimeoutError):
            return TransientGraphError(f"neo4j pool exhausted at {self.uri}: {exc}")
        if isinstance(exc, nx.Neo4jError | nx.DriverError):
            return GraphError(f"neo4j: {exc}")
        return exc

    async def _ddl(self, ddl: str) -> None:
        """Schema statements run in auto-commit transactions (never mixed with data)."""
        import neo4j

        try:
            async with self._driver.session(
                database=self.database, default_access_mode=neo4j.WRITE_ACCESS
            ) as s:
                result = await s.run(ddl)
                await result.consume()
        except Exception as exc:
            translated = self._translate(exc)
            if translated is exc:
                raise
            raise translated from exc

    def index_ddl(self, index: IndexSpec) -> list[str]:
        name = f"{index.label.lower()}_{index.prop}"
        if index.unique:
            return [
                f"CREATE CONSTRAINT {name}_unique IF NOT EXISTS "
                f"FOR (n:{index.label}) REQUIRE n.{index.prop} IS UNIQUE"
            ]
        return [f"CREATE INDEX {name} IF NOT EXISTS FOR (n:{index.label}) ON (n.{index.prop})"]

    async def ping(self) -> None:
        try:
            await self._driver.verify_connectivity()
        except Exception as exc:  # driver raises several unrelated types here
            raise ServiceUnavailable(f"neo4j at {self.uri} is unreachable: {exc}") from exc

    async def close(self) -> None:
        await self._driver.close()


async def _collect(tx: Any, cypher: str, params: dict[str, Any]) -> list[Row]:
    result = await tx.run(cypher, params)
    return [{k: _plain(v) for k, v in record.items()} async for record in result]
