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


def test_a_date_belongs_to_its_own_list_item() -> None:
    """A wrap's numbered list: the "9月27日" of item ④ is not item ③'s date (sixth session)."""
    got = facts(
        "5、【债券重大事件】③“19青江银行二级01”、“21东岭01”将全额赎回④“20云川02”9月27日复牌。"
    )
    redeemed = [p for k, p in got.items() if k[0] == "21东岭01"]
    assert redeemed and all(p["date"] == "2024-09-19" for p in redeemed)
    from kg.extract.zh import item_of

    sent = "③“21东岭01”将全额赎回④“20云川02”9月27日复牌。"
    assert item_of(sent, 1, 9) == "③“21东岭01”将全额赎回"
    assert "9月27日" in item_of(sent, 13, 20)


def test_respectively_after_a_ranking_and_whereas() -> None:
    got = facts(
        "此外，青禾转债、北辰转2、云帆转债涨幅居前，分别涨7.15%、4.79%、4.6%；远山转债则跌9.84%跌幅最大。"
    )
    assert got[("云帆转债", "HAS_VALUE", "4.6%")]["value"] == 4.6
    assert ("青禾转债", "HAS_VALUE", "7.15%") in got
    assert got[("远山转债", "HAS_VALUE", "9.84%")]["dir"] == "跌"


def test_an_index_name_of_split_characters_is_one_name() -> None:
    """万得可转债等权指数: four words with the wraps' dictionary, not six (the verifier's limit
    is five); kg/data/zh_market_words.json."""
    from kg.extract.verify import MAX_WORDS, word_count

    assert word_count("万得可转债等权指数") <= MAX_WORDS
    assert word_count("30年期“24特别国债01”收益率") <= 9


def test_an_issue_carries_its_date_and_amount() -> None:
    from kg.extract.zh import extract_zh

    got = {
        (c.head, c.relation, c.tail): c.props
        for c in extract_zh("3、财政部将于9月26日招标发行总额300亿元91天期记账式贴现国债。", CTX)
    }
    act = got[("财政部", "SETS_POLICY", "91天期记账式贴现国债")]
    assert act["date"] == "2024-09-26"
    assert (act["amount_value"], act["amount_unit"]) == (3e10, "CNY")


def test_a_wire_dateline_without_its_year() -> None:
    """"路透北京8月31日": the year from a full date of the text in the week before (a photo
    caption), else the day as said ("--08-31"); a weekday of a dated brief is counted back."""
    from kg.extract.zh import dateline_day, item_day

    assert dateline_day("### 焦点\n路透上海/北京8月31日 - 正文。2018年8月30日，北京，图片说明。") == (
        "2018-08-31"
    )
    assert dateline_day("### 焦点\n路透东京9月7日 - 正文。资料图片：2017年6月") == "--09-07"
    assert dateline_day("1、【债市综述】银行间资金偏宽松") == ""
    assert item_day("美国股市周五收低", "2018-09-08") == "2018-09-07"
    assert item_day("官员将在下周三继续会晤", "2018-09-08") == "2018-09-08"
    assert item_day("美元周五上涨", "--09-01") == ""
    got = {
        (c.head, c.relation, c.tail): c.props
        for c in extract_patterns(
            "### 《路透早报》--9月8日\n--------\n  [重大数据或新闻]\n  2018年9月6日，纽约，图片说明。\n\n"
            "--美国股市周五收低，星海工业指数下跌79.33点，或0.31%，至25,916.54点。\n\n"
            "德国10年期公债收益率升近4个基点，报0.386%。",
            DocContext(doc_id="brief", lang="zh"),
            "zh",
        )
    }
    assert got[("星海工业指数", "HAS_VALUE", "25,916.54点")]["date"] == "2018-09-07"  # 周五
    assert got[("德国10年期公债收益率", "HAS_VALUE", "0.386%")]["date"] == "2018-09-07"  # brief


def test_a_figure_of_a_month_or_quarter_takes_that_period() -> None:
    from kg.extract.zh import dateline_day, settle_period

    def period(item: str, day: str) -> dict:
        props: dict = {"value": 0.4, "date": day}
        settle_period(props, item, day)
        return props

    assert period("8月平均时薪较前月增长0.4%", "2018-09-07") == {"value": 0.4, "period": "2018-08"}
    assert period("第二季美国经济环比增长年率为4.2%", "2018-09-06")["period"] == "2018-Q2"
    assert period("12月工业产出增长0.4%", "2019-01-05")["period"] == "2018-12"
    assert period("本月，布兰特原油涨4.3%", "2018-08-31")["period"] == "2018-08"
    assert period("7月家庭支出较上年同期增长0.1%", "--09-07")["period"] == "--07"
    # a day, a tenor or no month: the document's day stays
    assert period("30年期主力合约涨0.22%", "2024-08-21") == {"value": 0.4, "date": "2024-08-21"}
    assert "period" not in period("“20云川02”8月27日复牌，涨0.4%", "2024-08-23")
    assert "period" not in period("“24特别国债09”下行1.9bp报2.164%，创2005年2月底以来新低", "2024-09-19")
    # a morning brief of a Saturday tells Friday's session; without the year, no day
    assert dateline_day("### 《路透早报》--9月8日\n---\n  2018年9月6日，平壤，图片说明") == "2018-09-07"
    assert dateline_day("### 《路透早报》--9月1日\n  资料图片：2017年6月") == ""


def test_funding_rates_worded_around_the_number() -> None:
    got = facts(
        "银行间市场资金面继续收敛，隔夜利率进一步上行至1.78%上方。"
        "MLF错期续做，隔夜回购加权利率上行超17bp。2年期国债收益率下行超3bp。"
    )
    assert got[("隔夜利率", "HAS_VALUE", "1.78%")]["near"] == "上方"
    over = got[("隔夜回购加权利率", "HAS_VALUE", "上行超17bp")]
    assert (over["value"], over["unit"], over["bound"]) == (17.0, "bp", "超")
    assert got[("2年期国债收益率", "HAS_VALUE", "下行超3bp")]["value"] == 3.0
    # a range of tenors is no one tenor: nothing for "10年期"
    assert not facts("5-10年期国债收益率上行超1bp。")


def test_a_market_amount_outstanding_or_issued() -> None:
    got = facts("Wind数据显示，截至9月15日，银行同业存单实际发行规模已超22万亿元，同比增长超20%。")
    level = got[("银行同业存单实际发行规模", "HAS_VALUE", "22万亿元")]
    assert (level["value"], level["unit"], level["bound"], level["date"]) == (
        2.2e13, "CNY", "超", "2024-09-15"
    )
    # an issue's own size is the issue's (zh.ISSUE), a fund's size no bond market's
    assert not facts("财政部将于9月14日发行2024年第四期人民币国债，发行规模为90亿元。")
    assert not facts("还有规模超120亿元的债基近1月下跌了0.36%。")
