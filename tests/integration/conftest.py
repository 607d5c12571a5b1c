"""Fixtures shared by integration modules: the embedded model behind llama.cpp's
OpenAI-compatible server."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.settings import Settings
from kg.models.llm_runtime import DEFAULT_LOCAL_MODEL, server_command, server_env
from ops.runtime import free_port, http_ready, stop_pid, wait_until

LLM_MODEL = DEFAULT_LOCAL_MODEL


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``llama_cpp.server`` with the bundled Qwen2.5-Coder-1.5B (one per module); its
    /v1 URL. Callers keep ``max_tokens`` short: the model decodes ~10 tokens/s here."""
    port = free_port()
    settings = Settings(llm={"model": LLM_MODEL, "n_threads": 2, "n_ctx": 2048})
    log = tmp_path_factory.mktemp("llm") / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            server_command(settings, port, plain=True),
            env={**os.environ, **server_env()},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}/v1"
    try:

        def ready() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(Path(log).read_text()[-2000:])
            return http_ready(f"{base}/models")

        wait_until(ready, "llama_cpp.server", timeout=120)
        yield base
    finally:
        stop_pid(proc.pid)
