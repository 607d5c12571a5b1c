"""``livekg bench replay``: replay throughput, counted only once the broker acknowledged.

Writes N synthetic indicator ticks (the sample-day shape) to a temporary JSONL file,
then times ``connectors.replay.replay_file`` end to end: reading, validating every row
against the record model, keyed produce with the idempotent producer, and the flush
that waits for every delivery report. Topics get a private prefix and are deleted after.
"""

from __future__ import annotations

import random
import tempfile
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
from confluent_kafka.admin import AdminClient

from connectors.replay import replay_file
from core.settings import Settings
from ops.runtime import services
from streams.admin import create_topics

INDICATORS = ("CN10Y", "CN1Y", "CN5Y", "SHIBOR_ON", "SHIBOR_1W", "FR007", "US10Y", "US5Y")


def write_ticks(path: Path, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    with open(path, "wb") as fh:
        for i in range(n):
            iid = INDICATORS[i % len(INDICATORS)]
            row = {
                "source": "bench-synthetic",
                "indicator_id": iid,
                "name": f"{iid} (synthetic)",
                "unit": "%",
                "value": round(1.5 + rng.random(), 4),
                "event_time": (start + timedelta(seconds=i)).isoformat(),
                "frequency": "instant",
            }
            fh.write(orjson.dumps(row) + b"\n")


def _delete_topics(bootstrap: str, prefix: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    names = [t for t in admin.list_topics(timeout=10).topics if t.startswith(prefix)]
    try:
        for fut in admin.delete_topics(names, operation_timeout=10).values():
            fut.result()
    except Exception:  # a broker without DeleteTopics keeps them; harmless
        pass


def run_bench(settings: Settings, records: int) -> dict[str, Any]:
    with services(settings) as (s, ep), tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ticks.jsonl"
        write_ticks(path, records)
        prefix = f"bench-{uuid.uuid4().hex[:8]}."
        create_topics(ep.kafka_bootstrap, partitions=s.kafka.topic_partitions, prefix=prefix)
        try:
            report = replay_file(path, "raw.ticks", ep.kafka_bootstrap, prefix=prefix)
        finally:
            _delete_topics(ep.kafka_bootstrap, prefix)
    return {
        "bench": "replay",
        "records": records,
        "produced": report.produced,
        "invalid": report.invalid,
        "seconds": round(report.seconds, 3),
        "records_per_s": round(report.produced / report.seconds, 1) if report.seconds else None,
        "partitions": settings.kafka.topic_partitions,
        "includes": "read + validate + produce + broker ack (flush)",
    }
