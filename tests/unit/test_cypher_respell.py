"""Chat-box typing read as the words the rules know (kg/cypher/respell.py), on wordings
invented for this test: abbreviations from the table, misspelt trigger words, Chinese names
and words typed in pinyin; names, tickers and English words are left alone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kg.cypher.respell import Respeller
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
