"""The ontology: concepts, relation types and data properties, as data.

One graph holds two partitions, told apart by node label (FinQA, "Knowledge
Partition and Management"):

* **static** - what exists and changes rarely: companies (listed or not, with tickers
  and codes), bonds, indicators (the series, not their values), industries, themes,
  funds, people, institutions, regions, and the schema types of Chen et al. (B.1) and
  FinReflectKG (tables 1-2). Every static node carries ``:Entity`` plus its concept label.
* **dynamic** - what arrives on a cycle: instant observations (seconds), daily history
  rolled up from them or delivered daily, documents, and news-derived facts (edges
  with valid time, ingestion time and provenance, superseded rather than deleted).

The extractor reads this to build prompts, the graph sink to prune triples, the Cypher
synthesizer and the API to know what labels, relationships and properties exist.
Labels and relationship types come only from here, so interpolating them into Cypher
is safe.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from datetime import UTC, datetime
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

MAX_NAME_CHARS = 200
MIN_YEAR, MAX_YEAR = 1900, 2200
ENTITY_LABEL = "Entity"


class Partition(StrEnum):
    STATIC = "static"
    DYNAMIC = "dynamic"


class Cycle(StrEnum):
    """How often a concept's instances change (FinQA: instant ~3 s, historical daily)."""

    STATIC = "static"
    INSTANT = "instant"
    DAILY = "daily"
    EVENT = "event"  # arrives with documents, at any time


DataType = Literal["string", "int", "float", "bool", "epoch_ms", "string_list"]


class PropertyType(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    type: DataType = "string"
    required: bool = False
    temporal: bool = False  # the value is a time (epoch ms) or only valid at a time
    description: str = ""


class ConceptType(BaseModel):
    """A class of nodes (rdfs:Class); ``label`` is the graph label."""

    model_config = ConfigDict(frozen=True)

    label: str
    partition: Partition = Partition.STATIC
    cycle: Cycle = Cycle.STATIC
    parent: str | None = None  # is-a, for domain/range checks
    abstract: bool = False  # never a node's concrete label
    aliases: tuple[str, ...] = ()  # other names extractors use: ORG, COMP, 股票 ...
    description: str = ""
    properties: tuple[PropertyType, ...] = ()
    source: str = ""  # where the type comes from (Chen et al. B.1, FinReflectKG table 1, ...)


class Cardinality(StrEnum):
    MANY = "many"
    ONE = "one"  # at most one valid tail per head at any time: a newer fact supersedes


class RelationType(BaseModel):
    model_config = ConfigDict(frozen=True)

    type: str  # the relationship type in the graph (UPPER_SNAKE)
    domain: tuple[str, ...]  # concept labels (subtypes admitted)
    range: tuple[str, ...]
    cardinality: Cardinality = Cardinality.MANY
    temporal: bool = True  # carries valid_from / valid_to
    internal: bool = False  # written by livekg itself, never accepted from extraction
    aliases: tuple[str, ...] = ()
    description: str = ""
    properties: tuple[PropertyType, ...] = ()
    source: str = ""


def type_key(name: str) -> str:
    """'Has_Stake_In', 'has stake in', 'HAS-STAKE-IN' -> 'hasstakein'."""
    return re.sub(r"[\s_\-:./]+", "", unicodedata.normalize("NFKC", name)).casefold()


def key_index(names: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``type_key(name) -> target`` over ``(name, target)`` pairs; of the names that share
    a key, the first one wins (callers order them by precedence)."""
    keys: dict[str, str] = {}
    for name, target in names:
        keys.setdefault(type_key(name), target)
    return keys


class PruneReason(StrEnum):
    """Why a triple was rejected (neo4j-graphrag's PruningReason, our cases)."""

    UNKNOWN_HEAD_TYPE = "unknown_head_type"
    UNKNOWN_TAIL_TYPE = "unknown_tail_type"
    UNKNOWN_RELATION = "unknown_relation"
    INTERNAL_RELATION = "internal_relation"
    DYNAMIC_TYPE = "dynamic_type"
    DOMAIN_MISMATCH = "domain_mismatch"
    RANGE_MISMATCH = "range_mismatch"
    EMPTY_NAME = "empty_name"
    NAME_TOO_LONG = "name_too_long"
    INVALID_TIME = "invalid_time"
    SELF_LOOP = "self_loop"


class TripleCheck(BaseModel):
    """Outcome of checking one triple: the resolved schema items or a reason."""

    ok: bool
    reason: PruneReason | None = None
    detail: str = ""
    head_label: str | None = None
    tail_label: str | None = None
    relation: str | None = None


class Ontology(BaseModel):
    model_config = ConfigDict(frozen=True)

    version: str
    concepts: tuple[ConceptType, ...]
    relations: tuple[RelationType, ...]
    common_node_properties: tuple[PropertyType, ...] = ()
    fact_properties: tuple[PropertyType, ...] = ()

    # -- lookups -------------------------------------------------------------------
    @cached_property
    def _concepts(self) -> dict[str, ConceptType]:
        return {c.label: c for c in self.concepts}

    @cached_property
    def _concept_keys(self) -> dict[str, str]:
        # Concrete labels first, then their aliases, then abstract labels: an extractor's
        # "Organization" means a Company node, not the abstract family.
        concrete = [c for c in self.concepts if not c.abstract]
        return key_index(
            [(c.label, c.label) for c in concrete]
            + [(name, c.label) for c in concrete for name in c.aliases]
            + [(c.label, c.label) for c in self.concepts]
        )

    @cached_property
    def _relations(self) -> dict[str, RelationType]:
        return {r.type: r for r in self.relations}

    @cached_property
    def _relation_keys(self) -> dict[str, str]:
        return key_index((name, r.type) for r in self.relations for name in (r.type, *r.aliases))

    def concept(self, name: str) -> ConceptType | None:
        """The concept for a label or any alias (case, spaces and underscores ignored)."""
        label = self._concept_keys.get(type_key(name))
        return self._concepts[label] if label else None

    def relation(self, name: str) -> RelationType | None:
        rel = self._relation_keys.get(type_key(name))
        return self._relations[rel] if rel else None

    def most_specific(self, labels: Iterable[str]) -> str:
        """The most specific ontology label of a node, its concept (Executive over
        Person, Company over Organization); ``Entity`` when none is a known concept.
        The one label resolver of livekg (the alias index, the question reader)."""
        known = [lb for lb in labels if lb != ENTITY_LABEL and self.concept(lb)]
        if not known:
            return ENTITY_LABEL
        return max(known, key=lambda lb: len(self.ancestors(lb)))

    def ancestors(self, label: str) -> list[str]:
        """``label`` and its parents up to the root."""
        out: list[str] = []
        cur: str | None = label
        while cur is not None and cur not in out:
            out.append(cur)
            parent = self._concepts.get(cur)
            cur = parent.parent if parent else None
        return out

    def label_path(self, label: str) -> str:
        """Cypher label expression of a node of concept ``label``: itself and every
        ancestor, root first (``Entity:Person:Executive``), so ``MATCH (p:Person)``
        finds executives and ``MATCH (o:Organization)`` companies and institutions."""
        return ":".join(reversed(self.ancestors(label)))

    def is_a(self, label: str, other: str) -> bool:
        return other in self.ancestors(label)

    def partition_of(self, label: str) -> Partition | None:
        c = self._concepts.get(label)
        return c.partition if c else None

    @cached_property
    def static_labels(self) -> tuple[str, ...]:
        return tuple(c.label for c in self.concepts if c.partition == Partition.STATIC)

    @cached_property
    def dynamic_labels(self) -> tuple[str, ...]:
        return tuple(c.label for c in self.concepts if c.partition == Partition.DYNAMIC)

    @cached_property
    def entity_labels(self) -> tuple[str, ...]:
        """Concrete labels an extracted entity may take."""
        return tuple(
            c.label for c in self.concepts if c.partition == Partition.STATIC and not c.abstract
        )

    @cached_property
    def relation_types(self) -> tuple[str, ...]:
        return tuple(r.type for r in self.relations)

    @cached_property
    def functional_relation_types(self) -> frozenset[str]:
        """Relationship types of cardinality ONE (their facts form validity chains)."""
        return frozenset(r.type for r in self.relations if r.cardinality == Cardinality.ONE)

    # -- pruning ---------------------------------------------------------------------
    def check(
        self,
        head: str,
        head_type: str,
        relation: str,
        tail: str,
        tail_type: str,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
    ) -> TripleCheck:
        """Validate a triple against the schema; the first problem found is the reason."""
        for which, name in (("head", head), ("tail", tail)):
            if not _ALNUM.search(name):
                return _reject(PruneReason.EMPTY_NAME, f"{which} name {name!r} is empty")
            if len(name) > MAX_NAME_CHARS and len(name.strip()) > MAX_NAME_CHARS:
                return _reject(
                    PruneReason.NAME_TOO_LONG,
                    f"{which} name has {len(name.strip())} chars > {MAX_NAME_CHARS}",
                )
        schema = self._schema_cache.get((head_type, relation, tail_type))
        if schema is None:
            schema = self._check_schema(head_type, relation, tail_type)
            if len(self._schema_cache) < 100_000:
                self._schema_cache[(head_type, relation, tail_type)] = schema
        if not schema.ok or (valid_from is None and valid_to is None):
            return schema
        problem = time_problem(valid_from, valid_to)
        if problem:
            return _reject(PruneReason.INVALID_TIME, problem)
        return schema

    @cached_property
    def _schema_cache(self) -> dict[tuple[str, str, str], TripleCheck]:
        return {}

    def _check_schema(self, head_type: str, relation: str, tail_type: str) -> TripleCheck:
        hc, tc = self.concept(head_type), self.concept(tail_type)
        if hc is None:
            return _reject(PruneReason.UNKNOWN_HEAD_TYPE, f"head type {head_type!r}")
        if tc is None:
            return _reject(PruneReason.UNKNOWN_TAIL_TYPE, f"tail type {tail_type!r}")
        for c in (hc, tc):
            if c.partition != Partition.STATIC or c.abstract:
                return _reject(
                    PruneReason.DYNAMIC_TYPE, f"{c.label} nodes are not written from triples"
                )
        rel = self.relation(relation)
        if rel is None:
            return _reject(PruneReason.UNKNOWN_RELATION, f"relation {relation!r}")
        if rel.internal:
            return _reject(PruneReason.INTERNAL_RELATION, f"{rel.type} is written by livekg")
        if not any(self.is_a(hc.label, d) for d in rel.domain):
            return _reject(
                PruneReason.DOMAIN_MISMATCH,
                f"{rel.type} takes heads of {'/'.join(rel.domain)}, got {hc.label}",
            )
        if not any(self.is_a(tc.label, r) for r in rel.range):
            return _reject(
                PruneReason.RANGE_MISMATCH,
                f"{rel.type} takes tails of {'/'.join(rel.range)}, got {tc.label}",
            )
        return TripleCheck(ok=True, head_label=hc.label, tail_label=tc.label, relation=rel.type)

    # -- export ----------------------------------------------------------------------
    def schema_text(self, *, partition: Partition | None = Partition.STATIC) -> str:
        """A compact text rendering for prompts (extraction and Cypher revision)."""
        lines = ["Node labels:"]
        for c in self.concepts:
            if (partition and c.partition != partition) or c.abstract:
                continue
            props = ", ".join(f"{p.name}:{p.type}" for p in c.properties)
            lines.append(f"- {c.label}: {c.description}" + (f" [{props}]" if props else ""))
        lines.append("Relationships (head)-[TYPE]->(tail):")
        for r in self.relations:
            if r.internal and partition == Partition.STATIC:
                continue
            lines.append(
                f"- ({'|'.join(r.domain)})-[{r.type}]->({'|'.join(r.range)}): {r.description}"
            )
        return "\n".join(lines)

    def summary(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "static_labels": list(self.static_labels),
            "dynamic_labels": list(self.dynamic_labels),
            "relations": list(self.relation_types),
        }


_ALNUM = re.compile(r"[^\W_]")  # any letter or digit, any script


def name_key_chars(name: str) -> str:
    """The letters and digits of a name (empty means the name carries nothing)."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", name) if ch.isalnum())


def time_problem(valid_from: datetime | None, valid_to: datetime | None) -> str | None:
    for which, t in (("valid_from", valid_from), ("valid_to", valid_to)):
        if t is not None and not (MIN_YEAR <= t.year <= MAX_YEAR):
            return f"{which} {t.isoformat()} outside {MIN_YEAR}-{MAX_YEAR}"
    if valid_from is not None and valid_to is not None:
        if _utc(valid_to) <= _utc(valid_from):
            return f"valid_to {valid_to.isoformat()} <= valid_from {valid_from.isoformat()}"
    return None


def _utc(t: datetime) -> datetime:
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t


def _reject(reason: PruneReason, detail: str) -> TripleCheck:
    return TripleCheck(ok=False, reason=reason, detail=detail)


# -- the default ontology: a data file ---------------------------------------------------

ONTOLOGY_FILE = Path(__file__).resolve().parents[1] / "data" / "ontology.json"


def load_ontology(path: Path = ONTOLOGY_FILE) -> Ontology:
    """The ontology tables as data (kg/data/ontology.json), validated by the model above."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop("$comment", None)
    return Ontology.model_validate(data)


ONTOLOGY = load_ontology()


def default_ontology() -> Ontology:
    return ONTOLOGY
