"""The pipeline bench's per-worker figures (``livekg bench pipeline --workers N``): each
worker's raw-topic intake from its /metrics, its rate and CPU, and the retried graph
attempts summed over the workers."""

from __future__ import annotations

import asyncio

import httpx
import respx

from evaluation.bench.pipeline import _diff, _per_worker, _worker_counters

METRICS = """# HELP livekg_events_in_total Records consumed by an agent
livekg_events_in_total{agent="normalize",topic="benchx.raw.news"} 600.0
livekg_events_in_total{agent="tick_sink",topic="benchx.raw.ticks"} 400.0
livekg_events_in_total{agent="doc_sink",topic="benchx.docs.clean"} 600.0
livekg_graph_errors_total{backend="neo4j",kind="transient"} 3.0
livekg_graph_errors_total{backend="neo4j",kind="conflict"} 1.0
livekg_agent_errors_total{agent="lane:ingest",kind="dependency"} 2.0
"""


@respx.mock
def test_worker_counters_count_each_bench_event_once() -> None:
    respx.get("http://w0/metrics").mock(return_value=httpx.Response(200, text=METRICS))
    got = asyncio.run(_worker_counters("http://w0/metrics"))
    # docs.clean is the second hop of the same news items: not counted again
    assert got == {"in": 1000.0, "graph_transient": 3.0, "graph_conflict": 1.0,
                   "agent_dependency": 2.0}  # fmt: skip


@respx.mock
def test_unreachable_worker_gives_no_counters() -> None:
    respx.get("http://w1/metrics").mock(side_effect=httpx.ConnectError("down"))
    assert asyncio.run(_worker_counters("http://w1/metrics")) == {}


def test_per_worker_rates_and_retries() -> None:
    before = [{"in": 50.0}, {"in": 50.0, "graph_transient": 1.0}]
    after = [{"in": 1550.0}, {"in": 550.0, "graph_transient": 4.0, "graph_conflict": 2.0}]
    rows = _per_worker(before, after, {"worker0": 0.5, "worker1": 0.25, "broker": 9.0}, 2.0)
    assert [r["events"] for r in rows] == [1500, 500]
    assert [r["events_per_s"] for r in rows] == [750.0, 250.0]
    assert [r["events_per_cpu_s"] for r in rows] == [3000.0, 2000.0]
    assert _diff(before, after) == {"graph_transient": 3, "graph_conflict": 2}
    one = _per_worker([{"in": 0.0}], [{"in": 100.0}], {"worker": 0.1}, 1.0)
    assert one[0]["events_per_cpu_s"] == 1000.0
