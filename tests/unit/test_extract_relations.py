"""Sentence relations, one kind at a time, on sentences written for these tests (invented
company names), the Chinese bond-commentary facts, the reflection loop and the gold
scorer."""

from __future__ import annotations

import json
import logging

import pytest

from evaluation.scorers.extract_gold import (
    GoldDoc,
    GoldTriple,
    names_match,
    normalise,
    score,
    split_of,
)
from kg.extract import DocContext
from kg.extract.fastpath import extract_patterns, sentence_spans, split_list
from kg.extract.patterns import load_file
from kg.extract.types import Candidate, Component
from kg.extract.verify import Verifier, find_period

CTX = DocContext(doc_id="t")


def facts(text: str, lang: str = "en") -> dict[tuple[str, str, str], dict]:
    return {(c.head, c.relation, c.tail): c.props for c in extract_patterns(text, CTX, lang)}


# -- English, one relation kind per test -------------------------------------------------
def test_acquisition_with_price_and_seller() -> None:
    got = facts("In May 2021, Norvale Robotics acquired Tessly Sensors from Brightmoor Capital "
                "for $40 million.")  # fmt: skip
    assert got[("Norvale Robotics", "INVOLVED_IN", "Tessly Sensors")]["price"] == "$40 million"
    assert ("Brightmoor Capital", "INVOLVED_IN", "Tessly Sensors") in got


def test_acquisition_passive_and_merger() -> None:
    assert ("Quillon Group", "INVOLVED_IN", "Pextra Labs") in facts(
        "Pextra Labs was acquired by Quillon Group in 2019."
    )
    assert ("Harlow Foods", "INVOLVED_IN", "Denbury Mills") in facts(
        "Harlow Foods agreed to merge with Denbury Mills."
    )


def test_rating_action_from_to_and_outlook() -> None:
    got = facts("Fitch Ratings downgraded Zentara Energy's long-term rating to BBB- from BBB "
                "with a negative outlook.")  # fmt: skip
    props = got[("Fitch Ratings", "AFFECTS", "Zentara Energy")]
    assert (props["to"], props["from"], props["outlook"]) == ("BBB-", "BBB", "negative")


def test_management_change_roles() -> None:
    got = facts("Mr. Arlo Vance previously served as President and Chief Executive Officer of "
                "Kestrel Freight.")  # fmt: skip
    assert ("Mr. Arlo Vance", "EXECUTIVE_OF", "Kestrel Freight") in got
    assert ("Kestrel Freight", "HAS_CEO", "Mr. Arlo Vance") in got
    named = facts("Kestrel Freight appointed Dana Whitfield as chief financial officer.")
    assert named[("Dana Whitfield", "EXECUTIVE_OF", "Kestrel Freight")]["change"] == "joined"


def test_subsidiaries_and_stakes() -> None:
    assert ("Orvane Holdings", "HAS_STAKE_IN", "Orvane Bank") in facts(
        "Orvane Bank, a wholly owned subsidiary of Orvane Holdings, reported results."
    )
    got = facts("Lindqvist Partners holds a 20% stake in Marrow Biotech.")
    assert got[("Lindqvist Partners", "HAS_STAKE_IN", "Marrow Biotech")]["stake"] == "20%"


def test_locations_and_industries() -> None:
    assert ("Corvel Systems", "OPERATES_IN", "Denver") in facts(
        "Corvel Systems is headquartered in Denver, Colorado."
    )
    assert ("Pellam Works", "BELONGS_TO", "industrial automation") in facts(
        "Pellam Works, a privately held industrial automation company, filed a notice."
    )


def test_industry_lists_owned_products_and_departures() -> None:
    got = facts("Several drug companies such as Norvale Pharma, Tessly Bio and Quill Labs "
                "face new pricing rules.")  # fmt: skip
    assert {h for h, r, t in got if r == "BELONGS_TO" and t == "drug"} == {
        "Norvale Pharma", "Tessly Bio", "Quill Labs",
    }  # fmt: skip
    assert ("Norvale Pharma", "PRODUCES", "Zentrix") in facts(
        "Zentrix, Norvale Pharma's blockbuster cancer drug, grew 8%."
    )
    left = facts("Dana Whitfield left Kestrel Freight in March.")
    assert left[("Dana Whitfield", "EXECUTIVE_OF", "Kestrel Freight")]["change"] == "left"
    places = facts("Brixton Retail operates 120 stores in Texas, Ohio and Florida.")
    assert {t for h, r, t in places if r == "OPERATES_IN"} == {"Texas", "Ohio", "Florida"}


def test_products_split_into_items() -> None:
    got = facts("Ostrava Devices manufactures industrial pumps and warehouse robots.")
    assert ("Ostrava Devices", "PRODUCES", "industrial pumps") in got
    assert ("Ostrava Devices", "PRODUCES", "warehouse robots") in got
    assert split_list("electronic and fiber optic equipment") == [
        "electronic and fiber optic equipment"
    ]


def test_partnership_lawsuit_buyback_dividend_layoffs() -> None:
    assert ("Talvio Networks", "PARTNERS_WITH", "Brenmar Cloud") in facts(
        "Talvio Networks partnered with Brenmar Cloud on edge computing."
    )
    assert ("Orsted Shipping Authority", "INVOLVED_IN", "Calder Lines") in facts(
        "Orsted Shipping Authority sued Calder Lines over fees."
    )
    buy = facts("Vantor Group authorized a $2 billion share repurchase program.")
    assert buy[("Vantor Group", "INVOLVED_IN", "share repurchase program")]["amount"] == (
        "$2 billion"
    )
    div = facts("Vantor Group declared a quarterly dividend of $0.30 per share.")
    dividend = div[("Vantor Group", "DISCLOSES", "dividend")]
    assert (dividend["value"], dividend["unit"], dividend["raw"]) == (0.3, "USD/share", "$0.30")
    cut = facts("Vantor Group said it would cut about 1,200 jobs.")
    jobs = cut[("Vantor Group", "DISCLOSES", "jobs")]  # a count: the layoffs metric
    assert (jobs["count"], jobs["value"], jobs["unit"]) == ("1,200", 1200.0, "count")


def test_reported_metric_guidance_and_price_move() -> None:
    got = facts("Hollis Mining's net income was $168.8 million in 2022, an increase of $2.1 "
                "million compared to 2021.")  # fmt: skip
    props = got[("Hollis Mining", "DISCLOSES", "net income")]
    assert props["amount"] == "$168.8 million" and props["period2"] == "2022"
    assert props["cmp"] == "increase of $2.1 million" and props["cmp_period"] == "2021"
    guide = facts("Hollis Mining expects revenue for fiscal 2025 of $1.1 billion to $1.2 billion.")
    props = guide[("Hollis Mining", "DISCLOSES", "revenue")]
    assert (props["low"], props["high"], props["period"]) == (
        "$1.1 billion", "$1.2 billion", "FY2025",
    )  # fmt: skip
    assert (props["low_value"], props["high_value"], props["unit"]) == (1.1e9, 1.2e9, "USD")
    move = facts("Hollis Mining shares jumped 12% after the report.")
    assert move[("Hollis Mining", "DISCLOSES", "shares")]["chg"] == "12%"


def test_sentences_with_no_party_give_nothing() -> None:
    assert facts("Revenue rose 5% in the quarter, driven by higher volumes.") == {}
    assert facts("In April 2012, the Company acquired certain assets.") == {}


# -- Chinese bond commentary -------------------------------------------------------------
def test_zh_yield_move_with_tenor_and_bp() -> None:
    got = facts("30年期国债收益率上行2.5bp至2.12%。", "zh")
    props = got[("30年期国债收益率", "HAS_VALUE", "2.12%")]
    assert (props["dir"], props["chg"], props["tenor"], props["instrument"]) == (
        "上行", "2.5", "30年期", "国债",
    )  # fmt: skip


def test_zh_pboc_operation_net_injection_and_ids() -> None:
    got = facts("今日有1500亿元逆回购到期，央行开展3000亿元7天期逆回购操作，中标利率1.50%，"
                "实现净投放1500亿元。", "zh")  # fmt: skip
    op = got[("央行", "SETS_POLICY", "7天期逆回购")]
    assert (op["amt"], op["val"], op["head_ref"]) == ("3000亿元", "1.50%", "PBOC")
    assert op["net"] == "净投放1500亿元"  # the operation's net, no policy of its own
    assert ("央行", "SETS_POLICY", "净投放") not in got
    weekly = facts("央行本周通过公开市场逆回购累计净回笼5,120亿元。", "zh")
    assert weekly[("央行", "SETS_POLICY", "逆回购")]["net"] == "净回笼5,120亿元"


def test_zh_funding_conditions_and_rates() -> None:
    got = facts("资金面边际收敛，DR007上行9bp至1.95%，隔夜Shibor报1.65%。", "zh")
    # the funding mood is no fact: readers of real wraps never wrote one (0 of 8 kept on
    # blind_docs_dev and the real-document gold were right); its rates are
    assert ("资金面", "HAS_VALUE", "收敛") not in got
    assert got[("DR007", "HAS_VALUE", "1.95%")]["head_ref"] == "DR007"
    assert got[("隔夜Shibor", "HAS_VALUE", "1.65%")]["head_ref"] == "SHIBOR_ON"


# -- reflection: critic of checks, corrector of repairs ----------------------------------
def _cand(head: str, rel: str, tail: str, **props: str) -> Candidate:
    return Candidate(head, "Company", rel, tail, "FinMetric", 0, 40, Component.PATTERN, "t",
                     None, dict(props), 0.9)  # fmt: skip


def test_reflection_repairs_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    text = (
        "Hollis Mining revenue was $5 million in fiscal 2023. Hollis Mining revenue was $6 million."
    )
    v = Verifier()
    ctx = DocContext(doc_id="r")
    cands = [
        _cand("Hollis Mining", "DISCLOSES", "revenue", value="$5 million"),
        _cand("Hollis Mining", "DISCLOSES", "revenue", value="$6 million"),
    ]
    with caplog.at_level(logging.INFO, logger="livekg.extract.critique"):
        kept, stats = v.verify(cands, text, ctx)
    assert stats.dropped["conflicting_values"] == 1 and len(kept) == 1
    assert kept[0].cand.props["period"] == "fiscal 2023"  # attached from the sentence
    assert stats.rounds >= 1 and "critique round=1" in caplog.text


def test_reflection_fixes_direction_and_splits_compound_names() -> None:
    v = Verifier()
    ctx = DocContext(doc_id="r")
    text = "Dovel Parts Inc. and Marlo Tools Corp. make hand tools sold by Kinder Retail."
    cands = [
        Candidate("hand tools", "Product", "PRODUCES", "Dovel Parts Inc. and Marlo Tools Corp.",
                  "Company", 0, len(text), Component.PATTERN, "t", None, {}, 0.9),
    ]  # fmt: skip
    kept, stats = v.verify(cands, text, ctx)
    assert {(k.cand.head, k.cand.tail) for k in kept} == {
        ("Dovel Parts Inc.", "hand tools"), ("Marlo Tools Corp.", "hand tools"),
    }  # fmt: skip
    assert stats.repaired["direction"] == 1 and stats.repaired["compound_name"] == 1


def test_find_period() -> None:
    text = "For the three months ended March 31, 2024, sales rose. Costs fell."
    assert find_period(text, 10, 30) == "three months ended March 31, 2024"
    assert find_period("2023年第三季度 净息差收窄", 0, 5) == "2023年第三季度"


# -- the gold scorer and the split ---------------------------------------------------------
def test_names_match_rules() -> None:
    assert normalise("The Gilead Sciences, Inc. (Gilead)") == "gilead sciences"
    assert names_match("Green River Collieries", 'Green River Collieries, LLC\'s ("Green River")')
    assert names_match("acquisition of Merlin Securities", "Merlin Securities")
    assert not names_match("1.80%", "1.85%")


def test_score_is_one_to_one_and_symmetric() -> None:
    doc = GoldDoc(id="d", text="x", gold=[
        GoldTriple(head="BP", relation="INVOLVED_IN", tail="Amoco", symmetric=True),
        GoldTriple(head="Acme", relation="OPERATES_IN", tail="Austin", tail_also=["Texas"]),
    ])  # fmt: skip
    s = score(
        [doc],
        {
            "d": [
                ("Amoco", "INVOLVED_IN", "BP"),
                ("BP", "INVOLVED_IN", "Amoco"),
                ("Acme", "OPERATES_IN", "Texas"),
                ("Acme", "IMPACTED_BY", "x"),
            ]
        },
    )
    assert (s.overall.tp, s.overall.fp, s.overall.fn) == (2, 1, 0)
    assert s.unscored["IMPACTED_BY"] == 1


def test_split_is_fixed() -> None:
    assert [split_of(f"fire-dev-{i:04d}") for i in range(6)] == [
        split_of(f"fire-dev-{i:04d}") for i in range(6)
    ]
    share = sum(split_of(f"doc-{i}") == "tune" for i in range(1000)) / 1000
    assert 0.65 < share < 0.75


# -- pattern data validation and sentence spans ---------------------------------------------
def test_pattern_file_is_validated_at_load() -> None:
    bad_group = {"version": 1, "patterns": [{"name": "x", "lang": "en", "regex": "(?P<a>A)",
                 "outs": [{"head": "{b}", "head_type": "Company", "relation": "AFFECTS",
                           "tail": "{a}", "tail_type": "Company"}]}]}  # fmt: skip
    with pytest.raises(ValueError, match="unknown groups"):
        load_file(json.dumps(bad_group))
    bad_regex = {"version": 1, "patterns": [{"name": "x", "lang": "en", "regex": "(",
                                             "outs": []}]}  # fmt: skip
    with pytest.raises(ValueError, match="bad regex"):
        load_file(json.dumps(bad_regex))


def test_sentence_spans_keep_abbreviations() -> None:
    text = "Ormat Nevada, Inc. is a unit of Ormat Technologies, Inc. It grew. Mr. Roe left."
    sents = [text[a:b].strip() for a, b in sentence_spans(text)]
    assert sents == ["Ormat Nevada, Inc. is a unit of Ormat Technologies, Inc.", "It grew.",
                     "Mr. Roe left."]  # fmt: skip
