"""Idempotent batched writes of stream records into the graph.

Every write is ``UNWIND $rows ... MERGE`` keyed by the record's deterministic id, so
replaying a batch (after a crash before the offset commit) changes nothing. Times are
epoch-millisecond integers (portable between Neo4j and FalkorDB). ``written_at`` is
set once, on creation, by the database clock: produce-to-graph latency is
``written_at - ingested_at``.

Partitions: static nodes (Indicator, Entity) describe what exists; dynamic nodes
(Observation, Document) are time-stamped observations that arrive on the stream.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kg.store.base import GraphStore, IndexSpec
from streams.records import CleanDocument, IndicatorTick, to_epoch_ms

DOC_TEXT_LIMIT = 20_000

INDEXES: tuple[IndexSpec, ...] = (
    IndexSpec("Indicator"),
    IndexSpec("Observation"),
    IndexSpec("Observation", "observed_at", unique=False),
    IndexSpec("Document"),
    IndexSpec("Entity"),
)

TICKS_CYPHER = """
UNWIND $rows AS r
MERGE (i:Indicator {id: r.indicator_id})
  ON CREATE SET i.partition = 'static', i.name = r.name, i.unit = r.unit,
                i.created_at = r.ingested_at
MERGE (o:Observation {id: r.id})
  ON CREATE SET o.partition = 'dynamic', o.indicator_id = r.indicator_id, o.value = r.value,
                o.unit = r.unit, o.frequency = r.frequency, o.source = r.source,
                o.observed_at = r.observed_at, o.ingested_at = r.ingested_at,
                o.written_at = timestamp()
MERGE (i)-[:HAS_OBSERVATION]->(o)
"""

# One row per indicator (the batch's newest tick): row order inside one UNWIND is not a
# safe way to pick the latest value, so the batch is reduced in Python first.
LATEST_CYPHER = """
UNWIND $rows AS r
MATCH (i:Indicator {id: r.indicator_id})
WHERE i.last_observed_at IS NULL OR r.observed_at >= i.last_observed_at
SET i.last_value = r.value, i.last_observed_at = r.observed_at
"""

DOCS_CYPHER = """
UNWIND $rows AS r
MERGE (d:Document {id: r.id})
  ON CREATE SET d.partition = 'dynamic', d.kind = r.kind, d.source = r.source,
                d.raw_id = r.raw_id, d.title = r.title, d.text = r.text, d.url = r.url,
                d.lang = r.lang, d.content_hash = r.content_hash,
                d.published_at = r.published_at, d.ingested_at = r.ingested_at,
                d.written_at = timestamp()
WITH d, r
UNWIND r.entities AS eid
MERGE (e:Entity {id: eid})
  ON CREATE SET e.partition = 'static', e.created_at = r.ingested_at
MERGE (d)-[:MENTIONS]->(e)
"""


def tick_rows(ticks: Sequence[IndicatorTick]) -> list[dict[str, Any]]:
    return [
        {
            "id": t.id,
            "indicator_id": t.indicator_id,
            "name": t.name or t.indicator_id,
            "value": t.value,
            "unit": t.unit,
            "frequency": t.frequency,
            "source": t.source,
            "observed_at": to_epoch_ms(t.event_time),
            "ingested_at": to_epoch_ms(t.ingest_time),
        }
        for t in ticks
    ]


def document_rows(docs: Sequence[CleanDocument]) -> list[dict[str, Any]]:
    return [
        {
            "id": d.id,
            "kind": d.kind.value,
            "source": d.source,
            "raw_id": d.raw_id,
            "title": d.title,
            "text": d.text[:DOC_TEXT_LIMIT],
            "url": d.url,
            "lang": d.lang,
            "content_hash": d.content_hash,
            "published_at": to_epoch_ms(d.event_time),
            "ingested_at": to_epoch_ms(d.ingest_time),
            "entities": d.entities,
        }
        for d in docs
    ]


async def ensure_schema(store: GraphStore) -> None:
    await store.ensure_indexes(INDEXES)


def latest_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    latest: dict[str, dict[str, Any]] = {}
    for row in rows:
        cur = latest.get(row["indicator_id"])
        if cur is None or row["observed_at"] >= cur["observed_at"]:
            latest[row["indicator_id"]] = row
    return [
        {"indicator_id": k, "value": v["value"], "observed_at": v["observed_at"]}
        for k, v in latest.items()
    ]


async def write_ticks(store: GraphStore, ticks: Sequence[IndicatorTick], batch: int = 2000) -> int:
    rows = tick_rows(ticks)
    await store.execute_batches(TICKS_CYPHER, rows, batch=batch)
    await store.execute_batches(LATEST_CYPHER, latest_rows(rows), batch=batch)
    return len(rows)


async def write_documents(
    store: GraphStore, docs: Sequence[CleanDocument], batch: int = 2000
) -> int:
    return await store.execute_batches(DOCS_CYPHER, document_rows(docs), batch=batch)
