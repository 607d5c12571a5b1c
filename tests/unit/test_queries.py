"""The named Cypher catalogue (kg/data/queries.toml): loaded, checked, slots filled safely."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg.cypher.guard import check_read_only
from kg.queries import catalogue, cypher

MAINTENANCE = {"roll_up_daily"}  # the one write in the catalogue (the upkeep timer's)


def test_every_read_passes_the_read_only_guard() -> None:
    reads = {n: q for n, q in catalogue().items() if n not in MAINTENANCE and not q.slots}
    assert len(reads) >= 8
    for name, q in reads.items():
        if q.concept == "validity":  # fragments, not statements
            continue
        check_read_only(q.cypher)  # raises on a write
        assert "$" in q.cypher or name == "retrieval_entity_names"


def test_slots_take_integers_and_catalogue_fragments_only() -> None:
    cy = cypher("neighbourhood", depth=2, validity=cypher("valid_at"), limit=50)
    assert "[*1..2]" in cy and "LIMIT 50" in cy and "$at" in cy and "{id: $id}" in cy
    with pytest.raises(ValueError, match="integer or a catalogue fragment"):
        cypher("neighbourhood", depth=2, validity="true) DETACH DELETE n //", limit=5)
    with pytest.raises(ValueError, match="needs slots"):
        cypher("neighbourhood", depth=2, limit=5)


def test_undeclared_slot_is_refused_at_load(tmp_path: Path) -> None:
    bad = tmp_path / "q.toml"
    bad.write_text('[x]\nconcept = "c"\ndescription = "d"\nslots = ["n"]\ncypher = "RETURN 1"\n')
    with pytest.raises(ValueError, match="slots"):
        catalogue.__wrapped__(bad)
