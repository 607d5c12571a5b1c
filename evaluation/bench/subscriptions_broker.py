"""``livekg bench subscriptions --through-broker``: the same subscriptions and stream as
``evaluation.bench.subscriptions``, but the alerts come from a real worker process (processor
``subscriptions``) through the broker: the bench writes each stream record to the graph
(the sink's work, not timed), publishes its ``GraphChange`` to ``graph.changes`` as the
sink does, at ``--rate`` changes per second, and a consumer of ``alerts.events`` notes
when each change's first alert arrives. Latency: change published -> first alert read,
over the changes that fire one. A canary subscription (its own node, changed by the
bench) tells when the worker is ready and when it has evaluated the whole stream.
"""

from __future__ import annotations

import asyncio
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import orjson
from confluent_kafka import Consumer, Producer

from core.records import GraphChange, IndicatorTick, utcnow
from core.runtime_state import Endpoints
from core.settings import Settings
from evaluation.bench.subscriptions import (
    _ms,
    make_subscriptions,
    sample_stream,
    with_baselines,
    write_record,
)
from evaluation.scorers.cypher_fixture import load_graph
from kg.graph.canonical import load_alias_index
from kg.graph.ontology import default_ontology
from kg.graph.queries import cypher
from kg.graph.store import GraphStore
from kg.graph.store.scratch import scratch_graph
from kg.subscribe import storage
from kg.subscribe.conditions import state_of
from kg.subscribe.evaluator import Evaluator
from kg.subscribe.model import Subscription
from ops.runtime import spawn_worker, stop_pid
from streams.admin import create_topics

CANARY = "BENCH_CANARY"


class AlertClock(threading.Thread):
    """Reads alerts.events from the start; change id -> time.time() of its first alert."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.first: dict[str, float] = {}
        self.count = 0
        self._halt = threading.Event()
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"clock-{uuid.uuid4()}",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        self.consumer.subscribe([topic])

    def run(self) -> None:
        while not self._halt.is_set():
            msg = self.consumer.poll(0.05)
            if msg is None or msg.error():
                continue
            now = time.time()
            cid = orjson.loads(msg.value()).get("change_id")
            self.count += 1
            if cid and cid not in self.first:
                self.first[cid] = now
        self.consumer.close()

    def stop(self) -> None:
        self._halt.set()
        self.join(10)


def _change(cid: str) -> GraphChange:
    return GraphChange(
        id=cid,
        source="bench",
        event_time=utcnow(),
        kind="triple",
        record_id=cid,
        entity_ids=[CANARY],
    )


async def _canary(store: GraphStore, send: Any, clock: AlertClock, n: int, wait_s: float) -> bool:
    await store.execute(f"MATCH (e:Entity {{id: '{CANARY}'}}) SET e.round = {n}")
    send(_change(f"canary-{n}"))
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if f"canary-{n}" in clock.first:
            return True
        await asyncio.sleep(0.05)
    return False


async def run_async(
    settings: Settings, ep: Endpoints, *, subscriptions: int, limit: int | None, rate: float
) -> dict[str, Any]:
    stream = await sample_stream()
    if limit:
        stream = stream[:limit]
    onto = default_ontology()
    tag = uuid.uuid4().hex[:8]
    prefix = f"bench{tag}."
    create_topics(ep.kafka_bootstrap, partitions=settings.kafka.topic_partitions, prefix=prefix)
    async with scratch_graph(settings, ep.falkordb_url, purpose="bench_subs") as (scoped, store):
        await load_graph(store, None)
        await store.ensure_indexes([storage.INDEX])
        await store.execute(f"CREATE (:Entity {{id: '{CANARY}', round: 0}})")
        rows = await store.query(cypher("entity_ids"))
        entity_ids = sorted(str(r["id"]) for r in rows if r["id"] != CANARY)
        indicators = sorted({t.indicator_id for t in stream if isinstance(t, IndicatorTick)})
        ev = Evaluator(timeout_s=settings.query.timeout_s, row_limit=settings.query.row_limit)
        subs = make_subscriptions(subscriptions, entity_ids, indicators)
        canary = Subscription(
            name="canary",
            id="sub-bench-canary",
            owner="bench",
            created_at=0,
            cypher=f"MATCH (e:Entity {{id: '{CANARY}'}}) RETURN e.round AS r",
        )
        canary.baseline = state_of(canary.condition, [{"r": 0}])
        await with_baselines(store, subs, ev)
        await storage.save_many(store, [*subs, canary])
        ev.set_subscriptions([*subs, canary])
        wsettings = scoped.with_overrides(
            kafka={"topic_prefix": prefix, "consumer_group": f"bench{tag}"},
            streams={"processors": ["subscriptions"], "store": "memory://"},
        )
        producer = Producer({"bootstrap.servers": ep.kafka_bootstrap, "linger.ms": 0})
        topic = prefix + "graph.changes"

        def send(change: GraphChange) -> None:
            producer.produce(topic, key=change.key().encode(), value=change.model_dump_json())
            producer.flush(10)

        clock = AlertClock(ep.kafka_bootstrap, prefix + "alerts.events")
        clock.start()
        with tempfile.TemporaryDirectory(prefix="livekg-bench-subs-") as tmp:
            proc, _ = spawn_worker(wsettings, ep, Path(tmp) / "worker")
            try:
                n = 0
                started = time.monotonic()
                while True:  # the worker is ready once the canary fires
                    n += 1
                    if await _canary(store, send, clock, n, 5.0):
                        break
                    if time.monotonic() - started > 180 or proc.poll() is not None:
                        raise RuntimeError("the subscriptions worker did not start")
                index = await load_alias_index(store, onto)
                sent: dict[str, float] = {}
                woken: list[int] = []
                gap = 1.0 / rate
                for rec in stream:
                    changes = await write_record(store, rec, onto, index)
                    if changes is None:
                        continue
                    t = time.time()
                    send(changes[0])
                    sent[changes[0].id] = t
                    woken.append(len(ev.index.wake(changes[0])))
                    await asyncio.sleep(max(0.0, gap - (time.time() - t)))
                n += 1
                done = await _canary(store, send, clock, n, 300.0)  # all evaluated by then
            finally:
                stop_pid(proc.pid)
                clock.stop()
    lat = [clock.first[c] - t for c, t in sent.items() if c in clock.first]
    return {
        "bench": "subscriptions",
        "mode": "through_broker",
        "subscriptions": len(subs),
        "changes": len(sent),
        "rate_per_s": rate,
        "changes_with_an_alert": len(lat),
        "alerts": clock.count,
        "complete": done,
        "p50_ms": _ms(lat, 50),
        "p95_ms": _ms(lat, 95),
        "max_ms": _ms(lat, 100),
        "evaluated_fraction_mean": round(sum(woken) / max(1, len(woken)) / len(subs), 6),
        "scope": "GraphChange published -> its first alert read from alerts.events, through "
        "the broker and a worker process",
    }


def run_through_broker(
    settings: Settings, ep: Endpoints, *, subscriptions: int, limit: int | None, rate: float
) -> dict[str, Any]:
    return asyncio.run(run_async(settings, ep, subscriptions=subscriptions, limit=limit, rate=rate))
