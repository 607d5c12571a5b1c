"""Cluster-based triple retrieval (Chen et al. section 3.2, "KG Retrieval from weighted clusters").

1. Nodes are clustered by their embeddings: agglomerative clustering on cosine distance
   with a distance threshold (``cluster_embeddings``). A triple belongs to the cluster
   pair (head cluster, tail cluster).
2. For a query, the top-n triples (n >> k) are retrieved by similarity; each cluster
   pair present gets the average similarity of its retrieved triples; a softmax over
   those averages gives the cluster weights; cluster c is allotted ``round(w_c * k)``
   triples, capped by how many of its triples are among the n, and the counts are then
   adjusted so exactly k come back (``allocate``); each cluster contributes its best.

Clusters are kept up to date as nodes arrive (``NodeClusters.assign``: the nearest
centroid within the threshold, else a new cluster) and rebuilt in full periodically.
The functions here are pure (numpy in, numbers out) so the allocation is testable by
hand.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

DEFAULT_THRESHOLD = 0.1  # cosine distance; e5-small distances are compressed (see docs)


def softmax(scores: Sequence[float], temperature: float = 1.0) -> list[float]:
    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    if not scores:
        return []
    top = max(scores)
    exps = [math.exp((s - top) / temperature) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]


def round_half_up(x: float) -> int:
    """Nearest integer, halves up (Python's ``round`` rounds halves to even)."""
    return math.floor(x + 0.5)


def allocate(
    mean_scores: Mapping[Hashable, float],
    capacity: Mapping[Hashable, int],
    k: int,
    *,
    temperature: float = 1.0,
) -> dict[Hashable, int]:
    """Triples per cluster: softmax weights times k, rounded, then adjusted to exactly k.

    ``capacity[c]`` is how many of cluster c's triples are among the retrieved n; a
    cluster never gets more than that (a cluster smaller than its share gives the rest
    away). When the clusters hold fewer than k in all, every candidate is returned.
    Adjustments are deterministic: surplus is taken first from the most over-rounded
    cluster (largest ``count - w*k``), deficits go first to the most under-rounded one
    with room left (largest ``w*k - count``); ties go to the higher weight, then to the
    cluster that sorts first.
    """
    if k < 0:
        raise ValueError("k must be >= 0")
    keys = sorted(mean_scores, key=lambda c: (-mean_scores[c], str(c)))
    if not keys or k == 0:
        return {c: 0 for c in keys}
    weights = dict(zip(keys, softmax([mean_scores[c] for c in keys], temperature), strict=True))
    share = {c: weights[c] * k for c in keys}
    count = {c: min(round_half_up(share[c]), capacity[c]) for c in keys}
    target = min(k, sum(capacity[c] for c in keys))
    order = {c: i for i, c in enumerate(keys)}  # weight desc, then name
    surplus = sum(count.values()) - target
    if surplus > 0:  # take from the most over-rounded; ties: lower weight, later name
        heap = [(-(count[c] - share[c]), weights[c], -order[c], c) for c in keys if count[c]]
        heapq.heapify(heap)
        while surplus > 0:
            _, _, _, c = heapq.heappop(heap)
            count[c] -= 1
            surplus -= 1
            if count[c]:
                heapq.heappush(heap, (-(count[c] - share[c]), weights[c], -order[c], c))
    elif surplus < 0:  # give to the most under-rounded with room; ties: higher weight, name
        heap = [(-(share[c] - count[c]), -weights[c], order[c], c)
                for c in keys if count[c] < capacity[c]]  # fmt: skip
        heapq.heapify(heap)
        while surplus < 0:
            _, _, _, c = heapq.heappop(heap)
            count[c] += 1
            surplus += 1
            if count[c] < capacity[c]:
                heapq.heappush(heap, (-(share[c] - count[c]), -weights[c], order[c], c))
    return count


@dataclass(frozen=True, slots=True)
class ClusterCandidate:
    index: int  # position in the caller's triple list
    score: float  # similarity to the query
    cluster: Hashable  # (head cluster, tail cluster)


def select(
    candidates: Sequence[ClusterCandidate], k: int, *, temperature: float = 1.0
) -> list[ClusterCandidate]:
    """The seed's selection over the top-n candidates: exactly k (or all if fewer).

    Within a cluster the best-scoring candidates are taken (ties: lower index first);
    the result is ordered by score, best first.
    """
    by_cluster: dict[Hashable, list[ClusterCandidate]] = {}
    for c in candidates:
        by_cluster.setdefault(c.cluster, []).append(c)
    means = {c: sum(x.score for x in xs) / len(xs) for c, xs in by_cluster.items()}
    counts = allocate(means, {c: len(xs) for c, xs in by_cluster.items()}, k,
                      temperature=temperature)  # fmt: skip
    chosen: list[ClusterCandidate] = []
    for c, xs in by_cluster.items():
        xs.sort(key=lambda x: (-x.score, x.index))
        chosen.extend(xs[: counts[c]])
    chosen.sort(key=lambda x: (-x.score, x.index))
    return chosen


def cluster_embeddings(vectors: np.ndarray, threshold: float = DEFAULT_THRESHOLD) -> np.ndarray:
    """Cluster labels (0..m-1) from agglomerative clustering on cosine distance, cut at
    ``threshold``.

    scipy's ``linkage`` implements Muellner's algorithms (the paper the seed cites);
    average linkage, since Ward needs Euclidean distances (the seed names the algorithm
    and the distance threshold, not the linkage).
    """
    n = len(vectors)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if n == 1:
        return np.zeros(1, dtype=np.int64)
    from scipy.cluster.hierarchy import fcluster, linkage  # optional: heavy to import

    v = np.asarray(vectors, dtype=np.float64)
    z = linkage(v, method="average", metric="cosine")
    raw = fcluster(z, t=threshold, criterion="distance")
    _, labels = np.unique(raw, return_inverse=True)  # 0..m-1 in order of first label
    return labels.astype(np.int64)


@dataclass
class NodeClusters:
    """Node -> cluster, maintained incrementally, rebuilt in full now and then.

    ``assign`` puts a new node into the cluster with the nearest centroid when its
    cosine distance is within the threshold, else opens a new cluster. ``rebuild``
    runs the agglomerative clustering on all nodes (at most ``max_rebuild_nodes`` are
    clustered; beyond that a deterministic sample is clustered and the rest assigned,
    since the full linkage needs n^2 memory). ``stale`` says when assignments since
    the last rebuild exceed ``rebuild_fraction`` of the nodes.
    """

    dim: int
    threshold: float = DEFAULT_THRESHOLD
    max_rebuild_nodes: int = 6000
    rebuild_fraction: float = 0.2
    labels: dict[str, int] = field(default_factory=dict)
    _sums: list[np.ndarray] = field(default_factory=list)
    _counts: list[int] = field(default_factory=list)
    _centroids: np.ndarray | None = None
    assigned_since_rebuild: int = 0
    rebuilds: int = 0

    @property
    def n_clusters(self) -> int:
        return len(self._counts)

    @property
    def stale(self) -> bool:
        return self.assigned_since_rebuild > self.rebuild_fraction * max(len(self.labels), 1)

    def _unit_centroids(self) -> np.ndarray:
        if self._centroids is None:
            if not self._sums:
                self._centroids = np.zeros((0, self.dim), dtype=np.float32)
            else:
                c = np.stack(self._sums)
                self._centroids = c / np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-12)
        return self._centroids

    def assign(self, node_id: str, vec: np.ndarray) -> int:
        if node_id in self.labels:
            return self.labels[node_id]
        cents = self._unit_centroids()
        label = -1
        if len(cents):
            sims = cents @ vec
            best = int(np.argmax(sims))
            if 1.0 - float(sims[best]) <= self.threshold:
                label = best
        if label < 0:
            label = len(self._counts)
            self._sums.append(np.array(vec, dtype=np.float32))
            self._counts.append(1)
            row = self._sums[label] / max(float(np.linalg.norm(self._sums[label])), 1e-12)
            self._centroids = np.vstack([cents, row[None, :]])
        else:
            self._sums[label] = self._sums[label] + vec
            self._counts[label] += 1
            cents[label] = self._sums[label] / max(float(np.linalg.norm(self._sums[label])), 1e-12)
        self.labels[node_id] = label
        self.assigned_since_rebuild += 1
        return label

    def rebuild(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        n = len(ids)
        self.labels, self._sums, self._counts, self._centroids = {}, [], [], None
        if n == 0:
            self.rebuilds += 1
            self.assigned_since_rebuild = 0
            return
        if n <= self.max_rebuild_nodes:
            core = np.arange(n)
        else:
            core = np.sort(np.random.default_rng(0).choice(n, self.max_rebuild_nodes, False))
        labels = cluster_embeddings(vectors[core], self.threshold)
        m = int(labels.max()) + 1
        self._sums = [np.zeros(self.dim, dtype=np.float32) for _ in range(m)]
        self._counts = [0] * m
        for i, lab in zip(core, labels, strict=True):
            self.labels[ids[i]] = int(lab)
            self._sums[lab] += vectors[i]
            self._counts[lab] += 1
        if n > len(core):
            in_core = np.zeros(n, dtype=bool)
            in_core[core] = True
            for i in np.flatnonzero(~in_core):
                self.assign(ids[i], vectors[i])
        self.rebuilds += 1
        self.assigned_since_rebuild = 0
