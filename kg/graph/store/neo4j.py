"""Neo4j 5 backend (production) with the official async ``neo4j`` driver.

Verified against a real Neo4j 5.26 Community in the integration suite (the local server
of ops/neo4j_server.py, tests/bolt_server.py) besides FalkorDB.

Namespacing: one store is one Neo4j *database* (``graph.neo4j_database``). Benchmarks
get a database of their own (``create_database``/``drop_database``, Enterprise/Aura) or,
on Community, a throwaway server of their own; nothing ever deletes inside a database
it did not create.

Errors (``_translate``): connectivity and the server's transient errors are retried
by ``GraphStore``; a concurrent MERGE that loses a unique-constraint race
(``ConstraintValidationFailed``, which Neo4j raises when two writers create one key at
once) is a ``GraphConflict`` and retried too; a violation that persists, a schema or syntax
error, a missing database or a refused login is a ``GraphHalt`` with the cause.

Write units (``write_unit``): the triple sink's statements for one batch (entities per
label, facts per relationship type, validity chains) run in one explicit transaction:
one BEGIN/COMMIT instead of one per statement (~0.1 client CPU-s less per 20,000
triples), and a batch is kept whole or not at all; a transient error attempts the whole
unit again.

Cancellation: a caller that gives up on a query (``asyncio.wait_for`` around a RAG
read) cancels only its wait; the query itself finishes in the background, bounded by
the server-side transaction timeout, so the driver never tears down a connection in
the middle of a Bolt exchange.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

from core.errors import (
    GraphConflict,
    GraphError,
    GraphHalt,
    ServiceUnavailable,
    TransientGraphError,
)
from kg.graph.store.base import GraphProvider, GraphStore, IndexSpec, Row

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")

CONSTRAINT_FAILED = "Neo.ClientError.Schema.ConstraintValidationFailed"
# Errors no record explains: every batch would fail alike, so writing stops.
HALT_CODES = (
    "Neo.ClientError.Statement.SyntaxError",
    "Neo.ClientError.Schema.",
    "Neo.ClientError.Database.DatabaseNotFound",
    "Neo.ClientError.Security.",
    "Neo.ClientError.Procedure.ProcedureNotFound",
)
READ_TX_TIMEOUT_S = 30.0  # server-side bound of a read (also of one its caller abandoned)
SYSTEM_DATABASE = "system"


def _plain(value: Any) -> Any:
    import neo4j.graph as g  # optional: the Neo4j driver loads only where Neo4j is used

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
        read_timeout_s: float = READ_TX_TIMEOUT_S,
    ) -> None:
        import neo4j  # optional: the Neo4j driver loads only where Neo4j is used

        self.uri, self.database, self.user = uri, database, user
        self.read_timeout_s = read_timeout_s
        # no password: a server without auth (the local one bound to 127.0.0.1)
        auth = (user, password) if password else None
        # Server notifications (e.g. "property key does not exist" for a property no
        # record has set yet) are advice for humans typing Cypher; the driver would log
        # each as a warning on every call of our fixed queries.
        self._driver = driver or neo4j.AsyncGraphDatabase.driver(
            uri, auth=auth, notifications_min_severity="OFF"
        )
        self._background: set[asyncio.Task[Any]] = set()

    @property
    def graph_name(self) -> str:
        return self.database

    async def _run(self, cypher: str, params: dict[str, Any], *, read_only: bool) -> list[Row]:
        return await self._shielded(self._run_once(cypher, params, read_only=read_only))

    async def write_unit(self, work: Callable[[GraphStore], Awaitable[T]]) -> T:
        """``work``'s statements in one write transaction (one BEGIN/COMMIT for a sink
        batch's 20-30 statements instead of one each, and the batch written whole or not
        at all); the unit is attempted again on a transient error (``_with_retries``)."""
        return await self._shielded(self._with_retries(functools.partial(self._unit_once, work)))

    async def _unit_once(self, work: Callable[[GraphStore], Awaitable[T]]) -> T:
        import neo4j  # optional: the Neo4j driver loads only where Neo4j is used

        with self._driver_errors():
            async with self._driver.session(
                database=self.database, default_access_mode=neo4j.WRITE_ACCESS
            ) as s:
                tx = await s.begin_transaction()
                try:
                    out = await work(_UnitStore(self, tx))
                    await tx.commit()
                    return out
                finally:
                    if not tx.closed():  # work or the commit failed: nothing is kept
                        with contextlib.suppress(Exception):  # the first error is the cause
                            await tx.rollback()

    async def _shielded(self, work: Awaitable[R]) -> R:
        """Await ``work``; a caller that gives up cancels only its wait (see the module
        docstring)."""
        task = asyncio.ensure_future(work)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if not task.done():  # the caller gave up; the query finishes on its own
                self._background.add(task)
                task.add_done_callback(self._forget)
            raise

    def _forget(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.debug("abandoned neo4j query failed: %s", task.exception())

    async def _run_once(self, cypher: str, params: dict[str, Any], *, read_only: bool) -> list[Row]:
        import neo4j  # optional: the Neo4j driver loads only where Neo4j is used

        access = neo4j.READ_ACCESS if read_only else neo4j.WRITE_ACCESS
        with self._driver_errors():
            async with self._driver.session(
                database=self.database, default_access_mode=access
            ) as s:
                if read_only:
                    return await s.execute_read(self._read_tx, cypher, params)
                return await s.execute_write(_collect, cypher, params)

    @property
    def _read_tx(self) -> Any:
        import neo4j  # optional: the Neo4j driver loads only where Neo4j is used

        return neo4j.unit_of_work(timeout=self.read_timeout_s)(_collect)

    @contextlib.contextmanager
    def _driver_errors(self) -> Iterator[None]:
        """Driver errors raised inside leave as core.errors (``_translate``); others as
        they are."""
        try:
            yield
        except Exception as exc:
            translated = self._translate(exc)
            if translated is exc:
                raise
            raise translated from exc

    def _translate(self, exc: Exception) -> Exception:
        """Driver errors -> core.errors (see the module docstring for the classes)."""
        import neo4j.exceptions as nx  # optional: the Neo4j driver, as above

        where = f"neo4j at {self.uri} (database {self.database!r})"
        if isinstance(exc, nx.AuthError):
            return GraphHalt(f"{where}: login refused for user {self.user!r}: {exc}")
        if isinstance(exc, nx.ServiceUnavailable | nx.SessionExpired):
            return TransientGraphError(f"{where}: {exc}")
        if isinstance(exc, nx.ConnectionAcquisitionTimeoutError):
            return TransientGraphError(f"{where}: pool exhausted: {exc}")
        if isinstance(exc, nx.Neo4jError):
            code = exc.code or ""
            if code == CONSTRAINT_FAILED:
                return GraphConflict(f"{where}: {exc.message}")
            if isinstance(exc, nx.TransientError) or exc.is_retryable():
                return TransientGraphError(f"{where}: transient: {exc}")
            if code.startswith("Neo.ClientError.Database.DatabaseNotFound"):
                return GraphHalt(
                    f"{where}: no such database; create it or set LIVEKG_GRAPH__NEO4J_DATABASE"
                )
            if code.startswith(HALT_CODES):
                return GraphHalt(f"{where}: {code}: {exc.message}")
            return GraphError(f"{where}: {code}: {exc.message}")
        if isinstance(exc, nx.DriverError):
            return GraphError(f"{where}: {exc}")
        return exc

    async def _ddl(self, ddl: str) -> None:
        """Schema statements run in auto-commit transactions (never mixed with data)."""
        await self._auto_commit(ddl, self.database)

    async def _auto_commit(
        self, cypher: str, database: str, params: dict[str, Any] | None = None
    ) -> None:
        import neo4j  # optional: the Neo4j driver loads only where Neo4j is used

        with self._driver_errors():
            async with self._driver.session(
                database=database, default_access_mode=neo4j.WRITE_ACCESS
            ) as s:
                result = await s.run(cypher, params or {})
                await result.consume()

    async def query_procedure(self, cypher: str, params: dict[str, Any] | None = None) -> list[Row]:
        """A read calling a read-only procedure (``db.index.vector.queryNodes``) with
        livekg's own fixed Cypher: the read-only guard refuses ``CALL db.`` in user
        Cypher; the server itself refuses writes in this read-access transaction."""
        return await self._retrying(cypher, self._prepare_params(params), read_only=True)

    def index_ddl(self, index: IndexSpec) -> list[str]:
        name = f"{index.label.lower()}_{index.prop}"
        if index.unique:
            return [
                f"CREATE CONSTRAINT {name}_unique IF NOT EXISTS "
                f"FOR (n:{index.label}) REQUIRE n.{index.prop} IS UNIQUE"
            ]
        return [f"CREATE INDEX {name} IF NOT EXISTS FOR (n:{index.label}) ON (n.{index.prop})"]

    # -- databases (namespaces) ----------------------------------------------------------
    async def create_database(self) -> None:
        """Create this store's database (Neo4j Enterprise/Aura: ``CREATE DATABASE``).

        Neo4j Community has one database only: there this raises ``GraphHalt`` saying
        so, and a caller needing a scratch graph must be given an empty database.
        """
        try:
            await self._auto_commit(
                f"CREATE DATABASE `{self.database}` IF NOT EXISTS WAIT", SYSTEM_DATABASE
            )
        except GraphError as exc:
            raise GraphHalt(
                f"cannot create database {self.database!r} on {self.uri} (Neo4j Community "
                f"and some Bolt servers have no CREATE DATABASE): {exc}"
            ) from exc

    async def drop_database(self) -> None:
        """Drop this store's database (only ever called on one this process created)."""
        await self._auto_commit(f"DROP DATABASE `{self.database}` IF EXISTS", SYSTEM_DATABASE)

    async def node_count(self) -> int:
        rows = await self.query("MATCH (n) RETURN count(n) AS n")
        return int(rows[0]["n"]) if rows else 0

    async def ping(self) -> None:
        try:
            await self._driver.verify_connectivity()
        except Exception as exc:  # driver raises several unrelated types here
            raise ServiceUnavailable(f"neo4j at {self.uri} is unreachable: {exc}") from exc

    async def close(self) -> None:
        if self._background:  # abandoned reads: let them return their connections
            await asyncio.wait(list(self._background), timeout=self.read_timeout_s)
        await self._driver.close()


class _UnitStore(GraphStore):
    """The store inside one ``Neo4jStore.write_unit``: statements run in its open
    transaction, each attempted once (a failed statement ends a Neo4j transaction; the
    unit is what is attempted again)."""

    provider = GraphProvider.NEO4J

    def __init__(self, owner: Neo4jStore, tx: Any) -> None:
        self.owner, self.tx = owner, tx

    @property
    def graph_name(self) -> str:
        return self.owner.graph_name

    async def _run(self, cypher: str, params: dict[str, Any], *, read_only: bool) -> list[Row]:
        with self.owner._driver_errors():
            return await _collect(self.tx, cypher, params)

    async def _with_retries(self, attempt_once: Callable[[], Awaitable[T]]) -> T:
        """One attempt, counted nowhere: a statement's transient error ends the unit, and
        the owner's attempt of the whole unit counts it (once) and tries again."""
        return await attempt_once()

    def index_ddl(self, index: IndexSpec) -> list[str]:
        return self.owner.index_ddl(index)

    async def _ddl(self, ddl: str) -> None:
        await self.owner._ddl(ddl)  # schema statements never run in a data transaction

    async def ping(self) -> None:
        await self.owner.ping()

    async def close(self) -> None:
        """The unit's owner closes the driver."""


async def _collect(tx: Any, cypher: str, params: dict[str, Any]) -> list[Row]:
    result = await tx.run(cypher, params)
    return [{k: _plain(v) for k, v in record.items()} async for record in result]
