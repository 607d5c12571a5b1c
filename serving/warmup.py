"""The API's start-up warm-up through its own HTTP route (issue 31, "answers without cold
starts").

Building the models in-process (``Services.warm_ask``) is not enough: the first request
through uvicorn, FastAPI's routing, dependencies, request validation, the response
model's serialiser, the metrics labels and the garbage collector's first full pass over
the freshly loaded models cost a user's first question several times a warm answer. So
once uvicorn listens, the app sends its warm-up requests to itself over loopback (found
among this process's listening sockets, recognised by the ``instance`` token that
``GET /health`` returns), and only then reports ready. Without a listening socket (an
ASGI test client) the same requests go through the app in-process. The warm-up requests
count in the HTTP metrics like any other, and its three questions in the first API key's
rate limit.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from typing import Any

import httpx
import psutil

log = logging.getLogger(__name__)

# The health check, the dashboard page and its script (what a browser loads before its
# first question), then the questions.
WARM_GETS = ("/health", "/", "/static/dashboard.js")
FIND_TIMEOUT_S = 5.0  # uvicorn listens right after the lifespan start-up returns
PROBE_TIMEOUT_S = 2.0  # a listening socket of this process that is not our server


def listening_urls() -> list[str]:
    """Base URLs of the TCP sockets this process listens on (wildcards as loopback)."""
    urls = []
    for conn in psutil.Process().net_connections(kind="inet"):
        if conn.status != psutil.CONN_LISTEN or not conn.laddr:
            continue
        host, port = conn.laddr.ip, conn.laddr.port
        if host in ("0.0.0.0", ""):
            host = "127.0.0.1"
        elif host == "::":
            host = "::1"
        urls.append(f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}")
    return urls


async def own_client(app: Any, instance: str, headers: dict[str, str]) -> httpx.AsyncClient:
    """A client of this app over loopback when uvicorn listens; in-process otherwise."""
    deadline = time.monotonic() + FIND_TIMEOUT_S
    while True:
        for url in await asyncio.to_thread(listening_urls):
            client = httpx.AsyncClient(base_url=url, headers=headers, timeout=30)
            try:
                r = await client.get("/health", timeout=PROBE_TIMEOUT_S)
                if r.status_code == 200 and r.json().get("instance") == instance:
                    return client
            except (httpx.HTTPError, ValueError):
                pass
            await client.aclose()
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    log.info("warm-up: no listening socket of this app found, warming in-process")
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://warmup", headers=headers)


async def warm_routes(client: httpx.AsyncClient, questions: tuple[str, ...]) -> None:
    """Each warm-up request once through the real routes; answers are discarded."""
    for path in WARM_GETS:
        await client.get(path)
    for question in questions:
        # no LLM revision: a revision takes the model server seconds, and is not the path
        r = await client.post("/ask", json={"question": question, "revise": False, "reword": False})
        if r.status_code != 200:
            log.warning("warm-up question got %s: %s", r.status_code, r.text[:200])


def settle_heap() -> None:
    """One full collection now, then the start-up objects (models, index, modules) leave
    the collector's view: a user's first request neither pays the first full pass over
    them nor later ones (``gc.freeze``)."""
    gc.collect()
    gc.freeze()
