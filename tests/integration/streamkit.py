"""Helpers for tests that drive a real worker: produce, read topics, wait for the graph."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence

from confluent_kafka import Consumer, Producer

from streams.records import Record


def produce(
    bootstrap: str, topic: str, values: Sequence[Record | bytes], key: bytes | None = None
) -> None:
    prod = Producer({"bootstrap.servers": bootstrap, "linger.ms": 2})
    for v in values:
        if isinstance(v, Record):
            prod.produce(topic, key=v.key().encode(), value=v.__pydantic_serializer__.to_json(v))
        else:
            prod.produce(topic, key=key, value=v)
    assert prod.flush(30) == 0, "test producer could not deliver"


def read_topic(bootstrap: str, topic: str, *, expect: int, timeout: float = 60.0) -> list[bytes]:
    """Every record of ``topic`` from the start, waiting until at least ``expect`` arrived."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{time.monotonic_ns()}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    out: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                if len(out) >= expect:
                    break
                continue
            out.append(msg.value())
    finally:
        consumer.close()
    return out


async def wait_for(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await check():
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")
