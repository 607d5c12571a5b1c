"""The compositional parts of issue 44, on wordings invented for this test (none is a dev
or test question): days named by a policy decision, calendar windows ("last week" as the
previous calendar week, month to date, the last n trading days of a month), comparisons
by sign, a derived series (two series' daily difference, two series compared with no
number), a tenor several curves share, ties in "which indicator", and the difference of
two readings split into two questions."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from kg.cypher.builders.compose import split_difference
from kg.cypher.builders.windows import day_text, event_days, previous_weekday, rewrite
from kg.cypher.lexicon import Lexicon
from kg.cypher.shapes import ShapeName, render
from kg.cypher.synth import Synthesizer, read_frame
from kg.cypher.units import parse
from kg.graph.queries import catalogue
from kg.graph.static import bundled_universe_path

THU = datetime(2024, 9, 19, tzinfo=UTC)  # a Thursday
RECORDS = Path(__file__).resolve().parents[2] / "kg" / "data" / "indicator_records.json"


@cache
def lexicon() -> Lexicon:
    """The universe and the sample's indicator records (US1M..US30Y, SOFR, US_EFFR)."""
    rows: list[dict[str, Any]] = []
    stats: dict[tuple[str, str, str], int] = {}
    types: dict[str, str] = {}
    for path in (bundled_universe_path(), RECORDS):
        data = json.loads(path.read_text(encoding="utf-8"))
        for e in data["entities"]:
            types[e["id"]] = e["type"]
            row = {k: v for k, v in e.items() if k not in ("type", "properties")}
            row.update(e.get("properties") or {})
            row["labels"] = ["Entity", e["type"]]
            rows.append(row)
        for r in data.get("relations", []):
            key = (types[r["head"]], r["relation"], types.get(r["tail"], "Bond"))
            stats[key] = stats.get(key, 0) + 1
    lex = Lexicon.build(rows)
    lex.edge_stats.update(stats)
    return lex


def frame(question: str, now: datetime = THU):  # type: ignore[no-untyped-def]
    toks, mentions = lexicon().match(question)
    return read_frame(question, toks, mentions, parse(question, now))


def best(question: str, now: datetime = THU):  # type: ignore[no-untyped-def]
    cands = Synthesizer(lexicon()).candidates(frame(question, now), now)
    return max(cands, key=lambda c: c.prior)


@pytest.mark.parametrize(
    ("question", "before", "direction", "inst"),
    [
        ("what did the 2y do on FOMC day", False, 0, "FOMC"),
        ("美联储加息的前一天 十债收盘多少", True, 1, "美联储"),
        ("SOFR on the day before the Fed's rate decision", True, 0, "Fed"),
        ("央行降息那天 DR007 收在多少", False, -1, "央行"),
    ],
)
def test_a_decision_day_phrase_is_found_with_its_direction(
    question: str, before: bool, direction: int, inst: str
) -> None:
    (e,) = event_days(question)
    assert (e.before, e.direction, e.institution) == (before, direction, inst)


def test_the_decision_day_is_rewritten_as_that_day_or_the_weekday_before() -> None:
    text = "10y close on fomc day vs the day before the fomc decision"
    found = event_days(text)
    ms = int(datetime(2024, 9, 16, 18, tzinfo=UTC).timestamp() * 1000)  # a Monday
    out = rewrite(text, [(e, day_text(ms, e.before)) for e in found])
    assert out == "10y close on 2024-09-16 vs 2024-09-13"
    assert previous_weekday(datetime(2024, 9, 15, tzinfo=UTC)).day == 13  # Sunday -> Friday
    assert "$dir" in catalogue()["reader_policy_change_day"].cypher


def test_last_week_is_the_previous_calendar_week_and_past_week_seven_days() -> None:
    last = parse("avg SOFR last week", THU).time
    assert last is not None and last.kind == "prev_week"
    assert (last.start_ms, last.end_ms) == (
        int(datetime(2024, 9, 9, tzinfo=UTC).timestamp() * 1000),
        int(datetime(2024, 9, 16, tzinfo=UTC).timestamp() * 1000),
    )
    sat = parse("上周 SOFR 均值", datetime(2024, 9, 21, tzinfo=UTC)).time  # a Saturday
    assert sat is not None and sat.start_ms == int(
        datetime(2024, 9, 16, tzinfo=UTC).timestamp() * 1000
    )
    past = parse("avg SOFR over the past week", THU).time
    assert past is not None and past.kind == "last_week"


@pytest.mark.parametrize(
    "question", ["SOFR low month-to-date", "mtd high of SOFR", "SOFR月初以来最高"]
)
def test_month_to_date_is_this_month(question: str) -> None:
    win = parse(question, THU).time
    assert win is not None and win.kind == "this_month"


@pytest.mark.parametrize(
    ("question", "op"),
    [
        ("how many days did the 2s10s close negative in july", "<"),
        ("2s10s收盘为负的天数", "<"),
        ("months the CPI print was zero or negative", "<="),
        ("CPI同比是0或者负数的月份", "<="),
        ("sessions with a positive 2s10s close", ">"),
        ("days DR007 closed at 1.5%以上（不含）", ">"),
    ],
)
def test_a_comparison_said_by_its_sign_or_exclusive_bound(question: str, op: str) -> None:
    comps = parse(question, THU).comparisons
    assert [c.op for c in comps] == [op]


def test_the_last_n_trading_days_of_a_month() -> None:
    f = frame("mean 2y close across the last 4 trading days of july")
    assert f.tail_days == 4 and f.daily == "close"
    assert f.units.time is not None and f.units.time.kind == "month_tail"
    c = best("mean 2y close across the last 4 trading days of july")
    assert c.params["tail_days"] == 4 and "dv[size(dv) - $tail_days..]" in c.cypher
    f2 = frame("7月最后两个交易日 SOFR 收盘均值")
    assert f2.tail_days == 2


@pytest.mark.parametrize(
    ("question", "first", "op", "fold"),
    [
        ("days this month the 10y closed below the 2y", "US10Y", "<", "period_start"),
        ("how many sessions in june did SOFR print above US_EFFR", "SOFR", ">", "count(*)"),
        ("7月美债3个月收盘高于美债10年的天数", "US3M", ">", "count(*)"),
    ],
)
def test_two_series_compared_without_a_number_are_their_daily_difference(
    question: str, first: str, op: str, fold: str
) -> None:
    f = frame(question)
    assert f.spread and [(c.op, c.value) for c in f.units.comparisons] == [(op, 0.0)]
    c = best(question)
    assert c.params["a"] == first and "x.v - y.v AS v" in c.cypher
    assert fold in c.cypher


def test_the_daily_difference_answers_which_day_and_its_extremes() -> None:
    c = best("上周 DR007减SHIBOR_ON 收盘利差最小是哪天")
    assert "period_start" in c.cypher and "ORDER BY value ASC" in c.cypher
    c2 = best("widest daily close spread of SOFR minus US_EFFR this month")
    assert "x.v - y.v AS v" in c2.cypher


@pytest.mark.parametrize(
    ("question", "series"),
    [
        ("the 5y closing under the 10y, how many days in august", "US10Y"),
        ("10y close on friday", "US10Y"),
        ("10y收盘多少", "CN10Y"),
    ],
)
def test_a_tenor_two_curves_share_names_the_curve_of_the_question(
    question: str, series: str
) -> None:
    assert series in [a.key for a in frame(question).anchors]


@pytest.mark.parametrize(
    "question", ["bonds with a tenor of at least 10 years", "期限10年及以上的债券有几只"]
)
def test_a_shared_tenor_about_bonds_stays_a_tenor(question: str) -> None:
    assert not any(a.label == "Indicator" for a in frame(question).anchors)


def test_which_indicator_keeps_every_one_tied() -> None:
    cy = render(ShapeName.SERIES_ARGMAX, value="max(p.hi)", order="DESC")
    assert "WHERE r.value = best" in cy and "LIMIT 1" not in cy


@pytest.mark.parametrize(
    ("question", "first", "second"),
    [
        (
            "how many more sessions did SOFR close above 5.3 in june 2024 than in july 2024?",
            "how many sessions did sofr close above 5.3 in june 2024",
            "how many sessions did sofr close above 5.3 in july 2024",
        ),
        (
            "mean SOFR close this week minus mean SOFR close last week, in bp",
            "mean SOFR close this week",
            "mean SOFR close last week",
        ),
    ],
)
def test_a_difference_is_two_questions(question: str, first: str, second: str) -> None:
    parts = split_difference(question, lexicon(), THU)
    assert parts is not None
    assert (parts.first.lower(), parts.second.lower()) == (first.lower(), second.lower())


def test_a_second_part_without_its_series_takes_the_first_ones() -> None:
    parts = split_difference("7月SOFR收盘均值，减去8月的收盘均值，是多少bp", lexicon(), THU)
    assert parts is not None and parts.first == "7月SOFR收盘均值"
    assert parts.second.startswith("Secured Overnight Financing Rate") and "8月" in parts.second
    assert split_difference("US10Y minus US2Y on 2024-09-18", lexicon(), THU) is None


@pytest.mark.parametrize(
    ("said", "utc"),
    [
        ("截至前天北京时间上午11点15分 DR007", "03:15 utc"),
        ("北京时间下午三点整那笔", "07:00 utc"),
        ("北京时间上午9点到11点之间", "01:00 utc到03:00 utc"),
        ("bjt 15:45 print", "07:45 utc"),
    ],
)
def test_a_clock_time_in_a_named_zone_is_read_as_utc(said: str, utc: str) -> None:
    from kg.cypher.respell import spoken

    assert utc in spoken().read(said)


def test_a_zoned_time_on_the_day_before_in_utc_is_not_converted_by_the_zone() -> None:
    from kg.cypher.respell import spoken

    assert "utc" not in spoken().read("北京时间早上六点")  # 22:00 UTC the day before: not read


def test_a_span_between_two_clock_times_of_a_day() -> None:
    win = parse("8月30日 01:00 utc到03:30 utc之间 CN1Y最高", THU).time
    assert win is not None and win.kind == "clock_range"
    start = datetime(2024, 8, 30, 1, tzinfo=UTC)
    assert win.start_ms == int(start.timestamp() * 1000)
    assert win.end_ms == int(datetime(2024, 8, 30, 3, 30, tzinfo=UTC).timestamp() * 1000) + 1


def test_a_series_reached_through_a_relation_the_question_names() -> None:
    c = best("on how many days in 2024 did the rate the Fed sets stay at 5.25%")
    assert c.kind == "series" and c.params["a"] == "FED" and "SETS_POLICY" in c.cypher
    assert c.params["c0"] == 5.25


@pytest.mark.parametrize(
    ("question", "cond"),
    [
        ("今年以来中国PPI比上一次公布值低的有几次", "d.v < 0"),
        ("how many CPI prints this year were higher than the previous release", "d.v > 0"),
        ("今年以来LPR变过几次（和上一次公布值不同就算一次）", "d.v <> 0"),
    ],
)
def test_changes_against_the_previous_release_are_counted(question: str, cond: str) -> None:
    c = best(question)
    assert f"WITH d WHERE {cond}" in c.cypher and "count(d)" in c.cypher


def test_tenors_listed_after_a_curve_are_its_points_and_a_filter_over_them() -> None:
    q = "on the ust curve (3m 6m 2y 10y), which points closed below 4% yesterday"
    assert [a.key for a in frame(q).anchors] == ["US3M", "US6M", "US2Y", "US10Y"]
    c = best(q)
    assert c.params["ids"] == ["US3M", "US6M", "US2Y", "US10Y"] and c.params["c0"] == 4.0
    assert "value < $c0" in c.cypher
    most = best("of the treasury tenors 1m 3m 1y 5y, which rose the most between 9/16 and 9/18?")
    assert "r.value DESC" in most.cypher and len(most.params["ids"]) == 4


def test_two_values_of_different_properties_joined_by_or_are_either() -> None:
    c = best("indicators whose frequency is monthly or unit = index")
    assert "(t.frequency = $v0 OR t.unit = $v1)" in c.cypher or "(t.unit" in c.cypher
    assert " OR " in c.cypher


def test_a_chinese_object_before_its_verb_is_no_bare_relation() -> None:
    f = frame("白酒行业里 不在深交所上市的有哪些")
    assert not any(r == "LISTED_IN" for r, _neg in f.bare_relations)


def test_days_both_series_have_a_value_are_joined_by_day() -> None:
    c = best("上周两边都有数据的日子里，美债10年减美债2年平均多少")
    assert "x.v - y.v AS v" in c.cypher and "avg(v)" in c.cypher


def test_slang_and_a_property_equal_to_a_number() -> None:
    assert frame("张坤管的基金持有哪些深交所的票").target == "Company"
    assert [(c.op, c.value) for c in frame("bonds where tenor_years is 30").units.comparisons] == [
        ("=", 30.0)
    ]


def test_months_from_one_release_to_another_and_a_target_range_is_a_name() -> None:
    win = parse("change from the March 2024 print to the June 2024 print", THU).time
    assert win is not None and win.kind == "between"
    assert win.start_ms == int(datetime(2024, 3, 1, tzinfo=UTC).timestamp() * 1000)
    assert win.end_ms == int(datetime(2024, 7, 1, tzinfo=UTC).timestamp() * 1000)
    assert not frame("the upper end of the fed funds target range on 2024-07-31").range_agg
    assert frame("DR007 intraday range on 2024-09-18").range_agg


def test_listed_tenors_of_a_bond_question_are_no_curve_points() -> None:
    f = frame("bonds the us treasury issues with tenor 5y or longer")
    assert not any(a.label == "Indicator" for a in f.anchors)


def test_a_set_named_by_a_few_then_who_asks_which_not_how_many() -> None:
    f = frame("收益率类的这几个指标，昨天谁的日内振幅最大")
    assert f.agg != "count" and f.range_agg
    c = best("收益率类的这几个指标，昨天谁的日内振幅最大")
    assert "max(p.hi) - min(p.lo)" in c.cypher or "r.value DESC" in c.cypher
