"""Graph stores behind one interface; ``open_store`` picks the configured backend."""

from __future__ import annotations

from kg.graph.store.base import GraphProvider, GraphStore, IndexSpec, assert_read_only
from kg.graph.store.factory import open_store

__all__ = ["GraphProvider", "GraphStore", "IndexSpec", "assert_read_only", "open_store"]
