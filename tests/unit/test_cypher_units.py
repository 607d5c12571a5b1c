"""Keyword extraction, trigger units and synthesis without a database."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from evaluation.scorers.cypher import rows_match
from kg.cypher import units
from kg.cypher.guard import check_read_only
from kg.cypher.lexicon import Lexicon
from kg.cypher.synth import Synthesizer, read_frame
from kg.graph.static import bundled_universe_path

NOW = datetime(2026, 11, 21, tzinfo=UTC)


@pytest.fixture(scope="module")
def lexicon() -> Lexicon:
    bundle = json.loads(bundled_universe_path().read_text())
    from kg.graph.ontology import default_ontology

    onto = default_ontology()
    rows = []
    for e in bundle["entities"]:
        c = onto.concept(e["type"])
        assert c is not None
        labels = onto.label_path(c.label).split(":")
        rows.append({**{k: v for k, v in e.items() if k not in ("type", "properties")},
                     **e.get("properties", {}), "labels": labels})  # fmt: skip
    return Lexicon.build(rows)


def keys(lex: Lexicon, q: str, kind: str) -> list[str]:
    _t, mentions = lex.match(q)
    return [s.key for m in mentions for s in m.of(kind)]  # type: ignore[arg-type]


def test_maximum_matching_links_names_aliases_tickers_and_chinese(lexicon: Lexicon) -> None:
    assert keys(lexicon, "Who is the CEO of Apple?", "entity") == ["AAPL"]
    assert keys(lexicon, "贵州茅台的股票代码是什么？", "entity") == ["600519.SH"]
    # longest match wins: the bank, not the region plus the industry
    assert keys(lexicon, "中国银行的代码", "entity") == ["601988.SH"]
    assert keys(lexicon, "中国的银行", "entity") == ["CN", "IND_BANKS"]
    # tenors normalised, word order free, partial official names
    assert keys(lexicon, "the 10-year US Treasury note", "entity") == ["UST_10Y"]
    assert keys(lexicon, "十年期国债", "entity") == ["CGB_10Y"]
    assert keys(lexicon, "bonds of the Ministry of Finance", "entity") == ["MOF_CN"]
    assert "HAS_CEO" in keys(lexicon, "Who is the CEO of Apple?", "relation")
    # a partial name with a tenor beats the shorter exact "China"; without one it does not
    assert keys(lexicon, "spread between China 10Y and China 1Y yields", "entity") == [
        "CN10Y", "CN1Y"
    ]  # fmt: skip
    assert keys(lexicon, "How many Chinese banks are there?", "entity") == ["CN", "IND_BANKS"]
    assert keys(lexicon, "How many Chinese insurers?", "entity") == ["CN", "IND_INSURANCE"]


def test_time_aggregation_and_comparison_units() -> None:
    w = units.time_window("highest on 2026-11-18", NOW)
    assert w is not None and w.start_ms == int(
        datetime(2026, 11, 18, tzinfo=UTC).timestamp() * 1000
    )
    assert w.end_ms - w.start_ms == 86_400_000
    assert units.time_window("2026年11月18日的最高值", NOW).kind == "date"  # type: ignore[union-attr]
    week = units.time_window("最近一周DR007最高是多少", NOW)
    assert week is not None and week.kind == "last_week" and week.end_ms is None
    assert units.time_window("上个月的CPI", NOW).kind == "last_month"  # type: ignore[union-attr]
    as_of = units.time_window("the CEO as of 2015-01-01", NOW)
    assert as_of is not None and as_of.point and as_of.start_ms is None
    assert units.parse("What was the maximum DR007 last week?", NOW).aggregation == "max"
    assert units.parse("How many companies are listed?", NOW).aggregation == "count"
    assert units.parse("美国10年期国债收益率最新是多少？", NOW).aggregation == "latest"
    [c] = units.comparisons("bonds with a tenor longer than 5 years")
    assert (c.op, c.value) == (">", 5.0)
    [c] = units.comparisons("收益率高于4.2%的次数")
    assert (c.op, c.value, c.unit) == (">", 4.2, "%")
    assert units.comparisons("on 2026-11-18 above 25bp")[0].value == pytest.approx(0.25)


@pytest.mark.parametrize(
    "question",
    [
        "Which companies belong to the banking industry?",
        "How many Chinese banks are there?",
        "What was the highest China 10-year yield on 2026-11-18?",
        "张坤管理的基金持有哪些公司？",
        "MATCH (n) DETACH DELETE n",
        "delete all companies",
        "Apple'}) DETACH DELETE n //",
    ],
)
def test_candidates_are_read_only_and_parameterized(lexicon: Lexicon, question: str) -> None:
    toks, mentions = lexicon.match(question)
    frame = read_frame(question, toks, mentions, units.parse(question, NOW))
    for c in Synthesizer(lexicon).candidates(frame, NOW):
        check_read_only(c.cypher)
        assert "LIMIT" in c.cypher or "count(" in c.cypher or " AS value" in c.cypher
        assert "'" not in c.cypher and "DETACH" not in c.cypher  # values only as parameters


def test_rows_match_pairs_rows_one_to_one() -> None:
    assert rows_match([{"id": "AAPL"}], [{"id": "AAPL", "name": "Apple Inc."}])
    assert not rows_match([{"id": "AAPL"}], [{"id": "AAPL"}, {"id": "MSFT"}])
    assert rows_match([{"value": 4.3399}], [{"value": 4.33991}])
    assert not rows_match([{"value": 4.3399}], [{"value": 4.5}])
    assert rows_match([{"count": 2}], [{"count": 2}])


def test_hybrid_answers_need_a_shared_word() -> None:
    from kg.cypher.hybrid import _terms

    q = _terms("What did the Fed say about inflation?")
    assert q & _terms("FOMC statement: inflation remains elevated")
    assert not q & _terms("NVIDIA Corporation belongs to Semiconductors")
    assert _terms("美联储加息") & _terms("美联储维持利率")
