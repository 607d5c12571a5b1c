"""``livekg bench idle``: CPU of each process of an idle embedded stack, and the latency
of the first record once traffic resumes.

A stack of its own (temporary data directory: broker, graph, the embedded model server,
one worker, the API: every process ``livekg up`` starts) is started, the sample day is
NOT replayed, the stack settles (``SETTLE_S``: why 60 s), then each process's
user+system CPU time (children included) is sampled over ``seconds``: percent of one
core. The bar is < 5% per process. Then one tick is produced and the time until its
Observation is in the graph is measured (``resume_ms``); its reference is the same
measurement on the warm stack just before the idle period (``ops.idle_max_pause_ms``
bounds the difference).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil
from confluent_kafka import Producer

from core.records import IndicatorTick
from core.settings import Settings
from kg.graph.queries import cypher
from kg.graph.store import open_store
from ops.runtime import EmbeddedRuntime

IDLE_BAR_PCT = 5.0
# "Once settled": the broker's JVM compiles the idle path (fetches expiring every
# fetch.wait.max.ms) only once traffic stops. Per-thread CPU of the broker after the
# warm-up records (2026-11-26, load 7-10): C1+C2 compiler threads 2.8-4.0% of a core in
# the first 30 s of a 6-7.6% total, <= 1% from ~40 s on (bursts after); network/request
# threads 1.0-1.9%, fetch expiry 0.3-0.9% throughout. 15 s measured the JIT: broker 4.6-6.5%;
# 60 s: 3.9% (docs/operations.md, "The broker").
SETTLE_S = 60.0


def cpu_percent(pids: dict[str, int], seconds: float) -> dict[str, float]:
    procs = {name: psutil.Process(pid) for name, pid in pids.items()}

    def total(p: psutil.Process) -> float:
        t = p.cpu_times()
        children = sum(c.cpu_times().user + c.cpu_times().system for c in p.children(True))
        return t.user + t.system + children

    before = {n: total(p) for n, p in procs.items()}
    time.sleep(seconds)
    return {n: round(100 * (total(p) - before[n]) / seconds, 2) for n, p in procs.items()}


def _first_record_ms(settings: Settings, bootstrap: str, falkordb_url: str, tag: str) -> float:
    tick = IndicatorTick(source="bench-idle", event_time=datetime.now(UTC),
                         indicator_id=f"IDLE{tag}", value=1.0)  # fmt: skip
    prod = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    topic = settings.kafka.topic_prefix + "raw.ticks"

    async def wait() -> float:
        store = open_store(settings, falkordb_url)
        try:
            started = time.perf_counter()
            prod.produce(topic, key=tick.key().encode(), value=tick.model_dump_json().encode())
            prod.flush(10)
            while time.perf_counter() - started < 60:
                rows = await store.query(cypher("observation_by_id"), {"id": tick.id})
                if rows:
                    return (time.perf_counter() - started) * 1000
                await asyncio.sleep(0.005)
            raise TimeoutError("the resumed record never reached the graph")
        finally:
            await store.close()

    return asyncio.run(wait())


def run_idle_bench(
    settle_s: float = SETTLE_S, seconds: float = 30.0, *, llm: bool = True
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="livekg-idle-") as tmp:
        settings = Settings(data_dir=Path(tmp))
        runtime = EmbeddedRuntime(settings)
        try:
            ep = runtime.start_all(workers=1, llm=llm, prometheus=False)
            assert ep.falkordb_url is not None
            _first_record_ms(settings, ep.kafka_bootstrap, ep.falkordb_url, "first")  # warm-up
            warm_ms = _first_record_ms(settings, ep.kafka_bootstrap, ep.falkordb_url, "warm")
            time.sleep(settle_s)
            pids = {name: svc.pid for name, svc in runtime.state.services.items()}
            cpu = cpu_percent(pids, seconds)
            rss = {n: round(psutil.Process(p).memory_info().rss / 2**20, 1)
                   for n, p in pids.items()}  # fmt: skip
            resume_ms = _first_record_ms(settings, ep.kafka_bootstrap, ep.falkordb_url, "idle")
        finally:
            runtime.stop_all()
    worst = max(cpu.values())
    return {
        "bench": "idle",
        "seconds": seconds,
        "processes": sorted(cpu),
        "cpu_pct_of_a_core": cpu,
        "rss_mb": rss,
        # the embedded model server's GGUF (process "llm"), None when started without it
        "llm_model": Settings().llm.local_model if llm else None,
        "max_cpu_pct": worst,
        "bar_pct": IDLE_BAR_PCT,
        "under_bar": worst < IDLE_BAR_PCT,
        "resume_ms": round(resume_ms, 1),
        "reference": {"name": "first_record_ms_when_warm", "value": round(warm_ms, 1)},
        "ratio": round(resume_ms / warm_ms, 3) if warm_ms else None,
    }
