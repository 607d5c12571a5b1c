"""Idempotent batched writes of stream records into the graph.

Every write is ``UNWIND $rows ... MERGE`` keyed by the record's deterministic id, so
replaying a batch (after a crash before the offset commit) changes nothing. Times are
epoch-millisecond integers (portable between Neo4j and FalkorDB). ``written_at`` is
set once, on creation, by the database clock: produce-to-graph latency is
``written_at - ingested_at``.

Partitions (kg.graph.ontology): static nodes carry ``:Entity`` plus their concept label
(``:Entity:Indicator``, ``:Entity:Company``) and describe what exists; dynamic nodes
(Observation, DailyObservation, Document) and extracted fact edges are time-stamped and
arrive on the stream. Triples are pruned against the ontology and their entities
canonicalized before any write; labels and relationship types interpolated into Cypher
come only from the ontology.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from core.records import CleanDocument, IndicatorTick, Triple, to_epoch_ms
from kg.graph.canonical import AliasIndex
from kg.graph.ontology import Ontology, TripleCheck, default_ontology
from kg.graph.queries import cypher
from kg.graph.store.base import GraphProvider, GraphStore, IndexSpec, PortableParams

DOC_TEXT_LIMIT = 20_000
EVIDENCE_LIMIT = 500

INDEXES: tuple[IndexSpec, ...] = (
    IndexSpec("Entity"),
    IndexSpec("Entity", "name", unique=False),
    IndexSpec("Indicator", unique=False),
    IndexSpec("Company", unique=False),
    IndexSpec("Observation"),
    IndexSpec("Observation", "observed_at", unique=False),
    IndexSpec("DailyObservation"),
    IndexSpec("Document"),
)

# Indicators are static-partition entities; one created by a tick keeps the connector's
# id (CN10Y, US10Y), which is canonical, so later mentions resolve to it. A missing one
# is created with all its labels at once (never ``SET i:Indicator`` on a node MERGEd in
# the same transaction: ArcadeDB's Bolt server rejects that against its unique index).
INDICATORS_CYPHER = """
UNWIND $rows AS r
OPTIONAL MATCH (x:Entity {id: r.indicator_id})
WITH r, x WHERE x IS NULL
CREATE (i:Entity:Indicator {id: r.indicator_id, partition: 'static', name: r.name,
                            unit: r.unit, canonical: true, created_at: r.ingested_at})
"""

TICKS_CYPHER = """
UNWIND $rows AS r
MATCH (i:Entity {id: r.indicator_id})
MERGE (o:Observation {id: r.id})
  ON CREATE SET o.partition = 'dynamic', o.indicator_id = r.indicator_id, o.value = r.value,
                o.unit = r.unit, o.frequency = r.frequency, o.source = r.source,
                o.observed_at = r.observed_at, o.ingested_at = r.ingested_at,
                o.written_at = timestamp()
MERGE (i)-[:HAS_OBSERVATION]->(o)
RETURN count(*) AS n
"""

# One row per indicator (the batch's newest tick): row order inside one UNWIND is not a
# safe way to pick the latest value, so the batch is reduced in Python first.
LATEST_CYPHER = """
UNWIND $rows AS r
MATCH (i:Entity {id: r.indicator_id})
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


async def _counted(store: GraphStore, cypher: str, rows: list[dict[str, Any]], batch: int) -> int:
    """Run a ``RETURN count(*) AS n`` statement over ``rows`` in chunks; the total n."""
    n = 0
    for start in range(0, len(rows), batch):
        result = await store.execute(cypher, {"rows": rows[start : start + batch]})
        n += int(result[0]["n"]) if result else 0
    return n


async def write_ticks(
    store: GraphStore,
    ticks: Sequence[IndicatorTick],
    batch: int = 2000,
    *,
    known: KnownEntities | None = None,
) -> int:
    """Indicators created if missing, then the observations, then each indicator's
    latest value.

    With ``known`` (indicator ids this process has written or found), the creation
    statement is skipped for known indicators: a steady tick stream names the same few
    dozen, and one round trip less comes before the observations are written. The
    observation statement counts the rows whose indicator it found; fewer than sent
    means ``known`` was stale (graph emptied behind our back): it is cleared and the
    batch written again in full, which is idempotent."""
    rows = tick_rows(ticks)
    first: dict[str, dict[str, Any]] = {}
    for row in rows:  # one creation row per indicator
        first.setdefault(row["indicator_id"], row)
    missing = [r for k, r in first.items() if known is None or k not in known]
    if missing:
        await store.execute_batches(INDICATORS_CYPHER, missing, batch=batch)
    found = await _counted(store, TICKS_CYPHER, rows, batch)
    if known is not None:
        if found < len(rows):
            known.clear()
            await store.execute_batches(INDICATORS_CYPHER, list(first.values()), batch=batch)
            await _counted(store, TICKS_CYPHER, rows, batch)
        known.update(first)
    await store.execute_batches(LATEST_CYPHER, latest_rows(rows), batch=batch)
    return len(rows)


async def write_documents(
    store: GraphStore, docs: Sequence[CleanDocument], batch: int = 2000
) -> int:
    return await store.execute_batches(DOCS_CYPHER, document_rows(docs), batch=batch)


# -- triples -----------------------------------------------------------------------------


def entity_cypher(
    label: str,
    provider: GraphProvider = GraphProvider.FALKORDB,
    ontology: Ontology | None = None,
) -> str:
    """Create-if-missing for entities of one concept label (label from the ontology).

    The node is created with all its labels at once, on every backend: ``SET e:Label``
    after a MERGE is an order of magnitude slower on FalkorDB and violates ArcadeDB's
    unique index when the node was created in the same transaction. FalkorDB serializes
    writes to one graph, so check-then-create cannot race there; on Neo4j a concurrent
    creator makes CREATE fail the ``Entity.id`` constraint (``GraphConflict``), and the
    retry finds the node. ``provider`` is kept for callers; the Cypher is the same.
    """
    del provider
    path = (ontology or default_ontology()).label_path(label)  # Entity:...:label
    return f"""
UNWIND $rows AS r
OPTIONAL MATCH (x:Entity {{id: r.id}})
WITH r, x WHERE x IS NULL
CREATE (e:{path} {{id: r.id, partition: 'static', name: r.name,
                          canonical: r.canonical, created_at: r.ingested_at}})
"""


# What a fact row sets itself; a triple's attributes never overwrite them.
FACT_FIELDS = frozenset(
    ("id", "partition", "valid_from", "valid_to", "stated_valid_to", "ingested_at",
     "written_at", "sources", "doc_ids", "confidence", "evidence")
)  # fmt: skip


def fact_cypher(rel_type: str, *, props: bool = False) -> str:
    """Idempotent fact upsert: created once; a restatement only adds provenance.

    ``props``: set the rows' ``props`` maps of extra properties (static relations, e.g.
    an executive's role; a row without one has none); extracted facts have none, so
    their query skips it. The partition is one ``$partition`` for the statement, not a
    field of every row. Returns the number of rows whose two entities were found: fewer
    than sent means an entity assumed to exist is missing (see ``KnownEntities``). Rows
    stay maps: parameters as columns indexed by ``$col[i]`` parse faster but ran 2-3x
    slower inside FalkorDB.
    """
    extra = "f += coalesce(r.props, {}), " if props else ""
    return f"""
UNWIND $rows AS r
MATCH (h:Entity {{id: r.head_id}})
MATCH (t:Entity {{id: r.tail_id}})
MERGE (h)-[f:{rel_type} {{id: r.id}}]->(t)
  ON CREATE SET {extra}f.partition = $partition,
                f.valid_from = r.valid_from, f.stated_valid_to = r.valid_to,
                f.valid_to = r.valid_to, f.ingested_at = r.ingested_at,
                f.written_at = timestamp(), f.sources = r.sources, f.doc_ids = r.doc_ids,
                f.confidence = r.confidence, f.evidence = r.evidence
  ON MATCH SET f.sources = f.sources + [s IN r.sources WHERE NOT s IN f.sources],
               f.doc_ids = f.doc_ids + [d IN r.doc_ids WHERE NOT d IN f.doc_ids],
               f.valid_from = CASE WHEN r.valid_from < f.valid_from
                                   THEN r.valid_from ELSE f.valid_from END,
               f.confidence = CASE WHEN r.confidence > f.confidence
                                   THEN r.confidence ELSE f.confidence END
RETURN count(*) AS n
"""


def chain_cypher(rel_type: str) -> str:
    """Validity chains of a batch's heads for one cardinality-ONE relation, in the graph.

    The same rule as ``kg.graph.temporal.resolve_chain`` (a fact ends at the earlier of its
    stated end and the next fact's start; ties on ``valid_from`` broken by id), in one
    statement instead of a read, a Python pass and a write; only changed facts are
    written (-1 stands for null in the comparison: times are epoch ms, never negative).
    """
    return cypher("validity_chains", rel_type=rel_type)


async def apply_chains(store: GraphStore, rel_type: str, heads: Sequence[str]) -> int:
    """Recompute the validity chains of ``heads`` (one statement); facts changed."""
    if not heads:
        return 0
    rows = await store.execute(chain_cypher(rel_type), PortableParams(heads=sorted(set(heads))))
    return int(rows[0]["n"]) if rows else 0


class KnownEntities:
    """Entity ids this process has written or found in the graph (bounded set).

    A stream names the same entities over and over; a batch skips the create-if-missing
    query for ids in here. The fact write counts the rows whose entities it found, so a
    stale entry (graph dropped or edited behind our back) is detected: the set is
    cleared and the batch rewritten in full, which is idempotent.
    """

    def __init__(self, limit: int = 500_000) -> None:
        self.limit = limit
        self._ids: set[str] = set()

    def __contains__(self, entity_id: object) -> bool:
        return entity_id in self._ids

    def __len__(self) -> int:
        return len(self._ids)

    def update(self, ids: Iterable[str]) -> None:
        if len(self._ids) >= self.limit:
            self._ids.clear()
        self._ids.update(ids)

    def clear(self) -> None:
        self._ids.clear()


@dataclass(slots=True)
class PreparedTriples:
    """A batch of triples as graph rows: entities by label, facts by relationship type."""

    entities: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    facts: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    functional_heads: dict[str, set[str]] = field(default_factory=dict)
    rejected: list[tuple[int, TripleCheck]] = field(default_factory=list)
    partition: str = "dynamic"  # of every fact of the batch
    # per input triple: the canonical (head id, tail id) it was written under, None if
    # rejected (the change records for subscriptions reuse them instead of resolving again)
    endpoints: list[tuple[str, str] | None] = field(default_factory=list)

    @property
    def fact_count(self) -> int:
        return sum(len(v) for v in self.facts.values())


def check_triple(t: Triple, ontology: Ontology) -> TripleCheck:
    return ontology.check(
        t.head, t.head_type, t.relation, t.tail, t.tail_type, t.valid_from, t.valid_to
    )


def fact_id(head_id: str, rel_type: str, tail_id: str, valid_from: int | None) -> str:
    """Same statement, same id. ``valid_from`` is part of it only when it matters: always
    for cardinality-ONE facts (each start opens a new link of the chain), and for others
    only when the source stated it.

    ``stable_id("fact", head_id, rel_type, tail_id, valid_from or "")`` spelt out (the
    same bytes hashed, so the same id; a unit test checks it): one f-string instead of
    the generic join, on the sink's per-triple path."""
    vf = "" if valid_from is None else valid_from
    data = f"fact\x1f{head_id}\x1f{rel_type}\x1f{tail_id}\x1f{vf}\x1f"
    return hashlib.sha1(data.encode("utf-8", "surrogatepass"), usedforsecurity=False).hexdigest()[
        :20
    ]


def _ms(value: datetime) -> int:
    """``to_epoch_ms`` without the UTC conversion: an aware datetime's timestamp does not
    depend on its zone (records' times are always aware; naive ones are taken as UTC)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return int(value.timestamp() * 1000)


def prepare_triples(
    triples: Sequence[Triple],
    ontology: Ontology | None = None,
    index: AliasIndex | None = None,
    *,
    partition: str = "dynamic",
    checks: Sequence[TripleCheck] | None = None,
) -> PreparedTriples:
    """Prune, canonicalize and shape a batch (pure apart from the resolver's cache).

    ``checks``: the outcome of ``check_triple`` for each triple when the caller already
    has it (the sink checks first to dead-letter), so it is not computed twice.
    """
    ontology = ontology or default_ontology()
    index = index if index is not None else AliasIndex(ontology)  # an empty one is falsy
    resolve = index.resolve
    functional_types = ontology.functional_relation_types
    out = PreparedTriples(partition=partition)
    entities: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    facts: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    heads: dict[str, set[str]] = defaultdict(set)
    endpoints = out.endpoints
    for i, t in enumerate(triples):
        check = checks[i] if checks is not None else check_triple(t, ontology)
        if not check.ok:
            out.rejected.append((i, check))
            endpoints.append(None)
            continue
        rel_type = check.relation
        assert check.head_label and check.tail_label and rel_type
        h = resolve(t.head, check.head_label)
        tl = resolve(t.tail, check.tail_label)
        endpoints.append((h.id, tl.id))
        ingested = _ms(t.ingest_time)
        for res in (h, tl):
            bucket = entities[res.label]
            if res.id not in bucket:
                bucket[res.id] = {
                    "id": res.id,
                    "name": res.name,
                    "canonical": res.canonical,
                    "ingested_at": ingested,
                }
        functional = rel_type in functional_types
        stated_from = _ms(t.valid_from) if t.valid_from else None
        start = stated_from if stated_from is not None else _ms(t.event_time)
        fid = fact_id(h.id, rel_type, tl.id, start if functional else stated_from)
        by_id = facts[rel_type]
        row = by_id.get(fid)
        if row is None:
            by_id[fid] = {
                "id": fid,
                "head_id": h.id,
                "tail_id": tl.id,
                "valid_from": start,
                "valid_to": _ms(t.valid_to) if t.valid_to else None,
                "ingested_at": ingested,
                "sources": [t.id],
                "doc_ids": [t.doc_id] if t.doc_id else [],
                "confidence": t.confidence,
                "evidence": t.evidence[:EVIDENCE_LIMIT],
            }  # the static loader adds a "props" map of extra properties
            if t.attributes:  # a metric's value, unit, period, accession: on the edge
                by_id[fid]["props"] = {
                    k: v for k, v in t.attributes.items() if k not in FACT_FIELDS
                }
        else:  # the same fact twice in one batch: one row, merged provenance
            if t.id not in row["sources"]:
                row["sources"].append(t.id)
            if t.doc_id and t.doc_id not in row["doc_ids"]:
                row["doc_ids"].append(t.doc_id)
            row["valid_from"] = min(row["valid_from"], start)
            row["ingested_at"] = min(row["ingested_at"], ingested)
            row["confidence"] = max(row["confidence"], t.confidence)
        if functional:
            heads[rel_type].add(h.id)
    out.entities, out.facts, out.functional_heads = dict(entities), dict(facts), dict(heads)
    return out


async def _write_entities(
    store: GraphStore, prepared: PreparedTriples, batch: int, known: KnownEntities | None
) -> None:
    for label, rows in sorted(prepared.entities.items()):
        if known is None:
            todo = list(rows.values())
        else:
            todo = [row for eid, row in rows.items() if eid not in known]
        if todo:
            await store.execute_batches(
                entity_cypher(label, store.provider), todo, batch=batch, portable_rows=True
            )
        if known is not None:
            known.update(rows)


async def _write_facts(store: GraphStore, prepared: PreparedTriples, batch: int) -> int:
    """Write every fact row; returns how many found both of their entities. The rows
    are portable as ``prepare_triples`` builds them (``PortableParams``: not copied)."""
    matched = 0
    for rel_type, by_id in sorted(prepared.facts.items()):
        rows = list(by_id.values())
        for start in range(0, len(rows), batch):
            chunk = rows[start : start + batch]
            props = any(r.get("props") for r in chunk)
            params = PortableParams(partition=prepared.partition, rows=chunk)
            result = await store.execute(fact_cypher(rel_type, props=props), params)
            matched += int(result[0]["n"]) if result else 0
    return matched


async def write_prepared(
    store: GraphStore,
    prepared: PreparedTriples,
    batch: int = 2000,
    *,
    known: KnownEntities | None = None,
) -> int:
    """Entities first (one query per label), then facts (one per type), then chains.

    With ``known``, entities already in it are not written again; if the facts then
    find fewer entities than they name, ``known`` was stale: it is cleared and the whole
    batch written again (idempotent).
    """
    await _write_entities(store, prepared, batch, known)
    matched = await _write_facts(store, prepared, batch)
    if known is not None and matched < prepared.fact_count:
        known.clear()
        await _write_entities(store, prepared, batch, None)
        await _write_facts(store, prepared, batch)
        known.update(eid for rows in prepared.entities.values() for eid in rows)
    for rel_type, head_ids in sorted(prepared.functional_heads.items()):
        await apply_chains(store, rel_type, sorted(head_ids))
    return prepared.fact_count


async def write_triples(
    store: GraphStore,
    triples: Sequence[Triple],
    batch: int = 2000,
    *,
    ontology: Ontology | None = None,
    index: AliasIndex | None = None,
    checks: Sequence[TripleCheck] | None = None,
    known: KnownEntities | None = None,
) -> int:
    """Write valid triples (invalid ones are skipped; the sink checks them first).

    Returns the number of distinct facts written (created or restated). ``checks`` and
    ``known``: see ``prepare_triples`` and ``write_prepared``.
    """
    prepared = prepare_triples(triples, ontology, index, checks=checks)
    return await write_prepared(store, prepared, batch, known=known)
