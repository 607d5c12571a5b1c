"""Change records from what the sinks wrote: one per triple or tick, its id derived from
the record's id (a replayed write gives the same change id)."""

from __future__ import annotations

from collections.abc import Sequence

from core.records import GraphChange, IndicatorTick, Triple, stable_id
from kg.canonical import AliasIndex
from kg.ontology import Ontology, TripleCheck

SOURCE = "livekg.graph"
TICK_LABELS = ["Entity", "Indicator", "Observation"]
TICK_RELATIONS = ["HAS_OBSERVATION"]


def change_id(record_id: str) -> str:
    return stable_id("graph-change", record_id)


def tick_changes(ticks: Sequence[IndicatorTick]) -> list[GraphChange]:
    return [
        GraphChange(
            id=change_id(t.id),
            source=SOURCE,
            event_time=t.event_time,
            kind="tick",
            record_id=t.id,
            entity_ids=[t.indicator_id],
            relation_types=TICK_RELATIONS,
            labels=TICK_LABELS,
        )
        for t in ticks
    ]


def triple_changes(
    triples: Sequence[Triple],
    checks: Sequence[TripleCheck],
    ontology: Ontology,
    index: AliasIndex | None,
) -> list[GraphChange]:
    """Changes of valid triples (``checks[i]`` is triple i's ontology check); entity ids
    are the canonical ids the sink wrote (the same alias index resolves them)."""
    out: list[GraphChange] = []
    for t, check in zip(triples, checks, strict=True):
        if not check.ok or not check.relation:
            continue
        assert check.head_label and check.tail_label
        if index is not None:
            ids = [index.resolve(t.head, check.head_label).id,
                   index.resolve(t.tail, check.tail_label).id]  # fmt: skip
        else:
            ids = [t.head_id or t.head, t.tail_id or t.tail]
        labels = set(ontology.label_path(check.head_label).split(":"))
        labels |= set(ontology.label_path(check.tail_label).split(":"))
        out.append(
            GraphChange(
                id=change_id(t.id),
                source=SOURCE,
                event_time=t.event_time,
                kind="triple",
                record_id=t.id,
                entity_ids=list(dict.fromkeys(ids)),
                relation_types=[check.relation],
                labels=sorted(labels),
                doc_ids=[t.doc_id] if t.doc_id else [],
            )
        )
    return out
