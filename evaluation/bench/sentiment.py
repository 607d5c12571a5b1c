"""Sentiment benchmarks and evaluation (``livekg bench sentiment``, ``livekg eval sentiment``).

Bench: (1) classifier throughput: texts/s over a fixed mixed set of headlines and posts
scored in batches of ``batch`` (what the stream processor does); (2) latency: documents
arrive at ``rate``/s into the same micro-batcher the agent uses (flush after
``within_s`` or ``batch`` items) and each one's arrival-to-score time is recorded;
``p99_ms`` is its 99th percentile. Both are in-process (no broker): the broker hop is
measured by ``livekg bench pipeline``.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.records import SentimentLabel
from kg.sentiment.data import Example, load_examples
from kg.sentiment.encoder import EncoderClassifier
from kg.sentiment.labels import LABELS
from kg.sentiment.metrics import evaluate
from kg.sentiment.model import ARTIFACTS, ENCODER_ARTIFACT, SentimentClassifier
from kg.sentiment.service import ScoreInput, SentimentEngine

_SUBJECTS = ["Apple", "Tesla", "JPMorgan", "Boeing", "Nvidia", "Exxon", "Pfizer", "Alibaba"]
_EVENTS = [
    "beats earnings estimates and raises full-year guidance",
    "shares slide after the company cuts its outlook",
    "to present at an industry conference next week",
    "downgraded to underweight at Morgan Stanley on margin worries",
    "announces a $2 billion share buyback",
    "faces a regulatory probe over accounting practices",
    "reports quarterly revenue in line with expectations",
    "CEO to step down at the end of the year",
]
_ZH = [
    "贵州茅台一季度净利润同比增长20%，超出市场预期",
    "工商银行股价下跌，市场担忧资产质量",
    "央行今日开展逆回购操作",
]


def bench_texts(n: int, zh_share: float = 0.05, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if rng.random() < zh_share:
            out.append(rng.choice(_ZH))
        else:
            tag, name = rng.choice(_SUBJECTS)[:4].upper(), rng.choice(_SUBJECTS)
            out.append(f"${tag} {name} {rng.choice(_EVENTS)} #{i}")
    return out


def throughput(clf: SentimentClassifier, texts: Sequence[str], batch: int) -> float:
    clf.predict_proba(list(texts[:batch]))  # warm up (loads the models)
    t0 = time.perf_counter()
    for start in range(0, len(texts), batch):
        clf.predict_proba(list(texts[start : start + batch]))
    return len(texts) / (time.perf_counter() - t0)


async def stream_latency(
    engine: SentimentEngine, texts: Sequence[str], *, rate: float, batch: int, within_s: float
) -> list[float]:
    """Arrival -> score latency (seconds) of each text under a micro-batcher at ``rate``/s."""
    queue: asyncio.Queue[tuple[float, str]] = asyncio.Queue()
    latencies: list[float] = []

    async def producer() -> None:
        t0 = time.perf_counter()
        for i, text in enumerate(texts):
            delay = t0 + i / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            await queue.put((time.perf_counter(), text))

    async def consumer() -> None:
        done = 0
        while done < len(texts):
            items = [await queue.get()]
            deadline = time.perf_counter() + within_s
            while len(items) < batch:
                left = deadline - time.perf_counter()
                if left <= 0:
                    break
                try:
                    items.append(await asyncio.wait_for(queue.get(), left))
                except TimeoutError:
                    break
            await engine.score([ScoreInput(text=t) for _, t in items])
            now = time.perf_counter()
            latencies.extend(now - arrived for arrived, _ in items)
            done += len(items)

    await asyncio.gather(producer(), consumer())
    return latencies


def encoder_rate(texts: Sequence[str], *, batch: int, num_threads: int = 2) -> float:
    """Same-run reference: the raw forward rate (texts/s) of the first-stage encoder alone.

    The default's English path starts with the int8 MiniLM student; its bare forward pass
    over the same texts and batches (no routing, cascade, memory or head) is the rate the
    classifier's throughput should approach, so their ratio is what livekg's own
    classifier code costs on this machine, now.
    """
    enc = EncoderClassifier(ARTIFACTS / ENCODER_ARTIFACT, num_threads=num_threads, quantize=True)
    enc.embed(list(texts[:batch]))  # warm up
    t0 = time.perf_counter()
    for start in range(0, len(texts), batch):
        enc.embed(list(texts[start : start + batch]))
    return len(texts) / (time.perf_counter() - t0)


def run_bench(
    clf: SentimentClassifier,
    *,
    n: int = 3000,
    batch: int = 64,
    rate: float = 100.0,
    seconds: float = 10.0,
    within_s: float = 0.02,
) -> dict[str, Any]:
    texts = bench_texts(n)
    tps = throughput(clf, texts, batch)
    ref = encoder_rate(texts, batch=batch)
    engine = SentimentEngine(clf)
    lat = asyncio.run(
        stream_latency(
            engine,
            bench_texts(int(rate * seconds), seed=1),
            rate=rate,
            batch=batch,
            within_s=within_s,
        )
    )
    ms = np.array(lat) * 1000
    return {
        "bench": "sentiment",
        "model_id": clf.model_id,
        "n": n,
        "batch": batch,
        "texts_per_s": round(tps, 1),
        "reference": {"name": "sentiment_encoder", "value": round(ref, 1)},
        "ratio": round(tps / ref, 4) if ref else None,
        "rate": rate,
        "p50_ms": round(float(np.percentile(ms, 50)), 1),
        "p99_ms": round(float(np.percentile(ms, 99)), 1),
        "latency_n": len(lat),
    }


def run_eval(
    engine: SentimentEngine,
    examples: Sequence[Example],
    *,
    batch: int = 64,
) -> dict[str, Any]:
    """Accuracy with the engine as configured; with retrieval on, also the bare input's
    accuracy on the items that got context and overall (``context`` in the result)."""

    async def go() -> tuple[list[list[float]], list[int]]:
        probs: list[list[float]] = []
        with_ctx: list[int] = []
        for start in range(0, len(examples), batch):
            chunk = examples[start : start + batch]
            outs = await engine.score([ScoreInput(text=e.text) for e in chunk])
            probs += [o.probabilities for o in outs]
            with_ctx += [start + k for k, o in enumerate(outs) if o.context_ids]
        return probs, with_ctx

    if examples:  # load the models before the clock starts
        asyncio.run(engine.score([ScoreInput(text=examples[0].text)]))
    t0 = time.perf_counter()
    probs, with_ctx = asyncio.run(go())
    elapsed = time.perf_counter() - t0
    pred = [LABELS[int(np.argmax(p))] for p in probs]
    gold = [e.label for e in examples]
    report = evaluate(gold, pred)
    out = report.model_dump()
    out["texts_per_s"] = round(len(examples) / elapsed, 1) if elapsed > 0 else 0.0
    out["model_id"] = engine.model_id
    out["with_context"] = len(with_ctx)
    if engine.retriever is not None:
        bare_engine = engine.without_retrieval()

        async def bare_pass() -> list[Any]:
            outs: list[Any] = []
            for start in range(0, len(with_ctx), batch):  # batched like the main pass
                idx = with_ctx[start : start + batch]
                outs += await bare_engine.score([ScoreInput(text=examples[k].text) for k in idx])
            return outs

        bare = asyncio.run(bare_pass())
        bare_pred = list(pred)
        for k, o in zip(with_ctx, bare, strict=True):
            bare_pred[k] = LABELS[int(np.argmax(o.probabilities))]
        out["context"] = context_comparison(gold, pred, bare_pred, with_ctx)
    return out


def context_comparison(
    gold: Sequence[SentimentLabel],
    with_context: Sequence[SentimentLabel],
    bare: Sequence[SentimentLabel],
    items: Sequence[int],
) -> dict[str, Any]:
    """With vs without context, on the items that got context and on the whole set."""

    def acc(pred: Sequence[SentimentLabel], idx: Sequence[int]) -> float:
        return round(sum(pred[k] == gold[k] for k in idx) / len(idx), 4) if idx else 0.0

    everything = range(len(gold))
    return {
        "items": len(items),
        "accuracy_with": acc(with_context, items),
        "accuracy_without": acc(bare, items),
        "fixed": sum(with_context[k] == gold[k] != bare[k] for k in items),
        "broken": sum(bare[k] == gold[k] != with_context[k] for k in items),
        "overall_with": acc(with_context, everything),
        "overall_without": acc(bare, everything),
    }


def load_eval_set(path: Path, fmt: str, limit: int | None = None) -> list[Example]:
    examples = load_examples(path, fmt)
    return examples[:limit] if limit else examples
