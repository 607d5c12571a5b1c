"""A shim for brokers that answer empty fetches at once (the light noida-db option).

Kafka holds a fetch open for up to ``fetch.max.wait.ms`` when there is no data, so
against the default embedded broker (Apache Kafka) and any real cluster the backoff is
off (``streams.empty_fetch_backoff_ms = 0``, the default). The noida-db broker answers
immediately instead, so aiokafka's fetcher (inside faust) re-sends fetches in a tight
loop: an idle worker burned ~70% of a core there and, holding the GIL, starved the
agents. With ``backoff_ms > 0`` (the runtime sets 20 when ``kafka.embedded = "noida"``)
this wraps the fetcher so a fetch that returned no records waits ``backoff_ms`` before
the next one to that broker.

Idle: once fetches have come back empty for ``IDLE_AFTER_S``, the pause becomes
``idle_max_ms`` (``ops.idle_max_pause_ms``), so an idle worker stays under 5% of a core;
the first record after a quiet spell waits at most that long, a busy stream never.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiokafka.consumer.fetcher import Fetcher

_ORIGINAL = Fetcher._proc_fetch_request
_state: dict[str, float] = {"backoff_s": 0.0, "idle_s": 0.0, "empty_since": 0.0}
IDLE_AFTER_S = 1.0


def idle_pause(base_s: float, idle_s: float, empty_for_s: float) -> float:
    """The pause after an empty fetch: ``base_s``, or ``idle_s`` once idle a while."""
    return max(idle_s, base_s) if empty_for_s >= IDLE_AFTER_S else base_s


async def _proc_fetch_request_with_backoff(
    self: Fetcher, assignment: Any, node_id: int, request: Any
) -> bool:
    got_records = await _ORIGINAL(self, assignment, node_id, request)
    if got_records:
        _state["empty_since"] = 0.0
    elif _state["backoff_s"] > 0:
        now = time.monotonic()
        if not _state["empty_since"]:
            _state["empty_since"] = now
        pause = idle_pause(_state["backoff_s"], _state["idle_s"], now - _state["empty_since"])
        await asyncio.sleep(pause)
    return got_records


def install_empty_fetch_backoff(backoff_ms: float, idle_max_ms: float = 0.0) -> None:
    """Idempotent; ``backoff_ms <= 0`` restores aiokafka's own behaviour."""
    _state["backoff_s"] = max(backoff_ms, 0.0) / 1000.0
    _state["idle_s"] = max(idle_max_ms, 0.0) / 1000.0
    if backoff_ms > 0:
        Fetcher._proc_fetch_request = _proc_fetch_request_with_backoff  # type: ignore[method-assign]
    else:
        Fetcher._proc_fetch_request = _ORIGINAL  # type: ignore[method-assign]
