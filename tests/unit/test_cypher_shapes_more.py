"""General mechanisms of the second generalisation pass (issue 33), each with wordings
invented for this test (not taken from an evaluation set): "since <day>", a time of day
with any day mention, "# of", "at or above", "came in at", "how much has X risen",
"哪几只" as a list, and the query shapes added for month-on-month changes, top-N daily
closes, one series filtering another and two-region tenor names."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from kg.cypher.lexicon import to_simplified
from kg.cypher.qa import _in_bp, _period
from kg.cypher.synth import ReadingCandidate, Synthesizer, pair_anchors, read_frame
from kg.cypher.units import parse
from tests.fakes.universe_lexicon import universe_lexicon

NOW = datetime(2026, 11, 21, tzinfo=UTC)  # a Saturday


def _iso(ms: int | None) -> str | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC).isoformat()[:16]


lexicon = universe_lexicon


def frame(question: str) -> Any:
    toks, mentions = lexicon().match(question)
    return read_frame(question, toks, mentions, parse(question, NOW))


def cyphers(question: str) -> list[str]:
    return [c.cypher for c in Synthesizer(lexicon()).candidates(frame(question), NOW)]


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("max DR007 since tuesday", "2026-11-17T00:00", None),
        ("自11月17日以来美债10年的均值", "2026-11-17T00:00", None),
        ("CN10Y at 14:30 on Nov 18", None, "2026-11-18T14:30"),
        ("yesterday 09:15 utc us2y level", None, "2026-11-20T09:15"),
    ],
)
def test_since_a_day_and_a_time_of_day_on_any_day(
    question: str, start: str | None, end: str | None
) -> None:
    win = parse(question, NOW).time
    assert win is not None
    assert _iso(win.start_ms) == start
    assert end is None or _iso(win.end_ms) == end


@pytest.mark.parametrize(
    ("question", "agg", "op", "value"),
    [
        ("# of ticks with us2y at or above 3.5", "count", ">=", 3.5),
        ("count days cn10y closed at or below 1.75", "count", "<=", 1.75),
        ("how often did PMI come in at 49.5", None, "=", 49.5),
        ("how much has M2 climbed since march", "change", None, None),
        ("how much has DR007 fallen this week", "change", None, None),
    ],
)
def test_count_and_change_wordings(
    question: str, agg: str | None, op: str | None, value: float | None
) -> None:
    u = parse(question, NOW)
    assert u.aggregation == agg
    if op is not None:
        assert [(c.op, c.value) for c in u.comparisons] == [(op, value)]


def test_which_ones_is_a_list_not_a_count() -> None:
    assert parse("币种是美元的债券有哪几只", NOW).aggregation is None
    assert parse("币种是美元的债券有几只", NOW).aggregation == "count"


@pytest.mark.parametrize(
    ("question", "target", "cond", "op", "value", "monthly"),
    [
        ("mean PMI over the months in which M2 was above 7.6", "CN_PMI", "CN_M2", ">", 7.6, True),
        ("M2 at least 7.7的月份里PMI最高是多少", "CN_PMI", "CN_M2", ">=", 7.7, True),
        ("highest DR007 close on days the US 2Y closed over 3.5", "DR007", "US2Y", ">", 3.5, False),
    ],
)
def test_one_series_read_in_the_periods_another_meets_a_condition(
    question: str, target: str, cond: str, op: str, value: float, monthly: bool
) -> None:
    cands = Synthesizer(lexicon()).candidates(frame(question), NOW)
    best = max(cands, key=lambda c: c.prior)
    assert best.params["a"] == target and best.params["b"] == cond
    assert best.params["f0"] == value and f"v {op} $f0" in best.cypher
    assert ("months" in best.params) is monthly
    assert "IN keys" in best.cypher


def test_a_spread_over_days_is_not_a_filter() -> None:
    cands = Synthesizer(lexicon()).candidates(frame("days the 10y-2y spread was above 0.8"), NOW)
    assert all("IN keys" not in c.cypher for c in cands)


@pytest.mark.parametrize(
    ("question", "ids"),
    [
        ("中美2年利差现在多少", ["US2Y", "CN2Y"]),
        ("中美十年收益率差，中减美", ["CN10Y", "US10Y"]),
        ("US-China 10y gap today", ["US10Y", "CN10Y"]),
        ("china/us 10yr spread, china minus us", ["CN10Y", "US10Y"]),
    ],
)
def test_two_regions_of_one_tenor_are_two_series(question: str, ids: list[str]) -> None:
    got = [s.key for s in pair_anchors(question, lexicon().entities)]
    present = [i for i in ids if i in lexicon().entities]
    assert got == (ids if present == ids else [])


@pytest.mark.parametrize(
    ("question", "in_bp", "agg"),
    [
        ("how many bps did DR007 drop this week", True, "change"),
        ("美债2年本周跌了几个基点", True, "change"),
        ("us10y range yesterday (bp)", True, None),
        ("how many days did DR007 close above 1.4", False, "count"),
    ],
)
def test_answers_asked_in_basis_points(question: str, in_bp: bool, agg: str | None) -> None:
    f = frame(question)
    assert f.in_bp is in_bp
    if agg is not None:
        assert f.agg == agg


def test_values_in_per_cent_become_basis_points() -> None:
    assert _in_bp({"value": 0.9284, "unit": "%"}) == {"value": 92.84, "unit": "bp"}
    assert _in_bp({"count": 3}) == {"count": 3}


def _best(question: str) -> Any:
    return max(Synthesizer(lexicon()).candidates(frame(question), NOW), key=lambda c: c.prior)


@pytest.mark.parametrize(
    ("question", "fold"),
    [
        ("M2环比八月变化", "ORDER BY d.t DESC LIMIT 1"),
        ("how many months did PMI fall month-on-month in H1", "WHERE d.v < 0"),
        ("CPI有几个月环比回升", "WHERE d.v > 0"),
        ("largest m/m decline of M2 this year", "max(-d.v)"),
        ("average MoM move in CPI in Q3", "avg(d.v)"),
    ],
)
def test_month_on_month_changes(question: str, fold: str) -> None:
    best = _best(question)
    assert "ps[k].v - ps[k - 1].v" in best.cypher and fold in best.cypher
    win = parse(question, NOW).time
    # the window bounds the changes, not the points: the first month keeps its predecessor
    assert best.params["mom_from"] == (win.start_ms if win and win.start_ms else 0)
    assert "o.observed_at >= $from" not in best.cypher


@pytest.mark.parametrize(
    ("question", "order", "averaged"),
    [
        ("mean of the two lowest DR007 closes this week", "ASC", True),
        ("top 2 US2Y closes since monday", "DESC", False),
        ("美债2年收盘价前两高的平均值", "DESC", True),
    ],
)
def test_top_n_of_daily_closes(question: str, order: str, averaged: bool) -> None:
    best = _best(question)
    assert f"ORDER BY v {order}" in best.cypher and "vs[size(vs) - 1] AS v" in best.cypher
    assert best.params["top"] == 2
    assert ("reduce(s = 0.0, x IN top" in best.cypher) is averaged


def test_an_average_of_the_days_that_meet_a_threshold() -> None:
    best = _best("mean DR007 close on days it closed under 1.4")
    assert "x IN [x IN dv WHERE x < $c0] | s + x" in best.cypher
    assert "RETURN size([x IN dv" not in best.cypher  # not the count of such days


def test_traditional_characters_read_as_simplified() -> None:
    text = to_simplified("請問招商銀行在哪個交易所上市？")
    assert text == "请问招商银行在哪个交易所上市？"
    assert to_simplified("US 10Y today") == "US 10Y today"
    f = frame(to_simplified("美國10年期國債收益率週三收盤"))
    assert [a.key for a in f.anchors] == ["US10Y"] and f.units.time is not None


def test_stock_code_words_return_the_code_and_the_ticker() -> None:
    best = _best("宁德时代股票代码多少")
    assert best.kind == "attribute" and "e.code AS code, e.ticker AS ticker" in best.cypher
    assert "e.code AS code" in _best("what is the security code of Ping An Bank").cypher


@pytest.mark.parametrize(
    ("question", "order", "limit", "cond"),
    [
        ("which session had DR007's lowest close this week", "v ASC, k", True, None),
        ("on what days did US2Y close over 3.52", "ORDER BY k\n", False, "v > $c0"),
        ("最早哪个月PMI低于49", "k ASC", True, "v < $c0"),
        ("the most recent day CN10Y closed under 1.75", "k DESC", True, "v < $c0"),
    ],
)
def test_which_day_or_month(question: str, order: str, limit: bool, cond: str | None) -> None:
    best = _best(question)
    assert "AS period_start" in best.cypher and order in best.cypher + "\n"
    assert ("LIMIT 1\n" in best.cypher) is limit
    assert cond is None or f"WHERE {cond}" in best.cypher


def test_a_period_start_is_rendered_as_a_date_or_a_month() -> None:
    row = {"period_start": 1795132800000, "value": 1.5}  # 2026-11-20T00:00Z
    day = _period(row, None)
    assert day == {"date": "2026-11-20", "value": 1.5}
    monthly = ReadingCandidate("", {}, "the month when X", 0.0, "series")
    assert _period(row, monthly)["month"] == "2026-11"


@pytest.mark.parametrize(
    ("question", "edge", "absent"),
    [
        ("which Shenzhen companies have a CEO on file", "[e0:HAS_CEO]->()", False),
        ("count AI theme stocks without a CEO", "[e0:HAS_CEO]->()", True),
        ("上交所的公司里有几家没有董事长记录", ":HAS_CHAIRMAN]->", True),
        ("NYSE companies that are not in any industry", ":BELONGS_TO]->(:Industry)", True),
        ("不属于任何主题的深交所公司", ":BELONGS_TO]->(:Theme)", True),
    ],
)
def test_an_edge_that_must_or_must_not_exist(question: str, edge: str, absent: bool) -> None:
    best = _best(question)
    assert best.kind == "entities" and "(t:Company)" in best.cypher
    assert edge in best.cypher
    assert bool(re.search(r"\be\d IS NULL", best.cypher)) is absent
    assert bool(re.search(r"\be\d IS NOT NULL", best.cypher)) is not absent


def test_a_relation_with_its_object_named_is_no_edge_test() -> None:
    f = frame("which companies with a listing in Shanghai are banks")
    assert f.bare_relations == ()
    assert all("OPTIONAL MATCH (t)-[e" not in c for c in cyphers("who is the CEO of Tesla"))


@pytest.mark.parametrize(
    ("question", "ids"),
    [
        ("list the companies in banks or insurance", ["IND_BANKS", "IND_INSURANCE"]),
        ("属于白酒或者汽车行业的公司有几家", ["IND_LIQUOR", "IND_AUTOS"]),
    ],
)
def test_alternatives_are_one_constraint(question: str, ids: list[str]) -> None:
    best = _best(question)
    assert best.kind == "entities" and "a0.id IN $a0" in best.cypher
    assert sorted(best.params["a0"]) == sorted(ids) and "a1" not in best.params


def test_which_of_the_named_entities() -> None:
    best = _best("Apple or Tesla - which one is listed on Nasdaq")
    assert "t.id IN $ids" in best.cypher and sorted(best.params["ids"]) == ["AAPL", "TSLA"]
    assert "(t:Company)" in best.cypher


@pytest.mark.parametrize(
    ("question", "value"),
    [
        ("US2Y or US10Y: which rose more from tuesday close to thursday close", "dv[size(dv) - 1]"),
        ("DR007和十债，周二到周四谁跌得更多", "dv[0] - dv[size(dv) - 1]"),
    ],
)
def test_which_of_two_series_moved_more(question: str, value: str) -> None:
    best = _best(question)
    assert "t.id IN $ids" in best.cypher and f"WITH i, {value}" in best.cypher
    assert "ORDER BY r.value DESC" in best.cypher  # the most moved (every one tied)


def test_breaking_a_level_is_a_threshold() -> None:
    assert [(c.op, c.value) for c in parse("PMI今年跌破48几次", NOW).comparisons] == [("<", 48)]
    assert [(c.op, c.value) for c in parse("十债突破1.8了吗", NOW).comparisons] == [(">", 1.8)]


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("weekly high of DR007", "this_week"),
        ("美债10年周均值多少", "this_week"),
        ("avg CN10Y over the past three sessions", "last_days"),
    ],
)
def test_weekly_and_sessions_windows(question: str, kind: str) -> None:
    win = parse(question, NOW).time
    assert win is not None and win.kind == kind


@pytest.mark.parametrize(
    ("question", "path"),
    [
        (
            "which industries are the stocks held by Zhang Kun's fund in",
            "-[f1:MANAGES]->(x1:Fund)-[f2:HAS_STAKE_IN]->(x2:Company)-[f3:BELONGS_TO]->"
            "(t:Industry)",
        ),
        ("what does the E Fund Blue Chip fund hold", "-[f1:HAS_STAKE_IN]->(t:Company)"),
        ("易方达蓝筹的持仓股在哪些概念里", "(x1:Company)-[f2:BELONGS_TO]->(t:Theme)"),
    ],
)
def test_chains_through_the_concepts_named_in_order(question: str, path: str) -> None:
    chains = [
        c for c in Synthesizer(lexicon()).candidates(frame(question), NOW) if path in c.cypher
    ]
    assert chains and chains[0].params["a0"] in ("PERSON_ZHANG_KUN", "005827.OF")


def test_no_chain_when_the_concept_after_the_question_word_is_asked() -> None:
    assert all("(x1:" not in c for c in cyphers("鲍威尔在哪个机构任职"))
    assert all("(x1:" not in c for c in cyphers("Which AI theme companies are listed on Nasdaq"))


@pytest.mark.parametrize(
    ("question", "absent", "windowed"),
    [
        ("which daily indicators have data", False, False),
        ("没有数据的月度指标有几个", True, False),
        ("how many yield series got prints yesterday", False, True),
    ],
)
def test_indicators_with_or_without_points(question: str, absent: bool, windowed: bool) -> None:
    best = _best(question)
    assert "(t:Indicator)" in best.cypher and "[:HAS_OBSERVATION|HAS_DAILY]->(ob)" in best.cypher
    assert (" ob IS NULL" in best.cypher) is absent
    assert ("$from_d" in best.cypher) is windowed


def test_groups_by_member_count_with_the_members_constraints() -> None:
    best = _best("how many themes have more than 3 companies listed in the US")
    assert "WITH g, count(DISTINCT t) AS n WHERE n > $members" in best.cypher
    assert "LISTED_IN]->(a0:Entity {id: $a0})" in best.cypher and "RETURN count(g)" in best.cypher
    listed = _best("哪些概念只有两家公司")
    assert "n = $members" in listed.cypher and "RETURN g.id AS id" in listed.cypher
    assert listed.params["members"] == 2


@pytest.mark.parametrize(
    ("question", "cond"),
    [
        ("how many days did US10Y close below its open this week", "x < $c0"),
        ("十债哪几天收盘高于开盘", "v > $c0"),
    ],
)
def test_a_day_close_against_its_open(question: str, cond: str) -> None:
    best = _best(question)
    assert "vs[size(vs) - 1] - vs[0]" in best.cypher and cond in best.cypher
    assert best.params["c0"] == 0.0


def test_a_threshold_with_or_above_wins_over_came_in_at() -> None:
    cs = parse("how often did M2 come in at 7.8% or more", NOW).comparisons
    assert [(c.op, c.value) for c in cs] == [(">=", 7.8)]


def test_two_days_compared_make_a_forward_range() -> None:
    win = parse("DR007周四收盘比周二收盘变了多少", NOW).time
    assert win is not None and win.kind == "between"
    assert _iso(win.start_ms) == "2026-11-17T00:00" and _iso(win.end_ms) == "2026-11-20T00:00"


def test_an_aggregate_of_a_named_series_close() -> None:
    assert frame("highest US 2Y close this week").daily == "close"


@pytest.mark.parametrize(
    ("question", "ids"),
    [("thirty-year treasury note issuer", ["UST_30Y"]), ("two-year US yield", ["US2Y"])],
)
def test_tenors_in_number_words(question: str, ids: list[str]) -> None:
    _toks, mentions = lexicon().match(question)
    found = [m.of("entity")[0].key for m in mentions if m.of("entity")]
    assert set(ids) <= set(found)


def test_points_are_no_count() -> None:
    assert parse("9月M2和CPI差几个点", NOW).aggregation is None
