"""Issue 43: Chinese market wraps and commentary - market moves with their level, lists read
pairwise (分别), limit moves, year-on-year changes, quoted people at their employer, and the
bond events of a 重大事件 list. Text written for this test; companies, bonds and people are
invented, numbers illustrative."""

from __future__ import annotations

from datetime import UTC, datetime

from kg.extract import DocContext
from kg.extract.fastpath import extract_patterns
from kg.extract.figures import complete_zh

CTX = DocContext(doc_id="zh", lang="zh", event_time=datetime(2024, 9, 19, tzinfo=UTC))


def facts(text: str) -> dict[tuple[str, str, str], dict]:
    return {(c.head, c.relation, c.tail): c.props for c in extract_patterns(text, CTX, "zh")}


def test_market_moves_keep_the_level_they_reach() -> None:
    got = facts(
        "--美国股市收低。星海工业指数下跌79.33点，或0.31%，至25,916.54点；"
        "德国10年期公债收益率升近4个基点，报0.386%。欧元兑美元跌0.5%。"
        "德国两年期公债收益率本周上涨约6个基点至负0.56%。"
    )
    level = got[("星海工业指数", "HAS_VALUE", "25,916.54点")]
    assert (level["value"], level["unit"], level["dir"]) == (25916.54, "points", "下跌")
    assert got[("德国10年期公债收益率", "HAS_VALUE", "0.386%")]["value"] == 0.386
    assert got[("欧元兑美元", "HAS_VALUE", "0.5%")]["unit"] == "%"
    assert got[("德国两年期公债收益率", "HAS_VALUE", "负0.56%")]["value"] == -0.56


def test_lists_read_pairwise_and_limit_moves() -> None:
    got = facts("其中，青禾转债、北辰转2、云帆转债分别跌6.04%、5.08%、4.32%；远山转债20%涨停。")
    assert got[("北辰转2", "HAS_VALUE", "5.08%")]["value"] == 5.08
    assert ("云帆转债", "HAS_VALUE", "4.32%") in got
    assert ("远山转债", "HAS_VALUE", "20%") in got
    # counts that differ: no pairing is guessed
    assert not facts("青禾转债、北辰转2分别跌6.04%、5.08%、4.32%。")


def test_year_on_year_change_and_quoted_people() -> None:
    got = facts(
        "数据显示，7月家庭支出较上年同期增长0.1%。"
        "“消费并不强劲，”临川经济研究所经济分析师周明远说。"
        "青石资本(Bluestone Capital)的首席经济学家Lena Hart称，增长将放缓。许多分析师表示，前景不明。"
    )
    assert got[("家庭支出", "HAS_VALUE", "0.1%")]["dir"] == "增长"
    assert got[("周明远", "EXECUTIVE_OF", "临川经济研究所")]["role"] == "经济分析师"
    assert (
        got[("Lena Hart", "EXECUTIVE_OF", "青石资本(Bluestone Capital)")]["role"] == "首席经济学家"
    )
    assert not [k for k in got if k[1] == "EXECUTIVE_OF" and k[0] in ("表示", "许多")]


def test_bond_events_of_a_wrap() -> None:
    got = facts(
        "3、【债券重大事件】①东岭建设集团未能兑付“21东岭MTN001”本息②“20云川02”审议通过"
        "“调整兑付安排”③南港地产收到清盘呈请④“19青江银行二级”、“19北湾银行二级02”将全额赎回。"
    )
    assert ("东岭建设集团", "INVOLVED_IN", "未能兑付") in got
    assert ("20云川02", "INVOLVED_IN", "调整兑付安排") in got
    assert ("南港地产", "INVOLVED_IN", "清盘呈请") in got
    assert ("19青江银行二级", "INVOLVED_IN", "全额赎回") in got
    assert ("19北湾银行二级02", "INVOLVED_IN", "全额赎回") in got
    assert not facts("分析认为，首例国企转债违约事件或迎来转机。")


def test_commentary_units_are_not_all_basis_points() -> None:
    props: dict[str, str | float] = {"chg": "79.33点"}
    complete_zh(props, "", "2024-09-19")
    assert (props["value"], props["unit"]) == (79.33, "points")
    props = {"chg": "0.33美元"}
    complete_zh(props, "", "")
    assert props["unit"] == "USD"
    props = {"chg": "3"}
    complete_zh(props, "", "")
    assert props["unit"] == "bp"  # a bare move in a bond wrap is in basis points
