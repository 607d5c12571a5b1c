"""Sinks into the graph: docs.clean -> Document nodes, raw.ticks -> Observations,
kg.triples -> entities and fact edges.

Triples are pruned against the ontology first; a rejected one goes to the DLQ with
the reason (``error_type`` ``invalid_triple``, ``error`` "<reason>: <detail>") and
its neighbours are written. Mentions are canonicalized with the alias dictionary of
the static partition, reloaded every ``kg.alias_refresh_s``. Offsets are committed by
the shell only after the handler returned, i.e. after the write succeeded; a replay
after a crash re-merges the same deterministic ids and changes nothing.

A batch is written whole; if the database rejects it (not a connectivity problem,
which the shell retries), the batch is split in halves until the offending records
are isolated and dead-lettered, so one bad record never blocks its neighbours. An
error no record explains (``GraphHalt``: schema, persisting constraint violation)
stops the agent with the cause instead (see ``processors.base.handle_safely``).
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TypeVar

import faust

from core import metrics
from core.batch import Decoded, Inbound, dead_for
from core.codec import DecodeFailure
from core.errors import GraphError, GraphHalt, TransientGraphError
from core.records import DeadLetter, Record, Triple
from core.topics import DOCS_CLEAN, GRAPH_CHANGES, KG_TRIPLES, RAW_TICKS
from kg.extract.xbrl_check import check_against_graph
from kg.graph import sink
from kg.graph.canonical import AliasIndex, load_alias_index
from kg.graph.ontology import Ontology, TripleCheck, default_ontology
from kg.graph.store import GraphStore
from kg.subscribe.changes import tick_changes, triple_changes
from streams.context import WorkerContext
from streams.processors.base import (
    Outcome,
    batch_agent,
    observe_latencies,
    relax_gc,
    typed_shell,
)

R = TypeVar("R", bound=Record)
Writer = Callable[[GraphStore, Sequence[R]], Awaitable[int]]


async def write_isolating(
    store: GraphStore,
    writer: Writer,
    records: list[R],
    origins: list[Inbound],
    agent: str,
) -> tuple[int, list[DeadLetter]]:
    """Write ``records``; bisect on record-level errors and dead-letter the culprits.

    Transient errors go up to the shell (retried without limit) and so does a
    ``GraphHalt``: an error every batch would hit alike (a schema or constraint problem)
    halts the agent with its cause instead of dead-lettering the stream record by record.
    """
    try:
        return await writer(store, records), []
    except (TransientGraphError, GraphHalt):
        raise
    except GraphError as exc:
        if len(records) == 1:
            return 0, [dead_for(origins[0], exc, agent)]
    mid = len(records) // 2
    n1, d1 = await write_isolating(store, writer, records[:mid], origins[:mid], agent)
    n2, d2 = await write_isolating(store, writer, records[mid:], origins[mid:], agent)
    return n1 + n2, d1 + d2


def _sink(ctx: WorkerContext, agent: str, kind: str, writer: Writer, changes=None):
    async def handle(decoded: Decoded) -> Outcome:
        if not decoded.records:
            return Outcome()
        store = await ctx.graph()
        written, failed = await write_isolating(
            store, writer, decoded.records, decoded.origins, agent
        )
        metrics.GRAPH_WRITES.labels(kind).inc(written)
        # what was written, for subscriptions (sent after the write)
        out = {GRAPH_CHANGES.name: changes(decoded.records)} if changes is not None else {}
        return Outcome(outputs=out, dead=failed)

    return typed_shell(ctx, agent, handle, observe_latency=True)


class CollectorPause:
    """The cyclic garbage collector off while the triple sink handles a batch.

    A 2,000-triple batch allocates ~100,000 containers that all stay alive until the
    batch ends (decoded records, rows, change records) and are then freed by reference
    counting: a collection during the batch only re-scans them, gen 0 to gen 2
    (~12% of the sink's CPU in the kg bench even with ``relax_gc``'s thresholds). Paused
    per batch, nothing is lost: cycles made meanwhile (by any coroutine of the worker)
    are collected once the last pausing batch ends. Re-entrant across coroutines (a
    count); the collector is turned back on only if it was on when the first pause
    began."""

    def __init__(self) -> None:
        self.holders = 0
        self.was_enabled = False

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        if self.holders == 0:
            self.was_enabled = gc.isenabled()
            gc.disable()
        self.holders += 1
        try:
            yield
        finally:
            self.holders -= 1
            if self.holders == 0 and self.was_enabled:
                gc.enable()


collector_paused = CollectorPause()


def rejected_letter(origin: Inbound, check: TripleCheck, agent: str) -> DeadLetter:
    reason = check.reason.value if check.reason else "invalid"
    return dead_for(origin, DecodeFailure("invalid_triple", f"{reason}: {check.detail}"), agent)


class TripleSink:
    """kg.triples -> graph: prune, canonicalize, write; the alias index is cached, and
    so are the ids of entities known to exist (``sink.KnownEntities``)."""

    def __init__(
        self,
        ctx: WorkerContext,
        *,
        agent: str = "triple_sink",
        ontology: Ontology | None = None,
    ) -> None:
        self.ctx, self.agent = ctx, agent
        self.ontology = ontology or default_ontology()
        self._index: AliasIndex | None = None
        self._loaded_at = 0.0
        self.known = sink.KnownEntities()
        self._shell = typed_shell(ctx, agent, self.write_batch)

    async def alias_index(self, store: GraphStore) -> AliasIndex:
        """The alias dictionary, reloaded every ``kg.alias_refresh_s``.

        Once loaded, ``relax_gc`` (the index lives until the next reload): the garbage
        collector's full collections re-traversing it were ~20% of the sink's CPU in the
        kg bench.
        """
        refresh = self.ctx.settings.kg.alias_refresh_s
        if self._index is None or time.monotonic() - self._loaded_at > refresh:
            self._index = await load_alias_index(store, self.ontology)
            self._loaded_at = time.monotonic()
            self.known.clear()  # re-learnt as batches are written
            relax_gc()
        return self._index

    async def check_tables(
        self, store: GraphStore, valid: Sequence[Triple], index: AliasIndex
    ) -> None:
        """Table values against the XBRL facts in the graph (the disagreement metric);
        a failed check is counted, never a failed batch."""
        try:
            await check_against_graph(store, valid, index)
        except Exception:  # a quality metric must not stop the sink
            metrics.ERRORS.labels(self.agent, "xbrl_check").inc()

    async def handle(self, items: Sequence[Inbound]) -> None:
        """The agent's handler: the batch shell around ``write_batch``, with the cyclic
        garbage collector paused (``collector_paused``)."""
        with collector_paused():
            await self._shell(items)

    async def write_batch(self, decoded: Decoded) -> Outcome:
        ctx, agent = self.ctx, self.agent
        dead: list[DeadLetter] = []
        valid: list[Triple] = []
        origins: list[Inbound] = []
        checks: dict[int, TripleCheck] = {}
        for record, origin in zip(decoded.records, decoded.origins, strict=True):
            if not isinstance(record, Triple):  # pragma: no cover - catalog guarantees it
                continue
            check = sink.check_triple(record, self.ontology)
            if check.ok:
                valid.append(record)
                origins.append(origin)
                checks[id(record)] = check
            else:
                dead.append(rejected_letter(origin, check, agent))
        if not valid:
            return Outcome(dead=dead)
        store = await ctx.graph()
        index = await self.alias_index(store)
        batch = ctx.settings.graph.write_batch
        found = [checks[id(r)] for r in valid]
        # canonicalized and shaped once; a bisection (a record the graph rejects) shapes
        # its halves again
        whole = sink.prepare_triples(valid, self.ontology, index, checks=found)

        async def writer(store: GraphStore, recs: Sequence[Triple]) -> int:
            prepared = (
                whole
                if recs is valid
                else sink.prepare_triples(
                    recs, self.ontology, index, checks=[checks[id(r)] for r in recs]
                )
            )

            async def unit(tx: GraphStore) -> int:
                return await sink.write_prepared(tx, prepared, batch, known=self.known)

            # one transaction per batch (or bisected half) where the graph has them
            return await store.write_unit(unit)

        written, failed = await write_isolating(store, writer, valid, origins, agent)
        metrics.GRAPH_WRITES.labels("fact").inc(written)
        observe_latencies(metrics.EVENT_LATENCY.labels(agent), valid, time.time())
        await self.check_tables(store, valid, index)
        # what was written, for subscriptions (ids as the sink resolved them)
        changes = triple_changes(valid, found, self.ontology, index, whole.endpoints)
        return Outcome(outputs={GRAPH_CHANGES.name: changes}, dead=[*dead, *failed])


def register(app: faust.App, ctx: WorkerContext) -> None:
    batch = ctx.settings.graph.write_batch

    async def docs(store: GraphStore, recs: Sequence) -> int:
        return await sink.write_documents(store, recs, batch)

    indicators = sink.KnownEntities()

    async def ticks(store: GraphStore, recs: Sequence) -> int:
        return await sink.write_ticks(store, recs, batch, known=indicators)

    batch_agent(
        app,
        ctx,
        name="doc_sink",
        sources=[DOCS_CLEAN.name],
        handler=_sink(ctx, "doc_sink", "document", docs),
    )
    batch_agent(
        app,
        ctx,
        name="tick_sink",
        sources=[RAW_TICKS.name],
        handler=_sink(ctx, "tick_sink", "tick", ticks, tick_changes),
    )
    triples = TripleSink(ctx)
    batch_agent(app, ctx, name="triple_sink", sources=[KG_TRIPLES.name], handler=triples.handle)
