"""Create the topic catalog up front (idempotent) and read per-topic record counts."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

from core.topics import CATALOG

CLIENT_LOG = logging.getLogger("livekg.kafka.admin")  # client lines to a log, not stderr


def topic_names(prefix: str = "") -> dict[str, str]:
    """Logical name -> physical topic name."""
    return {name: f"{prefix}{name}" for name in CATALOG}


def create_topics(
    bootstrap: str, *, partitions: int, replication: int = 1, prefix: str = ""
) -> list[str]:
    """Create every catalog topic that does not exist yet; returns the ones created."""
    wanted = [
        NewTopic(f"{prefix}{spec.name}", spec.partitions or partitions, replication)
        for spec in CATALOG.values()
    ]
    return create_missing(bootstrap, wanted)


def create_missing(bootstrap: str, topics: Sequence[NewTopic]) -> list[str]:
    """Create those of ``topics`` that do not exist yet and wait until they are served;
    returns the ones created (one that another process created meanwhile is fine)."""
    admin = AdminClient({"bootstrap.servers": bootstrap, "logger": CLIENT_LOG})
    existing = set(admin.list_topics(timeout=10).topics)
    wanted = [t for t in topics if t.topic not in existing]
    if not wanted:
        return []
    created = []
    for name, fut in admin.create_topics(wanted, operation_timeout=10).items():
        try:
            fut.result()
            created.append(name)
        except KafkaException as exc:
            if "TOPIC_ALREADY_EXISTS" not in str(exc):
                raise
    _wait_served(admin, [t.topic for t in wanted])
    return created


def _wait_served(admin: AdminClient, topics: list[str], timeout: float = 30.0) -> None:
    """Kafka answers CreateTopics before the leaders serve the new partitions (KRaft
    applies the metadata a moment later): wait until every partition answers a
    ListOffsets, so a producer or a count right after creation finds them."""
    deadline = time.monotonic() + timeout
    pending = set(topics)
    while pending and time.monotonic() < deadline:
        meta = admin.list_topics(timeout=5).topics
        tps = {
            TopicPartition(t, p): t
            for t in pending
            if t in meta and meta[t].error is None
            for p in meta[t].partitions
        }
        known = {t for t in tps.values()}
        served = set(known)
        if tps:
            futures = admin.list_offsets({tp: OffsetSpec.latest() for tp in tps}, request_timeout=5)
            for tp, fut in futures.items():
                try:
                    fut.result()
                except KafkaException:
                    served.discard(tps[tp])
        pending -= served
        if pending:
            time.sleep(0.05)


def topic_counts(bootstrap: str, *, prefix: str = "", timeout: float = 10.0) -> dict[str, int]:
    """Records per catalog topic (sum of high minus low watermarks over partitions)."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "livekg-status", "enable.auto.commit": False}
    )
    try:
        meta = consumer.list_topics(timeout=timeout)
        counts: dict[str, int] = {}
        for logical, physical in topic_names(prefix).items():
            tmeta = meta.topics.get(physical)
            if tmeta is None or tmeta.error is not None:
                continue
            total = 0
            for p in tmeta.partitions:
                lo, hi = consumer.get_watermark_offsets(
                    TopicPartition(physical, p), timeout=timeout
                )
                total += max(hi - lo, 0)
            counts[logical] = total
        return counts
    finally:
        consumer.close()
