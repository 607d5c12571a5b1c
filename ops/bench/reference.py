"""Same-run references: what a benchmark's figure should approach on this machine, now.

Machines here differ by up to 2x from run to run, so a figure alone says little; its
ratio to the plainest possible use of the same component, measured in the same run,
says how much livekg's own code costs:

* ``broker``: raw librdkafka produce-then-consume rate of 300-byte records (msgs/s);
* ``graph``: raw batched ``UNWIND ... MERGE`` rate of one-property nodes (rows/s);
* ``encoder``: raw forward rate of the embedding model on unique texts, batches of 64,
  no cache (texts/s);
* ``model_server``: raw completion-token rate of the model server, one request at a
  time straight over HTTP (tokens/s).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from core.runtime_state import Endpoints
from core.settings import Settings


def broker_rate(bootstrap: str, n: int = 20_000, size: int = 300) -> float:
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"bench-ref-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    try:
        payload = b"x" * size
        prod = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        cons = Consumer({"bootstrap.servers": bootstrap, "group.id": topic,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})  # fmt: skip
        started = time.perf_counter()
        for i in range(n):
            while True:
                try:
                    prod.produce(topic, value=payload, key=str(i).encode())
                    break
                except BufferError:
                    prod.poll(0.01)
        prod.flush(60)
        cons.subscribe([topic])
        got = 0
        deadline = time.monotonic() + 120
        while got < n and time.monotonic() < deadline:
            got += sum(1 for m in cons.consume(2000, 0.5) if m.error() is None)
        elapsed = time.perf_counter() - started
        cons.close()
        return got / elapsed
    finally:
        admin.delete_topics([topic])


def graph_rate(settings: Settings, ep: Endpoints, rows: int = 20_000) -> float:
    from kg.store.scratch import scratch_graph
    from ops.bench.kg import raw_merge_rate

    async def go() -> float:
        async with scratch_graph(settings, ep.falkordb_url, purpose="ref") as (s, store):
            return await raw_merge_rate(store, rows, s.graph.write_batch)

    return asyncio.run(go())


def encoder_rate(settings: Settings, n: int = 256) -> float:
    from kg.embed import make_embedder
    from ops.bench.embed import bench_texts

    emb = make_embedder(settings.embed)
    texts = bench_texts(n + 64)
    emb._encode(texts[:64], "passage")  # warm-up (model load, first allocation)
    started = time.perf_counter()
    for i in range(64, n + 64, 64):
        emb._encode(texts[i : i + 64], "passage")
    return n / (time.perf_counter() - started)


def model_server_rate(base_url: str, model: str, requests: int = 3, max_tokens: int = 64) -> float:
    import httpx

    tokens, seconds = 0, 0.0
    with httpx.Client(base_url=base_url.rstrip("/") + "/", timeout=120) as client:
        for i in range(requests):
            body: dict[str, Any] = {"model": model, "prompt": f"Count to twenty. {i}",
                                    "max_tokens": max_tokens, "temperature": 0}  # fmt: skip
            t0 = time.perf_counter()
            r = client.post("completions", json=body)
            r.raise_for_status()
            seconds += time.perf_counter() - t0
            tokens += int(r.json().get("usage", {}).get("completion_tokens") or 0)
    return tokens / seconds if seconds else 0.0
