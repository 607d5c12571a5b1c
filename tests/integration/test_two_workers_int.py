"""Scale-out: two worker processes in one consumer group on the embedded broker split
the partitions and together process a replay, nothing lost or doubled. Neither sets
``LIVEKG_WORKER_ID``: the default identity (host-pid) keeps their static memberships
apart, as for compose replicas."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from confluent_kafka.admin import AdminClient

from core.records import IndicatorTick
from core.runtime_state import Endpoints
from kg.graph.store import GraphStore
from ops.runtime import spawn_worker, stop_pid
from tests.conftest import Isolated
from tests.integration.streamkit import produce, wait_for

N = 2000
INDICATORS = 40  # keys spread over both partitions


def replay() -> list[IndicatorTick]:
    base = datetime(2026, 6, 1, tzinfo=UTC)
    return [
        IndicatorTick(source="replay", event_time=base + timedelta(seconds=i),
                      indicator_id=f"IX{i % INDICATORS}", value=float(i), unit="idx")
        for i in range(N)
    ]  # fmt: skip


async def both_assigned(bootstrap: str, group: str) -> bool:
    """The group has two members, each with at least one partition."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        desc = admin.describe_consumer_groups([group])[group].result(timeout=10)
    except Exception:
        return False
    members = desc.members
    return len(members) == 2 and all(m.assignment.topic_partitions for m in members)


def consumed(port: int) -> float:
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    found = re.findall(
        r'^livekg_events_in_total\{agent="tick_sink"[^}]*\} ([0-9.e+]+)$', text, re.M
    )
    return sum(float(v) for v in found)


async def test_two_workers_split_partitions_and_lose_or_double_nothing(
    iso: Isolated, graph: GraphStore, tmp_path: Path
) -> None:
    settings = iso.settings.with_overrides(
        streams={"processors": ["graph_sink"], "batch_size": 100}
    )
    ep = Endpoints(kafka_bootstrap=iso.bootstrap, falkordb_url=iso.falkordb_url)
    procs = []
    try:
        for i in range(2):
            procs.append(spawn_worker(settings, ep, tmp_path / f"worker{i}"))
        group = f"{settings.kafka.consumer_group}.ingest"  # the librdkafka lane's group
        await wait_for(lambda: both_assigned(iso.bootstrap, group), "two members", timeout=90)
        produce(iso.bootstrap, iso.topic("raw.ticks"), replay())

        async def observations() -> int:
            rows = await graph.query("MATCH (o:Observation) RETURN count(o) AS n")
            return int(rows[0]["n"]) if rows else 0

        async def done() -> bool:
            return await observations() >= N

        await wait_for(done, "the whole replay in the graph", timeout=180)
        [row] = await graph.query(
            "MATCH (o:Observation) RETURN count(o) AS n, count(DISTINCT o.id) AS ids"
        )
        assert row == {"n": N, "ids": N}  # nothing lost, nothing doubled
        [row] = await graph.query(
            "MATCH (:Entity)-[r:HAS_OBSERVATION]->(o:Observation) RETURN count(r) AS n"
        )
        assert row["n"] == N
        per_worker = [consumed(port) for _, port in procs]
        assert all(n > 0 for n in per_worker), per_worker  # both got partitions
        assert sum(per_worker) >= N  # at-least-once: a rebalance may redeliver, never skip
        assert all(p.poll() is None for p, _ in procs)
    finally:
        for p, _ in procs:
            stop_pid(p.pid)
