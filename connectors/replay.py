"""Replay records from JSONL files into raw topics (demos, backfills, tests).

Each line is one record for the target topic. Lines are validated against the
topic's model before producing: an invalid line is reported and skipped (never
produced to a raw topic), so replay output is always valid input.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka import Producer
from pydantic import ValidationError

from streams.records import Record
from streams.topics import spec

SAMPLES_DIR = Path(__file__).parent / "samples"
SAMPLE_FILES = {
    "raw.news": "news.jsonl",
    "raw.social": "social.jsonl",
    "raw.filings": "filings.jsonl",
    "raw.ticks": "ticks.jsonl",
}


@dataclass
class ReplayReport:
    topic: str
    produced: int = 0
    invalid: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0


def read_jsonl(path: Path) -> Iterator[tuple[int, bytes]]:
    with open(path, "rb") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.strip()
            if line:
                yield lineno, line


def producer(bootstrap: str, **extra: object) -> Producer:
    conf: dict[str, object] = {
        "bootstrap.servers": bootstrap,
        "enable.idempotence": True,
        "linger.ms": 5,
        "queue.buffering.max.messages": 1_000_000,
    }
    conf.update(extra)
    return Producer(conf)


def replay_records(
    prod: Producer,
    physical_topic: str,
    records: Iterable[Record],
    *,
    rate: float | None = None,
) -> int:
    """Produce already-validated records keyed by entity; waits for delivery."""
    failures: list[str] = []

    def on_delivery(err: object, _msg: object) -> None:
        if err is not None:
            failures.append(str(err))

    n = 0
    started = time.perf_counter()
    for record in records:
        value = record.__pydantic_serializer__.to_json(record)
        while True:
            try:
                prod.produce(physical_topic, key=record.key().encode(), value=value, on_delivery=on_delivery)
                break
            except BufferError:
                prod.poll(0.05)
        n += 1
        if rate:
            ahead = n / rate - (time.perf_counter() - started)
            if ahead > 0:
                prod.poll(0)
                time.sleep(ahead)
        if n % 10_000 == 0:
            prod.poll(0)
    remaining = prod.flush(60)
    if remaining or failures:
        raise RuntimeError(f"{remaining} undelivered, {len(failures)} failed: {failures[:3]}")
    return n


def replay_file(
    path: Path,
    topic: str,
    bootstrap: str,
    *,
    prefix: str = "",
    rate: float | None = None,
) -> ReplayReport:
    model = spec(topic).record
    report = ReplayReport(topic=topic)
    valid: list[Record] = []
    for lineno, line in read_jsonl(path):
        try:
            valid.append(model.model_validate_json(line))
        except ValidationError as exc:
            report.invalid += 1
            report.errors.append(f"{path.name}:{lineno}: {exc.errors()[0]['msg']}")
    started = time.perf_counter()
    report.produced = replay_records(producer(bootstrap), prefix + topic, valid, rate=rate)
    report.seconds = time.perf_counter() - started
    return report


def replay_samples(bootstrap: str, *, prefix: str = "") -> list[ReplayReport]:
    """The bundled synthetic sample day, into the four raw topics."""
    return [
        replay_file(SAMPLES_DIR / fname, topic, bootstrap, prefix=prefix)
        for topic, fname in SAMPLE_FILES.items()
    ]
