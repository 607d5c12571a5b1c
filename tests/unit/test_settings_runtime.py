from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.errors import ReadOnlyViolation, ServiceUnavailable
from core.runtime_state import (
    RuntimeState,
    ServiceState,
    endpoints,
    pid_alive,
    read_state,
    write_state,
)
from core.settings import GraphBackend, Settings
from kg.graph.store.base import assert_read_only
from streams.kafka_compat import _ORIGINAL, install_empty_fetch_backoff


def test_env_overrides_nested(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIVEKG_KAFKA__BOOTSTRAP_SERVERS", "kafka:9092")
    monkeypatch.setenv("LIVEKG_GRAPH__BACKEND", "neo4j")
    s = Settings()
    assert s.kafka.bootstrap_servers == "kafka:9092"
    assert not s.embedded_kafka
    assert s.graph.backend == GraphBackend.NEO4J
    assert s.embedded_graph  # neo4j with no URI: `livekg up` starts the local Neo4j
    monkeypatch.setenv("LIVEKG_GRAPH__NEO4J_URI", "bolt://graph:7687")
    assert not Settings().embedded_graph  # an external URI: nothing is started


def test_toml_file_and_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "livekg.toml"
    cfg.write_text(
        'log_level = "debug"\n[kafka]\ntopic_partitions = 9\n[llm]\nbase_url = "http://gpu:8000/v1"\n'
    )
    monkeypatch.setenv("LIVEKG_CONFIG", str(cfg))
    monkeypatch.setenv("LIVEKG_LOG_LEVEL", "warning")  # env beats the file
    s = Settings()
    assert s.kafka.topic_partitions == 9
    assert s.log_level == "warning"
    assert s.llm.base_url == "http://gpu:8000/v1" and not s.embedded_llm


def test_with_overrides_merges_nested() -> None:
    s = Settings().with_overrides(kafka={"topic_prefix": "x."}, data_dir=Path("/tmp/q"))
    assert s.kafka.topic_prefix == "x."
    assert s.kafka.topic_partitions == Settings().kafka.topic_partitions
    assert s.data_dir == Path("/tmp/q")


def test_endpoints_need_running_services(tmp_path: Path) -> None:
    s = Settings(data_dir=tmp_path)
    with pytest.raises(ServiceUnavailable, match="livekg up"):
        endpoints(s)
    # a state whose PIDs are dead does not count as running
    write_state(s.state_file, RuntimeState(data_dir=str(tmp_path), kafka_bootstrap="127.0.0.1:1",
                                           services={"broker": ServiceState(name="broker", pid=2**22 + 7)}))  # fmt: skip
    with pytest.raises(ServiceUnavailable):
        endpoints(s)
    # a live PID (ours) and addresses: resolved from the state file
    me = os.getpid()
    state = RuntimeState(
        data_dir=str(tmp_path), kafka_bootstrap="127.0.0.1:9", falkordb_url="redis://127.0.0.1:8",
        services={"broker": ServiceState(name="broker", pid=me), "graph": ServiceState(name="graph", pid=me)},
    )  # fmt: skip
    write_state(s.state_file, state)
    ep = endpoints(s)
    assert (ep.kafka_bootstrap, ep.falkordb_url) == ("127.0.0.1:9", "redis://127.0.0.1:8")
    assert read_state(s.state_file) == state


def test_external_services_need_no_state(tmp_path: Path) -> None:
    s = Settings(
        data_dir=tmp_path, kafka={"bootstrap_servers": "k:1"}, graph={"falkordb_url": "redis://g:2"}
    )
    ep = endpoints(s)
    assert (ep.kafka_bootstrap, ep.falkordb_url) == ("k:1", "redis://g:2")


def test_pid_alive() -> None:
    assert pid_alive(os.getpid())
    assert not pid_alive(None)
    assert not pid_alive(2**22 + 11)


@pytest.mark.parametrize(
    "cypher",
    [
        "CREATE (n:X)",
        "MATCH (n) SET n.x = 1",
        "match (n) detach delete n",
        "MERGE (n:X {id: 1})",
        "MATCH (n) REMOVE n.x",
        "CALL db.indexes()",
        "LOAD CSV FROM 'x' AS row RETURN row",
    ],
)
def test_read_only_guard_rejects_writes(cypher: str) -> None:
    with pytest.raises(ReadOnlyViolation):
        assert_read_only(cypher)


def test_read_only_guard_allows_reads_mentioning_keywords_in_strings() -> None:
    assert_read_only(
        "MATCH (n:Company) WHERE n.name = 'CREATE SET DELETE' RETURN n.name AS created"
    )
    assert_read_only(
        "MATCH (a)-[:HAS_OBSERVATION]->(o) RETURN o.value ORDER BY o.observed_at DESC LIMIT 5"
    )


def test_empty_fetch_backoff_can_be_installed_and_removed() -> None:
    from aiokafka.consumer.fetcher import Fetcher

    install_empty_fetch_backoff(5)
    assert Fetcher._proc_fetch_request is not _ORIGINAL
    install_empty_fetch_backoff(0)
    assert Fetcher._proc_fetch_request is _ORIGINAL
