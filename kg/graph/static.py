"""Static partition loading: companies, bonds, indicators, people... from JSON or CSV.

Formats (docs/knowledge-graph.md has examples):

* JSON ``{"format": "livekg-static/1", "entities": [...], "relations": [...]}``; an
  entity is ``{"id", "type", "name", "name_zh"?, "short_name"?, "aliases"?, "ticker"?,
  "code"?, "exchange"?, "country"?, "properties"?}``, a relation ``{"head", "relation",
  "tail", "valid_from"?, "valid_to"?, "properties"?}`` with head/tail given as entity
  ids. ``type`` and ``relation`` are ontology labels or aliases.
* CSV, one kind per file, told apart by the header: entity files have ``id,type,name``
  (optional ``name_zh,short_name,aliases,ticker,code,exchange,country``; ``aliases``
  separated by ``|``; any other column becomes a property), relation files have
  ``head,relation,tail`` (optional ``valid_from,valid_to``).

Loading is an idempotent upsert: entities are created once by ``id`` and get their properties
set; relations go through the same fact path as extracted triples (partition
``static``), so validity chains and provenance work the same way.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.records import Triple, UtcDatetime, stable_id, utcnow
from kg.graph.canonical import AliasIndex
from kg.graph.ontology import Ontology, Partition, default_ontology
from kg.graph.queries import cypher
from kg.graph.sink import prepare_triples, write_prepared
from kg.graph.store.base import GraphStore

FORMAT = "livekg-static/1"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ENTITY_COLUMNS = ("id", "type", "name", "name_zh", "short_name", "aliases", "ticker", "code",
                   "exchange", "country")  # fmt: skip
_RELATION_COLUMNS = ("head", "relation", "tail", "valid_from", "valid_to")
# the optional name and listing fields of an entity: node properties when given
NAME_FIELDS = ("name_zh", "short_name", "ticker", "code", "exchange", "country")

Scalar = str | int | float | bool | None


class StaticEntity(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=200)
    type: str
    name: str = Field(min_length=1, max_length=200)
    name_zh: str | None = None
    short_name: str | None = None
    aliases: list[str] = Field(default_factory=list)
    ticker: str | None = None
    code: str | None = None
    exchange: str | None = None
    country: str | None = None
    properties: dict[str, Scalar | list[str]] = Field(default_factory=dict)


class StaticRelation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    head: str
    relation: str
    tail: str
    valid_from: UtcDatetime | None = None
    valid_to: UtcDatetime | None = None
    properties: dict[str, Scalar | list[str]] = Field(default_factory=dict)


class StaticBundle(BaseModel):
    model_config = ConfigDict(extra="ignore")

    format: str = FORMAT
    description: str = ""
    entities: list[StaticEntity] = Field(default_factory=list)
    relations: list[StaticRelation] = Field(default_factory=list)


class LoadReport(BaseModel):
    source: str
    entities: int = 0
    relations: int = 0
    errors: list[str] = Field(default_factory=list)


def bundled_universe_path() -> Path:
    return Path(str(resources.files("kg.data").joinpath("universe.json")))


def read_file(path: Path) -> StaticBundle:
    """Parse a JSON or CSV static file (raises ValueError with the reason)."""
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix.lower() == ".json":
        try:
            return StaticBundle.model_validate_json(text)
        except ValidationError as exc:
            raise ValueError(f"{path}: {exc}") from exc
    if path.suffix.lower() == ".csv":
        return _read_csv(text, str(path))
    raise ValueError(f"{path}: expected a .json or .csv file")


def _read_csv(text: str, where: str) -> StaticBundle:
    reader = csv.DictReader(text.splitlines())
    header = [h.strip() for h in reader.fieldnames or []]
    rows = [{k.strip(): (v or "").strip() for k, v in row.items() if k} for row in reader]
    try:
        if {"head", "relation", "tail"} <= set(header):
            rels = [
                StaticRelation.model_validate(
                    {
                        **{k: r[k] for k in _RELATION_COLUMNS if r.get(k)},
                        "properties": {
                            k: v for k, v in r.items() if k not in _RELATION_COLUMNS and v
                        },
                    }
                )
                for r in rows
            ]
            return StaticBundle(relations=rels)
        if {"id", "type", "name"} <= set(header):
            ents = []
            for r in rows:
                fields: dict[str, Any] = {k: r[k] for k in _ENTITY_COLUMNS if r.get(k)}
                fields["aliases"] = [a.strip() for a in r.get("aliases", "").split("|") if a]
                props = {k: v for k, v in r.items() if k not in _ENTITY_COLUMNS and v}
                ents.append(StaticEntity(**fields, properties=props))
            return StaticBundle(entities=ents)
    except ValidationError as exc:
        raise ValueError(f"{where}: {exc}") from exc
    raise ValueError(f"{where}: header needs id,type,name (entities) or head,relation,tail")


def _typed(props: dict[str, Any], label: str, ontology: Ontology) -> dict[str, Any]:
    """Cast CSV strings to the types the ontology declares for ``label``."""
    declared = {}
    for lb in ontology.ancestors(label):
        c = ontology.concept(lb)
        if c:
            declared.update({p.name: p.type for p in c.properties})
    out: dict[str, Any] = {}
    for key, value in props.items():
        kind = declared.get(key)
        if isinstance(value, str) and kind in ("float", "int"):
            try:
                value = float(value) if kind == "float" else int(value)
            except ValueError:
                pass
        elif isinstance(value, str) and kind == "epoch_ms":
            try:
                value = int(datetime.fromisoformat(value).replace(tzinfo=UTC).timestamp() * 1000)
            except ValueError:
                pass
        out[key] = value
    return out


def entity_upsert_cypher(label: str, ontology: Ontology | None = None) -> str:
    """Static entities are authoritative: their properties are (re)set on every load.

    Missing nodes are created with all their labels at once (``entity_create_cypher``,
    run first); this query then updates every row's node. Adding a label with ``SET``
    to a node MERGEd in the same transaction breaks ArcadeDB's unique index.
    """
    path = (ontology or default_ontology()).label_path(label).removeprefix("Entity:")
    return cypher("static_entity_update", labels=path)


def entity_create_cypher(label: str, ontology: Ontology | None = None) -> str:
    return cypher("static_entity_create", labels=(ontology or default_ontology()).label_path(label))


async def load_bundle(
    store: GraphStore,
    bundle: StaticBundle,
    *,
    source: str,
    ontology: Ontology | None = None,
    batch: int = 2000,
) -> LoadReport:
    """Validate against the ontology and upsert; bad rows are reported, not loaded."""
    ontology = ontology or default_ontology()
    report = LoadReport(source=source)
    now = utcnow()
    loaded_at = int(now.timestamp() * 1000)
    index = AliasIndex(ontology)
    by_label: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in bundle.entities:
        concept = ontology.concept(e.type)
        if concept is None or concept.partition != Partition.STATIC or concept.abstract:
            report.errors.append(f"entity {e.id}: unknown or non-static type {e.type!r}")
            continue
        props: dict[str, Any] = {
            "id": e.id,
            "name": e.name,
            "aliases": e.aliases,
            **{k: v for k in NAME_FIELDS if (v := getattr(e, k))},
            **_typed(e.properties, concept.label, ontology),
            "source": source,
        }
        by_label[concept.label].append({"id": e.id, "loaded_at": loaded_at, "props": props})
        index.add_row({**props, "label": concept.label})
    for label, rows in sorted(by_label.items()):
        await store.execute_batches(entity_create_cypher(label, ontology), rows, batch=batch)
        await store.execute_batches(entity_upsert_cypher(label, ontology), rows, batch=batch)
        report.entities += len(rows)
    if bundle.relations:
        await _load_relations(store, bundle, index, report, source, ontology, now, batch)
    return report


async def _load_relations(
    store: GraphStore,
    bundle: StaticBundle,
    index: AliasIndex,
    report: LoadReport,
    source: str,
    ontology: Ontology,
    now: datetime,
    batch: int,
) -> None:
    # Relations may point at entities loaded earlier (another file): look them up.
    missing = {r.head for r in bundle.relations} | {r.tail for r in bundle.relations}
    missing = {m for m in missing if index.get(m) is None}
    if missing:
        rows = await store.query(cypher("canonical_entities_by_id"), {"ids": sorted(missing)})
        for row in rows:
            index.add_row(row)
    triples, props = [], []
    for rel in bundle.relations:
        head, tail = index.get(rel.head), index.get(rel.tail)
        if head is None or tail is None:
            report.errors.append(
                f"relation {rel.head} {rel.relation} {rel.tail}: unknown "
                f"{'head' if head is None else 'tail'} id"
            )
            continue
        triple = Triple(
            id=stable_id("static", source, rel.head, rel.relation, rel.tail, rel.valid_from),
            source=f"static:{source}",
            event_time=rel.valid_from or EPOCH,
            ingest_time=now,
            head=head.id,
            head_type=head.label,
            relation=rel.relation,
            tail=tail.id,
            tail_type=tail.label,
            valid_from=rel.valid_from,
            valid_to=rel.valid_to,
        )
        triples.append(triple)
        props.append(rel.properties)
    prepared = prepare_triples(triples, ontology, index, partition=Partition.STATIC.value)
    for i, check in prepared.rejected:
        t = triples[i]
        report.errors.append(
            f"relation {t.head} {t.relation} {t.tail}: {check.reason} {check.detail}"
        )
    # Extra properties of static relations (e.g. an executive's role) ride on the fact.
    extra = {triples[i].id: p for i, p in enumerate(props) if p}
    for facts in prepared.facts.values():
        for row in facts.values():
            for src in row["sources"]:
                row.setdefault("props", {}).update(extra.get(src, {}))
    report.relations = await write_prepared(store, prepared, batch)


async def load_file(
    store: GraphStore, path: Path, *, ontology: Ontology | None = None
) -> LoadReport:
    bundle = read_file(path)
    return await load_bundle(store, bundle, source=path.name, ontology=ontology)


async def load_universe(store: GraphStore) -> LoadReport:
    """The bundled sample universe (kg/data/universe.json)."""
    return await load_file(store, bundled_universe_path())


def bundle_json(bundle: StaticBundle) -> str:
    return json.dumps(bundle.model_dump(mode="json", exclude_defaults=True), ensure_ascii=False)
