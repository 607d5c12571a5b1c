"""Issue 28: the shapes earnings calls, news and 10-K "respectively" lists use, metric facts
with value, unit and period, and Chinese bond-commentary variety. Every company here is
invented (Norvale Robotics, Hollis Mining, Tessly Sensors ...); Chinese numbers are
illustrative, attached to no company."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kg.extract import DocContext
from kg.extract.fastpath import extract_patterns
from kg.extract.figures import (
    complete_metric,
    header_date,
    header_period,
    normalise_period,
    parse_figure,
    sentence_period,
)
from kg.extract.types import Candidate
from kg.extract.verify import Verifier, VerifyStats

CALL = DocContext(
    doc_id="call",
    kind="news",
    title="Norvale Robotics (NRVL) Q3 2024 Earnings Call Transcript",
    main_entity="Norvale Robotics",
    event_time=datetime(2024, 10, 24, tzinfo=UTC),
)
NEWS = DocContext(doc_id="news", event_time=datetime(2024, 10, 25, tzinfo=UTC))
BARE = DocContext(doc_id="bare")


def facts(text: str, ctx: DocContext = CALL, lang: str = "en") -> dict[tuple[str, str, str], dict]:
    return {(c.head, c.relation, c.tail): c.props for c in extract_patterns(text, ctx, lang)}


# -- figures and periods ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "value", "unit", "scale"),
    [
        ("$4.2 billion", 4.2e9, "USD", "billion"),
        ("12%", 12.0, "%", ""),
        ("80 basis points", 80.0, "bp", ""),
        ("3 million shares", 3e6, "shares", "million"),
        ("1000亿元", 1e11, "CNY", "亿"),
        ("€350m", 3.5e8, "EUR", "m"),
    ],
)
def test_figures_in_base_units(raw: str, value: float, unit: str, scale: str) -> None:
    fig = parse_figure(raw)
    assert fig is not None and (fig.value, fig.unit, fig.scale) == (value, unit, scale)
    assert parse_figure("4,100") is None  # no unit: never guessed


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("third quarter of 2024", "2024-Q3"),
        ("Q3 FY25", "2025-Q3"),
        ("FY24 Q3", "2024-Q3"),
        ("fiscal 2025", "FY2025"),
        ("the year ended December 31, 2023", "FY2023"),
        ("2024年第三季度", "2024-Q3"),
    ],
)
def test_periods_normalised(text: str, label: str) -> None:
    assert normalise_period(text) == label


def test_relative_periods_take_the_header() -> None:
    header = "Q3 2024 Earnings Call"
    assert sentence_period("revenue for the quarter was $4 billion", header) == (
        "2024-Q3",
        "header",
    )
    assert sentence_period("for the full year we expect", header)[0] == "FY2024"
    # a guided quarter before the header's is next year's
    assert sentence_period("for the first quarter we expect", "Q4 2024 call")[0] == "2025-Q1"
    assert sentence_period("revenue was $4 billion", "") == ("", "none")


# -- earnings-call voice (the document's company) ------------------------------------------
def test_call_level_with_comparison() -> None:
    got = facts("Total revenue came in at $4.2 billion, up 12% year over year.")
    p = got[("Norvale Robotics", "DISCLOSES", "revenue")]
    assert (p["value"], p["unit"], p["period"]) == (4.2e9, "USD", "2024-Q3")
    assert (p["change_value"], p["change_unit"]) == (12.0, "%")
    margin = facts("Gross margin was 45.3%, down 80 basis points.")
    p = margin[("Norvale Robotics", "DISCLOSES", "Gross margin")]
    assert (p["value"], p["unit"], p["change_value"], p["change_unit"]) == (45.3, "%", 80.0, "bp")
    assert len(margin) == 1  # two patterns reading one figure give one fact


def test_we_voice_growth_generation_and_guidance() -> None:
    eps = facts("We grew EPS 8% to $1.45.")[("Norvale Robotics", "DISCLOSES", "EPS")]
    assert (eps["value"], eps["unit"]) == (1.45, "USD/share")
    fcf = facts("We generated $1.2 billion of free cash flow in the quarter.")
    assert fcf[("Norvale Robotics", "DISCLOSES", "free cash flow")]["value"] == 1.2e9
    guide = facts("For the full year we now expect revenue of $16.5 to $16.9 billion.")
    p = guide[("Norvale Robotics", "DISCLOSES", "revenue")]
    assert (p["kind"], p["low_value"], p["high_value"], p["period"]) == (
        "guidance", 16.5e9, 16.9e9, "FY2024",
    )  # fmt: skip
    q4 = facts("For the fourth quarter, we expect revenue to be in the range of $4.3 billion "
               "to $4.5 billion.")  # fmt: skip
    assert q4[("Norvale Robotics", "DISCLOSES", "revenue")]["period"] == "2024-Q4"


def test_buyback_capital_return_dividend_headcount_and_deal() -> None:
    buy = facts("We repurchased 3 million shares for $450 million in the quarter.")
    p = buy[("Norvale Robotics", "DISCLOSES", "shares")]
    assert (p["value"], p["unit"], p["amount"], p["period"]) == (
        3e6,
        "shares",
        "$450 million",
        "2024-Q3",
    )
    ret = facts("In the quarter, we returned $2 billion to shareholders.")
    assert ret[("Norvale Robotics", "DISCLOSES", "shareholders")]["kind"] == "capital_return"
    div = facts("We are raising our dividend 5%.")[("Norvale Robotics", "DISCLOSES", "dividend")]
    assert (div["value"], div["unit"], div["measure"]) == (5.0, "%", "change")
    staff = facts("We ended the quarter with approximately 12,500 employees.")
    assert staff[("Norvale Robotics", "DISCLOSES", "employees")]["value"] == 12500.0
    deal = facts("We closed the acquisition of Tessly Sensors in August.")
    assert deal[("Norvale Robotics", "INVOLVED_IN", "Tessly Sensors")]["status"] == "closed"


def test_call_voice_needs_a_document_company() -> None:
    assert facts("Total revenue came in at $4.2 billion, up 12% year over year.", BARE) == {}


# -- news -------------------------------------------------------------------------------
def test_news_results_price_move_and_guidance() -> None:
    got = facts("Hollis Mining reported third-quarter revenue of $4.2 billion, up 12% from a "
                "year earlier.", NEWS)  # fmt: skip
    p = got[("Hollis Mining", "DISCLOSES", "revenue")]
    assert (p["value"], p["period"], p["change_value"]) == (4.2e9, "2024-Q3", 12.0)
    move = facts("Shares of Hollis Mining fell 8% to $41.20 in afternoon trading.", NEWS)
    p = move[("Hollis Mining", "DISCLOSES", "Shares")]
    assert (p["value"], p["change_value"], p["period"]) == (41.2, 8.0, "2024-10-25")
    guide = facts("Hollis Mining forecast full-year revenue of $16.5 billion to $16.9 billion "
                  "for 2025.", NEWS)  # fmt: skip
    assert guide[("Hollis Mining", "DISCLOSES", "revenue")]["period"] == "FY2025"


def test_agreed_to_be_acquired() -> None:
    got = facts("Pextra Labs has agreed, subject to regulatory approvals, to be acquired by "
                "Quillon Group.", BARE)  # fmt: skip
    assert ("Quillon Group", "INVOLVED_IN", "Pextra Labs") in got


# -- 10-K "respectively" lists: one fact per year ---------------------------------------
def test_multi_year_list_one_fact_per_year() -> None:
    text = ("Depreciation expense was $92 million, $167 million and $218 million for the "
            "years ended December 31, 2023, 2022 and 2021, respectively.")  # fmt: skip
    got = [c.props for c in extract_patterns(text, CALL, "en")]
    assert sorted((p["period"], p["value"]) for p in got) == [
        ("FY2021", 218e6), ("FY2022", 167e6), ("FY2023", 92e6),
    ]  # fmt: skip
    uneven = "Fees were $1 million and $2 million in 2023, 2022 and 2021."
    assert extract_patterns(uneven, CALL, "en") == []


# -- a metric fact without a period is dropped and counted -------------------------------
def test_metric_without_period_dropped_with_reason() -> None:
    props: dict[str, str | float] = {"amount": "$5 million"}
    complete_metric(props, "revenue", "Revenue was $5 million.", "")
    assert "period" not in props and props["unit"] == "USD"
    cand = Candidate("Hollis Mining", "Company", "DISCLOSES", "revenue", "FinMetric", 0, 30,
                     props=props)  # fmt: skip
    stats = VerifyStats()
    kept = Verifier().reflect([cand], "Hollis Mining revenue was $5 million.", BARE, stats)
    assert kept == [] and stats.dropped["period_missing"] == 1


# -- Chinese bond commentary ------------------------------------------------------------
ZH = DocContext(doc_id="zh", kind="commentary", lang="zh",
                event_time=datetime(2025, 3, 12, tzinfo=UTC))  # fmt: skip


def test_zh_active_bond_and_funding_rate_without_bp() -> None:
    got = facts("10Y国债活跃券250011下行1bp，DR001加权下行至1.35%附近。", ZH, "zh")
    p = got[("10Y国债活跃券", "HAS_VALUE", "下行1bp")]
    assert (p["code"], p["head_ref"], p["date"]) == ("250011", "CN10Y", "2025-03-12")
    p = got[("DR001", "HAS_VALUE", "1.35%")]
    assert (p["dir"], p["value"], p["unit"]) == ("下行", 1.35, "%")


def test_zh_operations_maturing_net_and_bond_trading() -> None:
    got = facts("央行开展1000亿元7天期逆回购操作，当日有200亿元逆回购到期，实现净投放800亿元。",
                ZH, "zh")  # fmt: skip
    op = got[("央行", "SETS_POLICY", "7天期逆回购")]
    assert (op["amount_value"], op["maturing"]) == (1e11, "200亿元")  # an attribute, no fact
    assert op["net"] == "净投放800亿元"  # the net is the operation's (issue 43)
    trade = facts("央行公告称，3月净买入国债1000亿元。", ZH, "zh")
    assert trade[("央行", "SETS_POLICY", "净买入国债")]["amount_value"] == 1e11


def test_zh_lpr_curve_spread_and_view() -> None:
    got = facts("本月LPR维持不变，1年期LPR为3.10%。", ZH, "zh")
    assert ("LPR", "HAS_VALUE", "维持不变") in got
    assert got[("1年期LPR", "HAS_VALUE", "3.10%")]["head_ref"] == "CN_LPR_1Y"
    curve = facts("收益率曲线呈现牛陡，3年期AAA中票信用利差收窄3bp。", ZH, "zh")
    assert ("收益率曲线", "HAS_VALUE", "牛陡") in curve
    assert curve[("3年期AAA中票信用利差", "HAS_VALUE", "收窄3bp")]["dir"] == "收窄"
    assert ("市场", "INDICATES", "降准") in facts("市场普遍预期降准将于二季度落地。", ZH, "zh")


def test_zh_date_from_sentence() -> None:
    got = facts("3月14日，10年期国债收益率下行2.5bp至1.68%。", ZH, "zh")
    assert got[("10年期国债收益率", "HAS_VALUE", "1.68%")]["date"] == "2025-03-14"


def test_prior_period_figures_and_halves() -> None:
    got = [c.props for c in extract_patterns(
        "Operating cash flow was $512 million, versus $430 million in the year-ago period.",
        CALL, "en")]  # fmt: skip
    assert sorted((p["period"], p["value"], p.get("kind", "")) for p in got) == [
        ("2023-Q3", 430e6, "prior"), ("2024-Q3", 512e6, ""),
    ]  # fmt: skip
    half = facts("Free cash flow for the first half reached $780 million.")
    assert half[("Norvale Robotics", "DISCLOSES", "Free cash flow")]["period"] == "2024-H1"
    net = facts("Net income attributable to the company was $88 million, or $0.45 per share.")
    assert net[("Norvale Robotics", "DISCLOSES", "Net income")]["value"] == 88e6
    # the period after "compared to" is the prior figure's, not the fact's
    sales = [c.props for c in extract_patterns(
        "Net sales were $903 million, compared to $931 million in the third quarter of 2023.",
        CALL, "en")]  # fmt: skip
    assert {(p["period"], p["value"]) for p in sales} == {("2024-Q3", 903e6), ("2023-Q3", 931e6)}


def test_header_and_dateline() -> None:
    assert header_period("ACME CORP\nQ4 and Full-Year 2024 Earnings Call\nIn 2023 we ...") == (
        "2024-Q4", "FY2024",
    )  # fmt: skip
    assert header_period("Hollis Mining -- 3Q 2025 earnings call") == ("2025-Q3", "FY2025")
    assert header_date("Title\n\nMINNEAPOLIS, Oct. 28, 2025 -- Hollis Mining said") == "2025-10-28"
    assert header_date("【债市日报】2025年11月20日") == "2025-11-20"


def test_news_rating_without_rating_word_layoff_share_and_loss_prior() -> None:
    got = facts("S&P Global Ratings raised Hollis Mining to BBB from BBB-.", NEWS)
    p = got[("S&P Global Ratings", "AFFECTS", "Hollis Mining")]
    assert (p["to"], p["from"]) == ("BBB", "BBB-")
    cut = facts("The company will cut about 5% of its workforce, or roughly 600 jobs.")
    assert cut[("Norvale Robotics", "DISCLOSES", "workforce")]["value"] == 5.0
    loss = [c.props for c in extract_patterns(
        "Hollis Mining posted a third-quarter net loss of $45 million, compared with a profit "
        "of $30 million a year earlier.", CALL, "en")]  # fmt: skip
    assert {(p["period"], p["value"]) for p in loss} == {("2024-Q3", 45e6), ("2023-Q3", -30e6)}


def test_zh_instrument_before_tenor_and_long_operation_preamble() -> None:
    got = facts("国开债10年期活跃券收益率下行1.5bp至1.80%。", ZH, "zh")
    assert got[("国开债10年期活跃券", "HAS_VALUE", "1.80%")]["value"] == 1.8
    op = facts("央行公告称，为维护银行体系流动性合理充裕，以固定利率、数量招标方式开展了1580亿元"
               "7天期逆回购操作，操作利率为1.40%。", ZH, "zh")  # fmt: skip
    assert op[("央行", "SETS_POLICY", "7天期逆回购")]["amount_value"] == 1.58e11


def test_passive_and_contracted_guidance_and_closing_balance() -> None:
    q4 = facts("Q4 revenue is expected to be between $1.1 billion and $1.15 billion.")
    p = q4[("Norvale Robotics", "DISCLOSES", "Q4 revenue")]
    assert (p["low_value"], p["high_value"], p["period"]) == (1.1e9, 1.15e9, "2024-Q4")
    om = facts("We're targeting full-year operating margin of 18% to 19%.")
    assert om[("Norvale Robotics", "DISCLOSES", "operating margin")]["period"] == "FY2024"
    cash = facts("We closed the quarter with $2.3 billion in cash and marketable securities.")
    assert (
        cash[("Norvale Robotics", "DISCLOSES", "cash and marketable securities")]["value"] == 2.3e9
    )


def test_zh_spread_levels_and_close_with_weekday() -> None:
    got = facts("10Y-1Y期限利差收窄至43BP左右，信用利差收窄1bp至28bp。", ZH, "zh")
    assert got[("10Y-1Y期限利差", "HAS_VALUE", "43BP")]["value"] == 43.0
    assert got[("信用利差", "HAS_VALUE", "28bp")]["value"] == 28.0
    close = facts("DR007周五收于1.58%，3年期AA+城投债收益率上行2bp至1.92%。", ZH, "zh")
    assert close[("DR007", "HAS_VALUE", "1.58%")]["value"] == 1.58
    assert ("3年期AA+城投债收益率", "HAS_VALUE", "1.92%") in close
