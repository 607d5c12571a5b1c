"""The coverage check and the agreement of two readings (issue 44): evidence against a
reading that comes from the query that ran, not from the rule that built it. Wordings are
our own, written for these tests over the bundled universe's lexicon."""

from __future__ import annotations

from typing import Any

from kg.cypher.coverage import (
    Coverage,
    agreement,
    coverage,
    evidence,
    rival,
    same_rows,
    words,
)
from kg.cypher.frame import ReadingCandidate
from kg.cypher.reading import PENALTIES, THRESHOLD
from kg.cypher.synth import Synthesizer
from tests.fakes.universe_lexicon import NOW, frame, universe_lexicon

PLAIN = "Which companies belong to the banking industry?"


def _best(question: str) -> ReadingCandidate:
    f = frame(question)
    cands = sorted(Synthesizer(universe_lexicon()).candidates(f, NOW), key=lambda c: -c.prior)
    return cands[0]


def _cover(question: str, chosen: ReadingCandidate) -> Coverage:
    """The coverage of ``question`` by a reading that ran (perhaps built for another)."""
    lex = universe_lexicon()
    toks, mentions = lex.match(question)
    return coverage(frame(question), chosen, toks, mentions, lex.entities)


def test_a_reading_that_uses_every_part_of_the_question_leaves_nothing() -> None:
    cov = _cover(PLAIN, _best(PLAIN))
    assert cov.leftover == () and cov.classes == ()
    assert evidence(cov) == []


def test_words_the_query_ignores_are_left_over_even_when_a_rule_matched_them() -> None:
    # the banking reading, run for a question that also asks for a comparison
    q = "Which companies belong to the banking industry and grew faster than peers?"
    cov = _cover(q, _best(PLAIN))
    assert "comparison" in cov.classes
    assert "grew" in cov.leftover and "faster" in cov.leftover


def test_a_negation_no_query_part_applies_is_left_over_as_a_negation() -> None:
    q = "Which companies belong to the banking industry but are not profitable?"
    cov = _cover(q, _best(PLAIN))
    assert "negation" in cov.classes and "not" in cov.leftover


def test_a_time_phrase_the_query_does_not_read_is_left_over() -> None:
    q = "Which companies belong to the banking industry since last year?"
    cov = _cover(q, _best(PLAIN))
    assert "time" in cov.classes


def test_evidence_counts_at_most_three_plain_words_and_each_class_once() -> None:
    cov = Coverage(("alpha", "beta", "gamma", "delta", "not", "never"), ("negation",))
    ev = evidence(cov)
    assert ev.count("leftover_word") == 3 and ev.count("leftover_negation") == 1
    assert all(e in PENALTIES for e in ev)


def test_a_leftover_class_word_alone_keeps_a_plain_reading_below_the_threshold() -> None:
    for kind in ("negation", "comparison", "difference", "time", "number"):
        score = 1.0 - PENALTIES[f"leftover_{kind}"] - PENALTIES["uncovered_word"]
        assert score < THRESHOLD, kind


def test_no_class_word_is_also_a_stop_word() -> None:
    w = words()
    stop = set(w["stop"]["en"]) | set(w["stop"]["zh"])
    for name, ws in w["classes"].items():
        assert not stop & set(ws), name


def _cand(description: str, prior: float, score: float, **params: Any) -> ReadingCandidate:
    c = ReadingCandidate("MATCH (t) RETURN t", dict(params), description, prior, "entities")
    c.score = score
    return c


def test_agreement_flags_a_reading_the_prior_or_the_typed_question_would_not_choose() -> None:
    a = _cand("companies in IND_BANKS", prior=1.0, score=1.2, a0="IND_BANKS")
    b = _cand("companies in THEME_AI", prior=1.5, score=1.1, a0="THEME_AI")
    assert agreement(a, [a, b], None, respelled=False) == ["prior_disagrees"]
    assert agreement(b, [b, a], b, respelled=True) == []
    assert "respell_disagrees" in agreement(b, [b, a], a, respelled=True)


def test_a_rival_is_another_reading_within_the_gap_and_rows_compare_as_sets() -> None:
    a = _cand("one", prior=1.0, score=1.0)
    b = _cand("two", prior=1.0, score=0.95)
    c = _cand("three", prior=1.0, score=0.5)
    assert rival(a, [a, b, c]) is b and rival(a, [a, c]) is None
    assert same_rows([{"id": "A", "name": "x"}, {"id": "B"}], [{"id": "B"}, {"id": "A"}])
    assert not same_rows([{"id": "A"}], [{"id": "B"}])


def test_a_lexicon_word_is_credited_only_when_the_query_uses_what_it_maps_to() -> None:
    # "trade" is a word of the LISTED_IN phrase "trade in" (no mention of its own here):
    # credited by a query that follows LISTED_IN, left over by one that does not
    from dataclasses import replace

    from kg.cypher.coverage import _senses_of, _stem

    assert _stem("chaired") == "chair" and _stem("traded") == _stem("trade")
    assert any(s.kind == "relation" and s.key == "ISSUED_BY" for s in _senses_of("发"))
    q = "Which companies belong to the banking industry and trade?"
    plain = _best(PLAIN)
    assert "trade" in _cover(q, plain).leftover
    listed = replace(
        plain, cypher=plain.cypher.replace("MATCH", "MATCH (t)-[:LISTED_IN]->()\nMATCH", 1)
    )
    assert "trade" not in _cover(q, listed).leftover


def test_grammar_words_of_asking_are_stop_words_and_count_nouns_need_a_count() -> None:
    w = words()
    assert {"confirm", "few", "using"} <= set(w["stop"]["en"])
    assert {"所", "含", "担任"} <= set(w["stop"]["zh"])
    assert "times" in w["count_nouns"]["words"]
