"""The embedded runtime against the real broker and graph."""

from __future__ import annotations

from pathlib import Path

from core.runtime_state import read_state
from core.topics import CATALOG
from ops.runtime import EmbeddedRuntime, services
from streams.admin import topic_counts
from tests.conftest import Stack


def test_external_services_start_nothing_embedded(stack: Stack, tmp_path: Path) -> None:
    """Settings pointing at running services: the runtime only creates topics and schema."""
    settings = stack.settings.with_overrides(
        data_dir=tmp_path,
        kafka={"bootstrap_servers": stack.endpoints.kafka_bootstrap, "topic_prefix": "ext."},
        graph={"falkordb_url": stack.endpoints.falkordb_url, "graph_name": "ext"},
    )
    runtime = EmbeddedRuntime(settings)
    ep = runtime.start_infra(llm=False)
    try:
        assert ep.kafka_bootstrap == stack.endpoints.kafka_bootstrap
        assert ep.falkordb_url == stack.endpoints.falkordb_url
        assert not {"broker", "graph"} & set(runtime.state.services)
        counts = topic_counts(ep.kafka_bootstrap, prefix="ext.")
        assert set(counts) == set(CATALOG)
    finally:
        runtime.stop_all()


def test_services_reuses_configured_endpoints(stack: Stack, tmp_path: Path) -> None:
    settings = stack.settings.with_overrides(
        data_dir=tmp_path,
        kafka={"bootstrap_servers": stack.endpoints.kafka_bootstrap},
        graph={"falkordb_url": stack.endpoints.falkordb_url},
    )
    with services(settings) as (used, ep):
        assert used is settings
        assert ep.kafka_bootstrap == stack.endpoints.kafka_bootstrap
    assert read_state(settings.state_file) is None  # nothing was started, nothing recorded


def test_stack_state_survives_in_its_data_dir(stack: Stack) -> None:
    state = read_state(stack.settings.state_file)
    assert state is not None
    assert state.kafka_bootstrap == stack.endpoints.kafka_bootstrap
    assert (Path(stack.settings.data_dir) / "kafka").is_dir()
    assert (Path(stack.settings.data_dir) / "falkordb").is_dir()
