"""``livekg eval extract --gold F --strict-attrs``: a metric fact matches only when its
value, unit and period agree with the gold's; documents with a correct fact per kind."""

from __future__ import annotations

from evaluation.scorers.extract_gold import (
    GoldDoc,
    GoldTriple,
    attrs_agree,
    canonical_unit,
    names_match,
    score,
)

GOLD = GoldDoc(
    id="d1",
    text="Norvale Robotics revenue came in at $4.2 billion in Q3 2024.",
    kind="call",
    gold=[
        GoldTriple(
            head="Norvale Robotics", relation="DISCLOSES", tail="revenue",
            attributes={"value": "$4.2 billion", "unit": "USD", "period": "Q3 2024"},
        ),
    ],
)  # fmt: skip
RIGHT = {"value": 4.2e9, "unit": "USD", "period": "2024-Q3", "raw": "$4.2 billion"}


def test_attributes_agree_across_spellings() -> None:
    assert attrs_agree(RIGHT, GOLD.gold[0].attributes)
    assert attrs_agree(RIGHT, {"value": 4.2, "scale": "billion", "period": "third quarter 2024"})
    assert not attrs_agree({**RIGHT, "value": 4.1e9, "raw": "$4.1 billion"}, {"value": "4.2"})
    assert not attrs_agree({**RIGHT, "period": "2023-Q3"}, {"period": "Q3 2024"})
    assert not attrs_agree({**RIGHT, "unit": "%"}, {"unit": "USD"})
    assert attrs_agree({}, {"direction": "down"})  # no metric attributes: anything agrees
    assert canonical_unit("dollars") == canonical_unit("$") == "usd"
    assert canonical_unit("USD/share") == "usd/share"
    rng = {"low_value": 16.5e9, "high_value": 16.9e9, "unit": "USD", "period": "FY2024"}
    assert attrs_agree(rng, {"low": "$16.5 billion", "high": "$16.9 billion", "period": "FY24"})


def test_strict_attrs_changes_the_score_and_kinds_are_counted() -> None:
    wrong = {**RIGHT, "period": "2023-Q3"}
    pred = {"d1": [("Norvale Robotics", "DISCLOSES", "revenue", wrong)]}
    assert score([GOLD], pred).overall.tp == 1  # loose: names and relation only
    strict = score([GOLD], pred, strict_attrs=True)
    assert (strict.overall.tp, strict.overall.fp, strict.overall.fn) == (0, 1, 1)
    ok = score([GOLD], {"d1": [("Norvale Robotics", "DISCLOSES", "revenue", RIGHT)]},
               strict_attrs=True)  # fmt: skip
    assert ok.overall.tp == 1
    kinds = ok.as_dict()["docs_by_kind"]
    assert kinds["call"] == {
        "docs": 1, "with_prediction": 1, "with_correct": 1, "share_with_correct": 1.0,
    }  # fmt: skip
    assert score([GOLD], {}).as_dict()["docs_by_kind"]["call"]["with_correct"] == 0


def test_scale_and_chinese_names() -> None:
    # a table-style gold: the number as printed, its scale beside it
    assert attrs_agree({"value": 1.842e9, "unit": "USD", "period": "FY2024"},
                       {"value": "1,842", "scale": "millions", "period": "fiscal 2024"})  # fmt: skip
    assert not attrs_agree({"value": 1.842e6}, {"value": "1,842", "scale": "millions"})
    # a period that names no date ("week") has nothing to compare; a commentary's date counts
    assert attrs_agree({"value": 1.81, "date": "2025-10-17"}, {"value": "1.81%", "period": "week"})
    assert names_match("FNB", "F.N.B.") and names_match("U.S. Bancorp", "US Bancorp")
    assert not names_match("F.N.B.", "F. B.")  # initials join, they are not dropped
    assert names_match("DR001", "DR001加权平均利率")  # Chinese: contained by character
    assert not names_match("10年期国债收益率", "10年期国开债收益率")  # no character Jaccard
