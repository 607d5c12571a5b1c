"""A fatally failed idempotent producer is replaced, and a send waiting on it gives up."""

from __future__ import annotations

import asyncio

import pytest
from confluent_kafka import KafkaError

from kg.errors import ServiceUnavailable
from streams.publisher import Publisher


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
