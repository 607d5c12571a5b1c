"""The fault drills at CI size on the local Neo4j 5 Community (tests/faults/test_drills.py
runs them on FalkorDB): real worker, broker, Neo4j, API, connector and model-server
processes.

One drill stack with its own Neo4j for the module (a cold JVM takes 30-45 s on 2 cores);
each drill empties the one database before it starts. Every drill that reaches the graph
runs here, as on FalkorDB, with lost 0 and duplicated 0 asserted: worker kill -9, graph
outage, broker restart (SIGTERM then SIGKILL), the three-broker cluster, connector kill
(the rows through a worker into Neo4j) and the LLM outage. Sizes are smaller than on
FalkorDB (CI time on 2 shared cores); ``livekg drill --graph neo4j`` runs them at full
size. Only unwritable_data_dir, which never starts a graph, is not repeated. Where Java
or Neo4j's jars are missing the module skips, except in CI.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from evaluation.drill import drills
from evaluation.drill.harness import DrillStack
from tests.bolt_server import neo4j_available
from tests.faults.test_drills import assert_clean


@pytest.fixture(scope="module")
def neo4j_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DrillStack]:
    missing = neo4j_available()
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"no local Neo4j in CI: {missing}")
        pytest.skip(f"no local Neo4j for the drills: {missing}")
    stack = DrillStack(tmp_path_factory.mktemp("drills-neo4j"), graph="neo4j")
    try:
        stack.start()
        yield stack
    finally:
        stack.stop()


def test_stack_runs_on_neo4j(neo4j_stack: DrillStack) -> None:
    """The drills below really run on Neo4j (not a FalkorDB left as the default)."""
    assert neo4j_stack.endpoints is not None
    assert (neo4j_stack.endpoints.neo4j_uri or "").startswith("bolt://")
    assert neo4j_stack.runtime.state.services["graph"].kind == "neo4j"
    with neo4j_stack.scope("probe") as sc:
        assert sc.settings.graph.backend.value == "neo4j"
        assert sc.graph("MATCH (n) RETURN count(n) AS c") == [{"c": 0}]  # emptied for it


@pytest.mark.timeout(600)
def test_graph_outage_neo4j(neo4j_stack: DrillStack) -> None:
    """Neo4j stopped mid-stream and started again (a cold JVM: the outage lasts its
    restart too); the sinks back off, then drain the backlog."""
    r = drills.graph_outage(neo4j_stack, events_n=1000, outage_s=5.0)
    assert_clean(r)
    assert r.in_graph == r.sent == 1000
    assert not any("dead letters" in n for n in r.notes)


@pytest.mark.timeout(600)
def test_worker_kill_neo4j(neo4j_stack: DrillStack) -> None:
    r = drills.worker_kill(neo4j_stack, events_n=2000)
    assert_clean(r)
    assert r.in_graph == r.sent == 2000
    assert set(r.outputs) == {"docs.clean", "sentiment.scored", "alerts.sentiment"}


@pytest.mark.timeout(420)
def test_broker_restart_neo4j(neo4j_stack: DrillStack) -> None:
    """SIGTERM, then SIGKILL, of the Kafka broker mid-stream, the sinks writing to Neo4j."""
    r = drills.broker_restart(neo4j_stack, events_n=1000, posts_n=200, outage_s=4.0)
    assert_clean(r)
    assert r.in_graph == r.sent == 1200
    assert [n.split(":")[0] for n in r.notes[:2]] == ["SIGTERM", "SIGKILL"]


@pytest.mark.timeout(600)
def test_broker_cluster_neo4j(neo4j_stack: DrillStack) -> None:
    """Three brokers (RF 3, min.insync.replicas 2): kill -9 of broker 1, then of broker 2,
    mid-stream, the sink writing to Neo4j."""
    r = drills.broker_cluster(neo4j_stack, events_n=1000, outage_s=3.0)
    assert_clean(r)
    assert r.in_graph == r.sent == 1000
    assert sum("kill -9 broker" in n for n in r.notes) == 2


@pytest.mark.timeout(420)
def test_connector_kill_neo4j(neo4j_stack: DrillStack) -> None:
    """kill -9 of the file connector mid-poll; its rows reach Neo4j once."""
    r = drills.connector_kill(neo4j_stack, events_n=3000, rate=1500.0)
    assert_clean(r)
    assert r.in_graph == r.sent == 3000
    assert r.outputs["raw.news"].distinct == r.outputs["raw.news"].copies == 3000


@pytest.mark.timeout(600)
def test_llm_down_then_slow_neo4j(neo4j_stack: DrillStack) -> None:
    """The model server down, then slow: documents and the report on Neo4j meanwhile,
    the parked news extracted once it returns (smaller than the FalkorDB run: the
    model's completions are the slow part and do not depend on the graph)."""
    # two parked news: with one, a single model call over its time limit on the loaded
    # cores failed the drill (0 completions, 1 failed, 2026-11-28, load ~20)
    r = drills.llm_outage(neo4j_stack, posts_n=200, news_n=2, delay_s=5.0)
    assert_clean(r, may_be_empty=("alerts.sentiment",))  # the posts alternate in tone
    assert r.in_graph == r.sent == 202
    assert r.outputs["extract.pending"].distinct == 2
