"""Passage vectors kept on disk between runs, keyed by (model id, text) hashes.

``livekg report bond`` and ``livekg retrieve`` are separate processes that rebuild the
index mirror each time; without this every run re-embeds the whole graph. One ``.npz``
file per embedder model under ``<data_dir>/retrieve/``; written atomically.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)


class VectorCache:
    def __init__(self, path: Path, dim: int) -> None:
        self.path = Path(path)
        self.dim = dim
        self._vecs: dict[bytes, np.ndarray] = {}
        self.dirty = False
        self.hits = 0
        try:
            with np.load(self.path) as data:
                keys, vecs = data["keys"], data["vecs"]
            if vecs.shape[1:] == (dim,):
                self._vecs = {bytes(k): v for k, v in zip(keys, vecs, strict=True)}
        except (OSError, KeyError, ValueError) as exc:
            if self.path.exists():
                log.warning("vector cache %s unreadable, starting empty: %s", self.path, exc)

    @staticmethod
    def key(text: str) -> bytes:
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()

    def wrap(self, encode: Callable[[list[str]], np.ndarray]) -> Callable[[list[str]], np.ndarray]:
        """``encode`` that answers cached texts from the file and remembers new ones."""

        def cached(texts: list[str]) -> np.ndarray:
            keys = [self.key(t) for t in texts]
            todo = [i for i, k in enumerate(keys) if k not in self._vecs]
            if todo:
                fresh = encode([texts[i] for i in todo])
                for i, v in zip(todo, fresh, strict=True):
                    self._vecs[keys[i]] = np.asarray(v, dtype=np.float32)
                self.dirty = True
            self.hits += len(texts) - len(todo)
            if not texts:
                return np.zeros((0, self.dim), dtype=np.float32)
            return np.stack([self._vecs[k] for k in keys])

        return cached

    def save(self) -> None:
        if not self.dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self._vecs), dtype="S16")
        vecs = np.stack(list(self._vecs.values())) if self._vecs else np.zeros((0, self.dim))
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=keys, vecs=vecs.astype(np.float32))
        os.replace(tmp, self.path)
        self.dirty = False


def cache_path(data_dir: Path, model_id: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in model_id)
    return Path(data_dir) / "retrieve" / f"vectors-{safe}.npz"
