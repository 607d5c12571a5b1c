"""Label memory: retrieval over the labelled training texts, for the items the cascade is
unsure of.

The fine-tuned e5 encoder's vectors of the English training rows are kept with their
labels. An unsure item's e5 vector (already computed for the cascade's second opinion, so
the memory costs one small matrix product, no extra encoder pass) finds its ``k`` nearest
rows by cosine; their labels, weighted by ``exp((cos - 1) / temperature)``, give a vote
that is blended with the two encoders. Financial tweets come in many near-templates
("... price target raised to ...", "... misses on revenue"); a neighbour's label is
strong evidence exactly where the encoders disagree or hesitate.

The artifact stores vectors and labels, never text: int8 per row (unit vectors scaled by
127 / their largest component), ~3.5 MB for the ~9k English training rows. It belongs to
one e5 artifact (``encoder_sha``); a memory built with other weights is ignored.
"""

from __future__ import annotations

import hashlib
import logging
from functools import cache
from pathlib import Path

import numpy as np
from threadpoolctl import ThreadpoolController

from kg.models.embed import unit_rows
from kg.sentiment.head import meta_arrays

log = logging.getLogger(__name__)

MEMORY_ARTIFACT = "e5_memory.npz"
MEMORY_K = 10
MEMORY_TEMPERATURE = 0.02
MEMORY_WEIGHT = 0.5  # the vote's share of an unsure item's probabilities
N_CLASSES = 3


def knn_vote(
    queries: np.ndarray,
    keys: np.ndarray,
    labels: np.ndarray,
    k: int = MEMORY_K,
    temperature: float = MEMORY_TEMPERATURE,
    n_classes: int = N_CLASSES,
) -> np.ndarray:
    """Class probabilities from the ``k`` nearest ``keys`` (unit rows) of each query.

    Each neighbour votes for its label with weight ``exp((cos - 1) / temperature)``: a
    near-duplicate counts fully, one at cosine 0.9 about e^-5 as much at 0.02.
    """
    out = np.zeros((len(queries), n_classes), dtype=np.float32)
    if len(queries) == 0 or len(keys) == 0:
        return out + (1.0 / n_classes)
    sims = _single_threaded_matmul(unit_rows(queries), keys.T)
    k = min(k, keys.shape[0])
    top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    top_sims = np.take_along_axis(sims, top, axis=1)
    weights = np.exp((top_sims - 1.0) / temperature)
    np.add.at(out, (np.arange(len(queries))[:, None], labels[top]), weights)
    total = out.sum(axis=1, keepdims=True)
    return np.where(total > 0, out / np.where(total > 0, total, 1.0), 1.0 / n_classes)


@cache
def _blas_controller() -> ThreadpoolController:
    return ThreadpoolController()


def _single_threaded_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` on one BLAS thread. OpenBLAS's helper threads keep spinning after a
    product; on two cores they took the cores from the encoders' ONNX workers and cost
    the default 15% of its throughput (bench 315 vs 370 texts/s) for a ~2 ms product."""
    with _blas_controller().limit(limits=1, user_api="blas"):
        return a @ b


def blend_unsure(
    first: np.ndarray,
    second: np.ndarray,
    vote: np.ndarray | None = None,
    weight: float = MEMORY_WEIGHT,
) -> np.ndarray:
    """An unsure item's probabilities: the mean of the two encoders, blended with the
    memory's vote when there is one (``weight`` of it)."""
    mean = (first + second) / 2
    return mean if vote is None else (1.0 - weight) * mean + weight * vote


def file_sha(path: Path) -> str:
    """An artifact's identity: 16 hex digits of its sha256 (ONNX export names, the
    memory's tie to its encoder)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


class LabelMemory:
    """Unit vectors of labelled texts and their labels; ``vote`` is ``knn_vote``."""

    def __init__(
        self,
        keys: np.ndarray,
        labels: np.ndarray,
        *,
        k: int = MEMORY_K,
        temperature: float = MEMORY_TEMPERATURE,
        weight: float = MEMORY_WEIGHT,
        encoder_sha: str = "",
    ) -> None:
        if len(keys) != len(labels):
            raise ValueError(f"{len(keys)} vectors but {len(labels)} labels")
        self.keys = unit_rows(keys)
        self.labels = np.asarray(labels, dtype=np.int64)
        self.k = k
        self.temperature = temperature
        self.weight = weight
        self.encoder_sha = encoder_sha

    def __len__(self) -> int:
        return len(self.labels)

    def vote(self, vectors: np.ndarray) -> np.ndarray:
        return knn_vote(vectors, self.keys, self.labels, self.k, self.temperature)

    def save(self, path: Path, **meta: str | int | float) -> None:
        peak = np.abs(self.keys).max(axis=1, keepdims=True)  # keys are unit rows already
        scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
        np.savez_compressed(
            path,
            keys_q=np.round(self.keys / scale).astype(np.int8),
            keys_scale=scale,
            labels=self.labels.astype(np.int8),
            k=np.asarray(self.k),
            temperature=np.asarray(self.temperature),
            weight=np.asarray(self.weight),
            encoder_sha=np.asarray(self.encoder_sha),
            **meta_arrays(meta),
        )

    @classmethod
    def load(cls, path: Path) -> LabelMemory:
        data = np.load(path, allow_pickle=False)
        return cls(
            data["keys_q"].astype(np.float32) * data["keys_scale"],
            data["labels"],
            k=int(data["k"]),
            temperature=float(data["temperature"]),
            weight=float(data["weight"]),
            encoder_sha=str(data["encoder_sha"]),
        )


def load_memory(artifacts: Path, encoder_artifact: str) -> LabelMemory | None:
    """The memory next to ``encoder_artifact``, if it was built with exactly those weights."""
    path, encoder = artifacts / MEMORY_ARTIFACT, artifacts / encoder_artifact
    if not path.exists() or not encoder.exists():
        return None
    memory = LabelMemory.load(path)
    if memory.encoder_sha != file_sha(encoder):
        log.warning(
            "%s was built with other %s weights; not used (rebuild: livekg train sentiment "
            "--only memory)",
            path.name,
            encoder_artifact,
        )
        return None
    return memory
