"""The connector contract: what a source hands the runner, and the errors it may raise.

A connector knows one source (akshare, yfinance, EDGAR, a feed...). It lists its
*streams* (one per watched thing: a CIK, a feed URL, an indicator group) and, given a
stream's checkpoint, fetches the rows that came after it as validated records, each
with a sortable *cursor*. Everything else (retries, rate limits, dedupe, keyed produce,
delivery checks, checkpoints) lives once in :mod:`connectors.runner`, so every source
gets the same guarantees.

Errors (under ``LivekgError``)::

    SourceError                 a source failed; the runner counts and reports it
     +-- RetryableSourceError   worth retrying: HTTP 429/5xx, timeouts, truncated bodies
     |    +-- SchemaDriftError  the rows no longer have the columns we map
     +-- PermanentSourceError   retrying will not help (HTTP 4xx other than 429)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import ValidationError

from core.errors import LivekgError
from core.records import Record


class SourceError(LivekgError):
    """A source failed to deliver usable rows."""


class RetryableSourceError(SourceError):
    """Transient: the runner retries with exponential backoff and jitter."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class SchemaDriftError(RetryableSourceError):
    """Expected columns/fields are missing; retried (a source may be mid-deploy), then reported."""


class PermanentSourceError(SourceError):
    """Not worth retrying (e.g. HTTP 404 or 403)."""


@dataclass(frozen=True, slots=True)
class Item:
    """One source row turned into a record for a raw topic.

    ``cursor`` orders items within a stream (ISO timestamps plus a tie-breaker, or
    zero-padded numbers): the runner skips items at or below the stream's high-water
    mark and advances the mark only after the broker acknowledged the record.
    """

    topic: str  # logical raw topic, e.g. "raw.ticks"
    record: Record
    cursor: str


@dataclass
class Batch:
    """What one fetch of one stream returned.

    ``state`` is opaque per-stream state saved with the checkpoint (ETag,
    Last-Modified...). ``rows`` counts source rows seen, ``rejected`` the rows that did
    not validate (never produced; their reasons in ``errors``).
    """

    items: list[Item] = field(default_factory=list)
    state: dict[str, Any] | None = None
    rows: int = 0
    rejected: int = 0
    errors: list[str] = field(default_factory=list)

    def add(self, topic: str, cursor: str, model: type[Record], data: dict[str, Any]) -> None:
        """Validate ``data`` as ``model``; a row that fails is counted, never produced."""
        self.rows += 1
        bad = unencodable_at(data)
        if bad is not None:  # a lone surrogate (str cells of a frame): it cannot be sent
            self.rejected += 1
            self.errors.append(f"{model.__name__} {bad}: not valid Unicode (cursor {cursor})")
            return
        try:
            record = model.model_validate(data)
        except ValidationError as exc:
            self.rejected += 1
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            self.errors.append(f"{model.__name__} {where}: {first['msg']} (cursor {cursor})")
            return
        self.items.append(Item(topic, record, cursor))


def unencodable_at(value: Any, where: str = "") -> str | None:
    """The path of the first string in ``value`` that UTF-8 cannot encode (a lone
    surrogate), or None. Records from bytes cannot hold one; Python-built ones can."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return where or "<value>"
        return None
    if isinstance(value, dict):
        items: Iterable[tuple[Any, Any]] = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        path = f"{where}.{key}" if where else str(key)
        bad = unencodable_at(key, path) or unencodable_at(item, path)
        if bad is not None:
            return bad
    return None


@runtime_checkable
class Connector(Protocol):
    """A source. ``fetch`` may do blocking I/O only through ``asyncio.to_thread``."""

    name: str  # unique; names the checkpoint file and metric label
    topics: tuple[str, ...]  # logical raw topics it writes
    rate_per_s: float  # request cap for this source (the runner enforces it)
    interval_s: float  # poll schedule for ``livekg connect run`` without --once

    def streams(self) -> Iterable[str]:
        """The independent streams (one checkpoint each)."""
        ...

    async def fetch(self, stream: str, cursor: str | None, state: dict[str, Any]) -> Batch:
        """Rows after ``cursor`` (the connector may return older ones; the runner drops them)."""
        ...


def require_columns(columns: Iterable[str], wanted: Iterable[str], what: str) -> None:
    """Raise :class:`SchemaDriftError` naming every missing column."""
    have = set(columns)
    missing = [c for c in wanted if c not in have]
    if missing:
        raise SchemaDriftError(f"{what}: missing column(s) {missing}; got {sorted(have)[:20]}")
