"""``livekg bench llm``: generation throughput at concurrency 1 and concurrency N.

The same client and server serve both phases: ``requests_c1`` requests one after
another, then ``requests_cn`` requests with ``concurrency`` in flight, alternated for
``rounds`` rounds (so a change in background load hits both phases) and summed. Every request
asks for a long story (a different topic each, greedy decoding) capped at
``max_tokens``, so token counts stay comparable; throughput is completion tokens (as
reported by the server) divided by the phase's wall time. One structured call checks
the schema path end to end.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from core.settings import Settings
from kg.models.llm import LLMClient, OpenAICompatLLM, PromptStats, make_llm_client
from kg.models.llm_errors import StructuredOutputError
from kg.models.prompts import chat

TOPICS = [
    "a bond trader in Shanghai", "a central bank meeting", "an inflation surprise",
    "a corporate default", "a yield curve inversion", "a currency crisis",
    "a rate cut", "an IPO", "a pension fund", "a credit rating downgrade",
    "a market crash", "a bank run", "a new stock index", "a commodity boom",
    "a treasury auction", "a merger", "a hedge fund", "a tax reform",
]  # fmt: skip


def process_cpu_s(pid: int | None) -> float:
    """CPU seconds (user + system) a local process has used; 0.0 when unknown."""
    if not pid:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _phase(
    llm: LLMClient,
    n: int,
    concurrency: int,
    max_tokens: int,
    offset: int,
    server_pid: int | None = None,
) -> dict[str, float]:
    sem = asyncio.Semaphore(concurrency)
    latencies: list[float] = []

    async def one(i: int) -> None:
        msgs = chat.story_v1(topic=TOPICS[(offset + i) % len(TOPICS)])
        async with sem:
            t = time.perf_counter()
            await llm.chat(msgs, prompt_name=chat.story_v1.id, max_tokens=max_tokens)
            latencies.append(time.perf_counter() - t)

    before = llm.stats.completion_tokens
    cpu0 = process_cpu_s(server_pid)
    t0 = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    wall = time.perf_counter() - t0
    tokens = llm.stats.completion_tokens - before
    return {
        "server_cpu_s": process_cpu_s(server_pid) - cpu0,
        "tokens": tokens,
        "seconds": round(wall, 3),
        "tokens_per_s": round(tokens / wall, 2),
        "requests_per_s": round(n / wall, 3),
        "mean_latency_s": round(sum(latencies) / len(latencies), 3),
        "requests": n,
    }


def _combine(phases: list[dict[str, float]], requests: int) -> dict[str, float]:
    tokens = sum(p["tokens"] for p in phases)
    wall = sum(p["seconds"] for p in phases)
    latency = sum(p["mean_latency_s"] * p["requests"] for p in phases) / requests
    cpu = sum(p["server_cpu_s"] for p in phases)
    return {
        "server_cores": round(cpu / wall, 2),
        "tokens_per_server_cpu_s": round(tokens / cpu, 1) if cpu else 0.0,
        "tokens_per_s": round(tokens / wall, 2),
        "requests_per_s": round(requests / wall, 3),
        "mean_latency_s": round(latency, 3),
    }


async def run_llm_bench(
    settings: Settings,
    base_url: str | None,
    *,
    requests_c1: int = 4,
    requests_cn: int = 16,
    concurrency: int = 8,
    max_tokens: int = 64,
    rounds: int = 2,
    server_pid: int | None = None,
) -> dict[str, Any]:
    llm = make_llm_client(settings, base_url, max_concurrency=concurrency)
    try:
        # warm every slot (model pages, first-request setup) before timing
        await _phase(llm, max(2, min(concurrency, 4)), concurrency, 8, offset=0)
        runs: dict[int, list[dict[str, float]]] = {1: [], concurrency: []}
        offset = 1
        for _ in range(rounds):
            for conc, n in ((1, requests_c1), (concurrency, requests_cn)):
                phase = await _phase(llm, n, conc, max_tokens, offset, server_pid)
                runs[conc].append(phase)
                offset += n
        c1 = _combine(runs[1], rounds * requests_c1)
        cn = _combine(runs[concurrency], rounds * requests_cn)
        try:
            summary: chat.Summary | None = await llm.structured(
                chat.summarize_v1(text="Ten-year yields fell 5bp after weak PMI data."),
                chat.Summary,
                prompt_name=chat.summarize_v1.id,
                max_tokens=160,
                max_repairs=1,
            )
        except StructuredOutputError:
            summary = None
        backend = llm.backend.value
        if isinstance(llm, OpenAICompatLLM):
            backend = (await llm.resolve_backend()).value
    finally:
        await llm.aclose()
    return {
        "bench": "llm",
        "backend": backend,
        "model": settings.llm.model,
        "base_url": base_url or settings.llm.base_url or None,
        "max_tokens": max_tokens,
        "concurrency": concurrency,
        "tokens_per_s_c1": c1["tokens_per_s"],
        "tokens_per_s_c8": cn["tokens_per_s"],
        "requests_per_s_c1": c1["requests_per_s"],
        "requests_per_s_c8": cn["requests_per_s"],
        "speedup_c8_vs_c1": round(cn["tokens_per_s"] / max(c1["tokens_per_s"], 1e-9), 2),
        "mean_latency_s_c1": c1["mean_latency_s"],
        "mean_latency_s_c8": cn["mean_latency_s"],
        # the local server's CPU use: on a shared machine the c8 gain is bounded by the
        # CPU share the server gets (cores), not by the number of slots
        "server_cores_c1": c1["server_cores"] if server_pid else None,
        "server_cores_c8": cn["server_cores"] if server_pid else None,
        "tokens_per_server_cpu_s_c1": c1["tokens_per_server_cpu_s"] if server_pid else None,
        "tokens_per_server_cpu_s_c8": cn["tokens_per_server_cpu_s"] if server_pid else None,
        "requests_c1": rounds * requests_c1,
        "requests_c8": rounds * requests_cn,
        "rounds": rounds,
        "structured_ok": summary is not None,
        "structured_repairs": llm.stats.by_prompt.get(chat.summarize_v1.id, PromptStats()).repairs,
        "cpu_count": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
