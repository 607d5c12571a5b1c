"""General mechanisms of the fifth generalisation pass (issue 33), on wordings invented for
this test before it was first run: a relation noun before a chain ("holdings of X's fund"),
a negated relation with no object (its subject is the one negated), the k-th highest
reading, two series' conditions on the same day, Chinese 4-character names shortened."""

from __future__ import annotations

import pytest

from kg.cypher.respell import Respeller
from kg.cypher.shapes import ShapeName, shape
from kg.cypher.synth import Synthesizer, read_frame
from kg.cypher.units import parse
from tests.fakes.universe_lexicon import NOW, best, frame, universe_lexicon


@pytest.mark.parametrize(
    ("question", "counted"),
    [
        ("holdings of Zhang Kun's fund, please", False),
        ("张坤那只基金的持仓有哪些", False),
        ("number of holdings in Zhang Kun's fund", True),
    ],
)
def test_a_relation_noun_before_a_chain_is_its_last_hop(question: str, counted: bool) -> None:
    c = best(question)
    assert "MANAGES" in c.cypher and "HAS_STAKE_IN" in c.cypher
    assert "(t:Company)" in c.cypher
    assert ("count(" in c.cypher) == counted


@pytest.mark.parametrize(
    ("question", "negated", "kept"),
    [
        ("Which bank stocks does E Fund Blue Chip not hold?", "005827.OF", "IND_BANKS"),
        ("易方达蓝筹没有持有的白酒股", "005827.OF", "IND_LIQUOR"),
        ("SZSE names that E Fund Blue Chip doesn't hold", "005827.OF", "exchange=SZSE"),
    ],
)
def test_a_negated_relation_without_object_negates_its_subject(
    question: str, negated: str, kept: str
) -> None:
    f = frame(question)
    assert negated in f.negated
    assert kept not in f.negated


def test_a_negated_relation_with_its_object_negates_the_object() -> None:
    f = frame("Which funds don't hold Wuliangye?")
    assert f.negated == frozenset({"000858.SZ"})


@pytest.mark.parametrize(
    ("question", "rank", "order"),
    [
        ("the 2nd highest DR007 print on Nov 19", 2, "DESC"),
        ("CN10Y本周第二低的读数", 2, "ASC"),
        ("third-highest US 2Y tick this week", 3, "DESC"),
    ],
)
def test_the_kth_highest_reading(question: str, rank: int, order: str) -> None:
    c = best(question)
    assert c.params["rank"] == rank
    assert f"ORDER BY v {order}" in c.cypher
    assert "vs[$rank - 1]" in c.cypher


def test_the_period_of_the_kth_level() -> None:
    c = best("which day had the third highest US 10Y close this week")
    assert c.params["rank"] == 3
    assert "levels[$rank - 1]" in c.cypher
    assert "period_start" in c.cypher


@pytest.mark.parametrize(
    ("question", "owners", "counted"),
    [
        (
            "days when DR007 closed above 1.45 and CN10Y closed below 1.75",
            ["DR007", "CN10Y"],
            False,
        ),
        ("DR007收盘高于1.4并且美债2年收盘低于3.6的天数", ["DR007", "US2Y"], True),
        (
            "how many sessions did US2Y close under 3.6 while US10Y closed over 4.2",
            ["US2Y", "US10Y"],
            True,
        ),
    ],
)
def test_two_series_conditions_on_the_same_day(
    question: str, owners: list[str], counted: bool
) -> None:
    c = best(question)
    assert c.params["ids"] == owners
    assert c.params["n"] == 2
    assert "size(met) = $n" in c.cypher
    assert ("count(k)" in c.cypher) == counted


def test_two_bounds_on_one_series_are_no_joint_condition() -> None:
    c = best("days the US 10Y closed above 4.2 and below 4.3")
    assert "size(met)" not in c.cypher


def test_the_joint_days_shape_is_in_the_catalogue() -> None:
    s = shape(ShapeName.SERIES_JOINT_DAYS)
    assert {"conds", "fold", "pick"} <= s.used_slots()


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("中石油和中石化都属于什么行业", "中国石油和中国石化都属于什么行业"),
        ("国君的代码", "国泰君安的代码"),
        ("建银属于哪些概念", "建设银行属于哪些概念"),
        ("其中银行股有几只", "其中银行股有几只"),  # no name across a word's boundary
        ("中证500有哪些成分股", "中证500有哪些成分股"),  # an ordinary word stays
    ],
)
def test_four_character_names_shortened(typed: str, read: str) -> None:
    assert Respeller(universe_lexicon()).respell(typed) == read


@pytest.mark.parametrize(
    ("said", "read"),
    [
        ("did it close above three point seven five", "did it close above 3.75"),
        ("收盘低于一点五的天数", "收盘低于1.5的天数"),
        ("PMI under forty-nine point two", "PMI under 49.2"),
        ("the close on october third", "the close on october 3"),
        ("十月三号的收盘", "10月3日的收盘"),
        ("the yield at nine p m utc on tuesday", "the yield at 21:00 utc on tuesday"),
        ("周二下午两点UTC的读数", "周二14:00UTC的读数"),
        ("the close on thursday the nineteenth", "the close on thursday"),
        ("八点半开会", "八点半开会"),  # no UTC, no decimal: not a reading's time
        ("the second highest print", "the second highest print"),
        ("return name where ticker = MSFT", "what is the name of MSFT"),
    ],
)
def test_numbers_days_and_times_said_in_words(said: str, read: str) -> None:
    assert Respeller(universe_lexicon()).respell(said) == read


@pytest.mark.parametrize(
    ("question", "fold"),
    [
        ("the lowest thursday close among the indicators that track US Treasury bonds", "min(v)"),
        ("跟踪财政部所发债券的指标 周四收盘的最高值", "max(v)"),
        ("average wednesday close of the CN yield indicators", "avg(v)"),
    ],
)
def test_a_set_of_indicators_read_at_its_daily_closes(question: str, fold: str) -> None:
    c = best(question)
    assert "WITH DISTINCT t AS i" in c.cypher  # the set query's indicators
    assert "collect(p.v) AS vs" in c.cypher and "vs[size(vs) - 1] AS v" in c.cypher
    assert f"RETURN {fold} AS value" in c.cypher


def test_daily_before_close_is_no_frequency() -> None:
    f = frame("highest daily close this week of any CN yield indicator")
    assert ("frequency", "daily") not in [(v.key, v.label) for v in f.values]
    f = frame("which indicators are daily")
    assert ("frequency", "daily") in [(v.key, v.label) for v in f.values]


@pytest.mark.parametrize(
    ("question", "target"),
    [
        ("bank stocks the 50ETF does not hold", "Company"),
        ("how many NEV stocks are listed in the US", "Company"),
        ("白酒股有几只在深交所", "Company"),
    ],
)
def test_a_group_with_a_member_noun_names_its_members(question: str, target: str) -> None:
    assert frame(question).target == target


@pytest.mark.parametrize(
    ("question", "values"),
    [
        ("how many bank stocks trade on the NYSE or NASDAQ", {"NYSE", "NASDAQ"}),
        ("上交所或深交所上市的白酒股", {"SSE", "SZSE"}),
    ],
)
def test_two_values_of_one_property_mean_either(question: str, values: set[str]) -> None:
    c = best(question)
    assert "t.exchange IN $v" in c.cypher
    listed = [v for v in c.params.values() if isinstance(v, list)]
    assert listed and set(listed[0]) == values


@pytest.mark.parametrize(
    ("question", "negated"),
    [
        ("除了工商银行 高股息概念还有哪些股票", {"601398.SH"}),  # the theme is no exception
        ("NEV stocks other than Tesla and BYD", {"TSLA", "002594.SZ"}),  # a list of one kind
        ("可不可以查一下比亚迪在哪个交易所上市", set()),  # a polite "can you", no negation
    ],
)
def test_a_negation_reaches_the_names_it_lists(question: str, negated: set[str]) -> None:
    r = Respeller(universe_lexicon()).respell(question)
    toks, mentions = universe_lexicon().match(r)
    f = read_frame(r, toks, mentions, parse(r, NOW))
    assert set(f.negated) == negated


@pytest.mark.parametrize(
    "question",
    [
        "show the holdings of the fund managed by Zhang Kun",
        "the holdings of the fund Zhang Kun runs",
    ],
)
def test_a_relation_noun_before_a_clause_about_the_concept(question: str) -> None:
    c = best(question)
    assert "MANAGES" in c.cypher and "HAS_STAKE_IN" in c.cypher
    assert "(t:Company)" in c.cypher


def test_alternatives_with_articles_between() -> None:
    f = frame("number of stocks in either the liquor or the autos industry listed in China")
    assert f.either == {"IND_LIQUOR": ["IND_LIQUOR", "IND_AUTOS"]}


@pytest.mark.parametrize(
    ("question", "either"),
    [
        (
            "how many bonds do the US Treasury and CDB issue",
            {"US_TREASURY": ["US_TREASURY", "CDB"]},
        ),
        ("国开行与财政部发行的债券有哪些", {"CDB": ["CDB", "MOF_CN"]}),
        ("stocks in both the AI and the NEV theme", {}),  # a company is in many themes
    ],
)
def test_and_over_a_one_valued_relation_means_either(
    question: str, either: dict[str, list[str]]
) -> None:
    assert frame(question).either == either


@pytest.mark.parametrize(
    ("question", "path"),
    [
        ("which institution issues the bond CN10Y tracks", ["TRACKS", "ISSUED_BY"]),
        ("US10Y跟踪的债券是哪个机构发行的", ["TRACKS", "ISSUED_BY"]),
        ("who manages the fund that holds Moutai", ["HAS_STAKE_IN", "MANAGES"]),
    ],
)
def test_relation_words_walked_out_from_the_entity(question: str, path: list[str]) -> None:
    c = best(question)
    assert [r for r in path if f":{r}]" in c.cypher] == path
    assert c.cypher.index(path[0]) < c.cypher.index(path[1])


@pytest.mark.parametrize(
    "question", ["跟平安银行一个行业的还有谁", "和贵州茅台是一个行业的公司都有谁"]
)
def test_in_one_group_with_and_who_else(question: str) -> None:
    r = Respeller(universe_lexicon()).respell(question)
    toks, mentions = universe_lexicon().match(r)
    f = read_frame(r, toks, mentions, parse(r, NOW))
    assert f.same_as
    c = max(Synthesizer(universe_lexicon()).candidates(f, NOW), key=lambda c: c.prior)
    assert "(t:Company)" in c.cypher or "t:Company" in c.cypher


@pytest.mark.parametrize(
    ("question", "same"),
    [
        ("how many firms in JPMorgan's industry trade on the SSE", True),
        ("宁德时代所在行业有哪些公司", True),
        ("list the companies that share Tesla's theme", True),
        ("what is Moutai's industry", False),  # the group itself is asked
    ],
)
def test_a_members_group_named_by_possession(question: str, same: bool) -> None:
    assert frame(question).same_as == same


@pytest.mark.parametrize(
    ("question", "order"),
    [
        ("in which month did CPI rise the most month-on-month", "d.v DESC"),
        ("M1环比哪个月降得最多", "-d.v DESC"),
    ],
)
def test_the_month_of_the_biggest_mom_move(question: str, order: str) -> None:
    c = best(question)
    assert f"ORDER BY {order} LIMIT 1" in c.cypher
    assert "d.t AS period_start" in c.cypher
    assert c.description.startswith("the month")
