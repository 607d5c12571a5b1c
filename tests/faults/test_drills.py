"""The fault drills at CI size: real worker, broker, graph, API and connector processes.

Each drill sends a known set of records, injects its fault and checks the graph and the
output topics by id: lost = 0 and duplicated = 0 (at-least-once delivery, effects once).
``livekg drill`` runs the same functions at full size.
"""

from __future__ import annotations

import pytest

from evaluation.drill import drills
from evaluation.drill.harness import DrillStack
from evaluation.drill.result import DrillResult


def assert_clean(r: DrillResult, may_be_empty: tuple[str, ...] = ()) -> None:
    detail = r.model_dump_json(indent=1)
    print(f"DRILL {r.model_dump_json()}")  # the figures docs/reliability.md quotes (pytest -s)
    assert r.lost == 0, detail
    assert r.duplicated == 0, detail
    assert r.ok, detail
    for name, out in r.outputs.items():
        assert out.expected > 0 or name in may_be_empty, (name, detail)
        assert out.missing == 0 and out.unexpected == 0, (name, detail)


def test_worker_kill_mid_batch(drill_stack: DrillStack) -> None:
    r = drills.worker_kill(drill_stack, events_n=5000)
    assert_clean(r)
    assert r.in_graph == r.sent == 5000
    assert set(r.outputs) == {"docs.clean", "sentiment.scored", "alerts.sentiment"}


def test_graph_outage(drill_stack: DrillStack) -> None:
    r = drills.graph_outage(drill_stack, events_n=2000, outage_s=8.0)
    assert_clean(r)
    assert r.in_graph == r.sent
    assert not any("dead letters" in n for n in r.notes)


@pytest.mark.timeout(420)
def test_broker_restart(drill_stack: DrillStack) -> None:
    """SIGTERM, then SIGKILL, of the Kafka broker mid-stream: nothing acknowledged lost."""
    r = drills.broker_restart(drill_stack, events_n=2000, posts_n=300, outage_s=4.0)
    assert_clean(r)
    assert r.in_graph == r.sent == 2300
    assert [n.split(":")[0] for n in r.notes[:2]] == ["SIGTERM", "SIGKILL"]


@pytest.mark.timeout(600)
def test_broker_cluster(drill_stack: DrillStack) -> None:
    """Three brokers, RF 3, min.insync.replicas 2: kill -9 one, then (once it is back in
    sync) another, mid-stream; nothing acknowledged lost or doubled in the graph, and the
    worker keeps consuming (it once stalled for good when its lane's consumer was fenced
    fatally after the coordinator's broker died: docs/reliability.md)."""
    r = drills.broker_cluster(drill_stack, events_n=1500, outage_s=3.0)
    assert_clean(r)
    assert r.in_graph == r.sent == 1500
    assert sum("kill -9 broker" in n for n in r.notes) == 2


def test_connector_kill_mid_poll(drill_stack: DrillStack) -> None:
    r = drills.connector_kill(drill_stack, events_n=6000, rate=3000.0)
    assert_clean(r)
    assert r.outputs["raw.news"].distinct == r.outputs["raw.news"].copies == 6000


def test_unwritable_data_dir(drill_stack: DrillStack) -> None:
    r = drills.unwritable_data_dir(drill_stack)
    print(f"DRILL {r.model_dump_json()}")
    assert r.ok, r.model_dump_json(indent=1)


def test_llm_down_then_slow(drill_stack: DrillStack) -> None:
    r = drills.llm_outage(drill_stack, posts_n=300, news_n=4, delay_s=10.0)
    assert_clean(r, may_be_empty=("alerts.sentiment",))  # the posts alternate in tone
    assert r.in_graph == r.sent == 304
    assert set(r.outputs) >= {"docs.clean", "sentiment.scored", "extract.pending"}
    assert r.outputs["extract.pending"].distinct == 4
