"""Filer resolution: SEC tickers and CIKs, LEIs, former names, self-references, duplicates."""

from __future__ import annotations

from kg.extract.pipeline import bundled_index
from kg.graph.canonical import (
    AliasIndex,
    MatchMethod,
    add_former_names,
    add_sec_companies,
    bundled_sec_tickers,
    cik_code,
    duplicate_entity_rate,
    is_self_reference,
    parse_sec_tickers,
    resolve_mention,
)


def _index() -> AliasIndex:
    index = AliasIndex()
    index.add("MSFT", "Company", "Microsoft Corporation", ["Microsoft"], ["MSFT"])
    return index


def test_sec_list_joins_known_companies_and_adds_unknown_by_ticker() -> None:
    index = _index()
    tickers = parse_sec_tickers(
        {
            "0": {"cik_str": 789019, "ticker": "MSFT", "title": "MICROSOFT CORP"},
            "1": {"cik_str": 12927, "ticker": "BA", "title": "BOEING CO"},
            "2": {"cik_str": 70858, "ticker": "BAC", "title": "BANK OF AMERICA CORP /DE/"},
            "3": {"ticker": "BROKEN"},
        }
    )
    assert set(tickers) == {"MSFT", "BA", "BAC"}
    assert add_sec_companies(index, tickers) == 2
    for mention in ("MICROSOFT CORP", "CIK0000789019", "Microsoft", "MSFT"):
        assert index.resolve(mention, "Company").id == "MSFT", mention
    for mention in ("BA", "Boeing Co", "The Boeing Company", "CIK0000012927"):
        res = index.resolve(mention, "Company")
        assert res.id == "BA" and res.method != MatchMethod.NEW, mention
    assert index.resolve("Bank of America Corp", "Company").id == "BAC"
    assert cik_code(12927) == "CIK0000012927" == cik_code("CIK12927")


def test_lei_and_former_names_resolve_to_the_same_node() -> None:
    index = _index()
    assert index.add_aliases("MSFT", codes=["INR2EJN1ERAN0W5ZP974"])
    assert index.resolve("INR2EJN1ERAN0W5ZP974", "Company").id == "MSFT"
    subs = {"formerNames": [{"name": "MICROSOFT CORP /WA/", "from": "1994", "to": "2000"}]}
    index.add_aliases("MSFT", ["Softie Holdings"])
    assert add_former_names(index, "MSFT", subs) == 1
    assert index.resolve("Softie Holdings", "Company").id == "MSFT"
    assert not index.add_aliases("NOPE", ["x"])  # unknown entity: nothing created


def test_self_references_are_the_subject() -> None:
    index = _index()
    subject = index.resolve("MSFT", "Company")
    for m in ("the Company", "We", "our", "本行", "本公司", "The Registrant"):
        assert is_self_reference(m), m
        assert resolve_mention(index, m, "Company", subject).id == "MSFT"
    assert not is_self_reference("Company A")
    assert resolve_mention(index, "the Company", "Company").method == MatchMethod.NEW  # no subject


def test_duplicate_entity_rate() -> None:
    before = duplicate_entity_rate(
        [("new:company:boeing", "BA"), ("new:company:theboeingcompany", "BA"), ("MSFT", "MSFT")]
    )
    assert before.nodes == 3 and before.entities == 2 and before.split == {"BA": 2}
    assert round(before.rate, 3) == 0.333
    after = duplicate_entity_rate([("BA", "BA"), ("BA", "BA"), ("MSFT", "MSFT")])
    assert after.rate == 0.0 and after.mentions == 3


def test_bundled_index_knows_the_corpus_filers() -> None:
    tickers = bundled_sec_tickers()
    assert tickers["BA"] == (12927, "BOEING CO") and tickers["MSFT"][0] == 789019
    index = bundled_index()
    add_sec_companies(index, tickers)
    assert index.resolve("American Express Company", "Company").id == "AXP"
    assert index.resolve("Microsoft Corporation", "Company").id == "MSFT"
