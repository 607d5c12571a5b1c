"""Read-only execution: guard, row cap, timeout. The one way kg/cypher and the API run
a query that did not come from livekg's own code.

Layer 1 is ``guard.check_read_only`` (tokens, allow-listed procedures); layer 2 is the
store's read-only mode (``GraphStore.query``: FalkorDB ``GRAPH.RO_QUERY``, Neo4j read
sessions), which also runs its own regex check.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from core.errors import GraphError, LivekgError
from kg.cypher.guard import check_read_only, with_limit
from kg.graph.store.base import GraphStore, Row


class QueryTimeout(GraphError):
    """The query ran past its time limit (the client stopped waiting)."""


async def run_read_only(
    store: GraphStore,
    cypher: str,
    params: Mapping[str, Any] | None = None,
    *,
    timeout_s: float = 5.0,
    row_limit: int = 200,
) -> list[Row]:
    """Rows of a read-only query, at most ``row_limit`` of them.

    Raises ``ReadOnlyViolation`` before anything reaches the database when the query
    could write, ``QueryTimeout`` after ``timeout_s``.
    """
    check_read_only(cypher)
    capped = with_limit(cypher, row_limit)
    try:
        rows = await asyncio.wait_for(store.query(capped, dict(params or {})), timeout_s)
    except TimeoutError as exc:
        raise QueryTimeout(f"query ran past {timeout_s:g} s") from exc
    return rows[:row_limit]


async def runs(store: GraphStore, cypher: str, params: Mapping[str, Any], **kw: Any) -> bool:
    """True when the query passes the guard and runs without error."""
    try:
        await run_read_only(store, cypher, params, **kw)
    except LivekgError:
        return False
    return True


async def explain(
    store: GraphStore,
    cypher: str,
    params: Mapping[str, Any] | None = None,
    *,
    timeout_s: float = 5.0,
) -> None:
    """Check a query before running it: the guard, then ``EXPLAIN`` (the database parses
    and plans it; Neo4j returns no rows, FalkorDB accepts the prefix and runs the capped
    query, still read-only). Raises the store's error for a query that would not run."""
    check_read_only(cypher)
    try:
        await asyncio.wait_for(
            store.query("EXPLAIN " + with_limit(cypher, 1), dict(params or {})), timeout_s
        )
    except TimeoutError as exc:
        raise QueryTimeout(f"EXPLAIN ran past {timeout_s:g} s") from exc
