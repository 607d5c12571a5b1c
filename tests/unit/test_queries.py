"""The named Cypher catalogue (kg/data/queries.toml): loaded, checked, slots filled safely."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import ReadOnlyViolation
from kg.cypher.guard import check_read_only
from kg.graph.queries import catalogue, cypher

# the reads of everything of a kind (no parameter to bind)
NO_PARAMETERS = {
    "retrieval_entity_names", "subscriptions_all", "subscriptions_version",
    # whole-graph probes of the runtime and the evaluation package
    "static_present", "documents_count", "document_ids", "document_mentions", "entity_ids",
    "entity_ids_labels",
    # the question reader's whole-graph reads: its data clock and the edge statistics
    "reader_data_clock", "reader_edge_stats",
}  # fmt: skip


def test_every_read_passes_the_read_only_guard() -> None:
    reads = {n: q for n, q in catalogue().items() if not q.writes and not q.slots}
    assert len(reads) >= 8
    for name, q in reads.items():
        if q.concept == "validity":  # fragments, not statements
            continue
        check_read_only(q.cypher)  # raises on a write
        assert "$" in q.cypher or name in NO_PARAMETERS


def test_slots_take_integers_and_catalogue_fragments_only() -> None:
    cy = cypher("neighbourhood", depth=2, validity=cypher("valid_at"), limit=50)
    assert "[*1..2]" in cy and "LIMIT 50" in cy and "$at" in cy and "{id: $id}" in cy
    with pytest.raises(ValueError, match="integer or a catalogue fragment"):
        cypher("neighbourhood", depth=2, validity="true) DETACH DELETE n //", limit=5)
    with pytest.raises(ValueError, match="needs slots"):
        cypher("neighbourhood", depth=2, limit=5)


def test_writes_are_marked_and_the_guard_refuses_them() -> None:
    writes = {n for n, q in catalogue().items() if q.writes}
    assert {"roll_up_daily", "subscription_save", "report_store", "chain_write"} <= writes
    for name in ("roll_up_daily", "subscription_save", "subscription_delete"):
        with pytest.raises(ReadOnlyViolation):
            check_read_only(cypher(name))


def test_name_slots_take_ontology_names_only() -> None:
    cy = cypher("static_entity_create", labels="Entity:Organization:Company")
    assert "CREATE (e:Entity:Organization:Company {id: r.id" in cy
    assert "[f:HAS_CEO]" in cypher("chain_read", rel_type="HAS_CEO")
    for bad in ("Company {id: 1}) DETACH DELETE e //", "company", "", ":Company"):
        with pytest.raises(ValueError, match="label path or relationship type"):
            cypher("static_entity_create", labels=bad)
    with pytest.raises(ValueError, match="integer or a catalogue fragment"):
        cypher("facts_as_of", valid="true")


def test_undeclared_slot_is_refused_at_load(tmp_path: Path) -> None:
    bad = tmp_path / "q.toml"
    bad.write_text('[x]\nconcept = "c"\ndescription = "d"\nslots = ["n"]\ncypher = "RETURN 1"\n')
    with pytest.raises(ValueError, match="slots"):
        catalogue.__wrapped__(bad)
