"""Seventh pass of issue 44: compositional parts for readings a fresh voice got confidently
wrong, on wordings invented for this test (none is a dev or test question): a month range
whose ends name their years (relatively, across the new year, with words between), the
words of a window ("first half", "last month") asking no fold or period of their own, the
last n trading days of a month applied to a derived series, and a chain through a node
the question names keeping the anchor among that node's members."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from test_cypher_compose import best, frame

from kg.cypher.respell import _phrases
from kg.cypher.units import time_window, untimed

THU = datetime(2024, 9, 19, tzinfo=UTC)


def _day(ms: int | None) -> str:
    assert ms is not None
    return datetime.fromtimestamp(ms / 1000, UTC).date().isoformat()


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("M2 从去年11月公布的到今年2月公布的 变了多少", "2023-11-01", "2024-03-01"),
        ("CPI 前年3月到去年5月", "2022-03-01", "2023-06-01"),
        ("PMI 10月到1月 涨了几次", "2023-10-01", "2024-02-01"),  # across the new year
        ("the cpi from nov last year to feb", "2023-11-01", "2024-03-01"),
        ("the PPI from the oct 2023 print to the march print", "2023-10-01", "2024-04-01"),
    ],
)
def test_a_month_range_whose_ends_name_their_years(question: str, start: str, end: str) -> None:
    w = time_window(question, THU)
    assert w is not None and w.kind == "month_years", w
    assert (_day(w.start_ms), _day(w.end_ms)) == (start, end)


def test_a_month_range_in_one_year_stays_a_month_range() -> None:
    w = time_window("SOFR 3月到5月 均值", THU)
    assert w is not None and w.kind == "month_range"
    assert (_day(w.start_ms), _day(w.end_ms)) == ("2024-03-01", "2024-06-01")


def test_the_words_of_a_window_are_blanked_in_place() -> None:
    text = "which session in the first half, and the last month's low"
    out = untimed(text)
    assert len(out) == len(text)
    assert "first" not in out and "last" not in out and "which session" in out


def test_first_in_a_half_year_asks_no_first_day() -> None:
    c = best("which day in the first half did the 10y close highest")
    assert "ORDER BY v DESC" in c.cypher and "k ASC" not in c.cypher


def test_last_month_is_a_window_not_a_question_for_a_month() -> None:
    f = frame("the lowest SOFR close all of last month")
    assert f.point_time is None and f.agg == "min"
    assert f.units.time is not None and f.units.time.kind == "last_month"
    f2 = frame("in which month was SOFR lowest")
    assert f2.point_time == "month"


def test_the_tail_of_a_month_applies_to_a_derived_series() -> None:
    q = "average daily close spread of US10Y minus US2Y over the last 3 trading days of july"
    c = best(q)
    assert c.params["tail_days"] == 3 and "x.v - y.v AS v" in c.cypher
    assert "dv[size(dv) - $tail_days..]" in c.cypher and "avg(v)" in c.cypher


@pytest.mark.parametrize(
    ("question", "excluded"),
    [
        ("how many stocks does the fund that holds CATL hold", False),
        ("持有宁德时代的基金一共持有几只股票", False),
        ("how many other stocks does the fund holding CATL hold", True),
        ("持有宁德时代的基金还持有哪些其他股票", True),
    ],
)
def test_a_chain_through_a_named_node_keeps_the_anchor_unless_other(
    question: str, excluded: bool
) -> None:
    c = best(question)
    assert "(x0:Fund)" in c.cypher
    assert ("NOT t.id IN" in c.cypher) is excluded


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("Magkano po yung close ng SOFR nung Monday?", "how much close sofr monday?"),
        ("Ilang banks po ang naka-list sa NYSE?", "how many banks list in nyse?"),
        ("Anong bonds yung nagta-track ng CPI?", "what bonds track cpi?"),
    ],
)
def test_taglish_function_words_by_grammar(typed: str, read: str) -> None:
    text = typed
    for pat, words in _phrases():
        text = pat.sub(words, text)
    assert " ".join(text.lower().split()) == read


def test_a_comparison_word_before_a_number_of_years_beats_the_tenor_it_names() -> None:
    assert [
        (c.op, c.value) for c in frame("bonds with less than 5 years tenor").units.comparisons
    ] == [("<", 5.0)]
    assert [(c.op, c.value) for c in frame("bonds with a 5 yr tenor").units.comparisons] == [
        ("=", 5.0)
    ]


def test_a_name_after_a_preposition_is_not_the_subject_of_a_negated_relation() -> None:
    f = frame("which institutions in the US have no chairman on file")
    assert "US" not in f.negated
    f2 = frame("which companies does E Fund Blue Chip not hold")
    assert f2.negated


def test_a_quarter_or_half_written_against_chinese_characters() -> None:
    w = time_window("美债2年期收益率q3的最高值", THU)
    assert w is not None and w.kind == "quarter"
    assert (_day(w.start_ms), _day(w.end_ms)) == ("2024-07-01", "2024-10-01")


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("the 2y since the first of March", "the 2y since march 1"),
        ("SOFR on the 3rd of june", "sofr on june 3"),
    ],
)
def test_a_day_of_a_month_said_with_of(typed: str, read: str) -> None:
    text = typed
    for pat, words in _phrases():
        text = pat.sub(words, text)
    assert text.lower() == read


def test_aint_is_a_negation() -> None:
    assert frame("which banks ain't listed in the US").negated


@pytest.mark.parametrize(
    "question",
    [
        "how many companies are in the Banks and Insurance industries put together",
        "银行和保险行业加起来一共有几家公司",
    ],
)
def test_two_groups_taken_together_are_their_union(question: str) -> None:
    f = frame(question)
    assert f.either and len(next(iter(f.either.values()))) == 2
    assert not frame("how many companies are in the Banks and Insurance industries").either
