"""Validity chains and instant->daily rollups (pure functions)."""

from __future__ import annotations

import random

from kg.graph.temporal import DAY_MS, ChainUpdate, FactVersion, InstantObs, resolve_chain, rollup


def test_newer_fact_closes_older_one() -> None:
    a = FactVersion("a", 100, None)
    b = FactVersion("b", 200, None)
    assert resolve_chain([a, b]) == [ChainUpdate("a", 200, "b")]


def test_chain_is_order_independent_and_stable() -> None:
    versions = [FactVersion(f"f{i}", t, None) for i, t in enumerate([500, 100, 300, 200])]
    expected = {u.id: (u.valid_to, u.superseded_by) for u in resolve_chain(versions)}
    for _ in range(5):
        random.shuffle(versions)
        got = {u.id: (u.valid_to, u.superseded_by) for u in resolve_chain(versions)}
        assert got == expected
    assert expected == {"f1": (200, "f3"), "f3": (300, "f2"), "f2": (500, "f0")}
    applied = [FactVersion(v.id, v.valid_from, None, *expected.get(v.id, (None, None)))
               for v in versions]  # fmt: skip
    assert resolve_chain(applied) == []  # applying twice changes nothing


def test_stated_end_is_kept_unless_superseded_earlier() -> None:
    a = FactVersion("a", 100, 150)  # ended by the source before b started
    b = FactVersion("b", 200, None)
    assert resolve_chain([a, b]) == [ChainUpdate("a", 150, None)]
    c = FactVersion("c", 100, 900)
    assert resolve_chain([c, b]) == [ChainUpdate("c", 200, "b")]


def test_out_of_order_arrival_reopens_nothing_wrongly() -> None:
    # the latest fact arrives first; the older one must be closed, the newer stays open
    newer = FactVersion("n", 300, None)
    older = FactVersion("o", 100, None)
    assert resolve_chain([newer, older]) == [ChainUpdate("o", 300, "n")]


def test_rollup_daily_ohlc_and_cutoff() -> None:
    d0 = 20_000 * DAY_MS
    obs = [
        InstantObs("a", "CN10Y", 1.80, d0 + 1_000),
        InstantObs("b", "CN10Y", 1.85, d0 + 2_000),
        InstantObs("c", "CN10Y", 1.78, d0 + 3_000),
        InstantObs("d", "CN10Y", 1.81, d0 + DAY_MS + 5),  # next day
        InstantObs("e", "US10Y", 4.10, d0 + 10),
        InstantObs("f", "CN10Y", 1.90, d0 + 2 * DAY_MS),  # not older than the cutoff
    ]
    rows = {r["id"]: r for r in rollup(reversed(obs), cutoff_ms=d0 + 2 * DAY_MS)}
    day = rows["CN10Y@2024-10-04"]
    assert (day["open"], day["high"], day["low"], day["close"]) == (1.80, 1.85, 1.78, 1.78)
    assert day["n"] == 3 and day["obs_ids"] == ["a", "b", "c"]
    assert abs(day["sum"] - 5.43) < 1e-9
    assert rows["CN10Y@2024-10-05"]["n"] == 1
    assert rows["US10Y@2024-10-04"]["close"] == 4.10
    assert all("f" not in r["obs_ids"] for r in rows.values())
