"""Where the local graph is found: the runtime state names the Neo4j that `livekg up
--graph neo4j` started, and every command's store goes there (no server needed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.errors import ServiceUnavailable
from core.runtime_state import RuntimeState, ServiceState, endpoints, write_state
from core.settings import Settings
from kg.graph.store import open_store
from kg.graph.store.neo4j import Neo4jStore
from ops.neo4j_server import Neo4jServer, conf_text, jars_present


def _state(data_dir: Path, **graph: str) -> Settings:
    settings = Settings(data_dir=data_dir).with_overrides(kafka={"bootstrap_servers": "k:9092"})
    services = {"graph": ServiceState(name="graph", pid=os.getpid(), port=7687, kind="neo4j")}
    write_state(
        settings.state_file,
        RuntimeState(data_dir=str(data_dir), services=services, **graph),  # type: ignore[arg-type]
    )
    return settings


async def test_up_with_graph_neo4j_is_found_through_the_state(tmp_path: Path) -> None:
    settings = _state(tmp_path, neo4j_uri="bolt://127.0.0.1:7687")
    ep = endpoints(settings)  # settings still say falkordb: the state knows better
    assert ep.neo4j_uri == "bolt://127.0.0.1:7687" and ep.falkordb_url is None
    store = open_store(settings, ep.falkordb_url)
    assert isinstance(store, Neo4jStore) and store.uri == "bolt://127.0.0.1:7687"
    await store.close()
    neo = settings.with_overrides(graph={"backend": "neo4j"})
    assert neo.embedded_graph and endpoints(neo).neo4j_uri == "bolt://127.0.0.1:7687"


def test_backend_neo4j_without_a_running_server_says_what_to_do(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path).with_overrides(graph={"backend": "neo4j"})
    with pytest.raises(ServiceUnavailable, match="livekg up --graph neo4j"):
        open_store(settings)
    external = settings.with_overrides(graph={"neo4j_uri": "bolt://db:7687"})
    assert not external.embedded_graph  # an external URI: `livekg up` starts nothing


def test_conf_binds_loopback_and_follows_auth(tmp_path: Path) -> None:
    text = conf_text(7999, auth=False, pagecache="64m")
    assert "server.bolt.listen_address=127.0.0.1:7999" in text
    assert "dbms.security.auth_enabled=false" in text
    server = Neo4jServer(home=tmp_path, port=7999, password="pw", pagecache="64m")
    server.prepare()
    assert "dbms.security.auth_enabled=true" in server.conf_path.read_text()
    assert server.auth() == ("neo4j", "pw")
    if jars_present():  # the password never appears on the JVM's command line
        assert "pw" not in " ".join(server.command())
    assert server.env()["LIVEKG_NEO4J_PASSWORD"] == "pw"
