"""What the embedded runtime started, persisted in ``<data_dir>/runtime.json``.

Other processes (CLI commands, tests) read it to find the embedded broker, graph and
API, and ``livekg down`` reads it to stop exactly the PIDs that ``livekg up`` started.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, Field

from core.errors import ServiceUnavailable
from core.settings import GraphBackend, Settings


class ServiceState(BaseModel):
    name: str
    pid: int
    port: int | None = None
    log: str | None = None
    kind: str | None = None  # what runs, e.g. "kafka" or "noida-db" for the broker
    version: str | None = None


class RuntimeState(BaseModel):
    data_dir: str
    supervisor_pid: int | None = None
    ready: bool = False  # set once every service the supervisor started is serving
    services: dict[str, ServiceState] = Field(default_factory=dict)
    kafka_bootstrap: str | None = None
    falkordb_url: str | None = None
    neo4j_uri: str | None = None  # the local Neo4j's Bolt address (graph.backend neo4j)
    api_url: str | None = None
    llm_base_url: str | None = None
    ports: dict[str, int] = Field(default_factory=dict)  # remembered for restarts


class Endpoints(BaseModel):
    """Resolved addresses: external ones from settings, embedded ones from the state."""

    kafka_bootstrap: str
    falkordb_url: str | None
    api_url: str | None = None
    neo4j_uri: str | None = None  # the local Neo4j (open_store finds it in the state too)
    llm_base_url: str | None = None


def pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child still answers kill(0); treat it as dead.
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def read_state(path: Path) -> RuntimeState | None:
    try:
        return RuntimeState.model_validate_json(path.read_text())
    except (OSError, ValueError):
        return None


def write_state(path: Path, state: RuntimeState) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state.model_dump(), indent=2))
    tmp.replace(path)


def running_service(state: RuntimeState | None, name: str) -> ServiceState | None:
    if state is None:
        return None
    svc = state.services.get(name)
    return svc if svc is not None and pid_alive(svc.pid) else None


def endpoints(settings: Settings) -> Endpoints:
    """Where to reach each service, or ServiceUnavailable naming what is not running."""
    state = read_state(settings.state_file)
    kafka = settings.kafka.bootstrap_servers
    if not kafka:
        if running_service(state, "broker") is None or state is None or not state.kafka_bootstrap:
            raise ServiceUnavailable(
                "no Kafka broker: run `livekg up` or set LIVEKG_KAFKA__BOOTSTRAP_SERVERS"
            )
        kafka = state.kafka_bootstrap
    falkor: str | None = settings.graph.falkordb_url or None
    neo4j: str | None = None
    if settings.embedded_graph:
        local = local_graph_url(settings, state)
        if local is None:
            raise ServiceUnavailable(
                "no graph database: run `livekg up` or set LIVEKG_GRAPH__FALKORDB_URL "
                "(LIVEKG_GRAPH__NEO4J_URI for Neo4j)"
            )
        if local.startswith("bolt://"):
            neo4j = local
        else:
            falkor = local
    api = state.api_url if state and running_service(state, "api") else None
    llm = settings.llm.base_url or (
        state.llm_base_url if state and running_service(state, "llm") else None
    )
    return Endpoints(
        kafka_bootstrap=kafka, falkordb_url=falkor, api_url=api, llm_base_url=llm, neo4j_uri=neo4j
    )


def local_graph_url(settings: Settings, state: RuntimeState | None = None) -> str | None:
    """The address of the graph ``livekg up`` started in ``settings.data_dir``, if it is
    running: ``redis://`` (FalkorDB) or ``bolt://`` (the local Neo4j, also when only
    ``livekg up --graph neo4j`` chose it); None otherwise."""
    state = state if state is not None else read_state(settings.state_file)
    if state is None or running_service(state, "graph") is None:
        return None
    if settings.graph.backend == GraphBackend.NEO4J:
        return state.neo4j_uri
    return state.neo4j_uri or state.falkordb_url
