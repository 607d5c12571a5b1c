"""A real Prometheus (the binary ``livekg up`` starts, same config code and alert rules)
scrapes a real worker after traffic: every metric documented for the worker in
docs/operations.md is there with sane values. Skipped where Prometheus is absent."""

from __future__ import annotations

import re
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from core.records import IndicatorTick
from core.runtime_state import Endpoints
from ops import prometheus as prom
from ops.runtime import free_port, http_ready, spawn_worker, stop_pid, wait_until
from tests.conftest import Isolated
from tests.integration.streamkit import produce

DOC = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
pytestmark = pytest.mark.skipif(prom.binary() is None, reason="no `prometheus` binary on PATH")
N_TICKS = 400


def documented_worker_metrics() -> list[str]:
    rows = re.findall(
        r"^\| `(livekg_[a-z0-9_]+)` \| (\w+) \| [^|]* \| worker \|", DOC.read_text(), re.M
    )
    assert len(rows) >= 10, "the metric table in docs/operations.md changed shape"
    suffix = {"counter": "_total", "histogram": "_count"}
    return [name if name.endswith(suffix.get(kind, "")) else name + suffix.get(kind, "")
            for name, kind in rows]  # fmt: skip


def ticks() -> list[IndicatorTick]:
    base = datetime(2026, 5, 1, tzinfo=UTC)
    return [
        IndicatorTick(source="test", event_time=base + timedelta(minutes=i),
                      indicator_id=f"IND{i % 4}", value=1.0 + i / 100, unit="%")
        for i in range(N_TICKS)
    ]  # fmt: skip


def query(url: str, expr: str) -> list[dict]:
    r = httpx.get(f"{url}/api/v1/query", params={"query": expr}, timeout=10)
    r.raise_for_status()
    return r.json()["data"]["result"]


def value(url: str, expr: str) -> float | None:
    res = query(url, expr)
    return float(res[0]["value"][1]) if res else None


def test_prometheus_scrapes_every_documented_worker_metric(iso: Isolated, tmp_path: Path) -> None:
    settings = iso.settings.with_overrides(
        streams={"processors": ["graph_sink", "indicator_alerts"]}, ops={"lag_interval_s": 1.0}
    )
    ep = Endpoints(kafka_bootstrap=iso.bootstrap, falkordb_url=iso.falkordb_url)
    produce(iso.bootstrap, iso.topic("raw.ticks"), ticks())
    produce(iso.bootstrap, iso.topic("raw.ticks"), [b"{not json"])  # one dead letter
    proc, port = spawn_worker(settings, ep, tmp_path / "worker")
    data = tmp_path / "prometheus"
    cfg = prom.write_config(data, scrape_interval_s=1)
    prom.write_targets(data, "livekg-worker", [port])
    web = free_port()
    server = subprocess.Popen(prom.command(prom.binary() or "", cfg, data, web),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    url = f"http://127.0.0.1:{web}"
    try:
        wait_until(lambda: http_ready(f"{url}/-/ready"), "Prometheus", timeout=90)
        wanted = documented_worker_metrics()
        deadline = time.monotonic() + 120
        missing = wanted
        while time.monotonic() < deadline:
            written = value(url, 'sum(livekg_graph_rows_written_total{kind="tick"})') or 0
            missing = [m for m in wanted if not query(url, m)]
            lag = value(url, 'max(livekg_consumer_lag{topic=~".*raw.ticks"})')
            if written >= N_TICKS and not missing and lag == 0:
                break
            time.sleep(1)
        assert not missing, f"not scraped: {missing}"
        # sane values after the traffic
        assert value(url, 'sum(livekg_events_in_total{agent="tick_sink"})') == N_TICKS + 1
        assert value(url, 'sum(livekg_graph_rows_written_total{kind="tick"})') == N_TICKS
        assert value(url, 'sum(livekg_dlq_total{agent="tick_sink"})') == 1
        assert value(url, 'max(livekg_consumer_lag{topic=~".*raw.ticks"})') == 0
        assert value(url, "max(livekg_agent_halted)") == 0
        assert value(url, 'livekg_up{component="worker"}') == 1
        assert value(url, 'up{job="livekg-worker"}') == 1
        assert (value(url, 'sum(livekg_graph_query_seconds_count{mode="write"})') or 0) > 0
        p99 = value(url, "histogram_quantile(0.99, sum by (le) (livekg_batch_seconds_bucket))")
        assert p99 is not None and 0 < p99 < 30
        rules = httpx.get(f"{url}/api/v1/rules", timeout=10).json()["data"]["groups"]
        assert {r["name"] for g in rules for r in g["rules"]} >= {"LivekgWorkerDown"}
    finally:
        server.terminate()
        server.wait(10)
        stop_pid(proc.pid)
