"""``livekg bench embed``: texts/s of an embedder on unique (uncached) texts.

Model load time is reported apart; a short warm-up runs first. ``texts_per_s`` counts
only model work (every text is new); ``texts_per_cpu_s`` divides by this process's CPU
time instead of wall time (steadier on a shared machine, and equal to ``texts_per_s``
per thread on an idle one); ``cached_texts_per_s`` repeats the same texts to show what
the LRU cache gives on hot keys.
"""

from __future__ import annotations

import os
import time
from typing import Any

from core.settings import EmbedSettings
from kg.models.embed import make_embedder

EN = [
    "{i}: Ten-year Treasury yields rose {b} basis points after stronger payrolls data.",
    "{i}: The central bank kept its policy rate unchanged and signalled patience on cuts.",
    "{i}: Company {i} reported quarterly revenue up {b}% on strong cloud demand.",
    "{i}: Credit spreads on high-yield bonds widened {b} bp as default fears grew.",
    "{i}: Money market rates eased as the central bank injected liquidity via reverse repos.",
]
ZH = [
    "{i}：十年期国债收益率上行{b}个基点，市场对经济复苏预期升温。",
    "{i}：央行开展逆回购操作，银行间流动性保持合理充裕。",
    "{i}：公司{i}发布公告，前三季度净利润同比增长{b}%。",
    "{i}：信用债利差走阔{b}个基点，违约担忧有所上升。",
]


def bench_texts(n: int, lang: str = "en") -> list[str]:
    pool = {"en": EN, "zh": ZH, "mixed": EN + ZH}[lang]
    return [pool[i % len(pool)].format(i=i, b=i % 37 + 1) for i in range(n)]


def run_embed_bench(
    model: str,
    *,
    texts: int = 1000,
    lang: str = "en",
    batch_size: int = 64,
    device: str = "cpu",
    num_threads: int = 2,
) -> dict[str, Any]:
    t0 = time.perf_counter()
    cfg = EmbedSettings(model=model, device=device, batch_size=batch_size)
    emb = make_embedder(cfg, num_threads=num_threads)
    load_s = time.perf_counter() - t0
    emb.embed_sync(bench_texts(16, lang), "passage")  # warm-up (not in the timed set)
    batch = [f"bench {t}" for t in bench_texts(texts, lang)]
    t0, c0 = time.perf_counter(), time.process_time()
    vecs = emb.embed_sync(batch, "passage")
    cold, cold_cpu = time.perf_counter() - t0, time.process_time() - c0
    t0 = time.perf_counter()
    emb.embed_sync(batch, "passage")
    hot = time.perf_counter() - t0
    return {
        "bench": "embed",
        "model": model,
        "model_id": emb.model_id,
        "dim": emb.dim,
        "texts": texts,
        "lang": lang,
        "batch_size": batch_size,
        "device": getattr(emb, "device", "cpu"),
        "num_threads": num_threads,
        "load_s": round(load_s, 2),
        "texts_per_s": round(texts / cold, 1),
        # per CPU-second of this process: less sensitive to other load on a shared box
        "texts_per_cpu_s": round(texts / max(cold_cpu, 1e-9), 1),
        "cached_texts_per_s": round(texts / hot, 1),
        "shape_ok": vecs.shape == (texts, emb.dim),
        "cpu_count": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
