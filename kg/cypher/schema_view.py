"""The relevant part of the schema for one question (what the LLM reviser sees)."""

from __future__ import annotations

from collections.abc import Iterable

from kg.graph.ontology import Ontology, default_ontology


def relevant_schema(labels: Iterable[str], ontology: Ontology | None = None) -> str:
    """Concepts named or linked, their properties, and relations touching them."""
    onto = ontology or default_ontology()
    wanted = {lb for lb in labels if onto.concept(lb)}
    if not wanted:  # nothing recognised: the static partition's concepts
        wanted = {c.label for c in onto.concepts if not c.abstract and c.partition == "static"}
    lines: list[str] = []
    rels = []
    named = set(wanted)  # one hop from what the question names, not a transitive closure
    for r in onto.relations:
        if r.internal and r.type not in ("HAS_OBSERVATION", "HAS_DAILY"):
            continue
        ends = (set(r.domain) | set(r.range)) - {"Entity"}  # "any entity" links all: skip
        if any(any(onto.is_a(w, e) for e in ends) for w in named):
            rels.append(r)
            wanted.update(ends)
    for lb in sorted(wanted):
        c = onto.concept(lb)
        if c is None or c.abstract:
            continue
        props = sorted(
            {
                p.name
                for a in onto.ancestors(lb)
                for p in (onto.concept(a).properties if onto.concept(a) else ())
            }
        )
        lines.append(f"(:{onto.label_path(lb)}) {{{', '.join(props)}}}")
    for r in rels:
        lines.append(f"(:{'|'.join(r.domain)})-[:{r.type}]->(:{'|'.join(r.range)})")
    lines.append("fact edges: id, valid_from, valid_to (null while valid), sources, doc_ids")
    return "\n".join(lines)
