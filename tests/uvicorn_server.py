"""A real uvicorn server for an app under test, on a free loopback port (the warm-up and
the serve bench are about what happens on a socket, so an in-process client would not do)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn


@asynccontextmanager
async def served(app: Any) -> AsyncIterator[tuple[uvicorn.Server, int]]:
    """Serve ``app`` on 127.0.0.1 until the block ends; yields the server and its port once
    it listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    try:
        for _ in range(500):
            if server.started:
                break
            await asyncio.sleep(0.02)
        yield server, port
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)
