"""A retrieval refresh whose caller is cancelled (the question path's fallback timeout)
finishes before the next search or refresh touches the index: the intermittent
IndexError of the HybridRAG fallback was a search reading triples whose vectors a still
running refresh thread had not appended yet, and a second refresh adding the same rows."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import numpy as np
import pytest

from kg.retrieve.service import RetrievalService

DIM = 8
N_FACTS = 6


class FakeStore:
    """Entity names, fact edges (only to a reader starting from 0) and no documents."""

    async def query(self, text: str, params: dict[str, Any] | None = None) -> list[dict]:
        params = params or {}
        if "internal" in params:  # new fact edges since a clock
            if params["since"] > 0:
                return []
            return [
                {"id": f"f{i}", "head": "AAPL", "head_name": "Apple", "relation": "LISTED_IN",
                 "tail": f"X{i}", "tail_name": f"Exchange {i}", "written_at": 10 + i}
                for i in range(N_FACTS)
            ]  # fmt: skip
        if "since" in params:  # new documents
            return []
        return [{"id": "AAPL", "name": "Apple"}]


class GatedEmbedder:
    """Passage encoding waits for ``gate``; counts encodings running at once."""

    dim = DIM
    model_id = "fake-gated"

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.running = 0
        self.most_at_once = 0
        self.calls = 0
        self._count = threading.Lock()

    def embed_sync(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        with self._count:
            self.calls += 1
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
        try:
            if kind == "passage":
                self.gate.wait(10)
            rng = np.random.default_rng(len(texts))
            v = rng.standard_normal((len(texts), DIM)).astype(np.float32)
            return v / np.linalg.norm(v, axis=1, keepdims=True)
        finally:
            with self._count:
                self.running -= 1

    async def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        return await asyncio.to_thread(self.embed_sync, list(texts), kind)


async def _cancelled_then_searched() -> tuple[RetrievalService, GatedEmbedder, list[Any]]:
    emb = GatedEmbedder()
    svc = RetrievalService(FakeStore(), emb, graph_vectors=False)  # type: ignore[arg-type]
    with pytest.raises(TimeoutError):  # the fallback's cap cancels the first question
        await asyncio.wait_for(svc.hybrid("Where is Apple listed?", 3), 0.05)
    second = asyncio.create_task(svc.hybrid("Where is Apple listed?", 3))
    await asyncio.sleep(0.2)  # the second question arrives while the first refresh runs
    emb.gate.set()
    items = await asyncio.wait_for(second, 10)
    return svc, emb, items


def test_a_cancelled_refresh_finishes_before_the_next_search() -> None:
    svc, emb, items = asyncio.run(_cancelled_then_searched())
    ix = svc.index
    # one refresh added each fact once; its vectors are all there
    assert [t.id for t in ix.triples] == [f"f{i}" for i in range(N_FACTS)]
    assert ix._triple_vecs.n == len(ix.triples)
    assert emb.most_at_once == 1  # no second refresh encoding beside the first
    # the second question was answered from the complete index
    assert {it.id for it in items if it.kind == "triple"} <= {f"f{i}" for i in range(N_FACTS)}
    assert any(it.head == "AAPL" for it in items)
