"""The API's start-up warm-up goes through its own HTTP route (issue 31): the warm-up
questions reach POST /ask over loopback, and the API reports ready only after them."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import httpx

from core.settings import Settings
from kg.cypher import AskResult
from serving import warmup
from serving.app import create_app
from serving.services import WARM_QUESTIONS, Services
from serving.warmup import listening_urls
from tests.uvicorn_server import served


class RecordingQA:
    def __init__(self, gate: asyncio.Event) -> None:
        self.asked: list[str] = []
        self.gate = gate

    async def ask(self, question: str, *, revise: bool | None = None, **_: Any) -> AskResult:
        assert revise is False  # the warm-up never waits on the LLM reviser
        await self.gate.wait()
        self.asked.append(question)
        return AskResult(question=question, method="none", answer="not known")


class FakeServices(Services):
    """No graph or models: the question path is a recorder."""

    def __init__(self, settings: Settings, qa: RecordingQA) -> None:
        super().__init__(settings)
        self.fake_qa = qa

    async def warm_ask(self) -> bool:
        return True

    async def qa(self) -> Any:
        return self.fake_qa


def test_listening_urls_include_a_socket_of_this_process() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert f"http://127.0.0.1:{port}" in listening_urls()
    assert f"http://127.0.0.1:{port}" not in listening_urls()


async def test_warm_up_asks_through_the_route_over_loopback_then_reports_ready(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path, api={"api_keys": ["k"]})
    gate = asyncio.Event()
    qa = RecordingQA(gate)
    svc = FakeServices(settings, qa)
    app = create_app(settings, services=svc)
    seen: list[tuple[str, tuple[Any, ...]]] = []

    @app.middleware("http")
    async def record(request: Any, call_next: Any) -> Any:
        seen.append((request.url.path, tuple(request.scope.get("server") or ())))
        return await call_next(request)

    async with served(app) as (_, port):
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as c:
            health = (await c.get("/health")).json()
            assert health["ready"] is False  # the warm-up questions wait on the gate
            gate.set()
            for _ in range(250):
                if svc.ask_ready():
                    break
                await asyncio.sleep(0.02)
            assert svc.ask_ready()
            after = (await c.get("/health")).json()
            assert after["ready"] is True and after["instance"] == health["instance"]
    assert qa.asked == list(WARM_QUESTIONS)
    # through the HTTP server on its socket, not an in-process ASGI client
    asks = [server for path, server in seen if path == "/ask"]
    assert asks == [("127.0.0.1", port)] * len(WARM_QUESTIONS)
    assert ("/", ("127.0.0.1", port)) in seen
    assert ("/static/dashboard.js", ("127.0.0.1", port)) in seen


async def test_warm_up_without_a_server_goes_through_the_app_in_process(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setattr(warmup, "FIND_TIMEOUT_S", 0.2)
    settings = Settings(data_dir=tmp_path)
    gate = asyncio.Event()
    gate.set()
    qa = RecordingQA(gate)
    svc = FakeServices(settings, qa)
    app = create_app(settings, services=svc)
    async with app.router.lifespan_context(app):
        for _ in range(500):
            if svc.ask_ready():
                break
            await asyncio.sleep(0.02)
        assert svc.ask_ready()
    assert qa.asked == list(WARM_QUESTIONS)
