"""Dependency-parse relations (kg/extract/deps_en.py), the critic's negation and hedge
checks, and the pair classifier's scoring, on sentences written for these tests (invented
company and person names)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from kg.extract import DocContext
from kg.extract.deps_en import DepLexicon, dependency_candidates
from kg.extract.nlp_en import extract_en, nlp
from kg.extract.relclf import (
    NONE,
    RELCLF_RULE,
    RelationShape,
    RelModel,
    classify_sentence,
    reset_model,
    suppress_known,
    use_model,
)
from kg.extract.types import Candidate, Component
from kg.extract.verify import Verifier, VerifyStats


def dep_facts(text: str, main: str = "") -> set[tuple[str, str, str]]:
    doc = nlp()(text)
    return {
        (c.head, c.relation, c.tail)
        for sent in doc.sents
        for c in dependency_candidates(sent, main)
    }


def test_kind_of_organisation_before_the_name_and_in_apposition() -> None:
    got = dep_facts("In April 2013, GE acquired oilfield pump maker Lufkin Industries.")
    assert ("Lufkin Industries", "BELONGS_TO", "oilfield pump maker") in got
    got = dep_facts(
        "Our independent auditors, Ernst Young LLP, a registered public accounting firm, "
        "are appointed by the Audit Committee."
    )
    assert ("Ernst Young LLP", "BELONGS_TO", "registered public accounting firm") in got


def test_products_of_a_subject_company_with_coordination() -> None:
    got = dep_facts("HP develops personal computers, printers and related supplies.")
    assert {("HP", "PRODUCES", "personal computers"), ("HP", "PRODUCES", "printers")} <= got


def test_products_negated_hedged_or_abstract_give_nothing() -> None:
    assert not [f for f in dep_facts("HP does not manufacture batteries.") if f[1] == "PRODUCES"]
    assert not [f for f in dep_facts("HP may launch drones next year.") if f[1] == "PRODUCES"]
    got = dep_facts("JPMorgan Chase makes important information available on its website.")
    assert not [f for f in got if f[1] == "PRODUCES"]


def test_person_titled_at_a_company() -> None:
    got = dep_facts(
        "From 2006 to 2008, Mrs. Whitley served as the Finance Director of Global Energy "
        "Development PLC."
    )
    assert ("Whitley", "EXECUTIVE_OF", "Global Energy Development PLC") in got
    assert not [f for f in got if f[2] == "Finance"]  # the title's own word is no employer


def test_sites_in_places_and_their_owner() -> None:
    text = "The concentration of our hotels in California and Illinois exposes us to risk."
    assert ("hotels", "OPERATES_IN", "California") in dep_facts(text)
    assert ("Acme Lodging", "OPERATES_IN", "Illinois") in dep_facts(text, main="Acme Lodging")
    assert not dep_facts("We suspended all business operations in Russia.", main="Acme")


def test_subsidiary_of_a_named_parent() -> None:
    got = dep_facts(
        "Biocon Limited on Monday announced the merger of its material subsidiary "
        "Biocon Biologics Ltd with another company."
    )
    assert ("Biocon Limited", "HAS_STAKE_IN", "Biocon Biologics Ltd") in got


def test_lexicon_is_validated() -> None:
    with pytest.raises(ValidationError):
        DepLexicon.model_validate({"version": "1", "org_nouns": ["Company"]})


def _cand(head: str, rel: str, tail: str, sent: str) -> Candidate:
    return Candidate(head, "Company", rel, tail, "Event", 0, len(sent), Component.NLP, "t")


def test_critic_drops_negated_and_marks_hedged_relations() -> None:
    v, ctx = Verifier(), DocContext(doc_id="t")
    neg = "Norvale Robotics did not acquire Tessly Sensors."
    kept = v.reflect([_cand("Norvale Robotics", "INVOLVED_IN", "Tessly Sensors", neg)], neg, ctx,
                     stats := VerifyStats())  # fmt: skip
    assert kept == [] and stats.dropped["negated"] == 1
    hedge = "Norvale Robotics is in talks to buy Tessly Sensors."
    kept = v.reflect(
        [_cand("Norvale Robotics", "INVOLVED_IN", "Tessly Sensors", hedge)], hedge, ctx,
        VerifyStats(),
    )  # fmt: skip
    assert len(kept) == 1 and "in talks" in str(kept[0].props["hedged"])


def test_pair_classifier_scores_with_a_model_as_data() -> None:
    labels = [NONE, "HAS_STAKE_IN"]
    model = RelModel(
        version="t", trained_on="test", labels=labels, bias=[0.0, -1.0],
        weights={"bwo=ht:owns": [0.0, 5.0]},
        shapes={"HAS_STAKE_IN": RelationShape(head=["ORG"], tail=["ORG"], head_type="Company",
                                      tail_type="Company")},
        thresholds={"HAS_STAKE_IN": 0.8},
    )  # fmt: skip
    sent = next(nlp()("Brightmoor Holdings owns Kestrel Systems.").sents)
    use_model(model)
    try:
        got = classify_sentence(sent)
    finally:
        reset_model()
    assert [(c.head, c.relation, c.tail, c.rule) for c in got] == [
        ("Brightmoor Holdings", "HAS_STAKE_IN", "Kestrel Systems", RELCLF_RULE)
    ]
    assert suppress_known(got, [_cand("Brightmoor Holdings Inc", "HAS_STAKE_IN", "Kestrel",
                                      "")]) == []  # fmt: skip
    with pytest.raises(ValidationError):
        RelModel(version="t", trained_on="", labels=labels, bias=[0.0], weights={}, shapes={})


def test_critic_reads_a_forecast_figure_as_guidance() -> None:
    text = "Intel is expecting first-quarter EPS of $(0.80)."
    c = Candidate("Intel", "Company", "DISCLOSES", "EPS", "FinMetric", 0, len(text),
                  Component.NLP, "metric", None, {"value": "$(0.80)", "period": "2023"})  # fmt: skip
    stats = VerifyStats()
    kept = Verifier().reflect([c], text, DocContext(doc_id="t"), stats)
    assert kept[0].props["kind"] == "guidance" and stats.repaired["forward_looking"] == 1


def test_regions_of_sold_or_part_owned_businesses_are_not_the_filers() -> None:
    ctx = DocContext(doc_id="t", kind="filing", main_entity="Acme Foods Inc.")
    text = (
        "We sold our juice brands to Brightmoor Partners, while retaining a 39% noncontrolling "
        "interest in the joint venture, operating across North America and Europe."
    )
    assert not [c for c in extract_en(text, ctx) if c.relation == "OPERATES_IN"]
    kept = extract_en("We operate manufacturing plants in Canada and Mexico.", ctx)
    assert {c.tail for c in kept if c.relation == "OPERATES_IN"} >= {"Canada", "Mexico"}


def test_critic_drops_a_product_that_is_an_abstract_noun_or_made_by_a_product() -> None:
    text = "Acme's Quality Management Software provides insights into agent performance."
    bad = Candidate("Quality Management Software", "Company", "PRODUCES", "agent performance",
                    "Product", 0, len(text), Component.PATTERN, "t")  # fmt: skip
    text2 = "MTS Systems makes wafers of acceptable quality."
    good = Candidate("MTS Systems", "Company", "PRODUCES", "wafers of acceptable quality",
                     "Product", 0, len(text2), Component.PATTERN, "t")  # fmt: skip
    stats = VerifyStats()
    assert Verifier().reflect([bad], text, DocContext(doc_id="t"), stats) == []
    assert stats.dropped["not_a_product"] == 1
    assert len(Verifier().reflect([good], text2, DocContext(doc_id="t"), VerifyStats())) == 1
