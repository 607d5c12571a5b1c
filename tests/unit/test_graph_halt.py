"""An error no record explains halts the sink with its cause instead of bisecting the
batch into one dead letter per record (a real Bolt server once turned one constraint
error into ~1,000 single-record retries and 480 dead letters)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from core import metrics
from core.batch import Inbound
from core.errors import GraphError, GraphHalt
from streams.processors import base
from streams.processors.graph_sink import write_isolating


def items(n: int) -> list[Inbound]:
    return [Inbound(topic="kg.triples", value=b"{}", partition=0, offset=i) for i in range(n)]


async def test_a_halt_is_not_bisected_into_dead_letters() -> None:
    calls: list[int] = []

    async def writer(store: Any, records: list[int]) -> int:
        calls.append(len(records))
        raise GraphHalt("Duplicated key [a] found on index 'Entity[id]'")

    with pytest.raises(GraphHalt):
        await write_isolating(None, writer, list(range(64)), items(64), "triple_sink")  # type: ignore[arg-type]
    assert calls == [64]


async def test_a_record_level_error_is_still_isolated() -> None:
    async def writer(store: Any, records: list[int]) -> int:
        if 13 in records:
            raise GraphError("bad value in record 13")
        return len(records)

    written, dead = await write_isolating(None, writer, list(range(32)), items(32), "s")  # type: ignore[arg-type]
    assert written == 31 and [d.offset for d in dead] == [13]


class Ctx:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def send(self, logical: str, records: list[Any]) -> None:
        self.sent.append((logical, records))


async def test_the_shell_halts_without_dead_letters_and_resumes_when_fixed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(base, "HALT_BACKOFF_MAX_S", 0.01)
    failures = [GraphHalt("schema problem")] * 3
    handled: list[int] = []

    async def handler(batch: list[Inbound]) -> None:
        if failures:
            raise failures.pop()
        handled.append(len(batch))

    real_sleep = asyncio.sleep

    async def fast_sleep(_s: float) -> None:
        gauge = metrics.AGENT_HALTED.labels("halting_agent")._value.get()
        assert gauge == 1  # halted (and visible) while it waits
        await real_sleep(0)

    monkeypatch.setattr(base.asyncio, "sleep", fast_sleep)
    ctx = Ctx()
    await base.handle_safely(ctx, "halting_agent", items(5), handler)  # type: ignore[arg-type]
    assert handled == [5] and ctx.sent == []  # nothing dead-lettered
    assert metrics.AGENT_HALTED.labels("halting_agent")._value.get() == 0
