"""Create the topic catalog up front (idempotent) and read per-topic record counts."""

from __future__ import annotations

from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from core.topics import CATALOG


def topic_names(prefix: str = "") -> dict[str, str]:
    """Logical name -> physical topic name."""
    return {name: f"{prefix}{name}" for name in CATALOG}


def create_topics(
    bootstrap: str, *, partitions: int, replication: int = 1, prefix: str = ""
) -> list[str]:
    """Create every catalog topic that does not exist yet; returns the ones created."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    existing = set(admin.list_topics(timeout=10).topics)
    wanted = [
        NewTopic(f"{prefix}{spec.name}", spec.partitions or partitions, replication)
        for spec in CATALOG.values()
        if f"{prefix}{spec.name}" not in existing
    ]
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
    return created


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
