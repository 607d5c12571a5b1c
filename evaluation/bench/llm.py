"""``livekg bench llm``: the served model, generation throughput at concurrency 1 and N,
its same-run reference, and what the prompt-prefix cache saves.

* Throughput: ``requests_c1`` requests one after another, then ``requests_cn`` with
  ``concurrency`` in flight, alternated for ``rounds`` rounds (so a change in background
  load hits both phases) and summed. Every request asks for a long story (a different
  topic each, greedy decoding) capped at ``max_tokens``; throughput is completion tokens
  (as reported by the server) over the phase's wall time.
* Same-run reference: in each round, beside the c1 phase, the same requests posted with
  bare httpx (no livekg client, limiter, retries or accounting): ``reference`` and
  ``ratio`` (livekg's c1 rate over it).
* Prefix cache: a long prompt (a fixed ~1,000-token instruction block, as the extraction
  and question prompts have, then a short question) first with a prefix the server has
  not seen (``cold``), then the same prefix with another question (``warm``); one
  completion token each, so the times are prompt processing. llama.cpp keeps the last
  prompt's KV state per slot and reuses its longest common prefix; vLLM's automatic
  prefix caching does the same across requests.
* One structured call checks the schema path end to end.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil

from core.errors import ConfigError
from core.settings import Settings
from kg.models.llm import LLMClient, OpenAICompatLLM, PromptStats, make_llm_client
from kg.models.llm_errors import StructuredOutputError
from kg.models.llm_runtime import LOCAL_MODELS, server_command, server_env
from kg.models.prompts import chat
from kg.models.prompts.base import ChatMessage, system, user
from ops.runtime import free_port

BENCH_TIMEOUT_S = 900.0

TOPICS = [
    "a bond trader in Shanghai", "a central bank meeting", "an inflation surprise",
    "a corporate default", "a yield curve inversion", "a currency crisis",
    "a rate cut", "an IPO", "a pension fund", "a credit rating downgrade",
    "a market crash", "a bank run", "a new stock index", "a commodity boom",
    "a treasury auction", "a merger", "a hedge fund", "a tax reform",
]  # fmt: skip


@contextlib.contextmanager
def local_server(
    settings: Settings, *, nice: int = 0, ready_s: float = 300.0, log: Path | None = None
) -> Iterator[tuple[str, int]]:
    """The embedded model server alone (no broker, graph or worker) for a bench or a
    replay: ``(base_url, pid)`` while the block runs, stopped after it. ``nice``: its
    CPU priority on a shared machine (``nice -n``)."""
    port = free_port()
    cmd = server_command(settings, port)
    if nice:
        cmd = ["nice", "-n", str(nice), *cmd]
    out = open(log, "ab") if log else subprocess.DEVNULL  # closed below
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True,
                            env={**os.environ, **server_env()})  # fmt: skip
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + ready_s
        while True:
            if proc.poll() is not None:
                raise ConfigError(f"the model server exited with {proc.returncode}")
            try:
                if httpx.get(f"{base}/models", timeout=2.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise ConfigError(f"the model server did not answer within {ready_s:.0f}s")
            time.sleep(0.5)
        yield base, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        if log:
            out.close()  # type: ignore[union-attr]


def process_cpu_s(pid: int | None) -> float:
    """CPU seconds (user + system) a local process has used; 0.0 when unknown."""
    if not pid:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_rss_mib(pid: int | None) -> float | None:
    """Resident memory of a local process and its children (the model server), MiB."""
    if not pid:
        return None
    try:
        proc = psutil.Process(pid)
        rss = proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(True))
    except psutil.Error:  # gone: not worth failing the bench
        return None
    return round(float(rss) / 2**20, 1)


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
        "load_1m": round(os.getloadavg()[0], 2),  # the machine's load as the phase ended
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


async def _reference_phase(
    base_url: str, model: str, n: int, max_tokens: int, offset: int
) -> dict[str, float]:
    """The c1 phase's requests posted with bare httpx: the server's own rate."""
    tokens, t0 = 0, time.perf_counter()
    base = base_url.rstrip("/") + "/"
    async with httpx.AsyncClient(base_url=base, timeout=BENCH_TIMEOUT_S) as http:
        for i in range(n):
            msgs = chat.story_v1(topic=TOPICS[(offset + i) % len(TOPICS)])
            body = {"model": model, "messages": [m.model_dump() for m in msgs],
                    "max_tokens": max_tokens, "temperature": 0.0, "stream": False}  # fmt: skip
            r = await http.post("chat/completions", json=body)
            r.raise_for_status()
            tokens += int((r.json().get("usage") or {}).get("completion_tokens") or 0)
    return {"tokens": tokens, "seconds": time.perf_counter() - t0}


PREFIX_RULES = [
    "Name each company exactly as the text writes it; never invent a name.",
    "A fact needs a value, a unit and a period that all appear in the text.",
    "Rates are in percent, moves in basis points; keep the sign the text gives.",
    "Quoted analysts are not executives of the company they talk about.",
    "A central bank decision names the bank, the move and the new level.",
    "Earnings figures name the quarter or the fiscal year they belong to.",
    "Chinese names stay in Chinese characters; do not translate them.",
    "When the text is silent, answer with an empty list, not a guess.",
]


def prefix_prompt(nonce: str, question: str, lines: int = 40) -> list[ChatMessage]:
    """A long fixed instruction block (its first line ``nonce``) and a short question."""
    body = "\n".join(
        f"{i + 1}. {PREFIX_RULES[i % len(PREFIX_RULES)]} (see case {TOPICS[i % len(TOPICS)]})"
        for i in range(lines)
    )
    return [
        system(f"Session {nonce}. You extract facts from financial news.\n{body}"),
        user(question),
    ]


async def _prefix_cache(llm: LLMClient, rounds: int) -> dict[str, Any]:
    """Prompt processing of a long prompt cold (new prefix) and warm (same prefix)."""
    cold: list[float] = []
    warm: list[float] = []
    tokens = 0
    for r in range(rounds):
        nonce = f"{os.getpid()}-{time.time_ns()}-{r}"
        for bucket, question in ((cold, "Which bank moved rates?"), (warm, "Which firm reported?")):
            before = llm.stats.prompt_tokens
            t = time.perf_counter()
            await llm.chat(prefix_prompt(nonce, question), prompt_name="bench.prefix",
                           max_tokens=1)  # fmt: skip
            bucket.append(time.perf_counter() - t)
            tokens = llm.stats.prompt_tokens - before
    cold_s, warm_s = sorted(cold)[len(cold) // 2], sorted(warm)[len(warm) // 2]
    return {
        "prompt_tokens": tokens,
        "cold_s": round(cold_s, 3),
        "warm_s": round(warm_s, 3),
        "speedup": round(cold_s / max(warm_s, 1e-9), 1),
        "rounds": rounds,
    }


async def served_models(base_url: str) -> list[str]:
    async with httpx.AsyncClient(timeout=30) as http:
        r = await http.get(base_url.rstrip("/") + "/models")
        r.raise_for_status()
        return [str(m.get("id")) for m in r.json().get("data") or []]


def local_model_title(settings: Settings) -> str | None:
    """The GGUF's own name when the embedded server serves a known local model."""
    spec = LOCAL_MODELS.get(settings.llm.local_model)
    return spec.title if spec else settings.llm.local_model


async def run_llm_bench(
    settings: Settings,
    base_url: str | None,
    *,
    requests_c1: int = 3,
    requests_cn: int = 6,
    concurrency: int = 3,
    max_tokens: int = 64,
    rounds: int = 2,
    server_pid: int | None = None,
    embedded: bool = False,
) -> dict[str, Any]:
    url = base_url or settings.llm.base_url
    # a bench measures slow answers instead of giving up on them (a cold 1,000-token
    # prompt takes minutes on a busy 2-core machine)
    patient = settings.model_copy(
        update={"llm": settings.llm.model_copy(update={"timeout_s": BENCH_TIMEOUT_S})}
    )
    llm = make_llm_client(patient, base_url, max_concurrency=concurrency)
    ref = {"tokens": 0, "seconds": 0.0}
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    try:
        # warm every slot (model pages, first-request setup) before timing
        await _phase(llm, max(2, min(concurrency, 4)), concurrency, 8, offset=0)
        runs: dict[int, list[dict[str, float]]] = {1: [], concurrency: []}
        offset = 1
        for _ in range(rounds):
            for conc, n in ((1, requests_c1), (concurrency, requests_cn)):
                phase = await _phase(llm, n, conc, max_tokens, offset, server_pid)
                runs[conc].append(phase)
                if conc == 1 and url:  # the same requests again, bare: the reference
                    one = await _reference_phase(url, settings.llm.model, n, max_tokens, offset)
                    ref = {k: ref[k] + one[k] for k in ref}
                offset += n
        c1 = _combine(runs[1], rounds * requests_c1)
        cn = _combine(runs[concurrency], rounds * requests_cn)
        prefix = await _prefix_cache(llm, rounds)
        served = await served_models(url) if url else [settings.llm.model]
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
    reference = round(ref["tokens"] / ref["seconds"], 2) if ref["seconds"] else None
    return {
        "bench": "llm",
        "backend": backend,
        "model": settings.llm.model,
        "served_models": served,
        # the GGUF the embedded server loaded (its general.name); None for a remote server
        "model_file": local_model_title(settings) if embedded else None,
        "base_url": url or None,
        "max_tokens": max_tokens,
        "concurrency": concurrency,
        "tokens_per_s_c1": c1["tokens_per_s"],
        "tokens_per_s_cn": cn["tokens_per_s"],
        # the c1 requests posted with bare httpx in the same rounds, and c1 over it
        "reference": reference,
        "ratio": round(c1["tokens_per_s"] / reference, 3) if reference else None,
        "requests_per_s_c1": c1["requests_per_s"],
        "requests_per_s_cn": cn["requests_per_s"],
        "speedup_cn_vs_c1": round(cn["tokens_per_s"] / max(c1["tokens_per_s"], 1e-9), 2),
        "mean_latency_s_c1": c1["mean_latency_s"],
        "mean_latency_s_cn": cn["mean_latency_s"],
        "prefix_cache": prefix,
        # the local server's CPU use: on a shared machine the cN gain is bounded by the
        # CPU share the server gets (cores), not by the number of slots
        "server_cores_c1": c1["server_cores"] if server_pid else None,
        "server_cores_cn": cn["server_cores"] if server_pid else None,
        "tokens_per_server_cpu_s_c1": c1["tokens_per_server_cpu_s"] if server_pid else None,
        "tokens_per_server_cpu_s_cn": cn["tokens_per_server_cpu_s"] if server_pid else None,
        "server_rss_mib": server_rss_mib(server_pid),
        "requests_c1": rounds * requests_c1,
        "requests_cn": rounds * requests_cn,
        "rounds": rounds,
        "structured_ok": summary is not None,
        "structured_repairs": llm.stats.by_prompt.get(chat.summarize_v1.id, PromptStats()).repairs,
        "cpu_count": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        # the load beside every figure: at the start, after each c1 phase, at the end
        "load_avg_at_start": load_at_start,
        "load_1m_c1_phases": [p["load_1m"] for p in runs[1]],
        "load_avg_at_end": [round(x, 2) for x in os.getloadavg()],
    }
