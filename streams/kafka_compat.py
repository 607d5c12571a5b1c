"""A shim for brokers that answer empty fetches at once.

Kafka holds a fetch open for up to ``fetch.max.wait.ms`` when there is no data. The
embedded noida-db broker answers immediately instead, so aiokafka's fetcher (inside
faust) re-sends fetches in a tight loop: an idle worker burned ~70% of a core here and,
holding the GIL, starved the agents. This wraps the fetcher so a fetch that returned
no records waits ``backoff_ms`` before the next one to that broker. Against a real
Kafka broker it only adds that small pause after already-long-polled empty fetches.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiokafka.consumer.fetcher import Fetcher

_ORIGINAL = Fetcher._proc_fetch_request
_state: dict[str, float] = {"backoff_s": 0.0}


async def _proc_fetch_request_with_backoff(
    self: Fetcher, assignment: Any, node_id: int, request: Any
) -> bool:
    got_records = await _ORIGINAL(self, assignment, node_id, request)
    if not got_records and _state["backoff_s"] > 0:
        await asyncio.sleep(_state["backoff_s"])
    return got_records


def install_empty_fetch_backoff(backoff_ms: float) -> None:
    """Idempotent; ``backoff_ms <= 0`` restores aiokafka's own behaviour."""
    _state["backoff_s"] = max(backoff_ms, 0.0) / 1000.0
    if backoff_ms > 0:
        Fetcher._proc_fetch_request = _proc_fetch_request_with_backoff  # type: ignore[method-assign]
    else:
        Fetcher._proc_fetch_request = _ORIGINAL  # type: ignore[method-assign]
