"""The production graph path against a real Neo4j 5 Community (tests/bolt_server.py):
``livekg bench kg`` never touches the configured graph and fails cleanly, and a
worker writing through ``Neo4jStore`` survives a kill -9 of the graph server with
nothing lost or doubled."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.runtime_state import Endpoints
from kg.graph.store import GraphStore, open_store
from ops.runtime import spawn_worker, stop_pid
from tests.conftest import Isolated
from tests.integration.streamkit import produce, wait_for
from tests.integration.test_kg_sink_int import good_triples

N_KILL = 1000

PRODUCTION_MARK = "MATCH (n:Entity {id: 'production-marker'}) RETURN count(n) AS n"


def bench_kg(env: dict[str, str], *args: str) -> tuple[int, dict]:
    out = subprocess.run(
        [sys.executable, "-m", "cli.main", "bench", "kg", "--triples", "600",
         "--queries", "20", "--json", *args],
        capture_output=True, text=True, timeout=300, env=env, check=False,
    )  # fmt: skip
    lines = out.stdout.strip().splitlines()
    assert lines, out.stderr[-2000:]
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    return out.returncode, json.loads(lines[-1])


def base_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIVEKG_")}
    return env | {"LIVEKG_DATA_DIR": str(tmp_path / "data")}


@pytest.mark.parametrize("iso", ["falkordb", "neo4j"], indirect=True)
async def test_bench_kg_leaves_the_configured_graph_alone(
    iso: Isolated, graph: GraphStore, tmp_path: Path
) -> None:
    await graph.execute("CREATE (n:Entity {id: 'production-marker'})")
    env = base_env(tmp_path) | iso.graph_env()
    if iso.backend == "neo4j":
        # an external Neo4j Community has no CREATE DATABASE: say so, cleanly
        code, err = bench_kg(env)
        assert code == 1 and err["ok"] is False and "CREATE DATABASE" in err["message"]
        # the configured database is refused as a scratch one
        code, err = bench_kg(env, "--database", iso.settings.graph.neo4j_database)
        assert code == 1 and "configured graph database" in err["message"]
        # no URI: a throwaway local Neo4j of the run's own
        env = base_env(tmp_path) | {"LIVEKG_GRAPH__BACKEND": "neo4j"}
    code, result = bench_kg(env, "--graph", iso.backend)
    assert code == 0, result
    assert result["backend"] == iso.backend
    assert result["replay_changed_relationships"] == 0
    assert result["triples_per_s"] > 0 and result["ratio"] > 0
    assert result["same_work"]["same_graph"] is True
    assert result["same_work"]["client"] == f"{iso.backend} driver (bare)"
    assert result["raw_reference"]["name"] == "raw_merge_rows_per_s"
    if iso.backend == "falkordb":
        assert result["graph"] != iso.settings.graph.graph_name
    # the configured graph holds exactly what it held before
    assert (await graph.query(PRODUCTION_MARK))[0]["n"] == 1
    assert await graph.label_counts() == {"Entity": 1}


@pytest.mark.parametrize("iso", ["neo4j"], indirect=True)
async def test_worker_survives_a_graph_server_kill(iso: Isolated, tmp_path: Path) -> None:
    """kill -9 of the session's Neo4j mid-stream; restarted on the same files and port,
    the worker (retrying, not dead-lettering) finishes: one edge per statement, none
    lost."""
    server = iso.bolt
    assert server is not None
    settings = iso.settings.with_overrides(streams={"batch_size": 100})
    ep = Endpoints(kafka_bootstrap=iso.bootstrap, falkordb_url=None)
    produce(iso.bootstrap, iso.topic("kg.triples"), good_triples()[:N_KILL])
    proc, _ = spawn_worker(settings, ep, tmp_path / "worker")
    store = open_store(settings)
    try:

        async def count() -> int:
            rows = await store.query("MATCH ()-[f:PRODUCES]->() RETURN count(f) AS c")
            return int(rows[0]["c"]) if rows else 0

        async def some() -> bool:
            return await count() > 0

        await wait_for(some, "first facts in the graph", timeout=120)
        server.kill()
        server.start()

        async def every() -> bool:
            try:
                return await count() >= N_KILL
            except Exception:  # the driver reconnects on the next call
                return False

        await wait_for(every, "every fact after the graph server restart", timeout=180)
        [row] = await store.query(
            "MATCH ()-[f:PRODUCES]->() RETURN count(f) AS n, count(DISTINCT f.id) AS ids"
        )
        assert row == {"n": N_KILL, "ids": N_KILL}
        [row] = await store.query(
            "MATCH (e:Entity) RETURN count(e) AS n, count(DISTINCT e.id) AS ids"
        )
        assert row["n"] == row["ids"]
        assert proc.poll() is None
    finally:
        stop_pid(proc.pid)
        await store.close()
