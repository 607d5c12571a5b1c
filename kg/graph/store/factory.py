from __future__ import annotations

from core.errors import ConfigError, ServiceUnavailable
from core.runtime_state import local_graph_url
from core.settings import GraphBackend, Settings
from kg.graph.store.base import GraphStore
from kg.graph.store.falkor import FalkorStore
from kg.graph.store.neo4j import Neo4jStore


def open_store(settings: Settings, falkordb_url: str | None = None) -> GraphStore:
    """The configured store. ``falkordb_url`` is the resolved (maybe embedded) address.

    The local Neo4j (``graph.backend`` neo4j with no URI, or ``livekg up --graph neo4j``)
    is found through the runtime state of ``settings.data_dir``."""
    g = settings.graph
    local = local_graph_url(settings) if settings.embedded_graph and not falkordb_url else None
    if g.backend == GraphBackend.NEO4J or (local or "").startswith("bolt://"):
        uri = g.neo4j_uri or local
        if not uri:
            raise ServiceUnavailable(
                "graph.backend is neo4j with no URI and no local Neo4j running: "
                "start `livekg up --graph neo4j` or set LIVEKG_GRAPH__NEO4J_URI"
            )
        return Neo4jStore(uri, g.neo4j_user, g.neo4j_password, g.neo4j_database)
    url = falkordb_url or g.falkordb_url or local
    if not url:
        raise ConfigError(
            "no FalkorDB address: start `livekg up` or set LIVEKG_GRAPH__FALKORDB_URL"
        )
    return FalkorStore(url, g.graph_name)
