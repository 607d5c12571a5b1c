"""Change records from what the sinks wrote: one per triple or tick, its id derived from
the record's id (a replayed write gives the same change id)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from core.codec import construct_valid
from core.records import SCHEMA_VERSION, GraphChange, IndicatorTick, Triple, utcnow
from kg.graph.canonical import AliasIndex
from kg.graph.ontology import Ontology, TripleCheck

SOURCE = "livekg.graph"
TICK_LABELS = ["Entity", "Indicator", "Observation"]
TICK_RELATIONS = ["HAS_OBSERVATION"]


def change_id(record_id: str) -> str:
    """``stable_id("graph-change", record_id)`` spelt out (the same bytes hashed, so the
    same id; a unit test checks it): it runs once per triple the sink writes."""
    data = f"graph-change\x1f{record_id}\x1f".encode("utf-8", "surrogatepass")
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()[:20]


def _row(
    record_id: str,
    event_time: datetime,
    now: datetime,
    kind: Literal["triple", "tick"],
    *,
    entity_ids: list[str],
    relation_types: list[str],
    labels: list[str],
    doc_ids: list[str],
) -> dict[str, Any]:
    """Every GraphChange field, in its order: ``construct_valid`` takes them as they are."""
    return {
        "schema_version": SCHEMA_VERSION,
        "id": change_id(record_id),
        "source": SOURCE,
        "event_time": event_time,
        "ingest_time": now,
        "kind": kind,
        "record_id": record_id,
        "entity_ids": entity_ids,
        "relation_types": relation_types,
        "labels": labels,
        "doc_ids": doc_ids,
    }


def tick_changes(ticks: Sequence[IndicatorTick]) -> list[GraphChange]:
    """One change per tick, built from the validated ticks (``construct_valid``)."""
    now = utcnow()
    rows = [
        _row(
            t.id,
            t.event_time,
            now,
            "tick",
            entity_ids=[t.indicator_id],
            relation_types=list(TICK_RELATIONS),
            labels=list(TICK_LABELS),
            doc_ids=[],
        )
        for t in ticks
    ]
    return construct_valid(GraphChange, rows)


def triple_changes(
    triples: Sequence[Triple],
    checks: Sequence[TripleCheck],
    ontology: Ontology,
    index: AliasIndex | None,
    endpoints: Sequence[tuple[str, str] | None] | None = None,
) -> list[GraphChange]:
    """Changes of valid triples (``checks[i]`` is triple i's ontology check); entity ids
    are the canonical ids the sink wrote: ``endpoints[i]`` when the sink hands them over
    (``kg.graph.sink.PreparedTriples.endpoints``), else resolved again with the same alias
    index. Built as one batch: label sets once per pair of concepts, every value taken
    from the validated triples (``construct_valid``: not validated a second time)."""
    rows: list[dict[str, Any]] = []
    now = utcnow()
    labels_of: dict[tuple[str, str], list[str]] = {}
    for i, (t, check) in enumerate(zip(triples, checks, strict=True)):
        if not check.ok or not check.relation:
            continue
        head_label, tail_label = check.head_label, check.tail_label
        assert head_label and tail_label
        ends = endpoints[i] if endpoints is not None else None
        if ends is not None:
            head_id, tail_id = ends
        elif index is not None:
            head_id = index.resolve(t.head, head_label).id
            tail_id = index.resolve(t.tail, tail_label).id
        else:
            head_id, tail_id = t.head_id or t.head, t.tail_id or t.tail
        labels = labels_of.get((head_label, tail_label))
        if labels is None:
            both = ontology.label_path(head_label).split(":")
            both += ontology.label_path(tail_label).split(":")
            labels = labels_of[(head_label, tail_label)] = sorted(set(both))
        rows.append(
            _row(
                t.id,
                t.event_time,
                now,
                "triple",
                entity_ids=[head_id] if head_id == tail_id else [head_id, tail_id],
                relation_types=[check.relation],
                labels=list(labels),
                doc_ids=[t.doc_id] if t.doc_id else [],
            )
        )
    return construct_valid(GraphChange, rows)
