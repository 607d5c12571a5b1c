"""General mechanisms of the fourth generalisation pass (issue 33), on wordings invented for
this test: code/ticker prefixes, which of the named groups has more members, day ranges
written "16-20 November", negation words as the tokenizer stems them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kg.cypher.synth import Synthesizer, _ever
from kg.cypher.units import parse
from tests.fakes.universe_lexicon import NOW, best, frame, universe_lexicon


@pytest.mark.parametrize(
    ("question", "prefix"),
    [
        ("Which stocks have tickers starting with 60?", ("ticker", "60")),
        ("代码以6开头的公司有几家", ("code", "6")),
        ("list names whose code begins with 00", ("code", "00")),
        ("300打头的股票", ("code", "300")),
    ],
)
def test_code_prefix(question: str, prefix: tuple[str, str]) -> None:
    f = frame(question)
    assert f.prefix == prefix
    c = best(question)
    assert "STARTS WITH $pfx" in c.cypher
    assert c.params["pfx"] == prefix[1]
    assert not f.units.comparisons or "$c0" not in c.cypher  # the digits are no threshold


@pytest.mark.parametrize(
    ("question", "ids", "member"),
    [
        ("which has more companies, the insurance or the liquor industry", 2, "Company"),
        ("美国财政部和财政部谁发行的债券更多", 2, "Bond"),
        ("Between Fed and PBOC, who sets fewer policy rates?", 2, "Indicator"),
    ],
)
def test_which_named_group_has_more_members(question: str, ids: int, member: str) -> None:
    c = best(question)
    assert "g.id IN $gids" in c.cypher
    assert len(c.params["gids"]) == ids
    assert f"(t:{member})" in c.cypher


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("average us2y 17-19 Nov", "2026-11-17", "2026-11-20"),
        ("cn10y high 17th through 19th November", "2026-11-17", "2026-11-20"),
        ("11月17-19日 DR007 均值", "2026-11-17", "2026-11-20"),
        ("2-4 September 2025 close", "2025-09-02", "2025-09-05"),
    ],
)
def test_day_ranges_with_the_month_after_both_days(question: str, start: str, end: str) -> None:
    win = parse(question, NOW).time
    assert win is not None and win.start_ms is not None and win.end_ms is not None
    assert datetime.fromtimestamp(win.start_ms / 1000, UTC).date().isoformat() == start
    assert datetime.fromtimestamp(win.end_ms / 1000, UTC).date().isoformat() == end


@pytest.mark.parametrize(
    ("question", "negated"),
    [
        ("banks excluding ICBC", "601398.SH"),
        ("AI names besides Nvidia", "NVDA"),
    ],
)
def test_negation_words_as_stemmed(question: str, negated: str) -> None:
    assert negated in frame(question).negated


@pytest.mark.parametrize(
    ("question", "anchor"),
    [
        ("institutions operating in China except the CSRC", "CSRC"),
        ("US-listed semis names except Intel", "INTC"),
    ],
)
def test_a_negated_anchor_of_the_asked_kind_excludes_itself(question: str, anchor: str) -> None:
    f = frame(question)
    assert anchor in f.negated
    c = best(question)
    k = next(k for k, v in c.params.items() if v == anchor)
    assert f"t.id <> ${k}" in c.cypher


def test_every_excluded_value_of_one_property_counts() -> None:
    c = best("how many companies are not on the NYSE and not on the NASDAQ")
    assert c.cypher.count("t.exchange <> $v") == 2


@pytest.mark.parametrize(
    ("question", "agg", "fall"),
    [
        ("DR007 11月19日日均", "avg", False),
        ("us2y dropped how much since tuesday", "change", True),
        ("by how many bps cn10y moved how much this week", "change", False),
    ],
)
def test_aggregate_wordings(question: str, agg: str, fall: bool) -> None:
    f = frame(question)
    assert f.agg == agg
    assert f.fall is fall


@pytest.mark.parametrize(
    ("question", "value"),
    [("bonds with a 30-year maturity", 30.0), ("how many treasuries with a 2 yr tenor", 2.0)],
)
def test_a_number_before_the_property_it_values(question: str, value: float) -> None:
    assert [(c.op, c.value) for c in parse(question, NOW).comparisons] == [("=", value)]


@pytest.mark.parametrize(
    "question", ["2s10s 逐tick看 最宽是多少", "narrowest 10y-2y spread, tick by tick"]
)
def test_tick_by_tick_reads_every_point(question: str) -> None:
    assert _ever(frame(question))  # the whole series pointwise, not the latest spread


@pytest.mark.parametrize(
    "question",
    [
        "跟踪美国国债的两个收益率 哪个本周涨得更多",
        "the yields that track China's government bonds: which is higher now",
    ],
)
def test_series_named_by_their_relations_are_found_first(question: str) -> None:
    syn = Synthesizer(universe_lexicon())
    f = frame(question)
    sub = syn.series_set_frame(f)
    assert sub is not None and sub.target == "Indicator" and sub.compare is None
    again = syn.with_series(f, ["US10Y", "US2Y"])
    assert [a.label for a in again.anchors] == ["Indicator", "Indicator"]
    assert again.compare == f.compare


@pytest.mark.parametrize(
    "question", ["US10Y和US2Y哪个高", "average of the yields that track US Treasury notes"]
)
def test_named_series_or_a_set_aggregate_need_no_set_query(question: str) -> None:
    assert Synthesizer(universe_lexicon()).series_set_frame(frame(question)) is None


def test_which_of_the_named_series_rose_returns_every_riser() -> None:
    c = Synthesizer(universe_lexicon()).candidates(
        frame("which of US10Y and US2Y rose between the Nov 16 and Nov 20 closes"), NOW
    )
    assert any("value > 0" in x.cypher and "LIMIT 1" not in x.cypher for x in c)


@pytest.mark.parametrize(
    ("question", "op", "value"),
    [
        ("30年期以上的国债", ">=", 30.0),
        ("tenor of 2 years and under", "<=", 2.0),
        ("期限1年以下的债券有哪些", "<=", 1.0),
    ],
)
def test_a_number_with_its_unit_then_above_or_below(question: str, op: str, value: float) -> None:
    assert [(c.op, c.value) for c in parse(question, NOW).comparisons] == [(op, value)]


@pytest.mark.parametrize(
    ("question", "rank"),
    [("which theme has the third most members", 3), ("上市公司第二多的交易所所在行业", 2)],
)
def test_the_kth_level_of_a_ranking(question: str, rank: int) -> None:
    assert frame(question).rank == rank


def test_the_second_most_uses_the_ranked_levels() -> None:
    c = best("which industries are tied for the second most companies")
    assert "levels[$rank - 1]" in c.cypher and c.params["rank"] == 2
