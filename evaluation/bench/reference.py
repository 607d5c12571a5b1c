"""Same-run references: what a benchmark's figure should approach on this machine, now.

Machines here differ by up to 2x from run to run, so a figure alone says little; its
ratio to the plainest possible use of the same component, measured in the same run,
says how much livekg's own code costs:

* ``broker``: raw librdkafka produce-and-consume rate of 300-byte records (msgs/s;
  the consumer reads while the producer sends);
* ``graph``: raw batched ``UNWIND ... MERGE`` rate of one-property nodes (rows/s);
* ``encoder``: raw forward rate of the embedding model on unique texts, batches of 64,
  no cache (texts/s);
* ``model_server``: raw completion-token rate of the model server, one request at a
  time straight over HTTP (tokens/s).
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from typing import Any
from urllib.parse import urlparse

import httpx
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from falkordb.asyncio import FalkorDB

from core.runtime_state import Endpoints
from core.settings import Settings
from evaluation.bench.embed import bench_texts
from kg.graph import queries, sink
from kg.graph.store import GraphStore, IndexSpec
from kg.graph.store.scratch import scratch_graph
from kg.models.embed import make_embedder


def broker_rate(bootstrap: str, n: int = 20_000, size: int = 300) -> float:
    """Records/s through the broker alone: a bare librdkafka producer sends ``n`` records
    while a bare consumer, assigned (no group join) and already fetching, reads them
    back; the clock runs from the first produce to the last record read, so produce and
    consume overlap as they do in the pipeline."""
    topic = f"bench-ref-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    _wait_leader(admin, topic)
    try:
        payload = b"x" * size
        prod = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        prod.list_topics(topic, timeout=10)  # metadata before the clock starts
        cons = Consumer({"bootstrap.servers": bootstrap, "group.id": topic,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})  # fmt: skip
        cons.assign([TopicPartition(topic, 0, 0)])
        cons.consume(1, 1.0)  # connected and fetching (the topic is empty)
        got = [0]
        done = threading.Event()

        def read() -> None:
            deadline = time.monotonic() + 120
            while got[0] < n and time.monotonic() < deadline:
                got[0] += sum(1 for m in cons.consume(2000, 0.2) if m.error() is None)
            done.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        started = time.perf_counter()
        for i in range(n):
            while True:
                try:
                    prod.produce(topic, value=payload, key=str(i).encode())
                    break
                except BufferError:
                    prod.poll(0.01)
            if i % 1000 == 0:
                prod.poll(0)
        prod.flush(60)
        done.wait(180)
        elapsed = time.perf_counter() - started
        reader.join(5)
        cons.close()
        return got[0] / elapsed
    finally:
        admin.delete_topics([topic])


def _wait_leader(admin: Any, topic: str, timeout: float = 30.0) -> None:
    """Kafka serves a new topic a moment after creating it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        meta = admin.list_topics(topic, timeout=5).topics.get(topic)
        if meta is not None and meta.error is None and meta.partitions:
            if all(p.leader >= 0 for p in meta.partitions.values()):
                return
        time.sleep(0.05)


RAW_MERGE_CYPHER = """
UNWIND $rows AS r
MERGE (n:BenchRaw {id: r.id})
  ON CREATE SET n.v = r.v
"""


async def raw_merge_rate(store: GraphStore, rows: int, batch: int) -> float:
    """Rows/s of the plainest batched UNWIND MERGE on this graph (the reference)."""
    await store.ensure_indexes([IndexSpec("BenchRaw")])
    data = [{"id": f"raw-{i}", "v": i} for i in range(rows)]
    started = time.perf_counter()
    await store.execute_batches(RAW_MERGE_CYPHER, data, batch=batch)
    return rows / (time.perf_counter() - started)


def graph_rate(settings: Settings, ep: Endpoints, rows: int = 20_000) -> float:
    async def go() -> float:
        async with scratch_graph(settings, ep.falkordb_url, purpose="ref") as (s, store):
            return await raw_merge_rate(store, rows, s.graph.write_batch)

    return asyncio.run(go())


def encoder_rate(settings: Settings, n: int = 256) -> float:
    emb = make_embedder(settings.embed)
    texts = bench_texts(n + 64)
    emb.encode_uncached(texts[:64], "passage")  # warm-up (model load, first allocation)
    started = time.perf_counter()
    for i in range(64, n + 64, 64):
        emb.encode_uncached(texts[i : i + 64], "passage")
    return n / (time.perf_counter() - started)


def model_server_rate(base_url: str, model: str, requests: int = 3, max_tokens: int = 64) -> float:
    tokens, seconds = 0, 0.0
    with httpx.Client(base_url=base_url.rstrip("/") + "/", timeout=120) as client:
        for i in range(requests):
            body: dict[str, Any] = {"model": model, "prompt": f"Count to twenty. {i}",
                                    "max_tokens": max_tokens, "temperature": 0}  # fmt: skip
            t0 = time.perf_counter()
            r = client.post("completions", json=body)
            r.raise_for_status()
            seconds += time.perf_counter() - t0
            tokens += int(r.json().get("usage", {}).get("completion_tokens") or 0)
    return tokens / seconds if seconds else 0.0


# -- same-work references ------------------------------------------------------------
#
# A same-work reference does exactly what the measured path does to the graph, written
# by hand with the bare database client and no livekg code between the rows and the
# server: its ratio is what livekg's own code costs. Rows are shaped before the clock
# starts. Cypher cannot take labels or relationship types as parameters, so the fewest
# statements a batch allows are one per concept label (entities) and one per
# relationship type (facts with validity and provenance), plus one in-graph pass over
# the validity chains of cardinality-ONE relations. The fact upsert and the chain pass
# are the very text the sink runs (``kg.graph.sink.fact_cypher``, the catalogue's
# ``validity_chains``: one copy of each rule), sent bare.

SAME_WORK_ENTITY = """
UNWIND $rows AS r
MERGE (e:{path} {{id: r.id}})
  ON CREATE SET e.partition = 'static', e.name = r.name, e.canonical = r.canonical,
                e.created_at = r.ingested_at
"""


def same_work_statements(
    batches: list[Any], label_path: Any
) -> list[list[tuple[str, dict[str, Any]]]]:
    """The statements per batch (entities hand-written; facts and chains the sink's own
    text): ``batches`` are ``kg.graph.sink.PreparedTriples`` (shaped before the clock
    starts); ``label_path`` maps a concept label to its ``Entity:...`` label expression."""
    out = []
    for p in batches:
        stmts: list[tuple[str, dict[str, Any]]] = []
        for label, rows in sorted(p.entities.items()):
            cypher = SAME_WORK_ENTITY.format(path=label_path(label))
            stmts.append((cypher, {"rows": list(rows.values())}))
        for rel, by_id in sorted(p.facts.items()):
            # the sink's own statement text (one copy, kg/graph/sink.py), run bare
            rows = [{k: v for k, v in r.items() if k != "props"} for r in by_id.values()]
            stmts.append((sink.fact_cypher(rel), {"rows": rows, "partition": p.partition}))
        for rel, heads in sorted(p.functional_heads.items()):
            # the sink's own statement text (one copy, kg/data/queries.toml), run bare
            chain = queries.cypher("validity_chains", rel_type=rel)
            stmts.append((chain, {"heads": sorted(heads)}))
        out.append(stmts)
    return out


async def run_statements(
    run: Any, batches: list[list[tuple[str, dict[str, Any]]]]
) -> tuple[float, int]:
    """Seconds to run every statement in order with ``run(cypher, params)``; statements."""
    n = 0
    started = time.perf_counter()
    for stmts in batches:
        for cypher, params in stmts:
            await run(cypher, params)
            n += 1
    return time.perf_counter() - started, n


def bare_falkordb_runner(url: str, graph_name: str) -> tuple[Any, Any]:
    """``(run, close)`` over the FalkorDB client alone (its own parameter encoding)."""
    parsed = urlparse(url if "://" in url else f"redis://{url}")
    db = FalkorDB(host=parsed.hostname or "127.0.0.1", port=parsed.port or 6379)
    graph = db.select_graph(graph_name)

    async def run(cypher: str, params: dict[str, Any]) -> None:
        await graph.query(cypher, params)

    async def close() -> None:
        await db.connection.aclose()

    return run, close
