"""``livekg bench all`` discovers benchmarks through one registry; each entry names its
headline figure and the same-run reference it is compared with."""

from __future__ import annotations

import pytest

from ops.bench import registry
from ops.cli.bench_all import _run_bench


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
