"""``livekg bench subscriptions``: standing questions evaluated as the sample stream
changes the graph.

Set-up (not timed): a graph of its own (``kg.graph.store.scratch``) with the bundled universe;
the sample day's documents through the LLM-free extractor (its triples) and its ticks
(``connectors/samples``) as the stream; ``--subscriptions`` subscriptions of four
shapes (new facts about a watchlist of three entities, an indicator crossing a
threshold, a spread of two indicators crossing zero, more than N adverse facts on one
entity within an hour), spread over the universe's entities and as many fictional ids
(users watch names the graph has not seen yet), each with its baseline, stored as
``:Subscription`` nodes and loaded back by the evaluator as the worker does.

Timed, per stream record in event-time order: the sink writes it (not timed), then from
the graph change to its alerts built and serialized: the index wakes the subscriptions
the change may affect, each runs its query (guard, row cap, timeout) and its condition.
That is the worker's handler for a batch of one change without the broker's two hops
(graph.changes in, alerts.events out; ``livekg bench pipeline`` measures those).
Reported: p50/p95/max milliseconds, the fraction of subscriptions evaluated per change,
alerts fired. Reference, same run, same graph: the one query of a subscription the
change matches, run directly on the store (no index, no guard, no condition).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from core.records import GraphChange, IndicatorTick, Record, Triple
from core.runtime_state import Endpoints
from core.settings import Settings
from evaluation.scorers.cypher_fixture import SAMPLE_TICKS, load_graph, read_ticks
from kg.extract.corpus import file_docs
from kg.extract.pipeline import Extractor
from kg.graph import sink
from kg.graph.canonical import AliasIndex, load_alias_index
from kg.graph.ontology import Ontology, default_ontology
from kg.graph.queries import cypher
from kg.graph.store import GraphStore
from kg.graph.store.scratch import scratch_graph
from kg.subscribe import storage
from kg.subscribe.changes import tick_changes, triple_changes
from kg.subscribe.conditions import state_of
from kg.subscribe.evaluator import Evaluator
from kg.subscribe.model import Subscription
from kg.subscribe.translate import FACTS_ABOUT_CYPHER

SAMPLES = SAMPLE_TICKS.parent
OWNER = "bench"
INDICATOR_CYPHER = "MATCH (i:Indicator {id: $ind}) RETURN i.last_value AS value"
SPREAD_CYPHER = (
    "MATCH (a:Indicator {id: $long}), (b:Indicator {id: $short}) "
    "RETURN round((a.last_value - b.last_value) * 10000) / 100 AS spread_bp"
)
ADVERSE_CYPHER = (
    "MATCH (b:Entity)-[f:IMPACTED_BY]->(x) WHERE b.id IN $ids "
    "RETURN b.id AS key, f.id AS fact_id, f.valid_from AS at, f.doc_ids AS doc_ids"
)


async def sample_stream() -> list[Record]:
    """The sample day: extracted triples and ticks, in event-time order."""
    extractor = Extractor()
    triples: list[Triple] = []
    for name in ("news.jsonl", "social.jsonl", "filings.jsonl"):
        for doc in file_docs(SAMPLES / name):
            triples += (await extractor.extract(doc)).triples
    ticks = await asyncio.to_thread(read_ticks, SAMPLE_TICKS)
    records: list[Record] = [*triples, *ticks]
    return sorted(records, key=lambda r: r.event_time)


def make_subscriptions(
    n: int, entity_ids: Sequence[str], indicator_ids: Sequence[str], seed: int = 7
) -> list[Subscription]:
    rnd = random.Random(seed)
    pool = list(entity_ids) + [f"FICTIONAL_{k}" for k in range(len(entity_ids) * 10)]
    out: list[Subscription] = []
    for i in range(n):
        shape = i % 4
        common: dict[str, Any] = {"id": f"sub-bench-{i}", "owner": OWNER, "created_at": 0}
        if shape == 0:
            sub = Subscription(
                name=f"watchlist {i}",
                cypher=FACTS_ABOUT_CYPHER.strip(),
                params={"anchors": rnd.sample(pool, 3), "terms": []},
                condition={"kind": "new_rows"},
                **common,
            )
        elif shape == 1:
            sub = Subscription(
                name=f"indicator {i}",
                cypher=INDICATOR_CYPHER,
                params={"ind": rnd.choice(indicator_ids)},
                condition={
                    "kind": "threshold",
                    "column": "value",
                    "threshold": round(rnd.uniform(0, 6), 2),
                    "direction": rnd.choice(["above", "below"]),
                },
                **common,
            )
        elif shape == 2:
            long, short = rnd.sample(list(indicator_ids), 2)
            sub = Subscription(
                name=f"spread {i}",
                cypher=SPREAD_CYPHER,
                params={"long": long, "short": short},
                condition={
                    "kind": "threshold",
                    "column": "spread_bp",
                    "threshold": 0,
                    "direction": "below",
                },
                **common,
            )
        else:
            sub = Subscription(
                name=f"adverse {i}",
                cypher=ADVERSE_CYPHER,
                params={"ids": [rnd.choice(pool)]},
                condition={
                    "kind": "count_window",
                    "count": 3,
                    "window_s": 3600,
                    "key_column": "key",
                    "time_column": "at",
                },
                **common,
            )
        out.append(sub)
    return out


async def with_baselines(store: GraphStore, subs: list[Subscription], ev: Evaluator) -> None:
    sem = asyncio.Semaphore(8)

    async def one(sub: Subscription) -> None:
        async with sem:
            sub.baseline = state_of(sub.condition, await ev.run_query(store, sub))

    await asyncio.gather(*(one(s) for s in subs))


async def write_record(
    store: GraphStore, rec: Record, onto: Ontology, index: AliasIndex
) -> list[GraphChange] | None:
    """Write one sample record as the sinks do; its change records (None: the triple
    fails the sink's checks and is not written)."""
    if isinstance(rec, Triple):
        check = sink.check_triple(rec, onto)
        if not check.ok:
            return None
        await sink.write_triples(store, [rec], ontology=onto, index=index, checks=[check])
        return triple_changes([rec], [check], onto, index)
    assert isinstance(rec, IndicatorTick)
    await sink.write_ticks(store, [rec])
    return tick_changes([rec])


def _ms(xs: Sequence[float], q: float) -> float:
    return round(float(np.percentile(np.asarray(xs) * 1000, q)), 3) if xs else 0.0


async def run_async(
    settings: Settings, ep: Endpoints, *, subscriptions: int, limit: int | None
) -> dict[str, Any]:
    stream = await sample_stream()
    if limit:
        stream = stream[:limit]
    onto = default_ontology()
    async with scratch_graph(settings, ep.falkordb_url, purpose="bench_subs") as (_s, store):
        await load_graph(store, None)
        await store.ensure_indexes([storage.INDEX])
        rows = await store.query(cypher("entity_ids_labels"))
        entity_ids = sorted(str(r["id"]) for r in rows)
        indicators = sorted({t.indicator_id for t in stream if isinstance(t, IndicatorTick)})
        ev = Evaluator(timeout_s=settings.query.timeout_s, row_limit=settings.query.row_limit)
        t0 = time.perf_counter()
        subs = make_subscriptions(subscriptions, entity_ids, indicators)
        await with_baselines(store, subs, ev)
        await storage.save_many(store, subs)
        registered_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        await ev.refresh(store)
        load_s = time.perf_counter() - t0
        index = await load_alias_index(store, onto)
        states: dict[str, dict[str, Any]] = {}
        lat: list[float] = []
        ref: list[float] = []
        fractions: list[float] = []
        by_kind: dict[str, list[float]] = {"tick": [], "triple": []}
        queries: list[int] = []
        alerts = 0
        for rec in stream:
            change = await write_record(store, rec, onto, index)
            if change is None:
                continue
            started = time.perf_counter()
            result = await ev.evaluate_batch(store, change, states.get)
            for a in result.alerts:
                a.__pydantic_serializer__.to_json(a)
            lat.append(time.perf_counter() - started)
            states.update(result.states)
            alerts += len(result.alerts)
            fractions.append(result.woken / max(1, len(ev.subs)))
            by_kind[change[0].kind].append(fractions[-1])
            queries.append(result.queries)
            woken = sorted(ev.index.wake(change[0]))
            if woken:  # reference: the one matching query, directly on the store
                sub = ev.subs[woken[0]]
                started = time.perf_counter()
                await store.query(sub.cypher or "", sub.params)
                ref.append(time.perf_counter() - started)
        p95, ref_p95 = _ms(lat, 95), _ms(ref, 95)
        return {
            "bench": "subscriptions",
            "subscriptions": len(ev.subs),
            "changes": len(lat),
            "changes_with_a_match": len(ref),
            "p50_ms": _ms(lat, 50),
            "p95_ms": p95,
            "max_ms": _ms(lat, 100),
            "evaluated_fraction_mean": round(float(np.mean(fractions)), 6) if fractions else 0.0,
            "evaluated_fraction_p95": round(float(np.percentile(fractions, 95)), 6)
            if fractions
            else 0.0,
            "evaluated_per_change_mean": round(float(np.mean(fractions)) * len(ev.subs), 2)
            if fractions
            else 0.0,
            "evaluated_fraction_mean_by_change_kind": {
                k: round(float(np.mean(v)), 6) if v else None for k, v in by_kind.items()
            },
            "changes_by_kind": {k: len(v) for k, v in by_kind.items()},
            "distinct_queries_per_change_mean": round(float(np.mean(queries)), 2)
            if queries
            else 0.0,
            "alerts": alerts,
            "reference": {
                "name": "one_matching_query_direct",
                "value": ref_p95,
                "what": "p95 ms of the one matching subscription's query run on the store",
            },
            "reference_p50_ms": _ms(ref, 50),
            "reference_p95_ms": ref_p95,
            "ratio": round(p95 / ref_p95, 2) if ref_p95 else None,
            "register_s": round(registered_s, 2),
            "load_s": round(load_s, 2),
            "scope": "graph change -> alerts built, in process; broker hops not included",
        }


def run_subscriptions_bench(
    settings: Settings, ep: Endpoints, *, subscriptions: int = 10_000, limit: int | None = None
) -> dict[str, Any]:
    return asyncio.run(run_async(settings, ep, subscriptions=subscriptions, limit=limit))
