"""Chat-box typing read as the words the rules know (kg/cypher/respell.py), on wordings
invented for this test: abbreviations from the table, misspelt trigger words, Chinese names
and words typed in pinyin; names, tickers and English words are left alone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kg.cypher.qa import _answered_empty
from kg.cypher.respell import Respeller
from kg.cypher.synth import ReadingCandidate
from kg.cypher.units import parse
from tests.fakes.universe_lexicon import universe_lexicon

NOW = datetime(2026, 11, 21, tzinfo=UTC)


@pytest.fixture(scope="module")
def respeller() -> Respeller:
    return Respeller(universe_lexicon())


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("hw many banks r listed in CN", "how many banks are listed in CN"),
        (
            "pls list the cos in the oil n gas sector",
            "please list the cos in the oil and gas sector",
        ),
        ("wich cos are listd on nasdaq", "which cos are listed on nasdaq"),
        ("how many industires are there", "how many industries are there"),
        ("which bonds does the US treasury isue", "which bonds does the US treasury issue"),
        ("wats the latst CPI", "what is the latest CPI"),
        ("what is the avrage yeild of us10y", "what is the average yield of us10y"),
    ],
)
def test_abbreviations_and_trigger_typos(respeller: Respeller, typed: str, read: str) -> None:
    assert respeller.respell(typed) == read


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("maotai属于哪个行业", "茅台属于哪个行业"),
        ("ningde shidai的董事长是谁", "宁德时代的董事长是谁"),
        ("yinhang股有几只在上交所", "银行股有几只在上交所"),
    ],
)
def test_pinyin_names_and_words(respeller: Respeller, typed: str, read: str) -> None:
    assert respeller.respell(typed) == read


@pytest.mark.parametrize(
    "kept",
    [
        "ceos of the AI theme companies",  # a plural of a dictionary word
        "which Ping An entities",  # English words that also spell pinyin
        "Who is Moody's CEO",
        "aren't in the AI theme",
        "avg DR007 over 16-20 Nov, 2s10s and NVDA",
    ],
)
def test_known_words_are_left_alone(respeller: Respeller, kept: str) -> None:
    assert respeller.respell(kept) == kept


def test_a_respelt_question_parses_as_the_rule_expects(respeller: Respeller) -> None:
    assert parse("hw many banks r listed in CN", NOW).aggregation is None
    assert parse(respeller.respell("hw many banks r listed in CN"), NOW).aggregation == "count"


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("gsyh的董事长", "工商银行的董事长"),  # pinyin initials of a Chinese name
        ("cjdl属于什么行业", "长江电力属于什么行业"),
        ("no. of semis names in the US", "number of semis names in the US"),
        ("insurers other than ping an", "insurers except ping an"),
        ("funds that dont hold moutai", "funds that do not hold moutai"),
    ],
)
def test_initials_and_phrases(respeller: Respeller, typed: str, read: str) -> None:
    assert respeller.respell(typed) == read


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("risk team asking - which banks are listed in CN", "which banks are listed in CN"),
        ("desk needs this what exchange is Tesla on", "what exchange is Tesla on"),
        ("老板让我查一下 白酒行业有几家公司", "白酒行业有几家公司"),
        # a break first: the lead ends at the next break, not at the empty one
        ("，老板让我查一下 白酒行业有几家公司", "白酒行业有几家公司"),
        ("- risk team asking - which banks are listed in CN", "which banks are listed in CN"),
    ],
)
def test_chat_before_the_question_is_dropped(respeller: Respeller, typed: str, read: str) -> None:
    assert respeller.drop_preamble(typed) == read


@pytest.mark.parametrize(
    "kept",
    [
        "Fitch cuts - which companies",  # the rest has no constraint: nothing is guessed
        "In 2023, who was CEO of Apple",  # a time is no chat
        "哪天 美10y 收盘最低",  # a question word is no chat
        "For Tesla, who is the CEO",  # an entity is no chat
        "In the months when M2 was above 8, what was the average PMI?",  # periods
        "这几个交易日里，美国10年期国债收益率的最高收盘",  # a span of days
    ],
)
def test_a_lead_that_carries_meaning_is_kept(respeller: Respeller, kept: str) -> None:
    assert respeller.drop_preamble(kept) == kept


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        (
            "which insurers are listed in CN, and how many are there",
            "which insurers are listed in CN",
        ),
        ("白酒行业有几家 分别是哪些", "白酒行业  分别是哪些"),
        ("比亚迪是不是在深交所上市的 它属于什么行业", "比亚迪 属于什么行业"),
        ("is Nvidia a semis name? what theme is it in", "nvidia what theme is   in"),
    ],
)
def test_two_part_questions(respeller: Respeller, typed: str, read: str) -> None:
    assert respeller.two_part(typed) == read


@pytest.mark.parametrize(
    "kept",
    ["how many banks are there", "哪些行业只有一家公司", "is Tesla listed in the US?"],
)
def test_one_part_questions_are_kept(respeller: Respeller, kept: str) -> None:
    assert respeller.two_part(kept) == kept


def test_an_empty_aggregate_of_a_named_series_is_the_answer() -> None:
    series = ReadingCandidate("MATCH ...", {}, "average of CN1Y", 3.0, "series", ["CN1Y"])
    listing = ReadingCandidate("MATCH ...", {}, "bonds CN1Y tracks", 1.5, "entities", ["CN1Y"])
    labels = {"CN1Y": "Indicator", "US": "Region"}
    assert _answered_empty(series, listing, "avg", labels)
    assert not _answered_empty(series, listing, None, labels)  # no aggregate asked
    via = ReadingCandidate("MATCH ...", {}, "average of what tracks US", 3.0, "series", ["US"])
    assert not _answered_empty(via, listing, "avg", labels)  # a guessed series: go on


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("新能源车板块有几只股票", "新能源汽车板块有几只股票"),
        ("超威导体属于哪个行业", "超威半导体属于哪个行业"),
        ("中国行业有几个", "中国行业有几个"),  # a 4-character name is never clipped
    ],
)
def test_chinese_names_with_a_character_left_out(
    respeller: Respeller, typed: str, read: str
) -> None:
    assert respeller.respell(typed) == read


def test_an_empty_which_of_the_named_ones_is_the_answer() -> None:
    named = ReadingCandidate(
        "MATCH ...", {}, "which of A, B: listed in SZSE", 6.0, "entities", ["A"]
    )
    named.conclusive = True
    later = ReadingCandidate(
        "MATCH ...", {}, "regions A and B are listed in", 2.0, "entities", ["A"]
    )
    assert _answered_empty(named, later, None, {})
    named.conclusive = False
    assert not _answered_empty(named, later, None, {})
