"""A fatally failed idempotent producer is replaced, and a send waiting on it gives up."""

from __future__ import annotations

import asyncio
import time

import pytest
from confluent_kafka import KafkaError, KafkaException

from core.errors import ServiceUnavailable
from streams.publisher import Publisher, deferred_acks, settle


def fatal() -> KafkaError:
    return KafkaError(KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER, "sequence lost", fatal=True)


def test_fatal_error_replaces_the_producer() -> None:
    pub = Publisher("127.0.0.1:9")  # nothing listens: no send completes
    try:
        old = pub._producer
        pub._on_error(KafkaError(KafkaError._TRANSPORT, "down"))  # not fatal: kept
        pub._replace_if_fatal()
        assert pub._producer is old and pub.replaced == 0
        pub._on_error(fatal())
        pub._replace_if_fatal()
        assert pub._producer is not old and pub.replaced == 1
        assert pub._fatal is None
    finally:
        pub.close(timeout=0)


async def test_send_waiting_on_a_fatal_producer_raises() -> None:
    pub = Publisher("127.0.0.1:9")
    try:
        send = asyncio.create_task(pub.send_many("t", [(None, b"x")]))
        await asyncio.sleep(0.2)
        assert not send.done()  # undeliverable, still waiting
        pub._on_error(fatal())
        with pytest.raises(ServiceUnavailable, match="fatally"):
            await asyncio.wait_for(send, timeout=10)
    finally:
        pub._producer.purge()
        pub.close(timeout=0)


def test_poll_thread_survives_a_fatal_error_raised_out_of_poll() -> None:
    """librdkafka can raise the fatal error from poll(): the poller records it and lives."""
    pub = Publisher("127.0.0.1:9")
    real = pub._producer
    calls = [0]

    class Raising:
        def poll(self, _t: float) -> int:
            calls[0] += 1
            if calls[0] == 1:
                raise KafkaException(fatal())
            return 0

    try:
        pub._producer = Raising()  # type: ignore[assignment]
        deadline = time.monotonic() + 10
        while calls[0] < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert calls[0] >= 3, "the poll thread died on the fatal error"
        assert pub._fatal is not None and "sequence lost" in pub._fatal
    finally:
        pub._producer = real
        pub.close(timeout=0)


def test_webhook_sink_replaces_a_fatally_failed_producer() -> None:
    """The API's social webhook sink: a fatal produce error -> 503 for this call (raised),
    and the next call goes through a new producer."""
    from connectors.social import SocialSink
    from core.records import RawSocialPost

    sink = SocialSink("127.0.0.1:9")
    post = RawSocialPost(source="t", text="hello", event_time="2026-11-20T00:00:00Z")

    class Dead:
        def produce(self, *_a: object, **_k: object) -> None:
            raise KafkaException(fatal())

        def purge(self) -> None:
            pass

    sink.producer = Dead()  # type: ignore[assignment]
    with pytest.raises(RuntimeError, match="sequence lost"):
        sink._send([post])
    assert sink.replaced == 1 and not isinstance(sink.producer, Dead)
    sink.producer.purge()


async def test_deferred_send_returns_at_once_and_settle_reports_the_failure() -> None:
    """Inside ``deferred_acks`` (a lane) the send returns once produced; the wait for the
    acknowledgement, and its failure, come with ``settle``."""
    pub = Publisher("127.0.0.1:9")  # nothing listens: no send is ever acknowledged
    try:
        with deferred_acks() as acks:
            await asyncio.wait_for(pub.send_many("t", [(None, b"x")]), timeout=5)
        assert len(acks) == 1
        waiting = asyncio.create_task(settle(acks))
        await asyncio.sleep(0.2)
        assert not waiting.done()
        pub._on_error(fatal())
        with pytest.raises(ServiceUnavailable, match="fatally"):
            await asyncio.wait_for(waiting, timeout=10)
        # outside the block a send waits again
        send = asyncio.create_task(pub.send_many("t", [(None, b"y")]))
        await asyncio.sleep(0.2)
        assert not send.done()
        send.cancel()
    finally:
        pub._producer.purge()
        pub.close(timeout=0)
