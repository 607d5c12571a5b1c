"""Alias dictionary: exact on normalized keys first, then fuzzy, else a marked new id."""

from __future__ import annotations

import random
from collections import defaultdict
from difflib import SequenceMatcher

import pytest

from kg.graph.canonical import (
    AliasIndex,
    MatchMethod,
    _trigrams,
    clear_best,
    is_new_id,
    normalize_key,
)
from kg.graph.static import bundled_universe_path, read_file


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
        ("AAPL", "Company", "AAPL", MatchMethod.ID),
        ("Apple", "Company", "AAPL", MatchMethod.EXACT),
        ("$AAPL", "Company", "AAPL", MatchMethod.EXACT),
        ("苹果公司", "Company", "AAPL", MatchMethod.EXACT),
        ("600519", "Company", "600519.SH", MatchMethod.EXACT),
        ("贵州茅台", "Company", "600519.SH", MatchMethod.EXACT),
        ("Kweichow Moutai", "Company", "600519.SH", MatchMethod.EXACT),
        ("ICBC", "Company", "601398.SH", MatchMethod.EXACT),
        ("央行", "Institution", "PBOC", MatchMethod.EXACT),
        ("PBOC", "Company", "PBOC", MatchMethod.ID),  # an ORG mention may name an Institution
        ("Jerome Powell", "Person", "PERSON_JEROME_POWELL", MatchMethod.EXACT),
        ("十年期国债", "Bond", "CGB_10Y", MatchMethod.EXACT),
        ("China 10-year yield", "Indicator", "CN10Y", MatchMethod.EXACT),
        ("Contemporary Amperex Technologies", "Company", "300750.SZ", MatchMethod.FUZZY),
    ],
)
def test_resolves_to_one_canonical_id(
    index: AliasIndex, mention: str, label: str, expected: str, method: MatchMethod
) -> None:
    res = index.resolve(mention, label)
    assert (res.id, res.method) == (expected, method)
    assert res.canonical


def test_type_incompatible_names_do_not_merge(index: AliasIndex) -> None:
    res = index.resolve("Apple", "Product")  # the fruit-named product is not the company
    assert res.method == MatchMethod.NEW and is_new_id(res.id) and not res.canonical
    assert res.id == "new:product:apple"


def test_unknown_mentions_get_deterministic_marked_ids(index: AliasIndex) -> None:
    a = index.resolve("Zephyr Robotics Ltd.", "Company")
    b = index.resolve("zephyr robotics", "Company")
    assert a.id == b.id == "new:company:zephyrrobotics"
    assert a.method == MatchMethod.NEW


def test_fuzzy_takes_a_clear_winner_and_refuses_a_tie() -> None:
    idx = AliasIndex()
    idx.add("X1", "Company", "Orion Capital East")
    idx.add("X2", "Company", "Orion Capital West")
    clear = idx.resolve("Orion Capital Eas", "Company")
    assert (clear.id, clear.method) == ("X1", MatchMethod.FUZZY)
    tie = idx.resolve("Orion Capital Wast", "Company")  # as close to East as to West
    assert tie.method == MatchMethod.NEW


def _fuzzy_scoring_every_candidate(idx: AliasIndex, key: str, label: str) -> object:
    """The fuzzy match as first written: every shortlisted key scored in full."""
    grams = _trigrams(key)
    counts: dict[str, int] = defaultdict(int)
    for g in grams:
        for k in idx._grams.get(g, ()):
            counts[k] += 1
    shortlist = sorted(
        (k for k, c in counts.items() if 2 * c / (len(grams) + idx._gram_count[k]) >= 0.5),
        key=lambda k: -counts[k],
    )[:20]
    scored = [
        (SequenceMatcher(None, key, k, autojunk=False).ratio(), e)
        for k in shortlist
        for e in idx._by_key[k]
        if idx._compatible(e, label)
    ]
    picked = clear_best(scored)  # the same decision over every candidate's full score
    return None if picked is None else (picked[1].id, round(picked[0], 3))


def test_fuzzy_skips_only_candidates_that_cannot_change_the_outcome(index: AliasIndex) -> None:
    """Keys whose upper-bound similarity is below threshold - margin are not scored in
    full: over misspellings of every universe name the outcome is the same."""
    rng = random.Random(3)
    mentions = []
    for e in read_file(bundled_universe_path()).entities:
        name = normalize_key(e.name)
        for _ in range(3):
            chars = list(name)
            for _ in range(rng.randint(1, 3)):
                i = rng.randrange(len(chars))
                chars[i] = rng.choice("abcdefghijklmnopqrstuvwxyz")
            mentions.append(("".join(chars), e.type))
    mentions += [("orioncapitaleas", "Company"), ("orioncapitalwast", "Company")]
    fuzzy = 0
    for key, label in mentions:
        got = index._fuzzy(key, label)
        want = _fuzzy_scoring_every_candidate(index, key, label)
        assert (None if got is None else (got.id, got.score)) == want, key
        fuzzy += got is not None
    assert fuzzy > 10  # the comparison covered matches, not only misses


def test_a_padded_mention_resolves_as_the_stripped_one(index: AliasIndex) -> None:
    padded = index.resolve("  Zephyr Robotics Ltd. ", "Company")
    assert padded == index.resolve("Zephyr Robotics Ltd.", "Company")
    assert padded.name == "Zephyr Robotics Ltd."  # the stripped mention names a new entity
    again = AliasIndex(index.ontology)
    assert again.resolve(" Zephyr Robotics Ltd.", "Company").name == "Zephyr Robotics Ltd."
