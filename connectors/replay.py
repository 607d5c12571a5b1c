"""Replay records from JSONL or CSV files into raw topics (demos, backfills, tests).

Each line (JSONL) or row (CSV, a header row naming the record's fields; list fields
such as ``entities`` or ``tables`` as JSON text) is one record for the target topic.
Rows are validated against the topic's model before producing: an invalid row is
reported and skipped (never produced to a raw topic), so replay output is always valid
input. ``replay_file`` is the fast one-shot path (``livekg replay``, the benchmark);
``FileConnector`` puts the same files behind the runner for checkpointed, resumable
runs (``livekg connect run file``).
"""

from __future__ import annotations

import csv
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from confluent_kafka import Producer
from pydantic import ValidationError

from streams.records import Record
from streams.topics import spec

Progress = Callable[[int], None]

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


def read_csv(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows as dicts; empty cells dropped, JSON-looking cells ([..] or {..}) decoded."""
    with open(path, newline="", encoding="utf-8") as fh:
        for lineno, row in enumerate(csv.DictReader(fh), 2):
            out: dict[str, Any] = {}
            for k, v in row.items():
                if k is None or v is None or v == "":
                    continue
                if v[:1] in "[{":
                    try:
                        out[k] = orjson.loads(v)
                        continue
                    except orjson.JSONDecodeError:
                        pass
                out[k] = v
            yield lineno, out


def read_rows(path: Path) -> Iterator[tuple[int, bytes | dict[str, Any]]]:
    """JSONL lines (bytes) or CSV rows (dicts), chosen by the file suffix."""
    if path.suffix.lower() == ".csv":
        yield from read_csv(path)
    else:
        yield from read_jsonl(path)


def validate_row(model: type[Record], row: bytes | dict[str, Any]) -> Record:
    if isinstance(row, bytes):
        return model.model_validate_json(row)
    return model.model_validate(row)


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
    progress: Progress | None = None,
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
                prod.produce(
                    physical_topic, key=record.key().encode(), value=value, on_delivery=on_delivery
                )
                break
            except BufferError:
                prod.poll(0.05)
        n += 1
        if rate:
            ahead = n / rate - (time.perf_counter() - started)
            if ahead > 0:
                prod.poll(0)
                time.sleep(ahead)
        if n % 5_000 == 0:
            prod.poll(0)
            if progress is not None:
                progress(n)
    remaining = prod.flush(60)
    if progress is not None:
        progress(n)
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
    progress: Progress | None = None,
    prod: Producer | None = None,
) -> ReplayReport:
    """Validate every row of ``path`` (JSONL or CSV), then produce the valid ones.

    ``seconds`` covers validation, produce and broker acknowledgement of every record.
    """
    model = spec(topic).record
    report = ReplayReport(topic=topic)
    started = time.perf_counter()
    valid: list[Record] = []
    for lineno, row in read_rows(path):
        try:
            valid.append(validate_row(model, row))
        except (ValidationError, orjson.JSONDecodeError, ValueError) as exc:
            report.invalid += 1
            msg = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            report.errors.append(f"{path.name}:{lineno}: {msg}")
    report.produced = replay_records(
        prod or producer(bootstrap), prefix + topic, valid, rate=rate, progress=progress
    )
    report.seconds = time.perf_counter() - started
    return report


def replay_samples(bootstrap: str, *, prefix: str = "") -> list[ReplayReport]:
    """The bundled synthetic sample day, into the four raw topics."""
    return [
        replay_file(SAMPLES_DIR / fname, topic, bootstrap, prefix=prefix)
        for topic, fname in SAMPLE_FILES.items()
    ]


class FileConnector:
    """JSONL/CSV files behind the runner: checkpointed by row number, resumable.

    Streams are the configured files (``connectors.files``: path -> raw topic). The
    cursor is the zero-padded row number, so a restart continues after the last row the
    broker acknowledged. ``rate_limits.file`` (records/s) paces production.
    """

    name = "file"

    def __init__(self, files: dict[str, str], cfg: Any) -> None:
        self.files = {str(Path(p)): t for p, t in files.items()}
        for t in self.files.values():
            spec(t)  # unknown topics fail here, not mid-run
        self.topics = tuple(sorted(set(self.files.values())))
        self.rate_per_s = 0.0
        self.produce_rate = cfg.rate_limits.get("file") or None
        self.interval_s = cfg.intervals.get("file", 5.0)

    def streams(self) -> list[str]:
        return list(self.files)

    async def fetch(self, stream: str, cursor: str | None, state: dict[str, Any]) -> Any:
        from connectors.base import Batch

        topic = self.files[stream]
        model = spec(topic).record
        after = int(cursor) if cursor else 0
        batch = Batch()
        for lineno, row in read_rows(Path(stream)):
            if lineno <= after:
                continue
            try:
                data = orjson.loads(row) if isinstance(row, bytes) else row
            except orjson.JSONDecodeError:
                data = None
            if not isinstance(data, dict):
                batch.rows += 1
                batch.rejected += 1
                batch.errors.append(f"{stream}:{lineno}: not a JSON object")
                continue
            batch.add(topic, f"{lineno:012d}", model, data)
        return batch
