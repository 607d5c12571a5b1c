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
import logging
import multiprocessing as mp
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from confluent_kafka import Producer
from pydantic import ValidationError

from connectors.base import Batch, SchemaDriftError
from connectors.xbrl import sample_triples
from core.records import Record
from core.topics import spec

Progress = Callable[[int], None]

SAMPLES_DIR = Path(__file__).parent / "samples"
SAMPLE_FILES = {
    "raw.news": "news.jsonl",
    "raw.social": "social.jsonl",
    "raw.filings": "filings.jsonl",
    "raw.ticks": "ticks.jsonl",
}
# A year of daily indicator history before the sample day (2024-09-18; real US rates,
# synthetic Chinese ones: scripts/make_real_sample.py, samples/README.md), replayed after
# the day itself (newest first: no alerts).
SAMPLE_DAY = "2024-09-18"
SAMPLE_HISTORY = ("raw.ticks", "ticks_history.jsonl")


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


class BadRow(str):
    """A row that could not be read at all (the reason); it is rejected, its file goes on."""


def _surrogates(text: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def read_csv(path: Path) -> Iterator[tuple[int, dict[str, Any] | BadRow]]:
    """Rows as dicts; empty cells dropped, JSON-looking cells ([..] or {..}) decoded.

    A row with bytes that are not UTF-8, or one the csv module cannot split, becomes a
    ``BadRow`` with the reason instead of ending the whole file.
    """
    with open(path, newline="", encoding="utf-8", errors="surrogateescape") as fh:
        reader = csv.DictReader(fh)
        lineno = 1
        while True:
            lineno += 1
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                yield lineno, BadRow(f"unreadable CSV row: {exc}")
                continue
            if any(isinstance(v, str) and _surrogates(v) for v in (*row.keys(), *row.values())):
                yield lineno, BadRow("row is not valid UTF-8")
                continue
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


def read_rows(path: Path) -> Iterator[tuple[int, bytes | dict[str, Any] | BadRow]]:
    """JSONL lines (bytes) or CSV rows (dicts), chosen by the file suffix."""
    if path.suffix.lower() == ".csv":
        yield from read_csv(path)
    else:
        yield from read_jsonl(path)


def validate_row(model: type[Record], row: bytes | dict[str, Any] | BadRow) -> Record:
    if isinstance(row, BadRow):
        raise ValueError(str(row))
    if isinstance(row, bytes):
        return model.model_validate_json(row)
    return model.model_validate(row)


def producer(bootstrap: str, **extra: object) -> Producer:
    conf: dict[str, object] = {
        "bootstrap.servers": bootstrap,
        "enable.idempotence": True,
        "linger.ms": 5,
        "queue.buffering.max.messages": 1_000_000,
        "logger": logging.getLogger("livekg.kafka.replay"),  # a log file, not the console
    }
    conf.update(extra)
    return Producer(conf)


Encoded = tuple[bytes, bytes]  # (key, value)
CHUNK_ROWS = 5_000
PARALLEL_MIN_BYTES = 4_000_000  # below this a worker pool costs more than it saves


def _encode(record: Record) -> Encoded:
    return record.key().encode(), record.__pydantic_serializer__.to_json(record)


def encode_chunk(
    job: tuple[str, str, list[tuple[int, bytes | dict[str, Any] | BadRow]]],
) -> tuple[list[Encoded], list[str]]:
    """Validate and serialize one chunk of rows (runs in a worker process for big files)."""
    topic, fname, rows = job
    model = spec(topic).record
    out: list[Encoded] = []
    errors: list[str] = []
    for lineno, row in rows:
        try:
            out.append(_encode(validate_row(model, row)))
        except (ValidationError, orjson.JSONDecodeError, ValueError) as exc:
            msg = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            errors.append(f"{fname}:{lineno}: {msg}")
    return out, errors


def _chunks(
    rows: Iterable[tuple[int, bytes | dict[str, Any] | BadRow]], size: int
) -> Iterator[list[tuple[int, bytes | dict[str, Any] | BadRow]]]:
    chunk: list[tuple[int, bytes | dict[str, Any] | BadRow]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class _Sender:
    """Keyed produce with back-pressure, pacing and delivery checks."""

    def __init__(
        self, prod: Producer, topic: str, rate: float | None, progress: Progress | None
    ) -> None:
        self.prod, self.topic, self.rate, self.progress = prod, topic, rate, progress
        self.failures: list[str] = []
        self.n = 0
        self.started = time.perf_counter()

    def _on_delivery(self, err: object, _msg: object) -> None:
        if err is not None:
            self.failures.append(str(err))

    def send(self, pairs: Iterable[Encoded]) -> None:
        produce, topic, cb = self.prod.produce, self.topic, self._on_delivery
        for key, value in pairs:
            while True:
                try:
                    produce(topic, key=key, value=value, on_delivery=cb)
                    break
                except BufferError:
                    self.prod.poll(0.05)
            self.n += 1
            if self.rate:
                ahead = self.n / self.rate - (time.perf_counter() - self.started)
                if ahead > 0:
                    self.prod.poll(0)
                    time.sleep(ahead)
            if self.n % CHUNK_ROWS == 0:
                self.prod.poll(0)
                if self.progress is not None:
                    self.progress(self.n)

    def finish(self) -> int:
        remaining = self.prod.flush(120)
        if self.progress is not None:
            self.progress(self.n)
        if remaining or self.failures:
            raise RuntimeError(
                f"{remaining} undelivered, {len(self.failures)} failed: {self.failures[:3]}"
            )
        return self.n


def replay_records(
    prod: Producer,
    physical_topic: str,
    records: Iterable[Record],
    *,
    rate: float | None = None,
    progress: Progress | None = None,
) -> int:
    """Produce already-validated records keyed by entity; waits for delivery."""
    sender = _Sender(prod, physical_topic, rate, progress)
    sender.send(_encode(r) for r in records)
    return sender.finish()


def replay_file(
    path: Path,
    topic: str,
    bootstrap: str,
    *,
    prefix: str = "",
    rate: float | None = None,
    progress: Progress | None = None,
    prod: Producer | None = None,
    workers: int | None = None,
) -> ReplayReport:
    """Validate each row of ``path`` (JSONL or CSV) and produce the valid ones, in file order.

    Rows stream through (validate, serialize, produce) so memory stays flat. Big files at
    full speed are validated by a pool of worker processes, chunk by chunk; ``imap``
    returns chunks in order, so records keep the file's order (per key and overall).
    ``seconds`` covers reading, validation, produce and the broker's acknowledgement.
    """
    report = ReplayReport(topic=topic)
    started = time.perf_counter()
    if workers is None:
        big = path.stat().st_size >= PARALLEL_MIN_BYTES and not rate
        workers = min(4, os.cpu_count() or 1) if big else 0
    jobs = ((topic, path.name, c) for c in _chunks(read_rows(path), CHUNK_ROWS))
    pool = None
    if workers > 1:
        pool = mp.get_context("fork").Pool(workers)  # before the producer's threads exist
    try:
        sender = _Sender(prod or producer(bootstrap), prefix + topic, rate, progress)
        results = pool.imap(encode_chunk, jobs) if pool else map(encode_chunk, jobs)
        for pairs, errors in results:
            sender.send(pairs)
            report.invalid += len(errors)
            report.errors.extend(errors[: max(0, 100 - len(report.errors))])
        report.produced = sender.finish()
    finally:
        if pool is not None:
            pool.terminate()
    report.seconds = time.perf_counter() - started
    return report


def replay_samples(
    bootstrap: str, filer_ids: Mapping[int, str], *, prefix: str = ""
) -> list[ReplayReport]:
    """The bundled sample day, into the four raw topics, then the history, then the
    bundled XBRL company facts as triples (``filer_ids``: CIK -> the graph's company id,
    handed in by the caller: a source does not read the graph's tables)."""
    files = [*SAMPLE_FILES.items(), SAMPLE_HISTORY]
    reports = [
        replay_file(SAMPLES_DIR / fname, topic, bootstrap, prefix=prefix) for topic, fname in files
    ]
    return [*reports, replay_xbrl_samples(bootstrap, filer_ids, prefix=prefix)]


def replay_xbrl_samples(
    bootstrap: str,
    filer_ids: Mapping[int, str],
    *,
    prefix: str = "",
    prod: Producer | None = None,
) -> ReplayReport:
    """``samples/xbrl_companyfacts/*.json`` -> ``kg.triples`` (filer ids by ticker)."""
    started = time.perf_counter()
    report = ReplayReport("kg.triples")
    try:
        triples = sample_triples(dict(filer_ids))
    except SchemaDriftError as exc:  # a broken sample file: said, not fatal to the replay
        report.invalid += 1
        report.errors.append(str(exc))
        return report
    sender = _Sender(prod or producer(bootstrap), prefix + "kg.triples", None, None)
    sender.send(_encode(t) for t in triples)
    report.produced = sender.finish()
    report.seconds = time.perf_counter() - started
    return report


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
                why = str(data) if isinstance(data, BadRow) else "not a JSON object"
                batch.errors.append(f"{stream}:{lineno}: {why}")
                continue
            batch.add(topic, f"{lineno:012d}", model, data)
        return batch
