"""Ontology lookups and triple pruning (no services)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kg.graph.ontology import ONTOLOGY, Cardinality, Partition, PruneReason, type_key

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_partitions_are_separated_by_label() -> None:
    assert {"Company", "Bond", "Indicator", "Industry", "Fund", "FundManager", "Executive",
            "Theme", "FinMetric", "RiskFactor", "Policy", "MarketStatus"} <= set(
        ONTOLOGY.static_labels
    )  # fmt: skip
    assert set(ONTOLOGY.dynamic_labels) == {"Observation", "DailyObservation", "Document"}
    assert not set(ONTOLOGY.static_labels) & set(ONTOLOGY.dynamic_labels)


@pytest.mark.parametrize(
    ("name", "label"),
    [("ORG", "Company"), ("COMP", "Company"), ("Organization", "Company"), ("股票", "Company"),
     ("FIN_METRIC", "FinMetric"), ("risk factor", "RiskFactor"), ("PERSON", "Person"),
     ("Chairman", "Executive"), ("macro-economic control policy", "Policy")],
)  # fmt: skip
def test_concept_aliases_from_the_seed_schemas(name: str, label: str) -> None:
    concept = ONTOLOGY.concept(name)
    assert concept is not None and concept.label == label


def test_relation_aliases_and_cardinality() -> None:
    assert ONTOLOGY.relation("Has_Stake_In").type == "HAS_STAKE_IN"  # type: ignore[union-attr]
    assert ONTOLOGY.relation("belong_to").type == "BELONGS_TO"  # type: ignore[union-attr]
    assert ONTOLOGY.relation("may lead to").type == "MAY_LEAD_TO"  # type: ignore[union-attr]
    assert ONTOLOGY.relation("HAS_CEO").cardinality == Cardinality.ONE  # type: ignore[union-attr]
    assert type_key("Has-Stake In") == "hasstakein"


def test_valid_triple_resolves_labels() -> None:
    check = ONTOLOGY.check("Apple", "ORG", "Produces", "iPhone", "PRODUCT")
    assert check.ok
    assert (check.head_label, check.relation, check.tail_label) == (
        "Company",
        "PRODUCES",
        "Product",
    )


@pytest.mark.parametrize(
    ("triple", "reason"),
    [
        (("Apple", "Spaceship", "PRODUCES", "x", "Product"), PruneReason.UNKNOWN_HEAD_TYPE),
        (("Apple", "ORG", "PRODUCES", "x", "Gizmo"), PruneReason.UNKNOWN_TAIL_TYPE),
        (("Apple", "ORG", "LOVES", "x", "Product"), PruneReason.UNKNOWN_RELATION),
        (("Apple", "ORG", "PRODUCES", "Tim", "Person"), PruneReason.RANGE_MISMATCH),
        (("iPhone", "Product", "HAS_CEO", "Tim", "Person"), PruneReason.DOMAIN_MISMATCH),
        (("Apple", "ORG", "MENTIONS", "x", "Product"), PruneReason.INTERNAL_RELATION),
        (("Apple", "ORG", "AFFECTS", "o1", "Observation"), PruneReason.DYNAMIC_TYPE),
        ((" -- ", "ORG", "PRODUCES", "x", "Product"), PruneReason.EMPTY_NAME),
        (("Apple", "ORG", "PRODUCES", "x" * 201, "Product"), PruneReason.NAME_TOO_LONG),
    ],
)
def test_pruning_reasons(triple: tuple[str, str, str, str, str], reason: PruneReason) -> None:
    check = ONTOLOGY.check(*triple)
    assert not check.ok
    assert check.reason == reason
    assert check.detail


def test_invalid_times_are_rejected() -> None:
    bad = ONTOLOGY.check("Apple", "ORG", "PRODUCES", "x", "Product", T0, T0)
    assert bad.reason == PruneReason.INVALID_TIME
    ancient = ONTOLOGY.check("Apple", "ORG", "PRODUCES", "x", "Product", datetime(1200, 1, 1))
    assert ancient.reason == PruneReason.INVALID_TIME
    assert ONTOLOGY.check("Apple", "ORG", "PRODUCES", "x", "Product", T0, None).ok


def test_schema_text_and_partition_of() -> None:
    text = ONTOLOGY.schema_text()
    assert "(Organization|Segment)-[COMPLIES_WITH]->(Regulation)" in text
    assert "MENTIONS" not in text  # internal relations are not offered to extractors
    assert ONTOLOGY.partition_of("Observation") == Partition.DYNAMIC
    assert ONTOLOGY.partition_of("Bond") == Partition.STATIC


def test_most_specific_label_is_the_deepest_known_concept() -> None:
    assert ONTOLOGY.most_specific(["Entity", "Person", "Executive"]) == "Executive"
    assert ONTOLOGY.most_specific(["Executive", "Person"]) == "Executive"
    assert ONTOLOGY.most_specific(["Entity", "NoSuchLabel"]) == "Entity"
    assert ONTOLOGY.most_specific([]) == "Entity"
