"""``livekg bench serve``: the query service through a real HTTP server.

* ``ask_p95_ms``: POST /ask round trips (client-measured) on the sample graph (bundled
  universe + sample ticks, a graph of its own), questions cycling through the bundled
  suite with one of ``FALLBACK_QUESTIONS`` (questions the graph's relations cannot
  answer, so they go to the HybridRAG fallback) every ``FALLBACK_EVERY`` asks, after one
  warm-up pass; LLM revision off, embedding ranking as configured (on by default).
* ``fallback_p95_ms``: the fallback questions alone.
* ``ready_ms``: API start until the API reports ready (it loads the models and the
  retrieval index, then sends its warm-up questions through its own route).
* ``first_asks_ms``: the first questions after that, as a user meets them: each on a new
  TCP connection by a bare socket client (no client library warming on the clock), none
  of them a warm-up question nor asked before, before any other request: a fallback one
  (``first_ask_ms``, the slowest path), an English and a Chinese held-out lookup.
  ``fresh_p95_ms``: the same kind of asks on the warm server (questions never asked
  before, new connection each, one fallback question in three, as in the first asks);
  ``first_ratio`` = the slowest first ask / ``fresh_p95_ms`` (issue 31's bar: <= 2). The
  mixed ``ask_p*`` loop repeats suite questions over one open connection, so the encoder's
  cache answers its questions: it is not the reference for a first question.
* ``sse_p95_ms``: an alert produced to ``alerts.indicator`` (timed from just before the
  produce call) until an SSE client of GET /alerts/stream has parsed it. Topics get a
  prefix of their own.
Everything runs in this process on one event loop (server, client, producer), so the
numbers include that contention; they are upper bounds of an idle API's latency.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections import Counter
from typing import Any

import httpx
import numpy as np
import uvicorn

from core.records import Alert, AlertKind, utcnow
from core.runtime_state import Endpoints
from core.settings import Settings
from evaluation.scorers.cypher import EVALSETS, read_items
from evaluation.scorers.cypher_fixture import SAMPLE_TICKS, load_graph
from kg.graph.store import open_store
from kg.graph.store.falkor import FalkorStore
from ops.runtime import free_port
from serving.app import create_app
from serving.services import WARM_QUESTIONS
from streams.admin import create_topics
from streams.publisher import Publisher

# Questions the sample graph's relations cannot answer (no such relation or event in
# the universe): they fall back to HybridRAG, which answers from retrieved facts or says
# "not known".
FALLBACK_QUESTIONS = (
    "Which companies did Moody's downgrade?",
    "What did the FOMC statement say about inflation?",
    "Why did Tesla shares fall last week?",
    "Which banks face litigation risk?",
    "穆迪下调了哪些公司的评级？",
    "美联储对通胀怎么看？",
    "What are the main risks for Apple's supply chain?",
    "Did Nvidia announce any new products recently?",
)
FALLBACK_EVERY = 10
# Fallback questions asked only by the fresh-question reference (never before it).
FRESH_FALLBACK_QUESTIONS = (
    "Which insurers raised their catastrophe reserves?",
    "What did the ECB say about bank capital?",
    "Why did oil prices jump in the spring?",
    "Which retailers warned about holiday sales?",
    "哪些保险公司提高了巨灾准备金？",
    "欧洲央行对银行资本怎么说？",
    "Which airlines cut routes because of fuel costs?",
    "What did analysts say about chip export limits?",
    "哪些航空公司因燃油成本削减航线？",
    "分析师如何看待芯片出口限制？",
    "Did any carmaker recall vehicles after the audit?",
    "Which lenders tightened mortgage standards?",
)
FRESH_FALLBACK_EVERY = 3  # the first asks' mix: one fallback question in three


def _pct(xs: list[float], q: float) -> float:
    return round(float(np.percentile(np.array(xs), q)), 3) if xs else 0.0


async def run_serve_bench(
    settings: Settings, ep: Endpoints, *, asks: int, alerts: int
) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:8]
    prefix = f"benchserve{tag}."
    s = settings.with_overrides(
        graph={"graph_name": f"livekg_bench_serve_{tag}", "falkordb_url": ep.falkordb_url},
        kafka={"bootstrap_servers": ep.kafka_bootstrap, "topic_prefix": prefix},
        api={"api_keys": ["bench-key"]},
        query={"revise": False, "reword": False, "rate_limit_per_min": 0},  # rule path
    )
    create_topics(ep.kafka_bootstrap, partitions=s.kafka.topic_partitions, prefix=prefix)
    store = open_store(s, ep.falkordb_url)
    await load_graph(store, SAMPLE_TICKS)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(s), host="127.0.0.1", port=port, log_level="warning", lifespan="on"
        )
    )
    app = server.config.app
    t_start = time.perf_counter()
    serve_task = asyncio.create_task(server.serve())
    publisher = Publisher(ep.kafka_bootstrap)
    headers = {"X-API-Key": "bench-key"}
    try:
        for _ in range(600):  # uvicorn exposes no event for "started"
            if server.started:
                break
            await asyncio.sleep(0.05)
        svc = app.state.services
        for _ in range(2400):  # the API warms the question path at start
            if svc.ask_ready():
                break
            await asyncio.sleep(0.05)
        ready_ms = (time.perf_counter() - t_start) * 1000
        base = f"http://127.0.0.1:{port}"
        questions = [it.question for it in read_items(EVALSETS / "questions.jsonl")]
        unseen = [it.question for it in read_items(EVALSETS / "questions_heldout.jsonl")]
        first_qs = [FALLBACK_QUESTIONS[0], unseen[0], unseen[1]]  # fallback, EN, ZH
        fresh_qs = _fresh_mix(unseen[2:], FRESH_FALLBACK_QUESTIONS)
        asked_before = set(WARM_QUESTIONS) | set(questions) | set(FALLBACK_QUESTIONS[1:])
        if (set(first_qs) | set(fresh_qs)) & asked_before:
            raise RuntimeError("a first or fresh question was asked before: not a first ask")
        first = [await fresh_ask(port, "bench-key", q) for q in first_qs]
        async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as c:
            for q in questions:  # every path once
                await c.post("/ask", json={"question": q})
            ask_ms: list[float] = []
            methods: dict[str, int] = {}
            for i in range(asks):
                if i % FALLBACK_EVERY == FALLBACK_EVERY - 1:
                    q = FALLBACK_QUESTIONS[(i // FALLBACK_EVERY) % len(FALLBACK_QUESTIONS)]
                else:
                    q = questions[i % len(questions)]
                t = time.perf_counter()
                r = await c.post("/ask", json={"question": q})
                ask_ms.append((time.perf_counter() - t) * 1000)
                r.raise_for_status()
                m = r.json()["method"]
                methods[m] = methods.get(m, 0) + 1
            fresh = [await fresh_ask(port, "bench-key", q) for q in fresh_qs]
            fb_ms: list[float] = []
            fb_methods: dict[str, int] = {}
            for i in range(max(20, asks // 5)):
                q = FALLBACK_QUESTIONS[i % len(FALLBACK_QUESTIONS)]
                t = time.perf_counter()
                r = await c.post("/ask", json={"question": q})
                fb_ms.append((time.perf_counter() - t) * 1000)
                r.raise_for_status()
                body = r.json()
                key = "timed_out" if body["timings"].get("hybrid_timed_out") else body["method"]
                fb_methods[key] = fb_methods.get(key, 0) + 1
            health_ms: list[float] = []  # same-run reference: a bare round trip
            for _ in range(max(asks, 20)):
                t = time.perf_counter()
                (await c.get("/health")).raise_for_status()
                health_ms.append((time.perf_counter() - t) * 1000)
            sse_ms = await _sse(c, publisher, prefix, alerts)
        fresh_ms = [ms for ms, _ in fresh]
        return {
            "bench": "serve",
            "asks": asks,
            "ask_p50_ms": _pct(ask_ms, 50),
            "ask_p95_ms": _pct(ask_ms, 95),
            "ask_max_ms": round(max(ask_ms), 3) if ask_ms else 0.0,
            "ask_methods": methods,
            "fallback_asks": len(fb_ms),
            "fallback_p50_ms": _pct(fb_ms, 50),
            "fallback_p95_ms": _pct(fb_ms, 95),
            "fallback_max_ms": round(max(fb_ms), 3) if fb_ms else 0.0,
            "fallback_outcomes": fb_methods,
            "ready_ms": round(ready_ms, 1),
            "first_asks_ms": [round(ms, 1) for ms, _ in first],
            "first_ask_ms": round(first[0][0], 1),
            "first_ask_methods": [m for _, m in first],
            "fresh_asks": len(fresh),
            "fresh_p50_ms": _pct(fresh_ms, 50),
            "fresh_p95_ms": _pct(fresh_ms, 95),
            "fresh_methods": dict(Counter(m for _, m in fresh)),
            # the first questions against the same kind of question asked warm
            "first_ratio": round(max(ms for ms, _ in first) / _pct(fresh_ms, 95), 2),
            "alerts": alerts,
            "sse_received": len(sse_ms),
            "sse_p50_ms": _pct(sse_ms, 50),
            "sse_p95_ms": _pct(sse_ms, 95),
            "sse_max_ms": round(max(sse_ms), 3) if sse_ms else 0.0,
            "rank_with_embeddings": s.query.rank_with_embeddings,
            # latency: ratio = ask p95 / a bare GET /health p95 on the same server and client
            "reference": {"name": "health_p95_ms", "value": _pct(health_ms, 95)},
            "ratio": round(_pct(ask_ms, 95) / _pct(health_ms, 95), 2) if health_ms else None,
        }
    finally:
        publisher.close()
        server.should_exit = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(serve_task, 10)
        if isinstance(store, FalkorStore):
            await store.delete_graph()
        await store.close()


def _fresh_mix(lookups: list[str], fallbacks: tuple[str, ...]) -> list[str]:
    """Two lookups then one fallback question, until the fallback questions run out."""
    out: list[str] = []
    for i, fb in enumerate(fallbacks):
        out += [*lookups[i * 2 : i * 2 + 2], fb]
    return out


async def fresh_ask(port: int, key: str, question: str) -> tuple[float, str]:
    """POST /ask on a new loopback connection by a bare socket client, as a browser
    without an open connection meets it: (ms from connect to the whole answer, method)."""
    body = json.dumps({"question": question}).encode()
    head = (
        f"POST /ask HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-API-Key: {key}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    t0 = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head + body)
        raw = await reader.read()  # the server closes after the answer (Connection: close)
    finally:
        writer.close()
    ms = (time.perf_counter() - t0) * 1000
    status, _, payload = raw.partition(b"\r\n\r\n")
    if not status.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"POST /ask {question!r}: {status.splitlines()[0]!r}")
    return ms, json.loads(payload)["method"]


async def _sse(c: httpx.AsyncClient, publisher: Publisher, prefix: str, n: int) -> list[float]:
    sent: dict[str, float] = {}
    got: list[float] = []
    done = asyncio.Event()
    ready = asyncio.Event()

    async def listen() -> None:
        async with c.stream("GET", "/alerts/stream", timeout=None) as resp:
            resp.raise_for_status()
            ready.set()
            async for line in resp.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = json.loads(line[5:].strip())
                mark = (data.get("evidence") or {}).get("source_ids", [""])[0]
                if mark in sent:
                    got.append((time.perf_counter() - sent.pop(mark)) * 1000)
                    if len(got) >= n:
                        done.set()
                        return

    task = asyncio.create_task(listen())
    await asyncio.wait_for(ready.wait(), 30)
    await asyncio.sleep(0.5)  # the subscription is registered once the first byte flows
    topic = prefix + "alerts.indicator"
    for i in range(n):
        mark = f"bench-{i}-{uuid.uuid4().hex[:6]}"
        alert = Alert(
            id=mark,
            source="bench",
            event_time=_now(),
            kind=AlertKind.INDICATOR_MOVE,
            entity_id="US10Y",
            severity="warning",
            message=f"bench alert {i}",
            evidence={"source_ids": [mark]},
        )
        sent[mark] = time.perf_counter()
        await publisher.send_many(topic, [(alert.key().encode(), alert.model_dump_json().encode())])
        await asyncio.sleep(0.02)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(done.wait(), 10)
    task.cancel()
    with contextlib.suppress(BaseException):
        await task
    return got


def _now() -> Any:
    return utcnow()
