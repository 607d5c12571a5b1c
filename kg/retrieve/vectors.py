"""Inner-product search over unit vectors: exact below ``ivf_min`` rows, an inverted
file (IVF) above.

Exact search streams every vector per query (100k x 384 float32 is 150 MB: tens of
milliseconds on a busy 2-core machine). The IVF partitions the rows by their nearest
k-means centroid (sqrt(n) lists, trained on 40 rows per list with scikit-learn's
MiniBatchKMeans, random init) and scans only the ``nprobe`` lists whose centroids are
closest to the query: about 8% of the rows at 100k. It is approximate; rows added later join their
nearest list, and the lists are retrained when the rows have doubled since training.
"""

from __future__ import annotations

import math

import numpy as np


class Rows:
    """Float32 rows appended in amortized O(1); ``view`` is the filled part."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._data = np.zeros((0, dim), dtype=np.float32)
        self.n = 0

    def extend(self, rows: np.ndarray) -> None:
        rows = np.asarray(rows, dtype=np.float32).reshape(-1, self.dim)
        need = self.n + len(rows)
        if need > len(self._data):
            grown = np.zeros((max(need, 2 * len(self._data), 64), self.dim), dtype=np.float32)
            grown[: self.n] = self._data[: self.n]
            self._data = grown
        self._data[self.n : need] = rows
        self.n = need

    @property
    def view(self) -> np.ndarray:
        return self._data[: self.n]


class _IdRows(Rows):
    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.ids: list[int] = []
        self._ids_arr: np.ndarray | None = None

    def add(self, row_id: int, vec: np.ndarray) -> None:
        self.extend(vec[None, :])
        self.ids.append(row_id)
        self._ids_arr = None

    @property
    def id_array(self) -> np.ndarray:
        if self._ids_arr is None:
            self._ids_arr = np.asarray(self.ids, dtype=np.int64)
        return self._ids_arr


class VectorSearch:
    def __init__(self, dim: int, *, ivf_min: int = 20_000, nprobe: int = 24) -> None:
        self.dim = dim
        self.ivf_min = ivf_min
        self.nprobe = nprobe
        self.rows = Rows(dim)
        self.centroids: np.ndarray | None = None
        self.lists: list[_IdRows] = []
        self.trained_n = 0

    @property
    def n(self) -> int:
        return self.rows.n

    def extend(self, vecs: np.ndarray) -> None:
        vecs = np.asarray(vecs, dtype=np.float32).reshape(-1, self.dim)
        start = self.rows.n
        self.rows.extend(vecs)
        if self.rows.n >= self.ivf_min and (
            self.centroids is None or self.rows.n > 2 * self.trained_n
        ):
            self.train()
        elif self.centroids is not None and len(vecs):
            for i, lab in enumerate(self._nearest(vecs)):
                self.lists[lab].add(start + i, vecs[i])

    def _nearest(self, vecs: np.ndarray) -> np.ndarray:
        assert self.centroids is not None
        out = np.empty(len(vecs), dtype=np.int64)
        for s in range(0, len(vecs), 8192):
            out[s : s + 8192] = np.argmax(vecs[s : s + 8192] @ self.centroids.T, axis=1)
        return out

    def train(self) -> None:
        from sklearn.cluster import MiniBatchKMeans  # optional: heavy, 5 s to import

        data = self.rows.view
        n = len(data)
        nlist = max(8, int(math.sqrt(n)))
        rng = np.random.default_rng(0)
        m = min(n, 40 * nlist)  # ~40 training points per list, as faiss advises
        sample = data if m == n else data[np.sort(rng.choice(n, m, replace=False))]
        # random init: k-means++ seeding costs minutes at this size and buys little here
        km = MiniBatchKMeans(n_clusters=nlist, init="random", n_init=1, batch_size=4096,
                             random_state=0, max_iter=10).fit(sample)  # fmt: skip
        c = km.cluster_centers_.astype(np.float32)
        self.centroids = c / np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-12)
        labels = self._nearest(data)
        self.lists = [_IdRows(self.dim) for _ in range(nlist)]
        order = np.argsort(labels, kind="stable")
        bounds = np.searchsorted(labels[order], np.arange(nlist + 1))
        for lab in range(nlist):
            members = order[bounds[lab] : bounds[lab + 1]]
            lst = self.lists[lab]
            lst.extend(data[members])
            lst.ids = members.tolist()
        self.trained_n = n

    def search(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row ids, scores) of the candidates: every row when exact, else the rows of
        the ``nprobe`` nearest lists."""
        if self.centroids is None:
            return np.arange(self.rows.n), self.rows.view @ q
        cs = self.centroids @ q
        probe = np.argpartition(-cs, min(self.nprobe, len(cs)) - 1)[: self.nprobe]
        ids, scores = [], []
        for lab in probe:
            lst = self.lists[int(lab)]
            if lst.n:
                ids.append(lst.id_array)
                scores.append(lst.view @ q)
        if not ids:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        return np.concatenate(ids), np.concatenate(scores)
