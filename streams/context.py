"""Clients shared by the agents of one worker, built once and passed in (no globals)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from core.batch import Inbound
from core.codec import DecodeFailure, dead_letter
from core.records import DeadLetter, Record
from core.runtime_state import Endpoints
from core.settings import Settings
from core.topics import CATALOG
from kg.graph import sink
from kg.graph.store import GraphStore, open_store
from streams.publisher import Publisher

if TYPE_CHECKING:
    import faust


@dataclass
class Route:
    """One agent on a lane; ``run`` is the batch shell already bound to the agent's
    handler (``streams.processors.base.handle_safely``). Shared by lanes and the
    batch shell, so it lives below both."""

    agent: str
    sources: list[str]  # logical topic names
    run: Callable[[list[Inbound]], Awaitable[None]]


class Runnable(Protocol):
    """What a worker runs beside its faust agents (a lane); declared here so the
    context needs nothing from the lanes module that builds on it."""

    routes: list[Route]

    async def run(self) -> None: ...


@dataclass
class WorkerContext:
    settings: Settings
    endpoints: Endpoints
    topics: dict[str, faust.TopicT] = field(default_factory=dict)
    worker_id: str = "0"
    lanes: dict[str, Runnable] = field(default_factory=dict)
    # what agents opened and the worker must close on stop (e.g. RAG search clients)
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    _store: GraphStore | None = None
    _publisher: Publisher | None = None
    _store_lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def physical(self, logical: str) -> str:
        return f"{self.settings.kafka.topic_prefix}{logical}"

    def logical(self, physical: str) -> str:
        prefix = self.settings.kafka.topic_prefix
        return physical[len(prefix) :] if prefix and physical.startswith(prefix) else physical

    def model_for(self, logical: str) -> type[Record]:
        return CATALOG[logical].record

    async def graph(self) -> GraphStore:
        """The graph store, opened on first use inside the worker's event loop."""
        async with self._store_lock:
            if self._store is None:
                store = open_store(self.settings, self.endpoints.falkordb_url)
                await sink.ensure_schema(store)
                self._store = store
            return self._store

    @property
    def publisher(self) -> Publisher:
        if self._publisher is None:
            self._publisher = Publisher(self.endpoints.kafka_bootstrap)
        return self._publisher

    async def send(self, logical: str, records: Sequence[Record]) -> None:
        """Produce records (keyed by entity) and wait until the broker has them all.

        A record too big for the broker would fail forever and block its input
        partition; it goes to the DLQ instead (``output_oversize``, bytes capped), and
        its input stays in the source topic.
        """
        if not records:
            return
        limit = self.settings.streams.max_record_bytes
        items: list[tuple[bytes, bytes]] = []
        oversize: list[DeadLetter] = []
        for r in records:
            value = r.__pydantic_serializer__.to_json(r)
            if len(value) > limit and logical != "dlq":
                failure = DecodeFailure("output_oversize", f"{len(value)} bytes > {limit}")
                oversize.append(dead_letter(topic=logical, raw_value=value, raw_key=None,
                                            failure=failure, source=f"publish:{r.id}"))  # fmt: skip
                continue
            items.append((r.key().encode(), value))
        await self.publisher.send_many(self.physical(logical), items)
        if oversize:
            await self.send("dlq", oversize)

    async def close(self) -> None:
        while self.closers:
            await self.closers.pop()()
        if self._store is not None:
            await self._store.close()
            self._store = None
        if self._publisher is not None:
            await asyncio.to_thread(self._publisher.close)
            self._publisher = None
