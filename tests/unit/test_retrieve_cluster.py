"""Cluster-based triple retrieval (Chen et al. section 3.2): hand-computed allocations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kg.retrieve.cluster import (
    ClusterCandidate,
    NodeClusters,
    allocate,
    cluster_embeddings,
    round_half_up,
    select,
    softmax,
)


def test_softmax_and_rounding() -> None:
    w = softmax([0.0, math.log(3.0)])  # e^0 : e^ln3 = 1 : 3
    assert w == pytest.approx([0.25, 0.75])
    assert round_half_up(2.5) == 3 and round_half_up(0.5) == 1 and round_half_up(1.49) == 1


def test_allocation_by_softmax_weights() -> None:
    # weights 1:3 -> k=4 gives exactly 1 and 3, no adjustment needed
    counts = allocate({"a": 0.0, "b": math.log(3.0)}, {"a": 10, "b": 10}, 4)
    assert counts == {"a": 1, "b": 3}


def test_equal_scores_round_up_then_trim_to_exactly_k() -> None:
    # three tied clusters, k=4: shares 4/3 each -> rounded 1 each (sum 3) -> one more
    # goes to the tie-break winner (equal weights: the cluster that sorts first)
    counts = allocate({"c": 0.5, "a": 0.5, "b": 0.5}, {"a": 5, "b": 5, "c": 5}, 4)
    assert counts == {"a": 2, "b": 1, "c": 1}
    # two tied clusters, k=3: shares 1.5 -> both round up to 2 (sum 4) -> one removed
    # from the most over-rounded; tied -> the lower weight, then the later name loses
    counts = allocate({"x": 0.2, "y": 0.2}, {"x": 5, "y": 5}, 3)
    assert sum(counts.values()) == 3
    assert counts == {"x": 2, "y": 1}


def test_cluster_smaller_than_its_share_gives_the_rest_away() -> None:
    # weights 1:3 with k=8 -> shares 2 and 6; cluster b holds only 2 candidates,
    # so b gets 2 and a takes the remaining 6 (a has 10)
    counts = allocate({"a": 0.0, "b": math.log(3.0)}, {"a": 10, "b": 2}, 8)
    assert counts == {"a": 6, "b": 2}


def test_fewer_candidates_than_k_returns_all() -> None:
    counts = allocate({"a": 0.9, "b": 0.1}, {"a": 2, "b": 1}, 10)
    assert counts == {"a": 2, "b": 1}
    assert allocate({}, {}, 5) == {}
    assert allocate({"a": 1.0}, {"a": 3}, 0) == {"a": 0}


def test_select_returns_exactly_k_best_per_cluster() -> None:
    # cluster X: scores .9 .8 .7 (mean .8); cluster Y: .5 .4 (mean .45)
    # temperature 0.1: weights softmax([8, 4.5]) = [0.9707, 0.0293]; k=3 -> shares
    # 2.912, 0.088 -> rounded 3, 0 -> X gives its three best, Y none
    cands = [ClusterCandidate(0, 0.9, "X"), ClusterCandidate(1, 0.5, "Y"), ClusterCandidate(2, 0.8, "X"),
             ClusterCandidate(3, 0.7, "X"), ClusterCandidate(4, 0.4, "Y")]  # fmt: skip
    got = select(cands, 3, temperature=0.1)
    assert [c.index for c in got] == [0, 2, 3]
    # plain softmax (temperature 1): weights [0.5866, 0.4134] -> shares 1.76, 1.24
    # -> rounded 2 and 1: X's two best, then Y's best
    got = select(cands, 3)
    assert [c.index for c in got] == [0, 2, 1]
    assert len(select(cands, 5)) == 5 and len(select(cands, 9)) == 5


def test_select_ties_inside_a_cluster_take_the_lower_index() -> None:
    cands = [
        ClusterCandidate(7, 0.5, "X"),
        ClusterCandidate(3, 0.5, "X"),
        ClusterCandidate(5, 0.5, "X"),
    ]
    assert [c.index for c in select(cands, 2)] == [3, 5]


def test_agglomerative_clustering_on_cosine_distance() -> None:
    v = np.array([[1, 0, 0], [0.99, 0.1, 0], [0, 1, 0], [0, 0.98, 0.15], [0, 0, 1]], np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    labels = cluster_embeddings(v, threshold=0.1)
    assert labels[0] == labels[1] and labels[2] == labels[3]
    assert len({int(labels[0]), int(labels[2]), int(labels[4])}) == 3


def test_node_clusters_incremental_then_rebuild() -> None:
    nc = NodeClusters(dim=2, threshold=0.05, rebuild_fraction=10.0)
    a = nc.assign("a", np.array([1.0, 0.0], np.float32))
    b = nc.assign("b", np.array([0.999, 0.04], np.float32) / np.linalg.norm([0.999, 0.04]))
    c = nc.assign("c", np.array([0.0, 1.0], np.float32))
    assert a == b != c and nc.n_clusters == 2
    assert nc.assign("a", np.array([0.0, 1.0], np.float32)) == a  # known node: unchanged
    ids = ["a", "b", "c"]
    vecs = np.array([[1, 0], [0.999, 0.04], [0, 1]], np.float32)
    nc.rebuild(ids, vecs / np.linalg.norm(vecs, axis=1, keepdims=True))
    assert nc.rebuilds == 1 and nc.assigned_since_rebuild == 0
    assert nc.labels["a"] == nc.labels["b"] != nc.labels["c"]
