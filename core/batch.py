"""Batch decode for agents: raw Kafka messages in, validated records and dead letters out.

Pure functions (no faust): the agents adapt faust events to ``Inbound`` and send what
comes back, so all routing decisions are testable without a broker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from core.codec import DecodeFailure, dead_letter, decode
from core.records import DeadLetter, Record

R = TypeVar("R", bound=Record)


@dataclass(slots=True)
class Inbound:
    topic: str  # logical topic name (prefix removed)
    value: bytes | None
    key: bytes | None = None
    partition: int = -1
    offset: int = -1


@dataclass(slots=True)
class Decoded(Generic[R]):
    records: list[R] = field(default_factory=list)
    origins: list[Inbound] = field(default_factory=list)
    dead: list[DeadLetter] = field(default_factory=list)


def dead_for(item: Inbound, failure: Exception, source: str) -> DeadLetter:
    return dead_letter(
        topic=item.topic,
        raw_value=item.value,
        raw_key=item.key,
        failure=failure,
        partition=item.partition,
        offset=item.offset,
        source=source,
    )


def decode_batch(
    items: Iterable[Inbound],
    model_for: Callable[[str], type[R]],
    *,
    max_bytes: int,
    agent: str,
) -> Decoded[R]:
    """Validate each item; failures become dead letters tagged with the agent's name."""
    out: Decoded[R] = Decoded()
    for item in items:
        try:
            record = decode(item.value, model_for(item.topic), max_bytes=max_bytes)
        except DecodeFailure as failure:
            out.dead.append(dead_for(item, failure, agent))
            continue
        out.records.append(record)
        out.origins.append(item)
    return out


def map_batch(
    decoded: Decoded[R],
    fn: Callable[[R], Record],
    agent: str,
) -> tuple[list[Record], list[DeadLetter]]:
    """Apply a per-record transform; an exception in it dead-letters that record only.
    The dead letters are the batch's undecodable records, then the transform's failures."""
    outputs, failed = map_records(decoded, fn, agent)
    return outputs, [*decoded.dead, *failed]


def map_records(
    decoded: Decoded[R],
    fn: Callable[[R], Record],
    agent: str,
) -> tuple[list[Record], list[DeadLetter]]:
    """``map_batch`` without the undecodable records (the batch shell sends those)."""
    outputs: list[Record] = []
    failed: list[DeadLetter] = []
    for record, origin in zip(decoded.records, decoded.origins, strict=True):
        try:
            outputs.append(fn(record))
        except Exception as exc:  # one bad record must not stop the batch
            failed.append(dead_for(origin, exc, agent))
    return outputs, failed
