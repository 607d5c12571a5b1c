"""``livekg bench kg``: triples through the graph sink path, then 2-hop query latency.

The sink path is the ``triple_sink`` agent's handler itself (``TripleSink.handle``):
serialized ``Triple`` payloads, as they arrive from ``kg.triples``, are decoded,
pruned against the ontology, canonicalized against the bundled universe and written
with batched UNWIND/MERGE, ``streams.batch_size`` records per batch. The Kafka
consume itself is not part of this number (``livekg bench pipeline`` measures the
broker path). The run uses a graph of its own, deleted afterwards.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from kg.ontology import Cardinality, Ontology, default_ontology
from kg.static import bundled_universe_path, load_universe, read_file
from kg.store import GraphStore
from ops.runtime_state import Endpoints
from ops.settings import Settings
from streams.batch import Inbound
from streams.codec import encode
from streams.context import WorkerContext
from streams.processors.graph_sink import TripleSink
from streams.records import Triple

TWO_HOP_CYPHER = """
MATCH (a:Entity {id: $id})-[]-(b:Entity)-[]-(c:Entity)
WHERE c.id <> $id
RETURN DISTINCT c.id AS id
LIMIT 100
"""

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
) -> dict[str, Any]:
    graph_name = f"bench_kg_{uuid.uuid4().hex[:8]}"
    s = settings.with_overrides(graph={"graph_name": graph_name})
    ctx = WorkerContext(settings=s, endpoints=ep)
    batch = s.streams.batch_size
    records = synthetic_triples(triples)
    payloads = [encode(t) for t in records]
    store = await ctx.graph()  # opens the store and creates indexes
    try:
        static = await load_universe(store)
        handler = TripleSink(ctx, ontology=ontology)
        seconds = await _sink_pass(handler, payloads, batch)
        rels = sum((await store.relationship_counts()).values())
        nodes = sum(
            v for k, v in (await store.label_counts()).items() if k == "Entity"
        )  # static + new entities
        replay_s = await _sink_pass(handler, payloads, batch) if replay else None
        rels_after = sum((await store.relationship_counts()).values())
        rows = await store.query("MATCH (e:Entity) RETURN e.id AS id")
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
    finally:
        drop = getattr(store, "delete_graph", None)
        if drop is not None:
            await drop()
        await ctx.close()


def run_kg_bench(settings: Settings, ep: Endpoints, **kwargs: Any) -> dict[str, Any]:
    return asyncio.run(run_kg_bench_async(settings, ep, **kwargs))
