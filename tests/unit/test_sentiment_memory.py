"""The label memory: nearest labelled training texts vote on the cascade's unsure items."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from kg.models.embed import unit_rows
from kg.sentiment.memory import (
    MEMORY_ARTIFACT,
    LabelMemory,
    blend_unsure,
    file_sha,
    knn_vote,
    load_memory,
)
from kg.sentiment.model import CascadeClassifier, RoutedClassifier

KEYS = unit_rows(np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.9, 0.1, 0.0]]))
LABELS = np.array([0, 1, 2, 0])


def test_vote_follows_the_nearest_labels() -> None:
    p = knn_vote(np.array([[1.0, 0.05, 0.0], [0.0, 0.0, 3.0]]), KEYS, LABELS, k=2)
    assert p.shape == (2, 3) and np.allclose(p.sum(1), 1)
    assert p[0].argmax() == 0 and p[0, 0] > 0.99  # both neighbours say negative
    assert p[1].argmax() == 2  # the query's length does not matter, its direction does


def test_vote_weights_a_near_duplicate_over_a_farther_neighbour() -> None:
    query = np.array([[0.1, 1.0, 0.0]])  # nearest: label 1; next: [0.9,0.1,0] (label 0)
    sharp = knn_vote(query, KEYS, LABELS, k=2, temperature=0.02)
    flat = knn_vote(query, KEYS, LABELS, k=2, temperature=100.0)
    assert sharp[0, 1] > 0.99
    assert flat[0, 1] == pytest.approx(0.5, abs=0.01)  # a flat kernel: one vote each


def test_vote_without_keys_or_queries() -> None:
    assert np.allclose(knn_vote(np.ones((2, 3)), np.zeros((0, 3)), np.zeros(0, int)), 1 / 3)
    assert knn_vote(np.zeros((0, 3)), KEYS, LABELS).shape == (0, 3)
    assert knn_vote(np.ones((1, 3)), KEYS, LABELS, k=50).shape == (1, 3)  # k > rows


def test_blend_unsure() -> None:
    first, second, vote = np.array([[0.2, 0.2, 0.6]]), np.array([[0.6, 0.2, 0.2]]), np.eye(3)[[1]]
    assert np.allclose(blend_unsure(first, second), [[0.4, 0.2, 0.4]])
    assert np.allclose(blend_unsure(first, second, vote, 0.5), [[0.2, 0.6, 0.2]])
    assert np.allclose(blend_unsure(first, second, vote, 0.0), [[0.4, 0.2, 0.4]])


def test_memory_round_trip_keeps_labels_and_votes(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    keys, labels = rng.normal(size=(200, 16)), rng.integers(0, 3, 200)
    memory = LabelMemory(keys, labels, k=5, temperature=0.05, weight=0.4, encoder_sha="abc")
    memory.save(tmp_path / MEMORY_ARTIFACT, encoder="e5-test")
    back = LabelMemory.load(tmp_path / MEMORY_ARTIFACT)
    assert len(back) == 200 and (back.labels == labels).all()
    assert (back.k, back.temperature, back.weight, back.encoder_sha) == (5, 0.05, 0.4, "abc")
    assert np.allclose(back.keys, memory.keys, atol=0.01)  # int8 per row
    queries = keys[:20] + 0.05 * rng.normal(size=(20, 16))
    assert (back.vote(queries).argmax(1) == memory.vote(queries).argmax(1)).all()
    with pytest.raises(ValueError):
        LabelMemory(keys, labels[:10])


def test_memory_built_with_other_encoder_weights_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "enc.npz").write_bytes(b"weights v1")
    LabelMemory(KEYS, LABELS, encoder_sha=file_sha(tmp_path / "enc.npz")).save(
        tmp_path / MEMORY_ARTIFACT
    )
    assert load_memory(tmp_path, "enc.npz") is not None
    (tmp_path / "enc.npz").write_bytes(b"weights v2")  # the encoder was retrained
    assert load_memory(tmp_path, "enc.npz") is None
    assert load_memory(tmp_path, "missing.npz") is None


class _Vectors:
    """A second model with vectors: each text maps to (vector, probabilities)."""

    def __init__(self, table: dict[str, tuple[list[float], list[float]]]) -> None:
        self.table = table
        self.model_id = "vec"
        self.calls: list[list[str]] = []

    def embed_proba(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        self.calls.append(list(texts))
        rows = [self.table[t] for t in texts]
        return np.array([r[0] for r in rows]).reshape(-1, 3), np.array(
            [r[1] for r in rows]
        ).reshape(-1, 3)

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_proba(texts)[1]


class _First:
    model_id = "first"

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([self.table[t] for t in texts], dtype=np.float32).reshape(-1, 3)


FIRST = _First({"sure": [0.05, 0.05, 0.9], "unsure": [0.4, 0.5, 0.1]})
SECOND = _Vectors(
    {
        "unsure": ([1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),  # vector next to a negative key
        "利好大涨": ([0.0, 0.0, 1.0], [0.0, 0.1, 0.9]),
    }
)
MEMORY = LabelMemory(KEYS, LABELS, k=2, weight=0.5)


def test_cascade_blends_the_memory_vote_into_unsure_items_only() -> None:
    clf = CascadeClassifier(FIRST, SECOND, threshold=0.85, memory=MEMORY)
    out = clf.predict_proba(["sure", "unsure"])
    assert np.allclose(out[0], [0.05, 0.05, 0.9])
    # half the two models' mean [0.2, 0.25, 0.55], half the vote (negative)
    assert np.allclose(out[1], [0.6, 0.125, 0.275], atol=1e-3)
    assert "+mem4" in clf.model_id
    plain = CascadeClassifier(FIRST, SECOND, threshold=0.85)
    assert np.allclose(plain.predict_proba(["unsure"])[0], [0.2, 0.25, 0.55])


def test_router_uses_the_memory_for_english_unsure_items_not_for_chinese() -> None:
    SECOND.calls.clear()
    router = RoutedClassifier(
        CascadeClassifier(FIRST, SECOND, threshold=0.85, memory=MEMORY), SECOND
    )
    out = router.predict_proba(["利好大涨", "sure", "unsure"])
    assert SECOND.calls == [["unsure", "利好大涨"]]  # one shared pass
    assert np.allclose(out[0], [0.0, 0.1, 0.9])  # the Chinese row: e5 alone
    assert np.allclose(out[1], [0.05, 0.05, 0.9])
    assert np.allclose(out[2], [0.6, 0.125, 0.275], atol=1e-3)


def test_committed_memory_matches_the_committed_e5_encoder() -> None:
    """A retrained e5 encoder without a rebuilt memory would silently lose the memory."""
    from kg.sentiment.model import ARTIFACTS, E5_ENCODER_ARTIFACT

    if not (ARTIFACTS / MEMORY_ARTIFACT).exists():
        pytest.skip("label memory not built")
    memory = load_memory(ARTIFACTS, E5_ENCODER_ARTIFACT)
    assert memory is not None and len(memory) > 5000
    assert set(np.unique(memory.labels)) == {0, 1, 2}
    assert memory.keys.shape[1] == 384
