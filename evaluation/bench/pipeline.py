"""``livekg bench pipeline``: synthetic events through broker -> normalize -> graph sink.

A real worker process (``python -m streams.worker``) runs against the configured or
embedded broker and graph, on topics and a graph of its own (a unique prefix), so a
running stack is not disturbed. Two phases:

* burst: N events produced as fast as possible; ``events_per_s`` is N divided by the
  time from the first produce until the last event is in the graph.
* steady: events at a fixed rate (default 1,000/s); ``p50_ms``/``p99_ms`` are the
  produce-to-graph latencies (graph ``written_at`` minus the record's ``ingest_time``,
  stamped when it was produced).

Same-work reference (``ratio``): the burst's records again, consumed by one bare
librdkafka consumer and written with the sinks' own statements over the bare FalkorDB
client (``same_work_rate``). Raw reference (``raw_ratio``): the same count of records
through the broker alone, bare producer and consumer (``raw_kafka_reference``; the
broker's kind and version beside it). One worker: the figures are per worker.
"""

from __future__ import annotations

import asyncio
import gc
import os
import re
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import orjson
import psutil
from confluent_kafka import Consumer, Producer

from connectors.replay import producer
from core.records import CleanDocument, IndicatorTick, RawNews, Record
from core.runtime_state import Endpoints, read_state
from core.settings import Settings
from evaluation.bench.reference import bare_falkordb_runner, broker_rate
from evaluation.bench.rounds import alternate, medians
from evaluation.bench.rss import RssSampler
from kg.graph import sink
from kg.graph.queries import cypher
from kg.graph.store import GraphStore, open_store
from ops.runtime import spawn_worker, stop_pid
from streams.admin import create_topics
from streams.lag import LagProbe
from streams.normalize import normalize

INDICATORS = ["CN10Y", "CN1Y", "SHIBOR_ON", "SHIBOR_3M", "DR007", "US10Y", "US2Y", "US5Y"]
TICKERS = ["AAPL", "MSFT", "NVDA", "JPM", "TSLA", "600519.SH", "601398.SH", "000001.SZ"]


@dataclass
class Phase:
    events: int
    seconds: float
    latencies_ms: np.ndarray


def synthetic_events(n: int, mix: str, seed: int = 0) -> list[Record]:
    """``mix``: docs (news through normalize), ticks (straight to the graph) or mixed."""
    base = datetime(2026, 1, 1, tzinfo=UTC)
    out: list[Record] = []
    for i in range(n):
        is_doc = mix == "docs" or (mix == "mixed" and i % 2 == 0)
        t = base + timedelta(milliseconds=seed * 10_000_000 + i)
        if is_doc:
            ticker = TICKERS[i % len(TICKERS)]
            out.append(
                RawNews(
                    id=f"n{seed}-{i}",
                    source="bench",
                    event_time=t,
                    title=f"${ticker.split('.')[0]} headline {i}: yields and earnings in focus",
                    body="Synthetic benchmark body text about bonds, rates and earnings.",
                    entities=[ticker],
                )
            )
        else:
            out.append(
                IndicatorTick(
                    id=f"t{seed}-{i}",
                    source="bench",
                    event_time=t,
                    indicator_id=INDICATORS[i % len(INDICATORS)],
                    value=2.0 + (i % 100) / 1000,
                    unit="%",
                )
            )
    return out


def produce_stamped(
    prod: Producer, prefix: str, records: Sequence[Record], rate: float | None
) -> dict[str, float | int]:
    """Produce at ``rate``/s (None: as fast as possible), each record's ``ingest_time``
    stamped at send time (the latency's start).

    One producer serves every phase and is connected by the warm-up, so its own start
    (metadata, connections) is not counted as pipeline latency. Paced, the bench's own
    collector is off (its collections of 30-52 ms near the steady phase's start held the
    pacer), and the pacer reports on itself: how late its sends fell behind their due
    time at most, and how many were over 5 ms late (each lag ends in a catch-up burst:
    the bench's noise, not the pipeline's; fifth round, docs/benchmarks.md).
    """
    topics = {
        RawNews: f"{prefix}raw.news",
        IndicatorTick: f"{prefix}raw.ticks",
        CleanDocument: f"{prefix}docs.clean",
    }
    collector = bool(rate) and gc.isenabled()
    if collector:
        gc.disable()
    late_max, late_n = 0.0, 0
    started = time.perf_counter()
    try:
        for n, rec in enumerate(records, 1):
            if rate:
                late = time.perf_counter() - started - (n - 1) / rate
                late_max, late_n = max(late_max, late), late_n + (late > 0.005)
            rec.ingest_time = datetime.now(UTC)
            value = rec.__pydantic_serializer__.to_json(rec)
            while True:
                try:
                    prod.produce(topics[type(rec)], key=rec.key().encode(), value=value)
                    break
                except BufferError:
                    prod.poll(0.01)
            if rate:
                ahead = n / rate - (time.perf_counter() - started)
                if ahead > 0.001:
                    prod.poll(0)
                    time.sleep(ahead)
            elif n % 5000 == 0:
                prod.poll(0)
    finally:
        if collector:
            gc.enable()
    if prod.flush(60):
        raise RuntimeError("benchmark producer could not deliver every event")
    return {"max_late_ms": round(late_max * 1000, 1), "late_over_5ms": late_n} if rate else {}


async def _count(store: GraphStore) -> int:
    """Events in the graph: label counts are cheap (the run has a graph of its own)."""
    total = 0
    for label in ("Observation", "Document"):
        rows = await store.query(cypher("label_count", label=label))
        total += int(rows[0]["c"]) if rows else 0
    return total


async def _wait_for(store: GraphStore, target: int, limit_s: float) -> float:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if await _count(store) >= target:
            return time.perf_counter()
        await asyncio.sleep(0.02)
    raise TimeoutError(f"only {await _count(store)} of {target} events reached the graph")


def wait_drained(settings: Settings, ep: Endpoints, limit_s: float = 30.0) -> float | None:
    """Seconds until every lane's group has committed up to the log end of the bench's
    input topics (raw.news, raw.ticks, docs.clean): the burst fully done (outputs
    acknowledged, offsets committed), not only in the graph, so that the steady phase
    does not measure the burst's tail. None if it was not within ``limit_s``."""
    prefix = settings.kafka.topic_prefix
    topics = [f"{prefix}{t}" for t in ("raw.news", "raw.ticks", "docs.clean")]
    groups = {f"{settings.kafka.consumer_group}.{lane}": topics
              for lane in sorted(set(settings.streams.lanes.values()))}  # fmt: skip
    probe = LagProbe(ep.kafka_bootstrap, groups)
    started = time.monotonic()
    try:
        while time.monotonic() - started < limit_s:
            if not any(probe.measure().values()):
                return round(time.monotonic() - started, 3)
            time.sleep(0.05)
        return None
    finally:
        probe.close()


async def _latencies(store: GraphStore, since_ms: int) -> dict[str, np.ndarray]:
    """Per node label, one row per event since ``since_ms``: (produced at, epoch ms;
    produce-to-graph latency, ms). ``Observation``: ticks, one hop; ``Document``: news,
    raw.news -> normalize -> docs.clean -> document sink, two hops."""
    out: dict[str, np.ndarray] = {}
    for label in ("Observation", "Document"):
        rows = await store.query(
            cypher("label_write_lags", label=label),
            {"since": since_ms},
        )
        out[label] = np.array([(r["i"], r["l"]) for r in rows], dtype=np.float64).reshape(-1, 2)
    return out


def tail_windows(
    produced_ms: np.ndarray, latency_ms: np.ndarray, window_ms: float = 100.0
) -> dict[str, Any]:
    """Where the slowest 1% came from: how many ``window_ms`` windows of production time
    hold them, and the fullest one (seconds into the phase). A few full windows = one
    stall that hit every event in flight (a pause of the broker, the worker or the
    graph); many windows of one or two = a tail spread over the run (queueing)."""
    if not latency_ms.size:
        return {"n": 0}
    p99 = float(np.percentile(latency_ms, 99))
    slow = latency_ms >= p99
    start = float(produced_ms.min())
    windows = ((produced_ms[slow] - start) // window_ms).astype(np.int64)
    ids, counts = np.unique(windows, return_counts=True)
    top = int(np.argmax(counts))
    return {
        "n": int(slow.sum()),
        "windows": int(ids.size),
        "window_ms": window_ms,
        "fullest_at_s": round(float(ids[top]) * window_ms / 1000, 2),
        "fullest_n": int(counts[top]),
        "in_fullest_3": int(np.sort(counts)[-3:].sum()),
    }


def broker_gc_log(pid: int | None) -> str | None:
    """The GC log named on the broker JVM's command line (``ops/kafka_server.py``)."""
    try:
        for arg in psutil.Process(pid).cmdline() if pid else ():
            if arg.startswith("-Xlog:gc:file="):
                return arg.split("=", 1)[1].split(":", 1)[0]
    except psutil.Error:
        return None
    return None


def gc_pauses(log_path: str | None, since: float, until: float) -> dict[str, Any]:
    """A JVM's collector pauses between two wall times (epoch s), from its ``-Xlog:gc``
    file: count, longest and total ms ({} without a log)."""
    if not log_path or not os.path.exists(log_path):
        return {}
    pauses = []
    with open(log_path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = _GC_PAUSE.match(line)
            if m:
                at = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
                if since <= at <= until:
                    pauses.append(float(m.group(2)))
    return {"n": len(pauses), "max_ms": round(max(pauses, default=0.0), 1),
            "total_ms": round(sum(pauses), 1)}  # fmt: skip


def _percentiles(lat: np.ndarray) -> dict[str, float | int | None]:
    if not lat.size:
        return {"n": 0, "p50_ms": None, "p99_ms": None, "max_ms": None}
    return {
        "n": int(lat.size),
        "p50_ms": round(float(np.percentile(lat, 50)), 2),
        "p99_ms": round(float(np.percentile(lat, 99)), 2),
        "max_ms": round(float(lat.max()), 2),
    }


_BATCH_METRICS = ("livekg_batch_seconds_sum", "livekg_batch_seconds_count",
                  "livekg_batch_size_sum", "livekg_lane_ack_wait_seconds_total")  # fmt: skip


_FETCH_DELAY = "livekg_lane_fetch_delay_seconds"
# a -Xlog:gc line: [2026-11-26T05:41:02.261+0000][9.445s] GC(4) Pause Young (...) ... 20.583ms
_GC_PAUSE = re.compile(r"\[([^\]]+)\]\[[^\]]*\] GC\(\d+\) Pause .* ([\d.]+)ms$")


def _label(rest: str, name: str) -> str:
    return rest.split(f'{name}="', 1)[1].split('"', 1)[0] if f'{name}="' in rest else ""


async def _batch_metrics(url: str | None) -> dict[tuple[str, str], float]:
    """(metric, agent) -> value of the worker's batch histograms, and
    (fetch delay metric, "topic le") -> cumulative bucket count of the lane's fetch delay
    ({} if unreachable)."""
    if not url:
        return {}
    try:
        async with httpx.AsyncClient(timeout=5) as client:
            text = (await client.get(url)).text
    except httpx.HTTPError:
        return {}
    out: dict[tuple[str, str], float] = {}
    for line in text.splitlines():
        name, _, rest = line.partition("{")
        if name in _BATCH_METRICS and 'agent="' in rest:
            out[(name, _label(rest, "agent"))] = float(line.rsplit(" ", 1)[1])
        elif name in (f"{_FETCH_DELAY}_bucket", f"{_FETCH_DELAY}_sum"):
            key = f"{_label(rest, 'topic')} {_label(rest, 'le') or 'sum'}"
            out[(_FETCH_DELAY, key)] = float(line.rsplit(" ", 1)[1])
    return out


_WORKER_COUNTERS = ("livekg_events_in_total", "livekg_graph_errors_total",
                    "livekg_agent_errors_total")  # fmt: skip


async def _worker_counters(url: str) -> dict[str, float]:
    """One worker's counters: events consumed from the raw topics (``in``: each bench
    event once, whichever agent took it), graph errors by kind (``graph_transient``,
    ``graph_conflict``: retried attempts) and agent errors by kind ({} if unreachable)."""
    try:
        async with httpx.AsyncClient(timeout=5) as client:
            text = (await client.get(url)).text
    except httpx.HTTPError:
        return {}
    out: dict[str, float] = {}
    for line in text.splitlines():
        name, _, rest = line.partition("{")
        if name not in _WORKER_COUNTERS:
            continue
        value = float(line.rsplit(" ", 1)[1])
        if name == "livekg_events_in_total":
            if _label(rest, "topic").endswith(("raw.news", "raw.ticks")):
                out["in"] = out.get("in", 0.0) + value
        elif name == "livekg_graph_errors_total":
            key = f"graph_{_label(rest, 'kind')}"
            out[key] = out.get(key, 0.0) + value
        else:
            key = f"agent_{_label(rest, 'kind')}"
            out[key] = out.get(key, 0.0) + value
    return out


async def _all_counters(urls: Sequence[str]) -> list[dict[str, float]]:
    return list(await asyncio.gather(*(_worker_counters(u) for u in urls)))


def _per_worker(
    before: Sequence[dict[str, float]],
    after: Sequence[dict[str, float]],
    cpu: dict[str, float],
    seconds: float,
) -> list[dict[str, Any]]:
    """Each worker's share of a phase: events it consumed, its events/s over the phase's
    wall time, its CPU and events per CPU-second (per-worker rate on a core of its own)."""
    rows = []
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        n = a.get("in", 0.0) - b.get("in", 0.0)
        c = cpu.get(f"worker{i}") if len(before) > 1 else cpu.get("worker")
        rate = round(n / seconds, 1) if seconds else None
        per_cpu = round(n / c, 1) if c else None
        rows.append({"worker": i, "events": int(n), "events_per_s": rate, "cpu_s": c,
                     "events_per_cpu_s": per_cpu})  # fmt: skip
    return rows


def _diff(before: Sequence[dict[str, float]], after: Sequence[dict[str, float]]) -> dict[str, int]:
    """Error counters over the run, summed over the workers (``in`` left out)."""
    out: dict[str, int] = {}
    for b, a in zip(before, after, strict=True):
        for k, v in a.items():
            if k != "in" and v - b.get(k, 0.0):
                out[k] = out.get(k, 0) + int(v - b.get(k, 0.0))
    return out


async def _by_id(store: GraphStore, expected: set[str]) -> dict[str, int]:
    """The run's events in the graph by id: lost (expected, absent) and duplicated
    (nodes sharing an id: an event written twice)."""
    found: list[str] = []
    for label in ("Observation", "Document"):
        rows = await store.query(cypher("label_ids", label=label))
        found += [r["id"] for r in rows]
    distinct = set(found)
    return {"expected": len(expected), "in_graph": len(distinct & expected),
            "lost": len(expected - distinct), "duplicated": len(found) - len(distinct)}  # fmt: skip


def _fetch_delays(
    before: dict[tuple[str, str], float], after: dict[tuple[str, str], float]
) -> dict[str, dict[str, float | int | None]]:
    """Per topic, over the steady phase: records the lane fetched, their mean delay from
    the producer's timestamp to the fetch, and the bucket bounds (ms) under which 50%
    and 99% of them fell (the histogram's resolution: 1, 2.5, 5, 10, 25, 50, 100, 250..)."""
    per: dict[str, dict[str, float]] = {}
    for (name, key), value in after.items():
        if name == _FETCH_DELAY:
            topic, le = key.rsplit(" ", 1)
            per.setdefault(topic, {})[le] = value - before.get((name, key), 0.0)
    out: dict[str, dict[str, float | int | None]] = {}
    for topic, buckets in per.items():
        n = buckets.get("+Inf", 0.0)
        if n <= 0:
            continue
        bounds = sorted((float(le), c) for le, c in buckets.items() if le not in ("+Inf", "sum"))

        def under(q: float, bounds=bounds, n=n) -> float | None:
            return next((round(b * 1000, 1) for b, c in bounds if c >= q * n), None)

        out[topic] = {"n": int(n), "mean_ms": round(1000 * buckets.get("sum", 0.0) / n, 1),
                      "p50_under_ms": under(0.5), "p99_under_ms": under(0.99)}  # fmt: skip
    return out


def _batch_diff(
    before: dict[tuple[str, str], float], after: dict[tuple[str, str], float]
) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for (name, agent), value in after.items():
        if name != "livekg_batch_seconds_count":
            continue
        n = value - before.get((name, agent), 0.0)
        if n <= 0:
            continue
        secs = after.get(("livekg_batch_seconds_sum", agent), 0.0) - before.get(
            ("livekg_batch_seconds_sum", agent), 0.0
        )
        size = after.get(("livekg_batch_size_sum", agent), 0.0) - before.get(
            ("livekg_batch_size_sum", agent), 0.0
        )
        waited = after.get(("livekg_lane_ack_wait_seconds_total", agent), 0.0) - before.get(
            ("livekg_lane_ack_wait_seconds_total", agent), 0.0
        )
        out[agent] = {"batches": int(n), "mean_size": round(size / n, 1),
                      "mean_ms": round(1000 * secs / n, 2),
                      # stopped while MAX_UNACKED batches awaited acknowledgement
                      "ack_wait_ms": round(1000 * waited, 1)}  # fmt: skip
    return out


def cpu_pressure_us() -> float | None:
    """Linux pressure stall information: microseconds in which at least one runnable task
    waited for a CPU (``/proc/pressure/cpu``, ``some total``); None where unavailable."""
    try:
        with open("/proc/pressure/cpu", encoding="ascii") as fh:
            first = fh.readline().split()
    except OSError:
        return None
    return next((float(f[6:]) for f in first if f.startswith("total=")), None)


def _cpu_seconds(pids: dict[str, int]) -> dict[str, float]:
    """User+system CPU of each process and its children (noida-db runs a child binary)."""
    out: dict[str, float] = {}
    for name, pid in pids.items():
        try:
            procs = [psutil.Process(pid)]
            procs += procs[0].children(recursive=True)
            out[name] = sum(p.cpu_times().user + p.cpu_times().system for p in procs)
        except psutil.Error:
            continue
    return out


def run_pipeline_bench(
    base: Settings,
    ep: Endpoints,
    *,
    events: int,
    rate: float,
    steady_events: int,
    mix: str,
    timeout: float = 600.0,
    same_work: bool = True,
    workers: int = 1,
    rounds: int = 3,
    partitions: int | None = None,
) -> dict[str, Any]:
    """The pipeline's burst and steady phases, then (``same_work``) ``rounds`` rounds of
    a pipeline burst and the same-work reference (``same_work_rate``), the order
    alternating (``evaluation.bench.rounds``; the first round's burst is the timed one):
    ``ratio`` is the median of the rounds' ratios (one pair swung 0.35-1.78 on the shared
    machine: each side of it is a 5,000-event burst of 0.3-1.2 s).

    ``workers`` > 1: that many worker processes in one consumer group (the capacity
    model's check); ``ratio`` stays against the one-consumer reference, so it is no
    longer a per-worker figure, and ``burst_cpu_s`` has each worker's CPU; ``per_worker``
    has each worker's events, events/s and events per CPU-second in the burst.

    On Neo4j (``ep.neo4j_uri``: a private server, ``livekg bench pipeline --graph neo4j``)
    the same-work reference is left out (it writes through the bare FalkorDB client), and
    ``graph_retries`` counts the workers' retried graph attempts (transient errors such as
    lock waits and deadlocks, and MERGE conflicts). Every run ends with ``by_id``: each
    event it produced looked up in the graph by id, lost and duplicated."""
    tag = uuid.uuid4().hex[:8]
    graph: dict[str, Any] = {"graph_name": f"bench_{tag}"}
    if ep.neo4j_uri:  # the local Neo4j: its workers get its address, not runtime.json's
        graph |= {"backend": "neo4j", "neo4j_uri": ep.neo4j_uri}
        same_work = False
    kafka: dict[str, Any] = {"topic_prefix": f"bench{tag}.", "consumer_group": f"bench{tag}"}
    if partitions:
        kafka["topic_partitions"] = partitions
    settings = base.with_overrides(
        kafka=kafka,
        graph=graph,
        streams={"processors": ["normalize", "graph_sink"]},  # the path under test only
    )
    create_topics(
        ep.kafka_bootstrap,
        partitions=settings.kafka.topic_partitions,
        prefix=settings.kafka.topic_prefix,
    )
    with tempfile.TemporaryDirectory(prefix="livekg-bench-") as tmp:
        procs = [spawn_worker(settings, ep, Path(tmp) / f"w{i}") for i in range(max(workers, 1))]
        proc, port = procs[0]
        if workers <= 1:
            pids = {"worker": proc.pid}
        else:
            pids = {f"worker{i}": p.pid for i, (p, _) in enumerate(procs)}
        state = read_state(base.state_file)
        for name in ("broker", "graph"):
            svc = state.services.get(name) if state else None
            if svc is not None:
                pids[name] = svc.pid
        sampler = RssSampler(proc.pid, every=0.2)  # the first worker's process tree
        sampler.start()
        try:
            result = asyncio.run(
                _phases(
                    settings,
                    ep,
                    events=events,
                    rate=rate,
                    steady_events=steady_events,
                    mix=mix,
                    limit_s=timeout,
                    sampler=sampler,
                    pids=pids,
                    metrics_url=f"http://127.0.0.1:{port}/metrics",
                    worker_urls=[f"http://127.0.0.1:{p}/metrics" for _, p in procs],
                    settle_s=5.0 if workers > 1 else 0.0,
                    rounds=rounds if same_work else 0,
                    reference=lambda: same_work_rate(
                        settings, ep, synthetic_events(events, mix, seed=1), timeout=timeout
                    ),
                )
            )
        finally:
            sampler.done.set()
            for p, _ in procs:
                stop_pid(p.pid)
    result["workers"] = max(workers, 1)
    result["graph"] = settings.graph.backend.value
    hop = raw_hop_latency(ep, min(steady_events, 5000), rate, settings.kafka.topic_partitions)
    result["latency_reference"] = hop
    if hop.get("p99_ms") and result.get("p99_ms") is not None:
        result["p99_over_raw_hop"] = round(result["p99_ms"] / hop["p99_ms"], 2)
    result["raw_reference"] = raw_kafka_reference(base, ep, events)
    raw = result["raw_reference"]["value"]
    result["raw_ratio"] = round(result["events_per_s"] / raw, 4) if raw else None
    rows = result.pop("same_work_rows")
    if not same_work:
        return result
    return result | combine_rounds(rows)


def _round(row: dict[str, Any]) -> dict[str, Any]:
    rate_, ref = row["pipeline"]["events_per_s"], row["same_work"].get("events_per_s")
    return {"events_per_s": round(rate_, 1), "same_work_events_per_s": ref,
            "ratio": round(rate_ / ref, 4) if ref else None, "first": row["first"]}  # fmt: skip


def combine_rounds(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The rounds (``rounds.alternate``: ``pipeline``, ``same_work``, ``first``) ->
    ``same_work`` (the last reference run), ``same_work_rounds`` (each round),
    ``reference`` (median same-work rate) and ``ratio`` (median of the rounds' ratios;
    rounds whose reference failed are left out)."""
    kept = [_round(r) for r in rows]
    mid = medians(kept, ("same_work_events_per_s", "ratio"))
    ref = mid["same_work_events_per_s"]
    return {
        "same_work": rows[-1]["same_work"] if rows else {},
        "same_work_rounds": kept,
        "reference": {
            "name": "same_work_events_per_s",
            "what": "raw consume + the same graph write, one consumer, same broker and graph "
            "(median of the rounds, the order alternating)",
            "value": round(ref, 1) if ref else None,
        },
        "ratio": mid["ratio"],
    }


async def _phases(
    settings: Settings,
    ep: Endpoints,
    *,
    events: int,
    rate: float,
    steady_events: int,
    mix: str,
    limit_s: float,
    sampler: RssSampler,
    pids: dict[str, int],
    metrics_url: str | None = None,
    worker_urls: Sequence[str] = (),
    settle_s: float = 0.0,
    rounds: int = 0,
    reference: Callable[[], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """``settle_s``: after the warm-up, time for every worker to join the group and a
    second warm-up, so no rebalance falls inside the timed burst. ``rounds``: after the
    steady phase, that many rounds of a pipeline burst (the first round's: the timed one
    before the steady phase) and a run of ``reference`` (the same-work burst), the order
    alternating, every pass once the lanes have committed what came before."""
    store = open_store(settings, ep.falkordb_url)
    prefix = settings.kafka.topic_prefix
    prod = producer(ep.kafka_bootstrap, **{"linger.ms": 2})
    produced: set[str] = set()  # the graph ids of every event of the run

    def ids_of(records: Sequence[Record]) -> list[Record]:
        produced.update(
            normalize(r).id if isinstance(r, RawNews) else r.id  # type: ignore[arg-type]
            for r in records
        )
        return list(records)

    try:
        counters0 = await _all_counters(worker_urls)
        # warm-up: the worker has joined its group and written once
        warm = ids_of(synthetic_events(50, mix, seed=9))
        await asyncio.to_thread(produce_stamped, prod, prefix, warm, None)
        await _wait_for(store, len(warm), limit_s=120)
        done = len(warm)
        if settle_s:
            await asyncio.sleep(settle_s)
            warm = ids_of(synthetic_events(50, mix, seed=8))
            await asyncio.to_thread(produce_stamped, prod, prefix, warm, None)
            await _wait_for(store, done + len(warm), limit_s=120)
            done += len(warm)

        burst = ids_of(synthetic_events(events, mix, seed=1))
        cpu0 = _cpu_seconds(pids)
        burst0 = await _all_counters(worker_urls)
        t0 = time.perf_counter()
        await asyncio.to_thread(produce_stamped, prod, prefix, burst, None)
        t1 = await _wait_for(store, done + events, limit_s)
        done += events
        burst_s = t1 - t0
        cpu1 = _cpu_seconds(pids)
        burst1 = await _all_counters(worker_urls)
        cpu = {k: round(cpu1[k] - cpu0[k], 3) for k in cpu1 if k in cpu0}
        worker_cpu = sum(v for k, v in cpu.items() if k.startswith("worker"))
        drain_s = await asyncio.to_thread(wait_drained, settings, ep)

        steady = ids_of(synthetic_events(steady_events, mix, seed=2))
        since_ms = int(time.time() * 1000)
        since = time.time()
        pressure0 = cpu_pressure_us()
        batches0 = await _batch_metrics(metrics_url)
        steady_cpu0 = _cpu_seconds(pids)
        pacer = await asyncio.to_thread(produce_stamped, prod, prefix, steady, rate)
        await _wait_for(store, done + steady_events, limit_s)
        done += steady_events
        until = time.time()
        pressure1 = cpu_pressure_us()
        steady_cpu1 = _cpu_seconds(pids)
        batches1 = await _batch_metrics(metrics_url)
        steady_batches = _batch_diff(batches0, batches1)
        steady_fetch = _fetch_delays(batches0, batches1)
        by_label = await _latencies(store, since_ms)
        rows = np.concatenate(list(by_label.values()))
        lat = rows[:, 1]

        async def pipeline_pass(i: int) -> dict[str, Any]:
            """Round 0: the timed burst above; later rounds: a burst of their own."""
            nonlocal done
            if not i:
                return {"events_per_s": events / burst_s}
            await asyncio.to_thread(wait_drained, settings, ep)
            more = ids_of(synthetic_events(events, mix, seed=20 + i))
            b0 = time.perf_counter()
            await asyncio.to_thread(produce_stamped, prod, prefix, more, None)
            t = await _wait_for(store, done + events, limit_s)
            done += events
            return {"events_per_s": events / (t - b0)}

        async def reference_pass(_i: int) -> dict[str, Any]:
            await asyncio.to_thread(wait_drained, settings, ep)
            return await asyncio.to_thread(reference)  # type: ignore[arg-type]

        rows_ = (
            await alternate({"pipeline": pipeline_pass, "same_work": reference_pass}, rounds)
            if reference is not None and rounds
            else []
        )
        await asyncio.to_thread(wait_drained, settings, ep)
        counters1 = await _all_counters(worker_urls)
        by_id = await _by_id(store, produced)
        await store.execute(cypher("graph_clear"))  # the run's own graph
    finally:
        await store.close()
    return {
        "bench": "pipeline",
        "mix": mix,
        "events": events,
        # the timed burst; with rounds, the median of it and the rounds' bursts
        "events_per_s": round(
            float(np.median([r["pipeline"]["events_per_s"] for r in rows_]))
            if rows_
            else events / burst_s,
            1,
        ),
        "same_work_rows": rows_,
        "burst_seconds": round(burst_s, 3),
        "steady_rate": rate,
        # after the burst was in the graph, until the lanes had committed all of it
        "burst_drain_s": drain_s,
        "steady_events": int(lat.size),
        "p50_ms": round(float(np.percentile(lat, 50)), 2) if lat.size else None,
        "p99_ms": round(float(np.percentile(lat, 99)), 2) if lat.size else None,
        "max_ms": round(float(lat.max()), 2) if lat.size else None,
        # the worker's own view of the steady phase: batches per agent, their mean size
        # and mean handling time until the outputs are produced (its /metrics; the wait
        # for the broker's acknowledgement, fetches and broker hops excluded) ...
        "steady_worker_batches": steady_batches,
        # ... and per input topic the hop before it: producer timestamp -> the lane's
        # fetch (docs: raw.news, then docs.clean after normalize)
        "steady_fetch_delay": steady_fetch,
        "steady_by_kind": {
            "tick": _percentiles(by_label["Observation"][:, 1]),
            "doc": _percentiles(by_label["Document"][:, 1]),
        },
        # the slowest 1%: produced in a few 100 ms windows (a stall) or spread out
        "steady_tail": tail_windows(rows[:, 0], lat),
        # the bench's own pacer: its latest send against the schedule, sends over 5 ms late
        "steady_pacer": pacer,
        # the broker JVM's collector pauses during the steady phase (its GC log)
        "steady_broker_gc": gc_pauses(broker_gc_log(pids.get("broker")), since, until + 1.0),
        "rss_mb": round(sampler.peak_total, 1),
        # CPU seconds the burst cost each process: on a shared machine, events per
        # worker CPU-second says what one worker sustains on a core of its own.
        "burst_cpu_s": cpu,
        # each worker's share of the timed burst (the figures the capacity model scales)
        "per_worker": _per_worker(burst0, burst1, cpu, burst_s) if worker_urls else [],
        # retried attempts over the whole run: graph_transient (lock waits, deadlocks,
        # a server busy), graph_conflict (MERGE races), agent_* (the shell's retries)
        "graph_retries": _diff(counters0, counters1) if worker_urls else {},
        # every event the run produced, looked up in the graph by id
        "by_id": by_id,
        "events_per_worker_cpu_s": round(events / worker_cpu, 1) if worker_cpu else None,
        # CPU seconds of each process over the steady phase (what the latency costs)
        "steady_cpu_s": {
            k: round(steady_cpu1[k] - steady_cpu0[k], 3) for k in steady_cpu1 if k in steady_cpu0
        },
        "load_avg_1m": round(os.getloadavg()[0], 2),
        # share of the steady phase in which some runnable task of the machine waited for a
        # CPU (Linux PSI): the noise a shared machine adds to the latency figures
        "steady_cpu_pressure": (
            round((pressure1 - pressure0) / 1e6 / (until - since), 3)
            if pressure0 is not None and pressure1 is not None
            else None
        ),
        "partitions": settings.kafka.topic_partitions,
    }


def raw_kafka_reference(base: Settings, ep: Endpoints, events: int) -> dict[str, Any]:
    """The broker alone (``raw_ratio``): N records of 300 bytes produced by a bare
    librdkafka producer and consumed back by a bare consumer, same broker, same run."""
    state = read_state(base.state_file)
    svc = state.services.get("broker") if state else None
    kind = f"{svc.kind} {svc.version}" if svc is not None and svc.kind else "external"
    try:
        value: float | None = round(broker_rate(ep.kafka_bootstrap, n=events), 1)
        error = None
    except Exception as exc:  # reported beside the figure, never fatal to the bench
        value, error = None, f"{type(exc).__name__}: {exc}"[:300]
    out = {
        "name": "raw_kafka_events_per_s",
        "what": "bare librdkafka producer and consumer, the same count, same broker",
        "broker": kind,
        "value": value,
    }
    return out | ({"error": error} if error else {})


def raw_hop_latency(ep: Endpoints, n: int, rate: float, partitions: int) -> dict[str, Any]:
    """The latency reference: ``n`` records of 300 bytes at ``rate``/s through the same
    broker, bare librdkafka producer (the bench's own settings) to a bare consumer that
    takes what it holds as soon as it has any; per record, the consumer's receipt minus
    the producer's timestamp. One hop, no livekg code: ticks cross one such hop before
    their graph write, documents two."""
    tag = uuid.uuid4().hex[:8]
    prefix = f"benchhop{tag}."
    topic = f"{prefix}raw.ticks"
    try:
        create_topics(ep.kafka_bootstrap, partitions=partitions, prefix=prefix)
        cons = Consumer({"bootstrap.servers": ep.kafka_bootstrap, "group.id": f"benchhop{tag}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})  # fmt: skip
        cons.subscribe([topic])
        deadline = time.monotonic() + 60
        while not cons.assignment() and time.monotonic() < deadline:
            cons.poll(0.1)
        prod = producer(ep.kafka_bootstrap, **{"linger.ms": 2})
        # warm-up: the consumer has its positions and the producer its connection (as
        # the pipeline had its warm-up and burst), so neither start is counted
        warm = 0
        while warm < 50 and time.monotonic() < deadline:
            if warm == 0:
                for i in range(50):
                    prod.produce(topic, key=str(i).encode(), value=b"w")
                prod.flush(30)
            warm += sum(1 for m in cons.consume(50, 0.2) if m.error() is None)
        lat: list[float] = []
        sent = threading.Event()

        def receive() -> None:
            limit = time.monotonic() + 60 + n / rate
            while len(lat) < n and time.monotonic() < limit:
                msgs = cons.consume(n, 0) or cons.consume(1, 0.2)
                now = time.time() * 1000
                lat.extend(now - m.timestamp()[1] for m in msgs if m.error() is None)
                if sent.is_set() and not msgs and len(lat) >= n:
                    break

        reader = threading.Thread(target=receive, daemon=True)
        reader.start()
        value = b"x" * 300
        started = time.perf_counter()
        for i in range(n):
            prod.produce(topic, key=str(i % 64).encode(), value=value)
            ahead = (i + 1) / rate - (time.perf_counter() - started)
            if ahead > 0.001:
                prod.poll(0)
                time.sleep(ahead)
        prod.flush(30)
        sent.set()
        reader.join(timeout=60)
        cons.close()
    except Exception as exc:  # reported beside the figure, never fatal to the bench
        return {"name": "raw_hop_latency", "error": f"{type(exc).__name__}: {exc}"[:300]}
    out: dict[str, Any] = {
        "name": "raw_hop_latency",
        "what": "bare producer -> bare consumer, one broker hop, same rate and broker",
    }
    return out | _percentiles(np.array(lat, dtype=np.float64))


# -- same-work reference: raw consume + the same graph write ---------------------------


def _reference_rows(records: Sequence[Record]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Record id -> (kind, graph row) as the sinks write them, shaped before the clock
    starts (normalization is livekg's work, not the reference's)."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for rec in records:
        if isinstance(rec, IndicatorTick):
            out[rec.id] = ("tick", sink.tick_rows([rec])[0])
        else:
            assert isinstance(rec, RawNews)
            out[rec.id] = ("doc", sink.document_rows([normalize(rec)])[0])
    return out


async def _reference_write(run: Any, docs: list[dict], ticks: list[dict]) -> None:
    """The sinks' statements, by hand: documents, then indicators, ticks, latest values."""
    if docs:
        await run(sink.DOCS_CYPHER, {"rows": docs})
    if ticks:
        first = {r["indicator_id"]: r for r in reversed(ticks)}
        await run(sink.INDICATORS_CYPHER, {"rows": list(first.values())})
        await run(sink.TICKS_CYPHER, {"rows": ticks})
        latest: dict[str, dict[str, Any]] = {}
        for r in ticks:
            cur = latest.get(r["indicator_id"])
            if cur is None or r["observed_at"] >= cur["observed_at"]:
                latest[r["indicator_id"]] = r
        rows = [{"indicator_id": k, "value": v["value"], "observed_at": v["observed_at"]}
                for k, v in latest.items()]  # fmt: skip
        await run(sink.LATEST_CYPHER, {"rows": rows})


def same_work_rate(
    base: Settings, ep: Endpoints, records: Sequence[Record], *, timeout: float = 600.0
) -> dict[str, Any]:
    """The burst again without livekg: the same records produced (same producer path,
    stamped at send) to topics of their own, consumed by one bare librdkafka consumer in
    batches of ``streams.batch_size`` and written with the sinks' statements through the
    bare FalkorDB client into a graph of its own; events/s from the first produce until
    the last write returned. One consume + one write per event, where the pipeline also
    normalizes and passes documents through ``docs.clean``: the ratio says what that
    and the worker's shell cost."""
    if not ep.falkordb_url:
        return {"events_per_s": None, "error": "same-work reference: FalkorDB only"}
    tag = uuid.uuid4().hex[:8]
    prefix, graph_name = f"benchref{tag}.", f"bench_ref_{tag}"
    create_topics(ep.kafka_bootstrap, partitions=base.kafka.topic_partitions, prefix=prefix)
    rows = _reference_rows(records)
    ids = {rec.id for rec in records}
    batch = base.streams.batch_size
    settings = base.with_overrides(graph={"graph_name": graph_name})
    prod = producer(ep.kafka_bootstrap, **{"linger.ms": 2})
    cons = Consumer({"bootstrap.servers": ep.kafka_bootstrap, "group.id": f"benchref{tag}",
                     "auto.offset.reset": "earliest", "enable.auto.commit": False})  # fmt: skip
    cons.subscribe([f"{prefix}raw.news", f"{prefix}raw.ticks"])

    async def go() -> tuple[float, int]:
        store = open_store(settings, ep.falkordb_url)
        await sink.ensure_schema(store)  # indexes, as the worker has them (not timed)
        await store.close()
        run, close = bare_falkordb_runner(ep.falkordb_url or "", graph_name)
        try:
            # join the group before the clock starts (the worker had its warm-up)
            deadline = time.monotonic() + 60
            while not cons.assignment() and time.monotonic() < deadline:
                cons.poll(0.1)
            started = time.perf_counter()
            sender = asyncio.create_task(
                asyncio.to_thread(produce_stamped, prod, prefix, records, None)
            )
            done = 0
            limit = time.monotonic() + timeout
            while done < len(ids) and time.monotonic() < limit:
                msgs = await asyncio.to_thread(cons.consume, batch, 0.02)
                docs, ticks = [], []
                for m in msgs:
                    if m.error() is not None:
                        continue
                    value = orjson.loads(m.value())
                    kind, row = rows[value["id"]]
                    row = {**row, "ingested_at": _epoch_ms(value["ingest_time"])}
                    (docs if kind == "doc" else ticks).append(row)
                await _reference_write(run, docs, ticks)
                done += len(docs) + len(ticks)
            seconds = time.perf_counter() - started
            await sender
            return seconds, done
        finally:
            await close()
            cleanup = open_store(settings, ep.falkordb_url)
            try:
                await cleanup.delete_graph()  # type: ignore[attr-defined]
            finally:
                await cleanup.close()

    try:
        seconds, done = asyncio.run(go())
    finally:
        cons.close()
    return {
        "events_per_s": round(done / seconds, 1) if done == len(ids) else None,
        "events": done,
        "seconds": round(seconds, 3),
        "what": "bare consumer + the sinks' statements over the bare FalkorDB client",
    }


def _epoch_ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)
