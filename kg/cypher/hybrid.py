"""The HybridRAG fallback of ``CypherQA`` (HybridRAG): when no Cypher candidate returns
rows, retrieval (kg.retrieve, vector context then graph context) finds the facts and
documents closest to the question; the answer quotes the best of them, each cited by
id. Extractive on purpose: the embedded LLM is too weak to be trusted with numbers."""

from __future__ import annotations

import re
import time
from typing import Any

from kg.cypher.qa import Citation, HybridAnswer
from kg.graph.store.base import GraphStore
from kg.retrieve import hybrid_search

QUOTED = 3
_STOP = frozenset(
    "what which who whom when where why how does did have has with from that this about tell "
    "there their they them into over under than then also some many much more most".split()
)
_ASCII = re.compile(r"[a-z0-9]{3,}")
_CJK = re.compile(r"[\u3400-\u9fff]+")


def _terms(text: str) -> set[str]:
    """Content words (ASCII, 3+ letters, plural s cut) and Chinese character bigrams:
    an item must share one with the question to count as an answer."""
    low = text.casefold()
    out = {w.rstrip("s") for w in _ASCII.findall(low) if w not in _STOP}
    for run in _CJK.findall(low):
        out.update(run[i : i + 2] for i in range(len(run) - 1))
    return out


class RetrievalAnswerer:
    def __init__(self, store: GraphStore, embedder: Any, *, k: int = 8) -> None:
        self.store = store
        self.embedder = embedder
        self.k = k

    async def warm(self) -> None:
        """Build the retrieval index now (about 20 s on the sample graph on 2 busy
        cores) instead of inside the first question that falls back to retrieval."""
        await hybrid_search(self.store, self.embedder, "warm up", 1)

    async def answer(self, question: str) -> HybridAnswer | None:
        """Retrieval, then the items that share a word with the question; None ("not
        known") when nothing does. Stage times in ``timings`` (ms)."""
        t0 = time.perf_counter()
        items = await hybrid_search(self.store, self.embedder, question, self.k)
        t1 = time.perf_counter()
        terms = _terms(question)
        items = [it for it in items if it.text.strip() and terms & _terms(it.text)]
        timings = {
            "retrieve_ms": round((t1 - t0) * 1000, 3),
            "filter_ms": round((time.perf_counter() - t1) * 1000, 3),
        }
        if not items:
            return None  # nothing retrieved shares a word with the question: not known
        quoted = [it.text.strip().replace("\n", " ")[:240] for it in items[:QUOTED]]
        citations = []
        for it in items:
            kind = "fact" if it.kind == "triple" else "document"
            ref = it.id.split("#", 1)[0] if kind == "document" else it.id
            citations.append(Citation(id=ref, kind=kind, label=str(it.method), text=it.text[:240]))
            for d in it.provenance.doc_ids:
                citations.append(Citation(id=d, kind="document"))
        lead = "相关事实：" if _CJK.search(question) else "Related: "
        return HybridAnswer(answer=lead + " | ".join(quoted), citations=citations, timings=timings)
