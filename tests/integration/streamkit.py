"""Helpers for tests that drive a real worker: produce, read topics, wait for the graph."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from confluent_kafka import Consumer, Producer

from core.records import Record
from core.runtime_state import Endpoints
from core.settings import Settings
from ops.runtime import spawn_worker, stop_pid


@contextmanager
def worker_process(
    settings: Settings, bootstrap: str, falkordb_url: str, data: Path
) -> Iterator[Path]:
    """A real worker process on the test's stack; yields its data dir, fails if it died."""
    ep = Endpoints(kafka_bootstrap=bootstrap, falkordb_url=falkordb_url)
    proc, _port = spawn_worker(settings, ep, data)
    yield data
    alive = proc.poll() is None
    stop_pid(proc.pid)
    assert alive, (data / "worker.log").read_text()[-4000:]


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
