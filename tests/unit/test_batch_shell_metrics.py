"""The batch shell's bulk latency observation counts what one ``observe`` per record
would (no services)."""

from __future__ import annotations

import gc
from datetime import UTC, datetime

import pytest
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from core.metrics import LATENCY_BUCKETS, BulkHistogram
from core.records import IndicatorTick
from streams.processors.base import GC_THRESHOLDS, observe_latencies, relax_gc


def _samples(registry: CollectorRegistry, name: str) -> dict[tuple[str, str], float]:
    """(sample name without the metric's, le) -> value, read through the public API."""
    return {
        (smp.name.removeprefix(name), smp.labels.get("le", "")): smp.value
        for family in registry.collect()
        if family.name == name
        for smp in family.samples
        if not smp.name.endswith("_created")
    }


def test_bulk_latency_observation_equals_one_observe_per_record() -> None:
    registry = CollectorRegistry()
    bulk = BulkHistogram("a", "a", ["agent"], buckets=LATENCY_BUCKETS, registry=registry)
    single = Histogram("b", "b", ["agent"], buckets=LATENCY_BUCKETS, registry=registry)
    now = 1_800_000_000.0
    ages = [0.0, 0.001, 0.0049, 0.005, 0.3, 2.5, 7.0, 10_000.0, -3.0]  # -3: clock skew
    records = [
        IndicatorTick(source="t", indicator_id="X", value=1.0, event_time=datetime.now(UTC),
                      ingest_time=datetime.fromtimestamp(now - age, UTC))
        for age in ages
    ]  # fmt: skip
    observe_latencies(bulk.labels("x"), records, now)
    for r in records:
        single.labels("x").observe(max(now - r.ingest_time.timestamp(), 0.0))
    got, want = _samples(registry, "a"), _samples(registry, "b")
    assert got.keys() == want.keys() and len(got) == len(LATENCY_BUCKETS) + 3
    assert got[("_count", "")] == len(ages) == got[("_bucket", "+Inf")]
    assert abs(got.pop(("_sum", "")) - want.pop(("_sum", ""))) < 1e-6
    assert got == want
    text = generate_latest(registry).decode()
    assert 'a_bucket{agent="x",le="0.005"} 4.0' in text


def test_bulk_histogram_checks_its_labels() -> None:
    hist = BulkHistogram("c", "c", ["lane", "topic"], buckets=(1, 2), registry=None)
    with pytest.raises(ValueError):
        hist.labels("only-one")
    hist.labels("l", "t").observe(1.5)
    assert hist.labels("l", "t").snapshot() == ([0, 1, 0], 1.5)


def test_relax_gc_only_raises_the_young_threshold() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(50_000, 10, 10)
        relax_gc()
        assert gc.get_threshold()[0] == 50_000  # never lowered
        gc.set_threshold(700, 10, 10)
        relax_gc()
        assert gc.get_threshold() == GC_THRESHOLDS
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
