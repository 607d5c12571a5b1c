"""``livekg bench all`` discovers benchmarks through one registry; each entry names its
headline figure and the same-run reference it is compared with."""

from __future__ import annotations

import pytest

from cli.bench_all import _run_bench
from evaluation.bench import registry


def test_the_issue_benchmarks_are_registered_with_a_reference() -> None:
    wanted = {"pipeline", "replay", "kg", "llm", "embed", "sentiment", "extract", "retrieve",
              "serve"}  # fmt: skip
    assert wanted <= set(registry.BENCHES)
    for entry in registry.BENCHES.values():
        assert entry.figure
        assert entry.reference in (*registry.REFERENCES, None)
    assert registry.BENCHES["kg"].reference is None  # bench kg measures its own


def test_an_unknown_reference_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown reference"):
        registry.register("x", figure="y", reference="vibes")
    assert "x" not in registry.BENCHES


def test_a_bench_not_merged_yet_is_missing_not_failed() -> None:
    out = _run_bench("no-such-bench", (), timeout=120)
    assert out["ok"] is False and out.get("missing") is True


def test_bench_all_carries_same_work_and_raw_ratios() -> None:
    from cli.bench_all import compare

    own = registry.BenchEntry("kg", (), "triples_per_s", None)
    run = {"reference": {"name": "same_work", "value": 200.0}, "ratio": 0.5,
           "raw_reference": {"name": "raw_merge", "value": 1000.0}, "raw_ratio": 0.1}  # fmt: skip
    row = compare(own, 100.0, run, {})
    assert row["ratio"] == 0.5 and row["raw_ratio"] == 0.1
    assert row["reference"]["value"] == 200.0 and row["raw_reference"]["name"] == "raw_merge"
    # same-work reference of its own, raw one measured by bench all
    pipe = registry.BenchEntry("pipeline", (), "events_per_s", None, raw="broker")
    row = compare(pipe, 300.0, {"reference": {"name": "x", "value": 400.0}},
                  {"broker": {"value": 1200.0}})  # fmt: skip
    assert row["ratio"] == 0.75 and row["raw_ratio"] == 0.25
    # one registry reference only: it is both
    emb = registry.BenchEntry("embed", (), "texts_per_s", "encoder")
    row = compare(emb, 50.0, {}, {"encoder": {"value": 100.0}})
    assert row["ratio"] == row["raw_ratio"] == 0.5
    assert compare(emb, None, {}, {"encoder": {"value": 100.0}})["ratio"] is None


def test_process_names_for_peak_rss() -> None:
    from evaluation.bench.rss import process_name

    py = "/x/.venv/bin/python"
    assert process_name([py, "-m", "cli.main", "bench", "kg", "--json"], "p") == "bench kg"
    assert process_name([py, "-m", "streams.worker"], "p") == "streams.worker"
    assert process_name(["/usr/bin/redis-server", "*:6379"], "p") == "redis-server"
    assert process_name(["/x/redis-server 127.0.0.1:43409"], "p") == "redis-server"
    java = ["/usr/lib/jvm/bin/java", "-Xmx512m", "-cp", "a.jar", "kafka.Kafka", "server.props"]
    assert process_name(java, "java") == "java Kafka"
    assert process_name([], "zombie") == "zombie"


def test_rss_sampler_sees_the_process_tree() -> None:
    import subprocess
    import sys

    from evaluation.bench.rss import RssSampler

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        sampler = RssSampler(child.pid)
        sampler.sample()
        out = sampler.result()
        assert out["peak_total_rss_mb"] > 1 and len(out["peak_rss_mb"]) == 1
    finally:
        child.kill()
        child.wait()
