"""The general parsing mechanisms of issue 33, each with wordings invented for this test
(not taken from any evaluation set): relative and calendar time, clipped and misspelt
names, short series names, negation, search-box targets, spreads over a window."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kg.cypher.qa import _has_values
from kg.cypher.shapes import ShapeName as S
from kg.cypher.synth import Synthesizer, read_frame, spread_anchors
from kg.cypher.units import comparisons, day_mentions, parse, time_window
from tests.fakes.universe_lexicon import universe_lexicon

NOW = datetime(2026, 11, 21, tzinfo=UTC)  # a Saturday


def _day(ms: int | None) -> str | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC).date().isoformat()


lexicon = universe_lexicon


def anchors(question: str) -> list[str]:
    _toks, mentions = lexicon().match(question)
    return [m.of("entity")[0].key for m in mentions if m.of("entity")]


def frame(question: str) -> Any:
    toks, mentions = lexicon().match(question)
    return read_frame(question, toks, mentions, parse(question, NOW))


@pytest.mark.parametrize(
    ("question", "kind", "start", "end"),
    [
        ("cpi back in april?", "month_noyear", "2026-04-01", "2026-05-01"),
        ("PMI 今年2月份是多少", "month_noyear", "2026-02-01", "2026-03-01"),
        ("九月的M2", "month_noyear", "2026-09-01", "2026-10-01"),
        ("M2 growth feb through may", "month_range", "2026-02-01", "2026-06-01"),
        ("CPI从3月到6月的均值", "month_range", "2026-03-01", "2026-07-01"),
        ("average PMI in Q2", "quarter", "2026-04-01", "2026-07-01"),
        ("二季度CPI最高多少", "quarter", "2026-04-01", "2026-07-01"),
        ("M2 in the first half", "quarter", "2026-01-01", "2026-07-01"),
        ("大前天DR007收盘", "days_ago", "2026-11-18", "2026-11-19"),
        ("us 2y close four days back", "days_ago", "2026-11-17", "2026-11-18"),
        ("cn10y at thu close", "weekday", "2026-11-19", "2026-11-20"),
        ("DR007 from tue to thu, average", "between", "2026-11-17", "2026-11-20"),
        ("周二到周四的均值", "between", "2026-11-17", "2026-11-20"),
    ],
)
def test_calendar_and_relative_windows(question: str, kind: str, start: str, end: str) -> None:
    w = time_window(question, NOW)
    assert w is not None and w.kind == kind, w
    assert (_day(w.start_ms), _day(w.end_ms)) == (start, end)


def test_relative_days_are_day_mentions_and_absolute_dates_stay_first() -> None:
    days = day_mentions("from wednesday open to yday close", NOW)
    assert [d.date().isoformat() for _s, _e, d in days] == ["2026-11-18", "2026-11-20"]
    assert time_window("on 2026-11-17 vs friday", NOW).kind == "date"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("ticks over 4.25 for the 10s", [(">", 4.25)]),
        ("tenor above 10y", [(">", 10.0)]),  # years are a threshold's unit
        ("widest the 30s over 5s got", []),
        ("DR007收盘在1.45以上的天数", [(">=", 1.45)]),
        ("bigger than 0.07", [(">", 0.07)]),
    ],
)
def test_thresholds_are_numbers_not_names(question: str, expected: list[Any]) -> None:
    assert [(c.op, c.value) for c in comparisons(question)] == expected


@pytest.mark.parametrize(
    ("question", "entity"),
    [
        ("who runs microsfot these days", "MSFT"),  # misspelt
        ("Googel's exchange", "GOOGL"),  # a swap, beside the ticker "googl"
        ("what sector is Exon in", "XOM"),  # one dropped letter in a short word
        ("Kweichow's exchange?", "600519.SH"),  # first word of the name
        ("宁德的董事长", "300750.SZ"),  # two-character clip of a Chinese name
        ("长江的代码", "600900.SH"),
        ("autos listed in the us", "IND_AUTOS"),  # id tail as a name
        ("the 2-yr at the open", "US2Y"),  # a tenor only one series has
        ("十债今天收盘", "CN10Y"),
        ("美2年最低", "US2Y"),
        ("美债十年昨天", "US10Y"),
    ],
)
def test_names_as_analysts_type_them(question: str, entity: str) -> None:
    assert entity in anchors(question)


def test_clips_never_take_ordinary_words_or_shared_prefixes() -> None:
    assert anchors("which rates moved over two days") == []
    assert "000001.SZ" not in anchors("平安的行业")  # 中国平安 and 平安银行 share it
    assert "601398.SH" not in anchors("industrial names")


def test_curve_names_inside_other_text() -> None:
    ents = lexicon().entities
    assert [s.key for s in spread_anchors("本周的5s10s最宽", ents)] == []  # no 5Y series
    assert [s.key for s in spread_anchors("本周2s10s最宽", ents)] == ["US10Y", "US2Y"]
    assert [s.key for s in spread_anchors("10yr minus 2yr", ents)] == ["US10Y", "US2Y"]


@pytest.mark.parametrize(
    ("question", "negated"),
    [
        ("哪些券商没在深交所上市", "exchange=SZSE"),
        ("chip names that aren't in the AI theme", "THEME_AI"),
        ("非银行的高股息股", "IND_BANKS"),
    ],
)
def test_negations_as_typed(question: str, negated: str) -> None:
    assert negated in frame(question).negated


def test_different_is_not_a_negation() -> None:
    assert not frame("不同行业的AI概念股").negated


@pytest.mark.parametrize(
    ("question", "target"),
    [
        ("insurance names listed in china", "Company"),  # a group named: its members
        ("NEV theme constituents outside the US", "Company"),
        ("比亚迪CEO", "Person"),  # role noun, no question word
        ("chairman of the PBOC", "Executive"),
    ],
)
def test_search_box_questions_get_a_target(question: str, target: str) -> None:
    f = frame(question)
    Synthesizer(lexicon())._members_target(f)
    assert f.target == target


def _series_cypher(question: str) -> str:
    f = frame(question)
    f.anchors[:0] = [a for a in spread_anchors(question, lexicon().entities)]
    f.spread = f.spread or bool(spread_anchors(question, lexicon().entities))
    cands = Synthesizer(lexicon()).candidates(f, NOW)
    assert cands, question
    return max(cands, key=lambda c: c.prior).cypher


def test_spreads_over_a_window_are_pointwise() -> None:
    cy = _series_cypher("tightest 2s10s on thursday")
    assert "y.t = x.t" in cy and "min(d)" in cy
    cy = _series_cypher("how many ticks had 10s over 2s above 0.9 this week")
    assert "d > $c0" in cy and "count(d)" in cy


def test_counting_days_reads_one_value_per_day() -> None:
    cy = _series_cypher("on how many days this week did DR007 close under 1.42")
    assert "WITH p.t / 86400000 AS day" in cy and "size([x IN dv WHERE x < $c0])" in cy
    cy = _series_cypher("mean of the US10Y daily lows this week")
    assert "CASE WHEN x < m" in cy  # each day's low, then the average


def test_top_n_lists_the_values_unless_averaged() -> None:
    assert S.SERIES_TOP_LIST in S.__members__.values()
    assert "UNWIND top AS value" in _series_cypher("the four highest us10y prints on tue")
    assert "reduce(s = 0.0" in _series_cypher("mean of the two lowest DR007 ticks on wed")


def test_a_series_row_without_a_value_is_no_answer() -> None:
    assert not _has_values([{"value": None, "unit": "%", "observed_at": None}])
    assert _has_values([{"value": 1.2, "unit": "%"}])
    assert _has_values([{"id": "X", "name": None}])


def test_a_change_asked_as_a_fall_is_the_drop() -> None:
    assert "vs[0] - vs[size(vs) - 1]" in _series_cypher("how far did CN10Y slide on tuesday")
    assert "dv[0] - dv[size(dv) - 1]" in _series_cypher("美2年周二收盘到周四收盘下降了多少")


def test_a_region_filters_entities_without_region_edges_by_country() -> None:
    f = frame("list the american indicators that are monthly")
    cands = Synthesizer(lexicon()).candidates(f, NOW)
    best = max((c for c in cands if c.kind == "entities"), key=lambda c: c.prior)
    assert "t.country = $v" in best.cypher and "US" in best.params.values()
    # companies are linked to regions by edges: those decide
    f = frame("which american chipmakers")
    cands = Synthesizer(lexicon()).candidates(f, NOW)
    assert all("t.country" not in c.cypher for c in cands)


def test_a_chinese_name_without_its_region_word() -> None:
    assert "PBOC" in anchors("人民银行的行长是谁")
    assert "US_CPI" not in anchors("CPI同比最高")  # series names keep their region


def test_a_concept_word_after_a_name_of_that_concept_is_part_of_the_name() -> None:
    f = frame("Nasdaq-listed AI-theme names")
    Synthesizer(lexicon())._members_target(f)
    assert f.target == "Company" and "Theme" not in f.concepts
