"""Retrieval over the knowledge graph and documents (Chen et al. section 3.2 and appendix C,
HybridRAG section 4.4). Public surface:

* ``RetrievedItem`` / ``Provenance`` / ``Method`` / ``Retriever``: what every method returns.
* ``RetrievalService``: the index mirrored from the graph (incremental), ``search`` by
  method, ``hybrid``; ``MethodRetriever`` wraps one method as a ``Retriever``.
* ``hybrid_search(store, embedder, query, k)``: HybridRAG context in one call.
* ``vector_index_ddl``: graph-side vector index DDL per backend.
"""

from __future__ import annotations

from kg.graph.vectors import vector_index_ddl
from kg.retrieve.index import DocRow, RetrievalIndex, TripleRow
from kg.retrieve.service import (
    MethodRetriever,
    RetrievalService,
    context_text,
    hybrid_search,
)
from kg.retrieve.types import ItemKind, Method, Provenance, RetrievedItem, Retriever

__all__ = [
    "DocRow",
    "ItemKind",
    "Method",
    "MethodRetriever",
    "Provenance",
    "RetrievalIndex",
    "RetrievalService",
    "RetrievedItem",
    "Retriever",
    "TripleRow",
    "context_text",
    "hybrid_search",
    "vector_index_ddl",
]
