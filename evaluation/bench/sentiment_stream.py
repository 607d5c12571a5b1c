"""``livekg bench sentiment-stream``: clean document -> sentiment score through the broker.

The in-process ``bench sentiment`` measures the classifier behind the micro-batcher; this
one measures the stream path alerts depend on. A real worker process runs only the ``sentiment``
processor (faust agent, RAG over its own empty graph, the configured classifier) on
topics of its own (a unique prefix) against the configured or embedded broker. Documents
(``bench_texts``: headlines, 5% Chinese) are produced to ``docs.clean`` at ``rate``/s; a
consumer reads ``sentiment.scored`` afterwards. ``p50_ms``/``p99_ms``: from producing a
document to the worker sending its first score (the score record's timestamp; one clock,
both ends run here); the hop to a dashboard's consumer is that consumer's own.
A warm-up first loads the models, so a cold ONNX export is not counted. From the
worker's /metrics: the agent's mean micro-batch size and handling time (RAG + classifier
+ send), which split the latency into the agent's own work and the broker hops.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import orjson
from confluent_kafka import Consumer
from prometheus_client.parser import text_string_to_metric_families

from connectors.replay import producer
from core.records import CleanDocument, DocKind, content_hash
from core.runtime_state import Endpoints
from core.settings import Settings
from core.topics import DLQ, SENTIMENT_SCORED
from evaluation.bench.pipeline import produce_stamped
from evaluation.bench.sentiment import bench_texts
from kg.sentiment.clean import is_chinese
from ops.runtime import spawn_worker, stop_pid
from streams.admin import create_topics

ENTITIES = ["AAPL", "TSLA", "JPM", "BA", "NVDA", "XOM", "PFE", "BABA"]


def bench_docs(texts: list[str], tag: str) -> list[CleanDocument]:
    now = datetime.now(UTC)
    return [
        CleanDocument(
            id=f"{tag}-{i}",
            source="bench",
            event_time=now,
            kind=DocKind.NEWS,
            raw_id=f"raw-{tag}-{i}",
            title=text,
            text=text,
            lang="zh" if is_chinese(text) else "en",
            entities=[ENTITIES[i % len(ENTITIES)]],
            content_hash=content_hash(text),
        )
        for i, text in enumerate(texts)
    ]


@dataclass
class CollectedScores:
    at: dict[str, float] = field(default_factory=dict)  # doc id -> first score's timestamp
    dead: int = 0
    model_id: str = ""


def collect_scores(bootstrap: str, prefix: str, ids: list[str], limit_s: float) -> CollectedScores:
    """Read ``sentiment.scored`` and the DLQ from the start until every id has a score.

    Read after the fact, not while documents flow: a consumer polling alongside took half
    a core (its broker does not hold empty fetches) from the processes being measured.
    A score's time is its record timestamp, stamped by the worker's producer on send.
    """
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-reader-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    scored_topic = prefix + SENTIMENT_SCORED.name
    consumer.subscribe([scored_topic, prefix + DLQ.name])
    out, wanted = CollectedScores(), set(ids)
    deadline = time.monotonic() + limit_s
    try:
        while wanted - out.at.keys() and time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is None or msg.error():
                continue
            if msg.topic() != scored_topic:
                out.dead += 1
                continue
            score = orjson.loads(msg.value())
            out.at.setdefault(score["doc_id"], msg.timestamp()[1] / 1000)
            out.model_id = score.get("model_id", out.model_id)
    finally:
        consumer.close()
    missing = len(wanted - out.at.keys())
    if missing:
        raise TimeoutError(f"{missing} of {len(ids)} documents were not scored in {limit_s:.0f}s")
    return out


def agent_batches(metrics_text: str, agent: str) -> dict[str, float]:
    """Mean batch size and handling seconds of ``agent`` from a Prometheus exposition."""
    sums: dict[str, float] = {}
    for family in text_string_to_metric_families(metrics_text):
        if family.name not in ("livekg_batch_seconds", "livekg_batch_size"):
            continue
        for sample in family.samples:
            if sample.labels.get("agent") == agent and sample.name.endswith(("_sum", "_count")):
                sums[sample.name] = sample.value
    count = sums.get("livekg_batch_seconds_count", 0.0)
    if not count:
        return {"batches": 0}
    return {
        "batches": int(count),
        "mean_batch_size": round(sums.get("livekg_batch_size_sum", 0.0) / count, 2),
        "mean_batch_ms": round(1000 * sums.get("livekg_batch_seconds_sum", 0.0) / count, 1),
    }


def run_sentiment_stream_bench(
    base: Settings, ep: Endpoints, *, rate: float, seconds: float, timeout: float = 600.0
) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:8]
    settings = base.with_overrides(
        kafka={"topic_prefix": f"bench{tag}.", "consumer_group": f"bench{tag}"},
        graph={"graph_name": f"bench_{tag}"},
        streams={"processors": ["sentiment"]},
    )
    prefix = settings.kafka.topic_prefix
    create_topics(ep.kafka_bootstrap, partitions=settings.kafka.topic_partitions, prefix=prefix)
    prod = producer(ep.kafka_bootstrap, **{"linger.ms": 1})
    with tempfile.TemporaryDirectory(prefix="livekg-bench-") as tmp:
        proc, port = spawn_worker(settings, ep, Path(tmp))
        try:
            t0 = time.perf_counter()
            warm = bench_docs(bench_texts(20, seed=7), f"warm{tag}")
            produce_stamped(prod, prefix, warm, None)
            collect_scores(ep.kafka_bootstrap, prefix, [d.id for d in warm], timeout)
            warm_s = time.perf_counter() - t0  # models load on first use
            docs = bench_docs(bench_texts(max(1, int(rate * seconds)), seed=1), f"doc{tag}")
            produce_stamped(prod, prefix, docs, rate)
            scored = collect_scores(ep.kafka_bootstrap, prefix, [d.id for d in docs], timeout)
            exposition = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
        finally:
            stop_pid(proc.pid)
    ms = np.array([scored.at[d.id] - d.ingest_time.timestamp() for d in docs]) * 1000
    return {
        "bench": "sentiment_stream",
        "model_id": scored.model_id,
        "docs": len(docs),
        "scored": sum(d.id in scored.at for d in docs),
        "dead_letters": scored.dead,
        "rate": rate,
        "p50_ms": round(float(np.percentile(ms, 50)), 1),
        "p99_ms": round(float(np.percentile(ms, 99)), 1),
        "max_ms": round(float(ms.max()), 1),
        "warmup_s": round(warm_s, 1),
        "agents": {a: agent_batches(exposition, a) for a in ("sentiment", "sentiment_state")},
    }
