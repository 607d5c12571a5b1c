"""The model tier's second check (issue 42): a fact the checks kept is asked about again on
its own, in a fresh conversation (``extract.confirm.v1``), and kept only when the answer
quotes a sentence of the window holding its value, its names and (a company's figure) its
period. Every text here is written for this test."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kg.extract.model_tier import ModelTier, check_quote, claim_of
from kg.extract.pipeline import DocResult, ExtractDoc, Extractor, bundled_index
from kg.extract.types import Candidate, Mode
from tests.fakes import FakeLLM

CALL = (
    "Operator: Our next question comes from Tam Rivers with Selkirk Research.\n\n"
    "Tam Rivers: Thanks. Could you talk about margins this quarter?\n\n"
    "Gil Harrow: Sure. At Brontide Foods, adjusted operating margin came in around 14.2% in "
    "the fourth quarter of 2023, and we feel good about the pipeline. Net sales were up "
    "strongly.\n"
)
SAID = "At Brontide Foods, adjusted operating margin came in around 14.2% in the fourth quarter"
MARGIN = {"metric": "adjusted operating margin", "value": "14.2%", "company": "Brontide Foods"}
WINDOW = (
    "Kestrel Mills said net income rose to $41 million in the second quarter. "
    "Total revenue fell 3 percent to $900 million. Chief executive Ada Brisk said demand held."
)


def _figure(metric: str, value: str) -> tuple[Candidate, dict[str, str]]:
    cand = Candidate("Kestrel Mills", "Company", "DISCLOSES", metric, "FinMetric")
    row = {"head": "Kestrel Mills", "relation": "DISCLOSES", "tail": metric, "value": value,
           "period": "the second quarter"}  # fmt: skip
    return cand, row


@pytest.mark.parametrize(
    ("answer", "metric", "value", "why"),
    [
        ("Kestrel Mills said net income rose to $41 million in the second quarter.",
         "net income", "$41 million", ""),
        ("\u201cKestrel Mills said net income rose to $41 million in the second quarter\u201d",
         "net income", "$41 million", ""),  # curly quotes around a true quote
        ("NONE", "net income", "$41 million", "none"),
        ("Kestrel Mills said net income rose to $44 million in the second quarter.",
         "net income", "$44 million", "not_in_text"),  # not the text's sentence
        ("Kestrel Mills said net income rose to $41 million in the second quarter.",
         "net income", "$900 million", "no_value"),
        ("Kestrel Mills said net income rose to $41 million in the second quarter.",
         "operating margin", "$41 million", "no_name"),  # another metric's sentence
        ("Total revenue fell 3 percent to $900 million.", "total revenue", "$900 million",
         "no_period"),  # a company figure whose sentence gives no period
    ],
)  # fmt: skip
def test_the_quote_must_be_the_texts_and_hold_value_metric_period(
    answer: str, metric: str, value: str, why: str
) -> None:
    cand, row = _figure(metric, value)
    assert check_quote(answer, WINDOW, claim_of(cand, row)) == why


def test_claims_name_the_fact_and_the_blind_form_withholds_the_value() -> None:
    cand, row = _figure("net income", "$41 million")
    claim = claim_of(cand, row)
    assert "$41 million" in claim.claim and "net income" in claim.claim
    assert "second quarter" in claim.blind and "$41 million" not in claim.blind
    person = Candidate("Ada Brisk", "Person", "EXECUTIVE_OF", "Kestrel Mills", "Company")
    who = claim_of(person, None)
    assert who.words == ("Ada Brisk", "Kestrel Mills") and not who.period
    ok = "Chief executive Ada Brisk said demand held."
    assert check_quote(ok, WINDOW, who) == "no_name"  # the employer is not in that sentence


def _tier(responses: Any, **kw: Any) -> tuple[Extractor, ModelTier, FakeLLM]:
    ex = Extractor(index=bundled_index(), use_nlp=False)
    llm = FakeLLM(responses)
    ex.tier = ModelTier(ex, llm, mode=Mode.SINGLE, **kw)
    return ex, ex.tier, llm


def _kept(ex: Extractor) -> list[Any]:
    d = ExtractDoc(id="d1", text=CALL, kind="news")
    result: DocResult = asyncio.run(ex.extract(d, Mode.AUTO))
    return [t for t in result.triples if t.mode == "auto"]


def test_a_confirmed_fact_is_kept_after_a_fresh_question() -> None:
    ex, tier, llm = _tier({"extract.slots": {"figures": [MARGIN]}, "extract.confirm": SAID},
                          confirm="quote")  # fmt: skip
    kept = _kept(ex)
    assert [(t.head, t.tail, t.attributes["value"]) for t in kept] == [
        ("Brontide Foods", "adjusted operating margin", 14.2)
    ]
    names = [c.prompt_name for c in llm.calls]
    assert names == ["extract.slots.v4", "extract.confirm.v1"]
    ask = llm.calls[1].messages
    # a fresh conversation: no examples, no earlier answer; the window and the claim only
    assert len(ask) == 2 and "14.2%" in ask[1].content and "Tam Rivers" not in ask[1].content
    assert tier.stats.confirm_calls == 1 and tier.confirms[-1]["why"] == "confirmed"


@pytest.mark.parametrize("answer", ["NONE", "Net sales were up strongly.", "ok"])
def test_an_unconfirmed_fact_is_dropped(answer: str) -> None:
    ex, tier, _ = _tier({"extract.slots": {"figures": [MARGIN]}, "extract.confirm": answer})
    assert _kept(ex) == []
    assert sum(n for k, n in tier.stats.dropped.items() if k.startswith("unconfirmed")) == 1


def test_no_second_question_for_what_the_checks_dropped() -> None:
    invented = {"metric": "net sales", "value": "$9 billion", "company": "Brontide Foods"}
    ex, tier, llm = _tier({"extract.slots": {"figures": [invented]}, "extract.confirm": SAID})
    assert _kept(ex) == []
    assert [c.prompt_name for c in llm.calls] == ["extract.slots.v4"]  # nothing to confirm
    assert tier.stats.confirm_calls == 0


def test_the_blind_form_asks_without_the_value() -> None:
    ex, _, llm = _tier({"extract.slots": {"figures": [MARGIN]}, "extract.confirm": SAID},
                       confirm="blind")  # fmt: skip
    assert len(_kept(ex)) == 1
    assert "14.2" not in llm.calls[1].messages[-1].content.split("</text>")[1]
    ex, tier, _ = _tier({"extract.slots": {"figures": [MARGIN]}, "extract.confirm": "14.2%"})
    assert len(_kept(ex)) == 1 and tier.confirm == "blind"  # the default; the bare value


def test_the_blind_form_may_retell_the_sentence_that_holds_the_value() -> None:
    cand, row = _figure("net income", "$41 million")
    claim = claim_of(cand, row)
    retold = "Kestrel Mills' net income rose to $41 million in the second quarter."
    # not a copy: refused as a quote, located as the window's sentence when told blind
    assert check_quote(retold, WINDOW, claim) == "not_in_text"
    assert check_quote(retold, WINDOW, claim, locate=True) == ""
    # a retelling without the value, or of no sentence of the window, still is none
    assert check_quote("Kestrel Mills' net income rose.", WINDOW, claim, locate=True)
    invented = "Kestrel Mills earned $44 million from its new mill in Oslo last spring."
    assert check_quote(invented, WINDOW, claim, locate=True) == "not_in_text"
    # the bare value, found without being told: its sentence in the window is checked
    assert check_quote("$41 million", WINDOW, claim, locate=True) == ""
    revenue, row = _figure("total revenue", "$900 million")
    assert check_quote("$900 million", WINDOW, claim_of(revenue, row), locate=True) == "no_period"


def test_the_models_period_and_the_rules_must_name_the_same_span() -> None:
    from kg.extract.model_tier import period_kind, to_candidate
    from kg.extract.types import DocContext

    assert [period_kind(p) for p in ("2023-Q4", "the first quarter", "FY2013", "this year",
                                     "first half", "the end of this year", "")] == [
        "quarter", "quarter", "year", "year", "half", "", ""]  # fmt: skip
    window = ("Kestrel Mills expects adjusted earnings of $3.90 a share this year, with "
              "$1.02 in the current third quarter.")  # fmt: skip
    ctx = DocContext(doc_id="k", main_entity="Kestrel Mills", main_type="Company")
    row = {"head": "Kestrel Mills", "head_type": "Company", "relation": "DISCLOSES",
           "tail": "adjusted earnings", "tail_type": "FinMetric", "value": "$3.90",
           "period": "this year"}  # fmt: skip
    p = to_candidate(row, window, ctx, "", "2013-08-06", "firms")
    assert p.cand is None and p.reason == "period_conflict"  # the rules read the quarter
    same = to_candidate({**row, "period": "the current third quarter", "value": "$1.02"},
                        window, ctx, "", "2013-08-06", "firms")  # fmt: skip
    assert same.cand is not None
