"""``FakeEmbedder``: deterministic hash-seeded unit vectors, no model loaded.

Subclasses ``kg.models.embed.Embedder`` (so batching and the cache are the real ones); equal
texts give equal vectors, different texts nearly orthogonal ones.
"""

from __future__ import annotations

import hashlib

import numpy as np

from kg.models.embed import Embedder, Kind


class FakeEmbedder(Embedder):
    model_id = "fake/hash"

    def __init__(self, dim: int = 32, **kw: int) -> None:
        super().__init__(**kw)
        self._dim = dim
        self.encoded: list[str] = []  # every text that reached the "model"

    @property
    def dim(self) -> int:
        return self._dim

    def _encode(self, texts: list[str], kind: Kind) -> np.ndarray:
        self.encoded.extend(texts)
        rows = []
        for t in texts:
            digest = hashlib.blake2b(f"{kind}\x1f{t}".encode(), digest_size=8).digest()
            seed = int.from_bytes(digest)
            v = np.random.default_rng(seed).standard_normal(self._dim).astype(np.float32)
            rows.append(v / np.linalg.norm(v))
        return np.stack(rows) if rows else np.empty((0, self._dim), dtype=np.float32)
