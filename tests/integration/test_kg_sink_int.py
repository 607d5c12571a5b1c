"""kg.triples through a real worker process: SIGKILL mid-stream, restart, nothing lost
or duplicated; bad triples dead-lettered with their reason while the sink keeps going.
On FalkorDB and, through ``Neo4jStore``, on a real Neo4j 5 Community (tests/bolt_server.py)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.records import DeadLetter, Triple
from core.runtime_state import Endpoints
from kg.graph.store import GraphStore
from ops.runtime import spawn_worker, stop_pid
from tests.conftest import GRAPH_BACKENDS, Isolated
from tests.integration.streamkit import produce, read_topic, wait_for

pytestmark = pytest.mark.parametrize("iso", GRAPH_BACKENDS, indirect=True)

N_GOOD = 3000
BASE = datetime(2026, 3, 1, tzinfo=UTC)


def good_triples() -> list[Triple]:
    return [
        Triple(
            source="test",
            event_time=BASE + timedelta(seconds=i),
            head=f"Firm {i % 300}",
            head_type="ORG",
            relation="PRODUCES",
            tail=f"Gadget {i}",
            tail_type="PRODUCT",
            doc_id=f"doc-{i // 10}",
        )
        for i in range(N_GOOD)
    ]


def bad_triples() -> list[Triple]:
    common = {"source": "test", "event_time": BASE, "tail": "x", "tail_type": "Product"}
    return [
        Triple(head="Firm 1", head_type="Starship", relation="PRODUCES", **common),
        Triple(head="?!", head_type="ORG", relation="PRODUCES", **common),
        Triple(head="Firm 1", head_type="ORG", relation="DESTROYS", **common),
    ]


@pytest.fixture
def worker_env(iso: Isolated, tmp_path: Path) -> Iterator[dict]:
    # small batches so the kill lands while the stream is being written
    settings = iso.settings.with_overrides(streams={"batch_size": 100})
    state: dict = {"settings": settings, "data": tmp_path / "worker", "procs": []}
    state["ep"] = Endpoints(kafka_bootstrap=iso.bootstrap, falkordb_url=iso.falkordb_url)
    yield state
    for proc in state["procs"]:
        stop_pid(proc.pid)


def start(env: dict) -> None:
    proc, _ = spawn_worker(env["settings"], env["ep"], env["data"])
    env["procs"].append(proc)


async def facts(graph: GraphStore) -> int:
    rows = await graph.query("MATCH ()-[f:PRODUCES]->() RETURN count(f) AS c")
    return int(rows[0]["c"]) if rows else 0  # no graph yet: no rows


async def test_sigkill_mid_stream_loses_and_duplicates_nothing(
    iso: Isolated, graph: GraphStore, worker_env: dict
) -> None:
    good, bad = good_triples(), bad_triples()
    produce(iso.bootstrap, iso.topic("kg.triples"), [*good[:1500], *bad, *good[1500:]])
    start(worker_env)
    await wait_for(lambda: _some(graph), "first facts in the graph", timeout=120)
    os.kill(worker_env["procs"][-1].pid, signal.SIGKILL)  # no shutdown, no commit
    worker_env["procs"][-1].wait(10)
    partial = await facts(graph)
    start(worker_env)
    await wait_for(lambda: _all(graph), "every fact after the restart", timeout=90)
    assert partial <= N_GOOD
    # exactly one edge per statement, one node per entity, provenance without repeats
    [row] = await graph.query(
        "MATCH ()-[f:PRODUCES]->() RETURN count(f) AS n, count(DISTINCT f.id) AS ids"
    )
    assert row == {"n": N_GOOD, "ids": N_GOOD}
    [row] = await graph.query("MATCH (e:Entity) RETURN count(e) AS n, count(DISTINCT e.id) AS ids")
    assert row["n"] == row["ids"] == N_GOOD + 300
    dupes = await graph.query(
        "MATCH ()-[f:PRODUCES]->() WHERE size(f.sources) <> 1 RETURN count(f) AS c"
    )
    assert dupes[0]["c"] == 0
    # the bad ones are in the DLQ with their reasons (dedupe: at-least-once delivery)
    raw = read_topic(iso.bootstrap, iso.topic("dlq"), expect=len(bad), timeout=60)
    letters = {d.id: d for d in (DeadLetter.model_validate_json(v) for v in raw)}
    reasons = sorted(d.error.split(":")[0] for d in letters.values())
    assert reasons == ["empty_name", "unknown_head_type", "unknown_relation"]
    assert all(d.error_type == "invalid_triple" and d.topic == "kg.triples"
               for d in letters.values())  # fmt: skip
    assert worker_env["procs"][-1].poll() is None  # the sink kept running


async def _some(graph: GraphStore) -> bool:
    return await facts(graph) > 0


async def _all(graph: GraphStore) -> bool:
    return await facts(graph) >= N_GOOD


async def test_bad_triples_go_to_the_dlq_while_the_sink_keeps_writing(
    iso: Isolated, graph: GraphStore, worker_env: dict
) -> None:
    good, bad = good_triples()[:600], bad_triples()
    start(worker_env)
    produce(iso.bootstrap, iso.topic("kg.triples"), [*good[:300], *bad, *good[300:]])

    async def written() -> bool:
        return await facts(graph) >= len(good)

    await wait_for(written, "the good triples in the graph", timeout=120)
    raw = read_topic(iso.bootstrap, iso.topic("dlq"), expect=len(bad), timeout=60)
    letters = [DeadLetter.model_validate_json(v) for v in raw]
    assert sorted(d.error for d in letters) == [
        "empty_name: head name '?!' is empty",
        "unknown_head_type: head type 'Starship'",
        "unknown_relation: relation 'DESTROYS'",
    ]
    assert await facts(graph) == len(good)
    # later input still flows: the sink kept running
    produce(iso.bootstrap, iso.topic("kg.triples"), good_triples()[600:650])

    async def more() -> bool:
        return await facts(graph) >= 650

    await wait_for(more, "triples produced after the bad ones", timeout=60)
    assert worker_env["procs"][-1].poll() is None
