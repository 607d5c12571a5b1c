"""What every retriever returns: scored items with provenance, behind one protocol.

Callers (the report's two-stage RAG, the query service's HybridRAG fallback, the
dashboard) see only ``RetrievedItem``; the method that found an item is recorded on it
so a mixed context (HybridRAG) stays explainable.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field


class Method(StrEnum):
    BM25 = "bm25"  # BM25 over documents and chunks (bm25s)
    DENSE = "dense"  # dense retrieval over documents and chunks
    TRIPLES = "triples"  # dense retrieval over triples (Chen et al. appendix C baseline)
    TFR = "tfr"  # cluster-based triple retrieval (Chen et al. section 3.2)
    GRAPH = "graph"  # neighbourhood of the entities named in the query
    HYBRID = "hybrid"  # vector context then graph context (HybridRAG section 4.4)


class ItemKind(StrEnum):
    TRIPLE = "triple"
    DOCUMENT = "document"
    CHUNK = "chunk"


class Provenance(BaseModel):
    """Where an item comes from: enough to show a source and to audit a number."""

    sources: list[str] = Field(default_factory=list)  # triple record ids / source names
    doc_ids: list[str] = Field(default_factory=list)
    url: str = ""
    valid_from: int | None = None  # epoch ms (facts), published time (documents)
    valid_to: int | None = None
    evidence: str = ""


class RetrievedItem(BaseModel):
    id: str  # fact edge id, document id or chunk id (``<doc id>#<n>``)
    kind: ItemKind
    text: str  # what goes into a prompt: "head RELATION tail" or the passage
    score: float
    method: Method
    head: str = ""  # triples: entity ids
    relation: str = ""
    tail: str = ""
    cluster: str = ""  # TFR: "<head cluster>|<tail cluster>"
    provenance: Provenance = Field(default_factory=Provenance)


@runtime_checkable
class Retriever(Protocol):
    """One retrieval method. ``at`` (epoch ms) hides facts not valid at that time."""

    method: Method

    async def search(self, query: str, k: int, *, at: int | None = None) -> list[RetrievedItem]: ...
