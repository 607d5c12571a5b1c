from __future__ import annotations

from core.errors import ConfigError
from core.settings import GraphBackend, Settings
from kg.store.base import GraphStore


def open_store(settings: Settings, falkordb_url: str | None = None) -> GraphStore:
    """The configured store. ``falkordb_url`` is the resolved (maybe embedded) address."""
    g = settings.graph
    if g.backend == GraphBackend.NEO4J:
        if not g.neo4j_uri:
            raise ConfigError("graph.backend is neo4j but LIVEKG_GRAPH__NEO4J_URI is empty")
        from kg.store.neo4j import Neo4jStore

        return Neo4jStore(g.neo4j_uri, g.neo4j_user, g.neo4j_password, g.neo4j_database)
    url = falkordb_url or g.falkordb_url
    if not url:
        raise ConfigError(
            "no FalkorDB address: start `livekg up` or set LIVEKG_GRAPH__FALKORDB_URL"
        )
    from kg.store.falkor import FalkorStore

    return FalkorStore(url, g.graph_name)
