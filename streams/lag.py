"""Consumer lag per group, topic and partition: log end offset minus committed offset.

Each worker measures every ``ops.lag_interval_s`` the groups it belongs to (the faust
group, one group per librdkafka lane) over the topics those consume, and exports
``livekg_consumer_lag``. Every worker reports the same numbers, so dashboards and
alerts take ``max by (group, topic, partition)``. A partition the group never committed
counts from the log start (all of it is still to do).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence

from confluent_kafka import Consumer, TopicPartition

from core import metrics

log = logging.getLogger(__name__)

Lag = dict[tuple[str, str, int], int]


def partition_lag(high: int, low: int, committed: int) -> int:
    """Records still to do on one partition (``committed`` < 0: nothing committed)."""
    start = committed if committed >= 0 else low
    return max(high - start, 0)


class LagProbe:
    """One non-subscribing consumer per group (it never joins the group)."""

    def __init__(self, bootstrap: str, groups: Mapping[str, Sequence[str]]) -> None:
        self.bootstrap = bootstrap
        self.groups = {g: sorted(set(ts)) for g, ts in groups.items() if ts}
        self._consumers: dict[str, Consumer] = {}

    def _consumer(self, group: str) -> Consumer:
        c = self._consumers.get(group)
        if c is None:
            c = self._consumers[group] = Consumer(
                {"bootstrap.servers": self.bootstrap, "group.id": group,
                 "enable.auto.commit": False}
            )  # fmt: skip
        return c

    def measure(self, timeout: float = 5.0) -> Lag:
        out: Lag = {}
        for group, topics in self.groups.items():
            consumer = self._consumer(group)
            meta = consumer.list_topics(timeout=timeout)
            tps = [
                TopicPartition(t, p)
                for t in topics
                if t in meta.topics
                for p in sorted(meta.topics[t].partitions)
            ]
            if not tps:
                continue
            for tp in consumer.committed(tps, timeout=timeout):
                low, high = consumer.get_watermark_offsets(tp, timeout=timeout, cached=False)
                out[(group, tp.topic, tp.partition)] = partition_lag(high, low, tp.offset)
        return out

    def close(self) -> None:
        for c in self._consumers.values():
            c.close()
        self._consumers.clear()


def export(lag: Lag) -> None:
    for (group, topic, partition), n in lag.items():
        metrics.CONSUMER_LAG.labels(group, topic, str(partition)).set(n)


async def run_probe(probe: LagProbe, interval_s: float) -> None:
    """Measure and export until cancelled; a broker hiccup is logged, not raised."""
    try:
        while True:
            try:
                export(await asyncio.to_thread(probe.measure))
            except Exception as exc:  # the probe must never take the worker down
                log.warning("consumer lag probe failed: %s", exc)
            await asyncio.sleep(interval_s)
    finally:
        probe.close()
