"""Alias dictionary: exact on normalized keys first, then fuzzy, else a marked new id."""

from __future__ import annotations

import pytest

from kg.canonical import AliasIndex, Method, is_new_id, normalize_key
from kg.static import bundled_universe_path, read_file


@pytest.fixture(scope="module")
def index() -> AliasIndex:
    idx = AliasIndex()
    for e in read_file(bundled_universe_path()).entities:
        idx.add_row({**e.model_dump(), "label": "Executive" if e.type == "Executive" else e.type})
    return idx


def test_normalize_key() -> None:
    assert normalize_key("Apple Inc.") == "apple"
    assert normalize_key("$AAPL") == "aapl"
    assert normalize_key("ＡＰＰＬＥ, INC") == "apple"
    assert normalize_key("贵州茅台酒股份有限公司") == "贵州茅台酒"


@pytest.mark.parametrize(
    ("mention", "label", "expected", "method"),
    [
        ("AAPL", "Company", "AAPL", Method.ID),
        ("Apple", "Company", "AAPL", Method.EXACT),
        ("$AAPL", "Company", "AAPL", Method.EXACT),
        ("苹果公司", "Company", "AAPL", Method.EXACT),
        ("600519", "Company", "600519.SH", Method.EXACT),
        ("贵州茅台", "Company", "600519.SH", Method.EXACT),
        ("Kweichow Moutai", "Company", "600519.SH", Method.EXACT),
        ("ICBC", "Company", "601398.SH", Method.EXACT),
        ("央行", "Institution", "PBOC", Method.EXACT),
        ("PBOC", "Company", "PBOC", Method.ID),  # an ORG mention may name an Institution
        ("Jerome Powell", "Person", "PERSON_JEROME_POWELL", Method.EXACT),
        ("十年期国债", "Bond", "CGB_10Y", Method.EXACT),
        ("China 10-year yield", "Indicator", "CN10Y", Method.EXACT),
        ("Contemporary Amperex Technologies", "Company", "300750.SZ", Method.FUZZY),
    ],
)
def test_resolves_to_one_canonical_id(
    index: AliasIndex, mention: str, label: str, expected: str, method: Method
) -> None:
    res = index.resolve(mention, label)
    assert (res.id, res.method) == (expected, method)
    assert res.canonical


def test_type_incompatible_names_do_not_merge(index: AliasIndex) -> None:
    res = index.resolve("Apple", "Product")  # the fruit-named product is not the company
    assert res.method == Method.NEW and is_new_id(res.id) and not res.canonical
    assert res.id == "new:product:apple"


def test_unknown_mentions_get_deterministic_marked_ids(index: AliasIndex) -> None:
    a = index.resolve("Zephyr Robotics Ltd.", "Company")
    b = index.resolve("zephyr robotics", "Company")
    assert a.id == b.id == "new:company:zephyrrobotics"
    assert a.method == Method.NEW


def test_fuzzy_takes_a_clear_winner_and_refuses_a_tie() -> None:
    idx = AliasIndex()
    idx.add("X1", "Company", "Orion Capital East")
    idx.add("X2", "Company", "Orion Capital West")
    clear = idx.resolve("Orion Capital Eas", "Company")
    assert (clear.id, clear.method) == ("X1", Method.FUZZY)
    tie = idx.resolve("Orion Capital Wast", "Company")  # as close to East as to West
    assert tie.method == Method.NEW
