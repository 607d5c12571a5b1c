"""A lane whose librdkafka consumer is failed fatally builds a new one and goes on.

The three-broker drill's stall: a static group member whose session expired on the
client side (the coordinator's broker was killed) rejoined and was fenced by its own
earlier member id; librdkafka reports that as a fatal error and the consumer never
fetches again. Here the fencing is made on purpose, on the real broker: a second
consumer joins with the lane's ``group.instance.id``. The lane must then consume the
records produced after it, through a new consumer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from confluent_kafka import Consumer, Producer

from core import metrics
from core.batch import Inbound
from core.runtime_state import Endpoints
from streams.context import Route, WorkerContext
from streams.lanes import Lane
from tests.conftest import Isolated


async def wait_for(check, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.2)


def produce(bootstrap: str, topic: str, values: Sequence[str]) -> None:
    prod = Producer({"bootstrap.servers": bootstrap})
    for v in values:
        prod.produce(topic, key=v.encode(), value=v.encode())
    assert prod.flush(30) == 0


async def test_lane_replaces_a_fatally_failed_consumer(iso: Isolated) -> None:
    settings = iso.settings.with_overrides(streams={"broker_session_timeout_s": 6.0})
    ctx = WorkerContext(
        settings=settings, endpoints=Endpoints(kafka_bootstrap=iso.bootstrap, falkordb_url=None)
    )
    seen: set[str] = set()

    async def collect(items: Sequence[Inbound]) -> None:
        seen.update(i.value.decode() for i in items)

    fatal = metrics.ERRORS.labels("lane:ingest", "consumer_fatal")
    fatal_before = fatal._value.get()
    lane = Lane(name="ingest", ctx=ctx, worker_id="fenced")
    lane.add(Route(agent="collect", sources=["raw.news"], run=collect))
    task = asyncio.create_task(lane.run())
    topic = iso.topic("raw.news")
    first, second, third = ([f"{n}{i}" for i in range(20)] for n in "abc")
    intruder: Consumer | None = None
    try:
        await asyncio.to_thread(produce, iso.bootstrap, topic, first)
        await wait_for(lambda: seen >= set(first), "the first records")

        # Same group, same group.instance.id: the broker hands the intruder the lane's
        # membership, and the lane's consumer is fenced (fatal) on its next request.
        group = f"{settings.kafka.consumer_group}.ingest"
        intruder = Consumer({
            "bootstrap.servers": iso.bootstrap, "group.id": group,
            "group.instance.id": f"{group}-worker-fenced", "enable.auto.commit": False,
            "session.timeout.ms": 6000,
        })  # fmt: skip
        intruder.subscribe([topic])
        deadline = time.monotonic() + 60
        while not intruder.assignment() and time.monotonic() < deadline:
            await asyncio.to_thread(intruder.poll, 0.5)
        assert intruder.assignment(), "the intruder never joined the group"
        intruder.close()  # a static member leaves nothing behind: the lane may take over
        intruder = None

        # The old consumer may still fetch these (its partitions are not revoked yet);
        # its commit is what meets the fencing.
        await asyncio.to_thread(produce, iso.bootstrap, topic, second)
        await wait_for(lambda: seen >= set(second), "the records produced after the fencing")
        await wait_for(lambda: fatal._value.get() > fatal_before, "the fatal error")
        # A fatally failed consumer fetches nothing more: these come through a new one.
        await asyncio.to_thread(produce, iso.bootstrap, topic, third)
        await wait_for(lambda: seen >= set(third), "the records produced after the fatal error")
        assert not task.done()
    finally:
        if intruder is not None:
            intruder.close()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
