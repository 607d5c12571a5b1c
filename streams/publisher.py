"""Produce agent outputs with confluent-kafka (librdkafka) and await their delivery.

faust's own ``Topic.send`` cost ~1.5 ms per record here (a round of its producer buffer
per batch), while librdkafka batches in C. ``send_many`` returns only when the broker
acknowledged every record, so an agent finishes a batch (and faust commits its input
offsets) only after its outputs are durable: at-least-once end to end.

An idempotent producer can fail *fatally* (e.g. ``OUT_OF_ORDER_SEQUENCE_NUMBER`` after a
broker lost its sequence state on restart); librdkafka then refuses every later send.
The publisher replaces such a producer with a new one (a new producer id) and reports the
batch as undelivered, so the agent retries it: at-least-once, nothing lost.

A lane (streams/lanes.py) may let an agent go on to its next batch while the broker
acknowledges the previous one's outputs: inside ``deferred_acks()`` ``send_many``
returns once the records are produced (in order) and leaves the wait for their
acknowledgement in the list it yields; the lane awaits that (``settle``) before it
commits the batch's offsets, so offsets still follow acknowledged outputs. Work that
must follow the acknowledgement inside the handler (staged table writes) calls
``settle_deferred()`` first.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextvars import ContextVar

from confluent_kafka import KafkaError, KafkaException, Producer

from core.errors import ServiceUnavailable

log = logging.getLogger(__name__)

Ack = Callable[[], Awaitable[None]]  # awaits the acknowledgement of one send_many
_DEFERRED: ContextVar[list[Ack] | None] = ContextVar("livekg_deferred_acks", default=None)


@contextlib.contextmanager
def deferred_acks() -> Iterator[list[Ack]]:
    """Within the block (and tasks it starts), ``send_many`` does not wait for the
    broker: it appends the wait to the yielded list. Await it with ``settle``."""
    acks: list[Ack] = []
    token = _DEFERRED.set(acks)
    try:
        yield acks
    finally:
        _DEFERRED.reset(token)


async def settle(acks: list[Ack]) -> None:
    """Wait for every deferred acknowledgement in order; raise the first failure."""
    while acks:
        await acks.pop(0)()


async def settle_deferred() -> None:
    """Inside ``deferred_acks()``: wait now for what was sent so far (before work that
    must follow the acknowledgement); outside it, nothing to do."""
    acks = _DEFERRED.get()
    if acks:
        await settle(acks)


class Publisher:
    def __init__(self, bootstrap: str, *, linger_ms: int = 2) -> None:
        self._config = {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "linger.ms": linger_ms,
            "queue.buffering.max.messages": 500_000,
            "message.timeout.ms": 120_000,
            "error_cb": self._on_error,
        }
        self._fatal: str | None = None
        self.replaced = 0  # producers replaced after a fatal error
        self._producer = Producer(self._config)
        self._running = True
        self._thread = threading.Thread(target=self._poll, name="publisher-poll", daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while self._running:
            try:
                self._producer.poll(0.05)
            except KafkaException as exc:
                # librdkafka may raise a fatal error out of poll() instead of (or besides)
                # the error callback; the thread must survive it, or no delivery report
                # ever arrives again and every send waits forever
                self._note(exc)
                time.sleep(0.05)

    def _on_error(self, err: KafkaError) -> None:
        if err.fatal():
            self._fatal = str(err)

    def _note(self, exc: KafkaException) -> None:
        error = exc.args[0] if exc.args else None
        if isinstance(error, KafkaError):
            self._on_error(error)

    def _replace_if_fatal(self) -> None:
        """A fatally failed producer never recovers: swap in a fresh one (new producer id).
        Its undelivered records were reported failed, so their batch is retried."""
        if self._fatal is None:
            return
        log.warning("producer failed fatally (%s): replacing it", self._fatal)
        old, self._producer = self._producer, Producer(self._config)
        self._fatal = None
        self.replaced += 1
        old.purge()  # drop what the dead producer still holds; the batch is re-sent

    async def send_many(self, topic: str, items: Sequence[tuple[bytes | None, bytes]]) -> None:
        """Produce ``(key, value)`` pairs to ``topic``; raise if any is not delivered
        (inside ``deferred_acks()``: that check is left to ``settle``)."""
        if not items:
            return
        self._replace_if_fatal()
        loop = asyncio.get_running_loop()
        done: asyncio.Future[list[str]] = loop.create_future()
        pending = [len(items)]
        errors: list[str] = []
        lock = threading.Lock()

        def on_delivery(err: object, _msg: object) -> None:
            with lock:
                if err is not None:
                    errors.append(str(err))
                pending[0] -= 1
                finished = pending[0] == 0
            if finished:
                loop.call_soon_threadsafe(_resolve, done, errors)

        for key, value in items:
            while True:
                try:
                    self._producer.produce(topic, value=value, key=key, on_delivery=on_delivery)
                    break
                except BufferError:
                    await asyncio.sleep(0.005)  # local queue full: let the poller drain it
                except KafkaException as exc:
                    self._note(exc)
                    raise ServiceUnavailable(f"cannot produce to {topic}: {exc}") from exc
        acked = functools.partial(self._acked, done, topic)
        deferred = _DEFERRED.get()
        if deferred is not None:
            deferred.append(acked)
            return
        await acked()

    async def _acked(self, done: asyncio.Future[list[str]], topic: str) -> None:
        while True:  # a fatal producer may never report the rest: do not wait forever
            try:
                failed = await asyncio.wait_for(asyncio.shield(done), timeout=1.0)
                break
            except TimeoutError:
                if self._fatal is not None:
                    raise ServiceUnavailable(
                        f"producer failed fatally while sending to {topic}: {self._fatal}"
                    ) from None
        if failed:
            raise ServiceUnavailable(f"{len(failed)} records to {topic} not delivered: {failed[0]}")

    def close(self, timeout: float = 10.0) -> None:
        self._producer.flush(timeout)
        self._running = False
        self._thread.join(timeout=1.0)


def _resolve(fut: asyncio.Future[list[str]], errors: list[str]) -> None:
    if not fut.done():
        fut.set_result(errors)
