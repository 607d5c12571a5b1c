"""The one seam between livekg and a graph database.

Code reaches the graph only through ``GraphStore``. Backends translate their own
exceptions into ``core.errors`` and implement the private ``_run``; the public methods
own retries and the read-only guard. Cypher passed here must run on Neo4j 5 and
FalkorDB alike (see docs/architecture.md: MERGE on our own ``id`` property, UNWIND
batches, epoch-millisecond integers for time).
"""

from __future__ import annotations

import asyncio
import functools
import random
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, date, datetime
from enum import Enum, StrEnum
from typing import Any, TypeVar

from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

from core import metrics
from core.errors import (
    GraphConflict,
    GraphError,
    GraphHalt,
    ReadOnlyViolation,
    TransientGraphError,
)

Row = dict[str, Any]
T = TypeVar("T")

_WRITE_CLAUSE = re.compile(
    r"\b(CREATE|MERGE|SET|DELETE|DETACH|REMOVE|DROP|LOAD\s+CSV|FOREACH)\b"
    r"|\b(CALL\s*\{|CALL\s+(?:db|apoc|dbms)\.)",
    re.IGNORECASE,
)
_STRING_LITERAL = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`")


_READ_ONLY_SEEN: dict[str, None] = {}  # queries already found read-only (bounded)
_READ_ONLY_SEEN_LIMIT = 4096


def assert_read_only(cypher: str) -> None:
    """Reject Cypher that could write. String literals are ignored when checking.

    Verdicts on accepted queries are remembered: the same text is asked again and
    again (the API's and benchmarks' parameterized queries) and the regexes cost more
    than a short query's round trip share.
    """
    if cypher in _READ_ONLY_SEEN:
        return
    stripped = _STRING_LITERAL.sub("''", cypher)
    match = _WRITE_CLAUSE.search(stripped)
    if match:
        clause = match.group(1) or match.group(2)
        raise ReadOnlyViolation(f"read-only query contains {clause.upper()!r}")
    if len(_READ_ONLY_SEEN) >= _READ_ONLY_SEEN_LIMIT:
        _READ_ONLY_SEEN.clear()
    _READ_ONLY_SEEN[cypher] = None


def _error_kind(exc: Exception) -> str:
    if isinstance(exc, GraphConflict):
        return "conflict"
    if isinstance(exc, TransientGraphError):
        return "transient"
    if isinstance(exc, GraphHalt):
        return "halt"
    return "error"


_PLAIN = frozenset({str, int, float, bool, type(None)})


def portable(value: Any) -> Any:
    """Parameters both backends take alike: datetimes and dates become epoch-millisecond
    ints (never driver temporal types), enums their values, tuples and sets lists."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=UTC)
        return int(aware.timestamp() * 1000)
    if isinstance(value, date):
        return int(datetime(value.year, value.month, value.day, tzinfo=UTC).timestamp() * 1000)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): portable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        if all(type(v) in _PLAIN for v in value):  # the common case: keep the list
            return value if isinstance(value, list) else list(value)
        return [portable(v) for v in value]
    return value


class PortableParams(dict[str, Any]):
    """Parameters their builder made portable already: strings, numbers, booleans, None,
    and lists and maps of them, times as epoch-ms ints (``kg.graph.sink``'s UNWIND rows).
    ``GraphStore`` sends them as they are: ``portable`` would copy every row, ~24,000
    values for a 2,000-triple batch, ~0.1 client CPU-s per 20,000 triples on Neo4j (the
    kg bench's profile, docs/benchmarks.md)."""


class GraphProvider(StrEnum):
    FALKORDB = "falkordb"
    NEO4J = "neo4j"


class IndexSpec:
    """A property index (unique or not) on one label, rendered per backend."""

    def __init__(self, label: str, prop: str = "id", *, unique: bool = True) -> None:
        self.label, self.prop, self.unique = label, prop, unique

    def __repr__(self) -> str:  # pragma: no cover - debug aid
        return f"IndexSpec({self.label}.{self.prop}, unique={self.unique})"


class GraphStore(ABC):
    provider: GraphProvider
    max_attempts: int = 4

    async def execute(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        """Run a (possibly writing) query with retries on transient errors."""
        return await self._retrying(cypher, self._prepare_params(params), read_only=False)

    async def query(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        """Run a read-only query; writes are refused before reaching the database."""
        assert_read_only(cypher)
        return await self._retrying(cypher, self._prepare_params(params), read_only=True)

    def _prepare_params(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        """Make parameters portable (see ``portable``; ``PortableParams`` are already); a
        backend may do it while encoding."""
        if isinstance(params, PortableParams):
            return params
        prepared: dict[str, Any] = portable(dict(params or {}))
        return prepared

    async def execute_batches(
        self,
        cypher: str,
        rows: Sequence[Mapping[str, Any]],
        *,
        batch: int = 2000,
        portable_rows: bool = False,
    ) -> int:
        """UNWIND ``$rows`` in chunks of ``batch``; returns the number of rows sent.
        ``portable_rows``: the rows are portable already (``PortableParams``)."""
        wrap = PortableParams if portable_rows else dict
        for start in range(0, len(rows), batch):
            await self.execute(cypher, wrap(rows=list(rows[start : start + batch])))
        return len(rows)

    async def _retrying(self, cypher: str, params: dict[str, Any], *, read_only: bool) -> list[Row]:
        """First attempt direct; the retry machinery (about 50-80 us a call here, more
        than a small query) is only built once a transient error happened."""
        started = time.perf_counter()
        mode = "read" if read_only else "write"
        try:
            rows = await self._with_retries(
                functools.partial(self._run, cypher, params, read_only=read_only)
            )
        except GraphError as exc:
            if not isinstance(exc, TransientGraphError):  # attempts are counted inside
                metrics.GRAPH_ERRORS.labels(self.provider.value, _error_kind(exc)).inc()
            raise
        metrics.GRAPH_QUERY_SECONDS.labels(self.provider.value, mode).observe(
            time.perf_counter() - started
        )
        return rows

    async def _with_retries(self, attempt_once: Callable[[], Awaitable[T]]) -> T:
        """``attempt_once()`` (one statement, or one transaction of several), attempted
        again on transient errors up to ``max_attempts`` times."""
        try:
            return await attempt_once()
        except TransientGraphError as exc:
            metrics.GRAPH_ERRORS.labels(self.provider.value, _error_kind(exc)).inc()
            if self.max_attempts <= 1:
                raise
        await asyncio.sleep(0.05 + random.uniform(0, 0.05))  # the first backoff step
        try:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception_type(TransientGraphError),
                stop=stop_after_attempt(self.max_attempts - 1),
                wait=wait_exponential_jitter(multiplier=0.05, max=2.0, jitter=0.05),
                reraise=True,
            ):
                with attempt:
                    try:
                        return await attempt_once()
                    except TransientGraphError as exc:
                        metrics.GRAPH_ERRORS.labels(self.provider.value, _error_kind(exc)).inc()
                        raise
        except GraphConflict as exc:
            # A lost MERGE race succeeds on the next attempt (the key exists then); one
            # that fails every time is a statement violating a constraint by itself.
            raise GraphHalt(
                f"a unique-constraint violation persisted over {self.max_attempts} attempts, "
                f"so it is not a race between writers: {exc}"
            ) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    async def write_unit(self, work: Callable[[GraphStore], Awaitable[T]]) -> T:
        """``work(store)``: writes that belong together (a sink batch's statements). A
        backend with multi-statement transactions runs them in one (Neo4j: one
        BEGIN/COMMIT instead of one per statement; the whole unit attempted again on a
        transient error, so ``work`` must be idempotent, as every write of ours is);
        here, where every statement is its own atomic write (FalkorDB), ``work(self)``."""
        return await work(self)

    @abstractmethod
    async def _run(self, cypher: str, params: dict[str, Any], *, read_only: bool) -> list[Row]:
        """Execute once and return rows as dicts keyed by the RETURN aliases."""

    @abstractmethod
    def index_ddl(self, index: IndexSpec) -> list[str]:
        """DDL statements creating ``index`` on this backend (idempotent)."""

    async def ensure_indexes(self, indexes: Sequence[IndexSpec]) -> None:
        for index in indexes:
            for ddl in self.index_ddl(index):
                await self._ddl(ddl)

    async def _ddl(self, ddl: str) -> None:
        await self.execute(ddl)

    async def label_counts(self) -> dict[str, int]:
        rows = await self.query("MATCH (n) UNWIND labels(n) AS label RETURN label, count(*) AS n")
        return {r["label"]: int(r["n"]) for r in rows}

    async def relationship_counts(self) -> dict[str, int]:
        rows = await self.query("MATCH ()-[r]->() RETURN type(r) AS type, count(*) AS n")
        return {r["type"]: int(r["n"]) for r in rows}

    async def partition_counts(self) -> dict[str, dict[str, int]]:
        """Node and relationship counts per ``partition`` property (static/dynamic)."""
        nodes = await self.query("MATCH (n) RETURN n.partition AS p, count(*) AS n")
        rels = await self.query("MATCH ()-[r]->() RETURN r.partition AS p, count(*) AS n")
        return {
            "nodes": {str(r["p"] or "none"): int(r["n"]) for r in nodes},
            "relationships": {str(r["p"] or "none"): int(r["n"]) for r in rels},
        }

    @abstractmethod
    async def ping(self) -> None:
        """Raise ServiceUnavailable when the database cannot be reached."""

    @abstractmethod
    async def close(self) -> None: ...

    async def __aenter__(self) -> GraphStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
