"""The batch shell's bulk latency observation counts what one ``observe`` per record
would (no services)."""

from __future__ import annotations

import gc
from datetime import UTC, datetime

from prometheus_client import CollectorRegistry, Histogram

from core.metrics import LATENCY_BUCKETS
from core.records import IndicatorTick
from streams.processors.base import GC_THRESHOLDS, observe_latencies, relax_gc


def _state(hist: Histogram) -> tuple[list[float], float]:
    return [b.get() for b in hist._buckets], hist._sum.get()


def test_bulk_latency_observation_equals_one_observe_per_record() -> None:
    registry = CollectorRegistry()
    bulk = Histogram("a", "a", buckets=LATENCY_BUCKETS, registry=registry)
    single = Histogram("b", "b", buckets=LATENCY_BUCKETS, registry=registry)
    now = 1_800_000_000.0
    ages = [0.0, 0.001, 0.0049, 0.005, 0.3, 2.5, 7.0, 10_000.0, -3.0]  # -3: clock skew
    records = [
        IndicatorTick(source="t", indicator_id="X", value=1.0, event_time=datetime.now(UTC),
                      ingest_time=datetime.fromtimestamp(now - age, UTC))
        for age in ages
    ]  # fmt: skip
    observe_latencies(bulk, records, now)
    for r in records:
        single.observe(max(now - r.ingest_time.timestamp(), 0.0))
    (bulk_counts, bulk_sum), (one_counts, one_sum) = _state(bulk), _state(single)
    assert bulk_counts == one_counts and sum(bulk_counts) == len(ages)
    assert abs(bulk_sum - one_sum) < 1e-6


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
