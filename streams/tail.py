"""Read topics without a consumer group: every partition assigned by hand, starting at
the beginning, the end, the last N records or given offsets. Used by ``livekg topics
tail`` and by the API's alerts bridge (serving/alerts.py), which must not disturb the
workers' group offsets.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, KafkaError, TopicPartition

from core.errors import ServiceUnavailable


@dataclass(frozen=True, slots=True)
class Message:
    topic: str  # the physical topic name (with prefix)
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp_ms: int


class TopicReader:
    """A manually assigned consumer; ``poll`` blocks up to ``timeout_s`` (use a thread)."""

    def __init__(self, bootstrap: str, *, fetch_wait_ms: int = 50) -> None:
        self._c = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": "livekg-tail",  # required by the client; never committed
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "fetch.wait.max.ms": fetch_wait_ms,
                "fetch.error.backoff.ms": fetch_wait_ms,
                "socket.timeout.ms": 10_000,
            }
        )

    def partitions(self, topic: str, timeout_s: float = 10.0) -> list[int]:
        try:
            md = self._c.list_topics(topic, timeout=timeout_s)
        except Exception as exc:  # KafkaException: broker down
            raise ServiceUnavailable(f"cannot list topic {topic}: {exc}") from exc
        t = md.topics.get(topic)
        if t is None or t.error is not None or not t.partitions:
            raise ServiceUnavailable(f"topic {topic} does not exist")
        return sorted(t.partitions)

    def assign(
        self,
        topics: Iterable[str],
        *,
        start: str = "end",
        last: int = 0,
        offsets: Mapping[tuple[str, int], int] | None = None,
    ) -> None:
        """``start``: beginning | end; ``last``: also re-read the N newest per partition;
        ``offsets``: (topic, partition) -> next offset to read, wins over both."""
        tps = []
        for topic in topics:
            for p in self.partitions(topic):
                pos = (offsets or {}).get((topic, p))
                if pos is None and last > 0:
                    lo, hi = self._c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
                    pos = max(lo, hi - last)
                if pos is None:
                    pos = OFFSET_BEGINNING if start == "beginning" else OFFSET_END
                tps.append(TopicPartition(topic, p, pos))
        self._c.assign(tps)

    def poll(self, timeout_s: float = 0.2, max_messages: int = 500) -> list[Message]:
        out = []
        for m in self._c.consume(max_messages, timeout_s):
            err = m.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    continue
                raise ServiceUnavailable(f"consume failed: {err}")
            ts = m.timestamp()[1]
            out.append(Message(m.topic(), m.partition(), m.offset(), m.key(), m.value(), ts))
        return out

    def close(self) -> None:
        self._c.close()
