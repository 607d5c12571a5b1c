"""Extraction quality metrics of FinReflectKG, section 5, over every triple produced.

* CheckRules (5.1): per triple, subject reference (no abstract entity), entity length
  (<= 5 words), entity-type schema (both types are concrete ontology labels, exactly),
  relation schema (an ontology relation whose domain/range admit the types); the share
  passing each rule, all four, and at least k of them.
* Local efficiency (5.2): triples per chunk; ECR (unique entities / entity mentions),
  TCR (unique types / type mentions), TCR-N (unique types / schema types), RCR (unique
  relations / triples), RCR-N (unique relations / schema relations).
* Diversity (5.3): Shannon, schema-normalized Shannon and Renyi (alpha = 2) entropies of
  entities, types and relations.
* ``supported`` (Chen et al., phase 3): share of triples whose head and tail, or a known
  alias, occur in their source chunk (recomputed here from the chunk text, not trusted
  from the extractor); ``supported_literal`` counts only literal occurrences.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kg.extract.types import DocContext
from kg.extract.verify import MAX_WORDS, Verifier, is_abstract, norm, word_count
from kg.graph.ontology import Ontology, default_ontology

RULES = ("subject_reference", "entity_length", "entity_schema", "relation_schema")


@dataclass(frozen=True, slots=True)
class ScoredTriple:
    """What the metrics need of one produced triple."""

    head: str
    head_type: str
    relation: str
    tail: str
    tail_type: str
    chunk_text: str
    ctx: DocContext


def check_rules(t: ScoredTriple, ontology: Ontology) -> dict[str, bool]:
    labels = set(ontology.entity_labels)
    relations = {r.type for r in ontology.relations if not r.internal}
    schema_ok = ontology.check(t.head, t.head_type, t.relation, t.tail, t.tail_type).ok
    return {
        "subject_reference": not (is_abstract(t.head) or is_abstract(t.tail)),
        "entity_length": word_count(t.head) <= MAX_WORDS and word_count(t.tail) <= MAX_WORDS,
        "entity_schema": t.head_type in labels and t.tail_type in labels,
        "relation_schema": t.relation in relations and schema_ok,
    }


def _entropies(counts: Counter[str], schema_size: int | None) -> dict[str, float]:
    total = sum(counts.values())
    if not total:
        return {"shannon": 0.0, "shannon_norm": 0.0, "renyi2": 0.0, "renyi2_norm": 0.0}
    ps = [c / total for c in counts.values()]
    h = -sum(p * math.log2(p) for p in ps)
    h2 = -math.log2(sum(p * p for p in ps))
    size = schema_size or len(counts)
    denom = math.log2(size) if size > 1 else 1.0
    return {
        "shannon": round(h, 4),
        "shannon_norm": round(h / denom, 4),
        "renyi2": round(h2, 4),
        "renyi2_norm": round(h2 / denom, 4),
    }


def report(
    triples: Sequence[ScoredTriple],
    chunks: int,
    docs: int,
    *,
    ontology: Ontology | None = None,
    verifier: Verifier | None = None,
) -> dict[str, object]:
    """The metrics dictionary ``livekg eval extract`` prints."""
    ontology = ontology or default_ontology()
    verifier = verifier or Verifier(ontology)
    n = len(triples)
    per_rule = Counter[str]()
    passed_k = Counter[int]()
    supported = literal = 0
    entities: Counter[str] = Counter()
    types: Counter[str] = Counter()
    rels: Counter[str] = Counter()
    for t in triples:
        rules = check_rules(t, ontology)
        per_rule.update(k for k, ok in rules.items() if ok)
        passed_k[sum(rules.values())] += 1
        text_norm = norm(t.chunk_text)
        h_ok, h_lit = verifier.occurs(t.head, t.head_type, text_norm, t.ctx)
        t_ok, t_lit = verifier.occurs(t.tail, t.tail_type, text_norm, t.ctx)
        supported += h_ok and t_ok
        literal += h_lit and t_lit
        entities.update((norm(t.head), norm(t.tail)))
        types.update((t.head_type, t.tail_type))
        rels[t.relation] += 1

    def share(x: float) -> float:
        return round(x / n, 4) if n else 0.0

    at_least = {str(k): share(sum(v for j, v in passed_k.items() if j >= k)) for k in range(1, 5)}
    schema_types = len(ontology.entity_labels)
    schema_rels = len([r for r in ontology.relations if not r.internal])
    return {
        "docs": docs,
        "chunks": chunks,
        "triples": n,
        "triples_per_chunk": round(n / chunks, 3) if chunks else 0.0,
        "checkrules": {
            **{r: share(per_rule[r]) for r in RULES},
            "all4": at_least["4"],
            "at_least_k": at_least,
        },
        "supported": share(supported),
        "supported_literal": share(literal),
        "coverage": {
            "ECR": round(len(entities) / (2 * n), 4) if n else 0.0,
            "TCR": round(len(types) / (2 * n), 4) if n else 0.0,
            "TCR_N": round(len(types) / schema_types, 4),
            "RCR": round(len(rels) / n, 4) if n else 0.0,
            "RCR_N": round(len(rels) / schema_rels, 4),
        },
        "entropy": {
            "entities": _entropies(entities, None),
            "types": _entropies(types, schema_types),
            "relations": _entropies(rels, schema_rels),
        },
        "relations": dict(rels.most_common()),
    }


def scored_from(rows: Iterable[tuple[object, str, DocContext]]) -> list[ScoredTriple]:
    """(triple-like with head/head_type/relation/tail/tail_type, chunk text, ctx) rows."""
    out = []
    for t, text, ctx in rows:
        out.append(
            ScoredTriple(t.head, t.head_type, t.relation, t.tail, t.tail_type, text, ctx)  # type: ignore[attr-defined]
        )
    return out
