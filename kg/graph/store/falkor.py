"""FalkorDB backend (embedded default) over the Redis protocol with the async client."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date, datetime
from enum import Enum
from typing import Any
from urllib.parse import urlparse

import redis.exceptions as redis_errors
from falkordb import Edge, Node, Path
from falkordb.asyncio import FalkorDB

from core.errors import GraphError, ServiceUnavailable, TransientGraphError
from kg.graph.store.base import GraphProvider, GraphStore, IndexSpec, Row, portable


def _str(v: str) -> str:
    if "\\" not in v and '"' not in v:  # the common case: nothing to escape
        return '"' + v + '"'
    return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _float(v: float) -> str:
    if not math.isfinite(v):
        raise GraphError(f"falkordb: non-finite parameter value {v!r}")
    return repr(v)


_KEYS: dict[str, str] = {}


def _key(k: str) -> str:
    out = _KEYS.get(k)
    if out is None:
        if not k or "`" in k:
            raise GraphError(f"falkordb: invalid parameter map key {k!r}")
        out = _KEYS[k] = f"`{k}`:"
    return out


def _map(v: dict[str, Any]) -> str:
    """A map literal (one UNWIND row): what ``_lit`` gives, with the common value types
    written inline; a call per value was most of the cost of a 2,000-row batch."""
    parts: list[str] = []
    append = parts.append
    keys = _KEYS
    for k, x in v.items():
        key = keys.get(k) or _key(k)
        t = type(x)
        if t is str:
            append(key + _str(x) if "\\" in x or '"' in x else f'{key}"{x}"')
        elif t is int:
            append(key + str(x))
        elif x is None:
            append(key + "null")
        elif t is list and x and all(type(y) is str for y in x):
            append(key + "[" + ",".join([_str(y) for y in x]) + "]")
        else:
            append(key + _lit(x))
    return "{" + ",".join(parts) + "}"


def _lit(v: Any) -> str:
    """One parameter value as a Cypher literal for the ``CYPHER name=value`` header.

    The client's own encoder does the same with an isinstance chain per value; this
    dispatches on the exact type, which matters for 2,000-row UNWIND batches. Dates,
    datetimes and enums are converted as ``kg.graph.store.base.portable`` does.
    """
    t = type(v)
    if t is str:
        return _str(v)
    if t is int:
        return str(v)
    if t is float:
        return _float(v)
    if v is None:
        return "null"
    if t is bool:
        return "true" if v else "false"
    if t is dict:
        return _map(v)
    if t is list or t is tuple:
        if v and type(v[0]) is dict:  # UNWIND rows
            return "[" + ",".join([_map(x) if type(x) is dict else _lit(x) for x in v]) + "]"
        if v and all(type(x) is str for x in v):  # columns of ids and names
            return "[" + ",".join([_str(x) for x in v]) + "]"
        return "[" + ",".join([_lit(x) for x in v]) + "]"
    if isinstance(v, datetime | date | Enum | Mapping | set | frozenset):
        return _lit(portable(v))
    if isinstance(v, str):  # subclasses
        return _str(str(v))
    if isinstance(v, bool | int):
        return _lit(bool(v) if isinstance(v, bool) else int(v))
    if isinstance(v, float):
        return _float(float(v))
    raise GraphError(f"falkordb: unsupported parameter type {t.__name__}")


def params_header(params: Mapping[str, Any]) -> str:
    """``CYPHER a=1 b="x" `` (what the client builds, faster for large batches)."""
    if not params:
        return ""
    return "CYPHER " + " ".join(f"{k}={_lit(v)}" for k, v in params.items()) + " "


def _plain(value: Any) -> Any:
    """FalkorDB result objects -> plain Python (nodes/edges become property dicts)."""
    if isinstance(value, Node):
        return {**value.properties, "_labels": list(value.labels or [])}
    if isinstance(value, Edge):
        return {**value.properties, "_type": value.relation}
    if isinstance(value, Path):
        return {
            "nodes": [_plain(n) for n in value.nodes()],
            "edges": [_plain(e) for e in value.edges()],
        }
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class FalkorStore(GraphStore):
    provider = GraphProvider.FALKORDB

    def __init__(self, url: str, graph_name: str = "livekg") -> None:
        parsed = urlparse(url if "://" in url else f"redis://{url}")
        self.url = url
        self._db = FalkorDB(host=parsed.hostname or "127.0.0.1", port=parsed.port or 6379)
        self._graph = self._db.select_graph(graph_name)
        self.graph_name = graph_name

    async def _run(self, cypher: str, params: dict[str, Any], *, read_only: bool) -> list[Row]:
        try:
            query = params_header(params) + cypher
            if read_only:
                result = await self._graph.ro_query(query)
            else:
                result = await self._graph.query(query)
        except (redis_errors.ConnectionError, redis_errors.TimeoutError) as exc:
            raise TransientGraphError(f"falkordb at {self.url}: {exc}") from exc
        except redis_errors.ResponseError as exc:
            if read_only and "empty key" in str(exc):
                return []  # the graph does not exist yet: nothing to read
            raise GraphError(f"falkordb: {exc}") from exc
        header = [h[1] for h in (result.header or [])]
        return [dict(zip(header, map(_plain, row), strict=False)) for row in result.result_set]

    def _prepare_params(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        return dict(params or {})  # converted while encoding (``params_header``)

    def index_ddl(self, index: IndexSpec) -> list[str]:
        # FalkorDB has no uniqueness constraints without a prior index; MERGE on the
        # indexed id keeps ids unique because all our writes go through MERGE.
        return [f"CREATE INDEX FOR (n:{index.label}) ON (n.{index.prop})"]

    async def _ddl(self, ddl: str) -> None:
        try:
            await self.execute(ddl)
        except GraphError as exc:
            if "already indexed" not in str(exc):
                raise

    async def delete_graph(self) -> None:
        """Drop this store's whole graph (benchmarks and tests use graphs of their own)."""
        try:
            await self._graph.delete()
        except redis_errors.ResponseError as exc:
            if "empty key" not in str(exc).lower() and "invalid graph" not in str(exc).lower():
                raise GraphError(f"falkordb: {exc}") from exc

    async def ping(self) -> None:
        try:
            await self._db.connection.ping()
        except (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError) as exc:
            raise ServiceUnavailable(f"falkordb at {self.url} is unreachable: {exc}") from exc

    async def close(self) -> None:
        await self._db.connection.aclose()
