"""``livekg bench kg``: triples through the graph sink path, then 2-hop query latency.

The sink path is the ``triple_sink`` agent's handler itself (``TripleSink.handle``):
serialized ``Triple`` payloads, as they arrive from ``kg.triples``, are decoded,
pruned against the ontology, canonicalized against the bundled universe and written
with batched UNWIND/MERGE, ``streams.batch_size`` records per batch. The Kafka
consume itself is not part of this number (``livekg bench pipeline`` measures the
broker path), and no broker is started or used.

The run uses a graph of its own (``kg.graph.store.scratch``), removed afterwards: never the
configured production graph, on FalkorDB or Neo4j. Two references, measured in the same
run on the same graph server:

* same-work (``ratio``): the same batches written by hand-written parameterised UNWIND
  statements through the bare database client (``evaluation.bench.reference``), starting from
  the same graph (static universe, indexes); the rows are shaped before its clock
  starts, so the ratio is the cost of livekg's decode, pruning, canonicalization and
  write path. ``same_work.same_graph`` checks both left the same node and edge counts.
* raw (``raw_ratio``): batched ``UNWIND ... MERGE`` of one-property nodes.

A JVM graph server (Neo4j) compiles its query engine while the first statements run, so
whichever path ran first paid for it (the sink's pass cost the JVM 24.5 CPU-s against
the reference's 14.5 after it, both writing the same graph). There the timed passes
follow one discarded warm-up round of both paths (``warmup``: the sink, then the
reference, over the first ``WARMUP_TRIPLES`` triples; the graph emptied after it), and
the two paths alternate over ``rounds`` rounds (4 by default: reference then sink, sink
then reference, and again, so each order runs equally often: the later pass of a round
paid more JVM CPU in a quiet run, whichever path it was), each on a graph emptied and
loaded again; the figures
are the medians over the rounds (each round's in ``rounds``): the JVM's own CPU for
the same statements moved 2-3x from round to round at load 10 (its collector and
compiler threads), which one pass per path cannot tell from livekg's cost.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import tempfile
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
import psutil

from core.batch import Inbound
from core.codec import encode
from core.records import Record, Triple
from core.runtime_state import Endpoints, read_state, running_service
from core.settings import Settings
from evaluation.bench import reference
from evaluation.bench.neo4j_reference import bare_neo4j_runner
from evaluation.bench.reference import raw_merge_rate
from evaluation.bench.rounds import alternate, medians
from kg.graph.canonical import load_alias_index
from kg.graph.ontology import Cardinality, Ontology, default_ontology
from kg.graph.queries import cypher
from kg.graph.sink import prepare_triples
from kg.graph.static import bundled_universe_path, load_universe, read_file
from kg.graph.store import GraphProvider, GraphStore
from kg.graph.store.scratch import empty_database, scratch_graph
from ops.neo4j_server import Neo4jServer
from ops.runtime import EmbeddedRuntime, free_port
from streams.context import WorkerContext
from streams.processors.graph_sink import TripleSink

WARMUP_TRIPLES = 10_000

TWO_HOP_CYPHER = cypher("two_hop_neighbours")


class NoBrokerContext(WorkerContext):
    """The sink's context without a broker: what it would publish (``graph.changes``
    records for subscriptions, dead letters) is built and serialized as in a worker,
    then counted instead of produced (``livekg bench pipeline`` measures the broker)."""

    published: int = 0

    async def send(self, logical: str, records: Sequence[Record]) -> None:
        for r in records:
            r.__pydantic_serializer__.to_json(r)
        self.published += len(records)


_WORDS = (
    "alpha beta gamma delta sigma orion lotus harbor summit pioneer crest vertex nova "
    "atlas cedar falcon granite horizon ivory jade keystone lumen meridian north ocean "
    "pacific quantum river silver terra unity vector willow xenon yellow zenith"
).split()
_LABEL_WORD = {
    "Company": "Holdings", "Product": "Platform", "Person": "", "Event": "Merger",
    "RiskFactor": "Risk", "FinMetric": "Revenue", "Region": "Province", "Policy": "Easing",
    "MarketStatus": "Rally", "Segment": "Division", "Regulation": "Act",
    "IndicatorChange": "Uptick",
}  # fmt: skip


def _server_url(ep: Endpoints) -> str:
    return ep.falkordb_url or ep.neo4j_uri or ""


def graph_server(ep: Endpoints) -> psutil.Process | None:
    """The local graph server process behind ``ep``: the FalkorDB (redis) server or the
    Neo4j JVM listening on its port (None: remote or not found)."""
    url = _server_url(ep)
    if not url:
        return None
    parsed = urlparse(url if "://" in url else f"redis://{url}")
    if parsed.hostname not in ("127.0.0.1", "localhost"):
        return None
    for proc in psutil.process_iter(["name"]):
        name = proc.info["name"] or ""
        if "redis" not in name and "java" not in name:
            continue
        with contextlib.suppress(psutil.Error):
            for conn in proc.net_connections("tcp"):
                if conn.status == psutil.CONN_LISTEN and conn.laddr.port == parsed.port:
                    return proc
    return None


_SERVERS: dict[str, psutil.Process | None] = {}


def cpu_split(ep: Endpoints) -> tuple[float, float]:
    """CPU time of this process and of the local graph server (0.0 if not found)."""
    key = _server_url(ep)
    if key not in _SERVERS:
        _SERVERS[key] = graph_server(ep)
    server_s = 0.0
    server = _SERVERS[key]
    if server is not None:
        with contextlib.suppress(psutil.Error):
            t = server.cpu_times()
            server_s = t.user + t.system
    return time.process_time(), server_s


def _cpu_fields(before: tuple[float, float], after: tuple[float, float]) -> dict[str, float]:
    client, server = after[0] - before[0], after[1] - before[1]
    return {"cpu_s": round(client + server, 3), "cpu_client_s": round(client, 3),
            "cpu_server_s": round(server, 3)}  # fmt: skip


def _name(rng: random.Random, label: str, i: int) -> str:
    a, b = rng.choice(_WORDS).title(), rng.choice(_WORDS).title()
    return f"{a} {b} {_LABEL_WORD.get(label, label)} {i}".strip()


def synthetic_triples(n: int, *, entities: int | None = None, seed: int = 7) -> list[Triple]:
    """``n`` schema-valid triples over a pool of new and universe entities.

    About 5% use a cardinality-ONE relation (HAS_CEO), which exercises superseding.
    """
    ontology = default_ontology()
    rng = random.Random(seed)
    universe = read_file(bundled_universe_path())
    companies = [e.name for e in universe.entities if e.type == "Company"]
    pool_size = entities or max(n // 5, 50)
    pool: dict[str, list[str]] = {}
    labels = list(_LABEL_WORD)
    for i in range(pool_size):
        label = labels[i % len(labels)]
        pool.setdefault(label, []).append(_name(rng, label, i))
    pool["Company"].extend(companies)
    rels = [
        r
        for r in ontology.relations
        if not r.internal and r.cardinality == Cardinality.MANY and r.type != "EQUAL_TO"
    ]
    patterns = []
    for r in rels:
        for h in pool:
            for t in pool:
                if any(ontology.is_a(h, d) for d in r.domain) and any(
                    ontology.is_a(t, x) for x in r.range
                ):
                    patterns.append((h, r.type, t))
    base = datetime(2026, 1, 1, tzinfo=UTC)
    out = []
    for i in range(n):
        when = base + timedelta(seconds=i)
        if i % 20 == 0:
            h, rel, t = "Company", "HAS_CEO", "Person"
        else:
            h, rel, t = rng.choice(patterns)
        out.append(
            Triple(
                source="bench-kg",
                event_time=when,
                head=rng.choice(pool[h]),
                head_type=h,
                relation=rel,
                tail=rng.choice(pool[t]),
                tail_type=t,
                doc_id=f"bench-doc-{i // 10}",
                confidence=0.9,
                evidence="synthetic",
            )
        )
    return out


async def _sink_pass(handler: TripleSink, payloads: list[bytes], batch: int) -> float:
    started = time.perf_counter()
    for start in range(0, len(payloads), batch):
        items = [
            Inbound(topic="kg.triples", value=v, partition=0, offset=start + j)
            for j, v in enumerate(payloads[start : start + batch])
        ]
        await handler.handle(items)
    return time.perf_counter() - started


async def _latencies(store: GraphStore, cypher: str, ids: list[str]) -> np.ndarray:
    out = []
    for eid in ids:
        t0 = time.perf_counter()
        await store.query(cypher, {"id": eid})
        out.append((time.perf_counter() - t0) * 1000)
    return np.asarray(out)


async def run_kg_bench_async(
    settings: Settings,
    ep: Endpoints,
    *,
    triples: int,
    queries: int = 500,
    replay: bool = True,
    ontology: Ontology | None = None,
    database: str | None = None,
    private_server: bool = False,
    warmup: bool | None = None,
    rounds: int | None = None,
) -> dict[str, Any]:
    """``database``: Neo4j only, an empty scratch database to use when the server cannot
    create one (Community); by default a new database is created and dropped.
    ``private_server``: the configured Neo4j is a throwaway server started for this run
    (``graph_service``), so its own database is the scratch graph. ``warmup``: one
    discarded round of both paths first; ``rounds``: timed rounds of both paths (the
    order alternating, the last round sink-first; medians); defaults: warm-up and 4
    rounds on a JVM server (Neo4j), none and 1 otherwise."""
    async with scratch_graph(
        settings, ep.falkordb_url, database=database, private_server=private_server
    ) as (s, raw_store):
        ctx = NoBrokerContext(settings=s, endpoints=ep)
        jvm = raw_store.provider == GraphProvider.NEO4J
        warmup = jvm if warmup is None else warmup
        rounds = max(1, rounds if rounds is not None else (4 if jvm else 1))
        try:
            warm = (
                await warm_up(ctx, raw_store, min(triples, WARMUP_TRIPLES), ontology)
                if warmup
                else None
            )
            last: dict[str, Any] = {}  # the last round's sink pass: the full bench figures
            refs: list[dict[str, Any]] = []

            async def sink_pass(i: int) -> dict[str, Any]:
                if i < rounds - 1:
                    return await _sink_round(ctx, triples=triples, ontology=ontology)
                last.update(await _bench(ctx, triples=triples, queries=queries, replay=replay,
                                         ontology=ontology))  # fmt: skip
                return {k: last[k] for k in _ROUND_FIELDS}

            async def reference_pass(i: int) -> dict[str, Any]:
                refs.append(
                    await same_work_rate(raw_store, s, ep, triples=triples, ontology=ontology)
                )
                return {k: refs[-1][k] for k in _ROUND_FIELDS}

            # the order alternates; the last round is sink-first (its sink pass is the full
            # bench), so with an even count each order runs equally often
            timed = await alternate(
                {"sink": sink_pass, "reference": reference_pass}, rounds, anchor="end"
            )
            result, same = last, refs[-1]
            same["same_graph"] = all(  # every reference round left the sink's graph
                r["relationships"] == result["relationships"]
                and r["entities"] == result["entities"]
                for r in refs
            )
            del same["relationships"], same["entities"]
            raw = await raw_merge_rate(raw_store, min(triples, 50_000), s.graph.write_batch)
        finally:
            await ctx.close()
    result["graph"] = (
        s.graph.neo4j_database if s.graph.backend.value == "neo4j" else s.graph.graph_name
    )
    if rounds > 1:  # the medians over the rounds are the figures
        for fig, name in ((result, "sink"), (same, "reference")):
            fig.update(medians([r[name] for r in timed], _ROUND_FIELDS, digits=3))
            fig["triples_per_s"] = round(triples / fig["seconds"], 1)
        result["rounds"] = timed
    result["same_work"] = same
    result["warmup"] = warm
    result["reference"] = {
        "name": "same_work_triples_per_s",
        "what": "the same batches by hand-written UNWIND statements, bare client, same graph",
        "value": same["triples_per_s"],
    }
    result["raw_reference"] = {
        "name": "raw_merge_rows_per_s",
        "what": "batched UNWIND MERGE of one-property nodes, same graph server, same run",
        "value": round(raw, 1),
    }
    result["raw_merge_rows_per_s"] = round(raw, 1)
    tps = result["triples_per_s"]
    result["ratio"] = round(tps / same["triples_per_s"], 4) if same["triples_per_s"] else None
    # the same ratio in CPU-seconds (this process + the graph server), which a loaded
    # machine disturbs far less than wall time
    # (None when the graph server is not local: its CPU would be missing)
    server = _SERVERS.get(_server_url(ep))
    cpu_ok = server is not None and result["cpu_s"]
    result["cpu_ratio"] = round(same["cpu_s"] / result["cpu_s"], 4) if cpu_ok else None
    result["raw_ratio"] = round(tps / raw, 4) if raw else None
    return result


async def same_work_rate(
    store: GraphStore,
    settings: Settings,
    ep: Endpoints,
    *,
    triples: int,
    ontology: Ontology | None,
) -> dict[str, Any]:
    """The sink's first pass again, by hand: the graph is emptied and the universe loaded
    again (not timed), the same triples shaped into rows by ``kg.graph.sink.prepare_triples``
    with the same alias index (not timed), then written by ``evaluation.bench.reference``'s
    statements. FalkorDB: the bare ``falkordb`` client; other backends: the store's
    ``execute`` (one call per statement). The graph's entity and relationship counts
    after it are returned for the same-graph check."""
    seconds, n, cpu, client = await _reference_pass(
        store, settings, ep, synthetic_triples(triples), ontology
    )
    rels = sum((await store.relationship_counts()).values())
    nodes = (await store.label_counts()).get("Entity", 0)
    return {
        "triples_per_s": round(triples / seconds, 1),
        "seconds": round(seconds, 3),
        **cpu,
        "statements": n,
        "client": client,
        "relationships": rels,
        "entities": nodes,
    }


async def _reference_pass(
    store: GraphStore,
    settings: Settings,
    ep: Endpoints,
    records: list[Triple],
    ontology: Ontology | None,
) -> tuple[float, int, dict[str, float], str]:
    """Empty the graph, load the universe, shape ``records`` (untimed), then time the
    hand-written statements: (seconds, statements, CPU fields, client)."""
    ontology = ontology or default_ontology()
    await empty_database(store)
    await load_universe(store)
    index = await load_alias_index(store, ontology)
    batch = settings.streams.batch_size
    prepared = [
        prepare_triples(records[i : i + batch], ontology, index)
        for i in range(0, len(records), batch)
    ]
    statements = reference.same_work_statements(prepared, ontology.label_path)
    close = None
    if store.provider == GraphProvider.FALKORDB and ep.falkordb_url:
        run, close = reference.bare_falkordb_runner(ep.falkordb_url, settings.graph.graph_name)
    elif store.provider == GraphProvider.NEO4J:
        g = settings.graph
        auth = (g.neo4j_user, g.neo4j_password) if g.neo4j_password else None
        uri = getattr(store, "uri", "") or g.neo4j_uri
        run, close = bare_neo4j_runner(uri, auth, getattr(store, "database", g.neo4j_database))
    else:
        run = store.execute
    try:
        cpu0 = cpu_split(ep)
        seconds, n = await reference.run_statements(run, statements)
        cpu = _cpu_fields(cpu0, cpu_split(ep))
    finally:
        if close is not None:
            await close()
    client = f"{store.provider.value} driver (bare)" if close is not None else "store.execute"
    return seconds, n, cpu, client


async def warm_up(
    ctx: WorkerContext, store: GraphStore, triples: int, ontology: Ontology | None
) -> dict[str, Any]:
    """One discarded round of both paths over the first ``triples`` synthetic triples:
    the sink (a handler of its own, as the timed pass has), then the reference; the
    graph is emptied after it. Its figures show how much of a cold server's cost the
    first path would have carried."""
    payloads = [encode(t) for t in synthetic_triples(triples)]
    await ctx.graph()  # opens the sink's store and creates the indexes, as _bench does
    await load_universe(store)
    handler = TripleSink(ctx, ontology=ontology)
    cpu0 = cpu_split(ctx.endpoints)
    sink_s = await _sink_pass(handler, payloads, ctx.settings.streams.batch_size)
    sink_cpu = _cpu_fields(cpu0, cpu_split(ctx.endpoints))
    ref_s, _, ref_cpu, _ = await _reference_pass(
        store, ctx.settings, ctx.endpoints, synthetic_triples(triples), ontology
    )
    await empty_database(store)
    return {
        "triples": triples,
        "sink_seconds": round(sink_s, 3),
        "sink_cpu_s": sink_cpu["cpu_s"],
        "sink_cpu_server_s": sink_cpu["cpu_server_s"],
        "reference_seconds": round(ref_s, 3),
        "reference_cpu_s": ref_cpu["cpu_s"],
        "reference_cpu_server_s": ref_cpu["cpu_server_s"],
    }


_ROUND_FIELDS = ("seconds", "cpu_s", "cpu_client_s", "cpu_server_s")


async def _sink_round(
    ctx: WorkerContext, *, triples: int, ontology: Ontology | None
) -> dict[str, float]:
    """One timed sink pass on a graph emptied and loaded again (a fresh handler, as a
    worker that starts): seconds and CPU fields."""
    store = await ctx.graph()
    await empty_database(store)
    await load_universe(store)
    payloads = [encode(t) for t in synthetic_triples(triples)]
    handler = TripleSink(ctx, ontology=ontology)
    cpu0 = cpu_split(ctx.endpoints)
    seconds = await _sink_pass(handler, payloads, ctx.settings.streams.batch_size)
    cpu = _cpu_fields(cpu0, cpu_split(ctx.endpoints))
    return {"seconds": round(seconds, 3), **cpu}


async def _bench(
    ctx: WorkerContext, *, triples: int, queries: int, replay: bool, ontology: Ontology | None
) -> dict[str, Any]:
    batch = ctx.settings.streams.batch_size
    records = synthetic_triples(triples)
    payloads = [encode(t) for t in records]
    store = await ctx.graph()  # opens the store and creates indexes
    await empty_database(store)  # empty unless rounds or a warm-up ran before
    static = await load_universe(store)
    handler = TripleSink(ctx, ontology=ontology)
    cpu0 = cpu_split(ctx.endpoints)
    seconds = await _sink_pass(handler, payloads, batch)
    cpu = _cpu_fields(cpu0, cpu_split(ctx.endpoints))
    rels = sum((await store.relationship_counts()).values())
    nodes = (await store.label_counts()).get("Entity", 0)  # static + new entities
    replay_s = await _sink_pass(handler, payloads, batch) if replay else None
    rels_after = sum((await store.relationship_counts()).values())
    rows = await store.query(cypher("entity_ids"))
    rng = random.Random(1)
    ids = [r["id"] for r in rng.sample(rows, min(queries, len(rows)))]
    await _latencies(store, TWO_HOP_CYPHER, ids[:20])  # warm-up
    two_hop = await _latencies(store, TWO_HOP_CYPHER, ids)
    return {
        "bench": "kg",
        "backend": store.provider.value,
        "triples": triples,
        "batch": batch,
        "seconds": round(seconds, 3),
        **cpu,
        "triples_per_s": round(triples / seconds, 1),
        "replay_triples_per_s": round(triples / replay_s, 1) if replay_s else None,
        "replay_changed_relationships": rels_after - rels,
        "entities": nodes,
        "relationships": rels,
        "static_entities": static.entities,
        "two_hop_queries": len(two_hop),
        "two_hop_p50_ms": round(float(np.percentile(two_hop, 50)), 3),
        "two_hop_p95_ms": round(float(np.percentile(two_hop, 95)), 3),
        "path": "TripleSink.handle (decode, prune, canonicalize, UNWIND/MERGE); no broker",
    }


def run_kg_bench(settings: Settings, ep: Endpoints, **kwargs: Any) -> dict[str, Any]:
    return asyncio.run(run_kg_bench_async(settings, ep, **kwargs))


@contextlib.contextmanager
def graph_service(settings: Settings) -> Iterator[Endpoints]:
    """The graph only: the configured one, the running stack's, or an embedded FalkorDB
    started for this block (no broker: the kg bench never produces or consumes).

    Neo4j with no URI: a throwaway local Neo4j started for this block (``neo4j_uri`` of
    the endpoints, no auth), never the stack's: Community has one database only."""
    if settings.graph.backend == GraphProvider.NEO4J.value:
        if uri := settings.graph.neo4j_uri:
            yield Endpoints(kafka_bootstrap="", falkordb_url=None, neo4j_uri=uri)
            return
        with tempfile.TemporaryDirectory(prefix="livekg-bench-neo4j-") as tmp:
            server = Neo4jServer.from_settings(settings, Path(tmp), free_port())
            server.password = ""
            try:
                server.start()
                yield Endpoints(kafka_bootstrap="", falkordb_url=None, neo4j_uri=server.uri)
            finally:
                server.stop()
        return
    if not settings.embedded_graph:
        yield Endpoints(kafka_bootstrap="", falkordb_url=settings.graph.falkordb_url or None)
        return
    state = read_state(settings.state_file)
    if state is not None and running_service(state, "graph") and state.falkordb_url:
        yield Endpoints(kafka_bootstrap="", falkordb_url=state.falkordb_url)
        return
    with tempfile.TemporaryDirectory(prefix="livekg-bench-kg-") as tmp:
        runtime = EmbeddedRuntime(settings.with_overrides(data_dir=Path(tmp)))
        try:
            url = runtime.start_graph()
            yield Endpoints(kafka_bootstrap="", falkordb_url=url)
        finally:
            runtime.stop_all()
