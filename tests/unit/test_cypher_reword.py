"""The model rewords, the rules read, agreement decides (issue 44, kg/cypher/reword.py):
the anchor check, the policies, and the hook in ``CypherQA.ask``, with a fake model over
the bundled universe's lexicon and a fake store that answers every query the same."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from core.errors import LivekgError
from kg.cypher import CypherQA
from kg.cypher.qa import AskResult
from kg.cypher.reading import Abstention, Interpretation, ReadFields
from kg.cypher.reword import (
    Anchors,
    LLMReworder,
    ServedReworder,
    Try,
    anchors_of,
    clean,
    decide,
    only_deletes,
)
from kg.models.prompts.reword import (
    SHOTS,
    Rewordings,
    RewordingsZh,
    reword_again_v2,
    reword_v3,
)
from tests.fakes.universe_lexicon import NOW, universe_lexicon
from tests.unit.test_cypher_reading import RowsStore

ICBC = [{"id": "601398.SH", "name": "ICBC"}]
CASUAL = "banking industry names pls, the whole lot of them mate"  # abstains (0.34)
PLAIN = "Which companies belong to the banking industry?"  # answered, confidence 1


class FakeLLM:
    """Answers every rewording request with ``texts`` (or raises ``error``)."""

    def __init__(self, texts: list[str], error: bool = False) -> None:
        self.texts, self.error, self.calls = texts, error, 0
        self.last: list[Any] = []

    async def structured(self, msgs: list[Any], model: type, **_: Any) -> Rewordings:
        self.calls += 1
        self.last = msgs
        if self.error:
            raise LivekgError("model down")
        return Rewordings.model_construct(rewordings=self.texts)


def qa_with(texts: list[str], rows: list[dict[str, Any]] = ICBC, **kw: Any) -> CypherQA:
    llm = FakeLLM(texts, error=kw.pop("error", False))
    qa = CypherQA(RowsStore(rows), universe_lexicon(), reworder=LLMReworder(llm), **kw)  # type: ignore[arg-type]
    qa._fake = llm  # type: ignore[attr-defined]
    return qa


def result(status: str, rows: list[dict[str, Any]], conf: float, cypher: str = "Q") -> AskResult:
    read = Interpretation(text="t", fields=ReadFields(kind="entities"), confidence=conf)
    if status == "answered":
        return AskResult(
            question="q", method="cypher", cypher=cypher, rows=rows, answer="a", interpretation=read
        )
    return AskResult(
        question="q",
        method="cypher",
        cypher=cypher,
        answer="a",
        status="abstained",
        interpretation=read,
        abstention=Abstention(rows=rows),
    )


# -- the anchor check ------------------------------------------------------------------


async def test_a_rewording_in_the_other_language_keeps_the_anchors() -> None:
    qa = qa_with([])
    en = await anchors_of(
        qa, "How many times was the US 10-year yield above 4.2% on 2026-11-18?", NOW
    )
    zh = await anchors_of(qa, "2026年11月18日美国10年期国债收益率有几次高于4.2%？", NOW)
    assert en.entities == {"US10Y"} and en.numbers == {4.2} and en.window is not None
    assert en.problem(zh) is None


async def test_a_rewording_that_changes_a_name_a_number_or_a_day_is_dropped() -> None:
    qa = qa_with([])
    q = "How many times was the US 10-year yield above 4.2% on 2026-11-18?"
    mine = await anchors_of(qa, q, NOW)
    for other, why in (
        ("How many times was the US 10-year yield above 4.3% on 2026-11-18?", "lost number 4.2"),
        ("How many times was the US 10-year yield above 4.2% on 2026-11-19?", "time window"),
        ("How many times was the China 10-year yield above 4.2% on 2026-11-18?", "lost US10Y"),
        ("How many times was the US 10-year yield above 4.2%?", "time window"),
    ):
        problem = mine.problem(await anchors_of(qa, other, NOW))
        assert problem is not None and problem.startswith(why), (other, problem)
    added = Anchors(frozenset({"US10Y", "CN10Y"}), frozenset({4.2}), mine.window)
    assert (mine.problem(added) or "").startswith("added CN10Y")
    assert (mine.problem(Anchors(mine.entities, frozenset({4.2, 5.0}), mine.window)) or "") == (
        "added number 5"
    )


async def test_what_a_named_series_carries_is_no_anchor_but_a_count_asked_is() -> None:
    qa = qa_with([])
    zh = await anchors_of(qa, "中国制造业PMI最高是多少？", NOW)
    en = await anchors_of(qa, "What was the highest value of China's manufacturing PMI?", NOW)
    assert "CN_PMI" in zh.entities and zh.problem(en) is None  # China: CN_PMI's country
    count = await anchors_of(qa, "How many companies belong to the banking industry?", NOW)
    listing = await anchors_of(qa, PLAIN, NOW)
    assert count.count and not listing.count
    assert count.problem(listing) == "asks a count"
    assert listing.problem(count) == "asks no count"


def test_rewordings_are_cleaned_of_repeats_the_question_itself_and_runaways() -> None:
    q = "banking names pls"
    got = clean(q, ["Banking names, pls?", "", "Which banks?", "which banks", "x" * 400])
    assert got == ["Which banks?"]
    assert clean("DR007 昨天的报价是多少", ["DR007昨天的报价是多少？"]) == []
    assert clean("上個禮拜美國10年債平均收市幾多？", ["上个礼拜美国10年债平均收市几多？"]) == []


# -- the policies ------------------------------------------------------------------------


def test_agree_answers_only_with_a_confident_rewording_that_finds_the_same_rows() -> None:
    first = result("abstained", ICBC, 0.4)
    other_rows = [{"id": "600036.SH"}]
    same_unsure = Try("a", kept=True, result=result("abstained", ICBC, 0.6))
    differs = Try("b", kept=True, result=result("answered", other_rows, 1.0))
    assert decide("agree", first, [same_unsure, differs]) is None
    same_sure = Try("c", kept=True, result=result("answered", ICBC, 0.9))
    assert decide("agree", first, [differs, same_sure]) is same_sure
    dropped = Try("d", kept=False, why="lost X", result=result("answered", ICBC, 1.0))
    assert decide("agree", first, [dropped]) is None


def test_confident_takes_a_confident_rewording_even_when_it_differs() -> None:
    first = result("abstained", ICBC, 0.4)
    differs = Try("b", kept=True, result=result("answered", [{"id": "600036.SH"}], 1.0))
    unsure = Try("a", kept=True, result=result("abstained", ICBC, 0.6))
    assert decide("confident", first, [unsure, differs]) is differs
    empty = Try("e", kept=True, result=result("answered", [], 1.0))
    assert decide("confident", first, [empty]) is None  # no rows: nothing to answer with


def test_pair_answers_when_two_readings_find_the_same_rows_and_both_clear_the_floor() -> None:
    first = result("abstained", [{"id": "X"}], 0.3)
    a = Try("a", kept=True, result=result("abstained", ICBC, 0.6))
    b = Try("b", kept=True, result=result("answered", ICBC, 0.95))
    low = Try("l", kept=True, result=result("abstained", ICBC, 0.3))
    assert decide("pair", first, [a, b]) is b  # two rewordings agree: the surer one
    assert decide("pair", first, [low, a]) is None  # one of the two is below the floor
    assert decide("pair", first, [b]) is None  # the original (0.3) is below the floor
    same = result("abstained", ICBC, 0.6)
    t = Try("t", kept=True, result=result("abstained", ICBC, 0.65))
    assert decide("pair", same, [t]) is t  # the original and its rewording agree
    assert decide("pair", same, [t], floor=0.7) is None
    other = Try("o", kept=True, result=result("abstained", [{"id": "Y"}], 0.9))
    assert decide("pair", same, [other]) is None  # they disagree


# -- the hook in CypherQA.ask ------------------------------------------------------------


async def test_an_abstained_question_is_answered_through_its_rewording_and_says_so() -> None:
    qa = qa_with([PLAIN], reword_policy="agree")
    sure = await qa.ask(PLAIN, now=NOW)
    assert sure.status == "answered" and qa._fake.calls == 0  # type: ignore[attr-defined]
    res = await qa.ask(CASUAL, now=NOW)
    assert qa._fake.calls == 1  # type: ignore[attr-defined]
    assert res.status == "answered" and res.question == CASUAL
    assert res.rows == ICBC and res.abstention is None
    assert res.interpretation is not None and res.interpretation.source == "rewording"
    assert res.interpretation.text.startswith(f'reworded as "{PLAIN}"')
    assert "reword_model_ms" in res.timings and res.timings["rewordings_kept"] == 1
    # the question reaches the model as the last turn, after a fixed prefix
    last = qa._fake.last  # type: ignore[attr-defined]
    assert last[-1].content.endswith(CASUAL) and len(last) == 2 + 2 * len(SHOTS)
    assert reword_v3(question="x")[:-1] == last[:-1]
    off = await qa.ask(CASUAL, now=NOW, reword=False)
    assert off.status == "abstained" and qa._fake.calls == 1  # type: ignore[attr-defined]
    # pair (the default) wants the original reading (0.34) at PAIR_FLOOR to agree with it
    paired = await qa_with([PLAIN]).ask(CASUAL, now=NOW)
    assert paired.status == "abstained" and paired.timings["rewordings_kept"] == 1


async def test_a_rewording_that_loses_a_name_is_not_read_and_the_answer_abstains() -> None:
    qa = qa_with(["Which companies are there?"])
    res = await qa.ask(CASUAL, now=NOW)
    # nothing to pair a second wording with (the original 0.34, the rewording dropped)
    assert qa._fake.calls == 1 and res.timings["reword_calls"] == 1  # type: ignore[attr-defined]
    assert res.status == "abstained" and res.timings["rewordings_kept"] == 0
    assert res.interpretation is not None and res.interpretation.source == "rules"


async def test_a_model_failure_or_a_slow_model_leaves_the_answer_abstained() -> None:
    qa = qa_with([PLAIN], error=True)
    res = await qa.ask(CASUAL, now=NOW)
    assert res.status == "abstained" and res.timings["rewordings_kept"] == 0

    class Slow:
        async def reword(self, question: str) -> list[str]:
            await asyncio.sleep(5)
            return [PLAIN]

    qa = CypherQA(RowsStore(ICBC), universe_lexicon(), reworder=Slow(), reword_budget_s=0.05)  # type: ignore[arg-type]
    res = await qa.ask(CASUAL, now=NOW)
    assert res.status == "abstained" and res.timings.get("reword_timed_out") == 1.0


# -- better evidence: deletions, a second wording ----------------------------------------


def test_a_rewording_that_only_drops_words_is_a_deletion_and_cannot_pair() -> None:
    q = "how many sessions did sofr print last month lol"
    assert only_deletes(q, "How many sessions did the SOFR print last month?")
    assert only_deletes("工行是哪个行业的啊", "工行是哪个行业？")
    assert not only_deletes(q, "How many trading days did SOFR print last month?")
    assert not only_deletes("banking names pls", "Which companies are banks?")
    same = result("abstained", ICBC, 0.76)
    deletion = Try("d", kept=True, result=result("answered", ICBC, 0.88), deletion=True)
    assert decide("pair", same, [deletion]) is None
    other = Try("o", kept=True, result=result("answered", ICBC, 0.9))
    assert decide("pair", same, [deletion, other]) is other  # a true second wording pairs
    assert decide("agree", same, [deletion]) is deletion  # agree reads it as before


class TwoLLM(FakeLLM):
    """A first rewording, then ``again`` when asked for another one."""

    def __init__(self, first: list[str], again: list[str]) -> None:
        super().__init__(first)
        self.again = again

    async def structured(self, msgs: list[Any], model: type, **kw: Any) -> Rewordings:
        out = await super().structured(msgs, model, **kw)
        if kw.get("prompt_name") == "cypher.reword_again":
            return Rewordings.model_construct(rewordings=self.again)
        return out


async def test_two_rewordings_that_read_alike_answer_when_the_first_alone_does_not() -> None:
    llm = TwoLLM(["Which companies are in the banking industry?"], [PLAIN])
    qa = CypherQA(RowsStore(ICBC), universe_lexicon(), reworder=LLMReworder(llm))  # type: ignore[arg-type]
    res = await qa.ask(CASUAL, now=NOW)
    assert llm.calls == 2 and res.timings["rewordings_kept"] == 2
    assert res.status == "answered" and res.interpretation is not None
    assert res.interpretation.source == "rewording"
    # the second call is the first's rules and shots, then the question, "other words"
    assert llm.last[: 1 + 2 * len(SHOTS)] == reword_v3(question=CASUAL)[:-1]
    first = "Which companies are in the banking industry?"
    assert llm.last[-1] == reword_again_v2(question=CASUAL, before=[first])[-1]
    # with too little budget left after the first call, no second one
    slow = TwoLLM(["Which companies are in the banking industry?"], [PLAIN])
    store: Any = RowsStore(ICBC)
    qa = CypherQA(store, universe_lexicon(), reworder=LLMReworder(slow), reword_budget_s=0.0)
    await qa.ask(CASUAL, now=NOW)
    assert slow.calls <= 1


# -- on where the model is served --------------------------------------------------------


async def test_with_no_model_served_an_abstained_question_abstains_without_a_model() -> None:
    url: list[str | None] = [None]
    made: list[str] = []
    llm = FakeLLM([PLAIN])

    def make(u: str) -> FakeLLM:
        made.append(u)
        return llm

    served = ServedReworder(lambda: url[0], make)
    qa = CypherQA(RowsStore(ICBC), universe_lexicon(), reworder=served, reword_policy="agree")  # type: ignore[arg-type]
    res = await qa.ask(CASUAL, now=NOW)
    assert res.status == "abstained" and "reword_ms" not in res.timings
    assert made == [] and llm.calls == 0  # no client, no model: nothing loaded
    url[0] = "http://127.0.0.1:1/v1"  # the stack's model server came up after the API
    res = await qa.ask(CASUAL, now=NOW)
    assert made == ["http://127.0.0.1:1/v1"] and llm.calls == 1
    assert res.status == "answered" and res.interpretation is not None
    assert res.interpretation.text.startswith("reworded as")
    assert (await qa.ask(PLAIN, now=NOW)).status == "answered" and llm.calls == 1


async def test_the_api_rewords_only_where_a_model_is_served(tmp_path: Any) -> None:
    from core.settings import Settings
    from serving.services import Services

    s = Settings(data_dir=tmp_path).with_overrides(llm={"base_url": ""})
    served = Services(s)._reworder()
    assert served is not None and not served.available()  # default: on, none served
    assert await served.reword(CASUAL) == []
    off = Services(s.with_overrides(query={"reword": False}))._reworder()
    assert off is None
    there = Services(s.with_overrides(llm={"base_url": "http://127.0.0.1:1/v1"}))._reworder()
    assert there is not None and there.available()
    await there.aclose()


async def test_the_chinese_grammar_asks_a_chinese_question_for_a_chinese_rewording() -> None:
    seen: list[type] = []

    class Spy(FakeLLM):
        async def structured(self, msgs: list[Any], model: type, **kw: Any) -> Rewordings:
            seen.append(model)
            return await super().structured(msgs, model, **kw)

    on = LLMReworder(Spy(["工商银行属于哪个行业？"]), zh_grammar=True)
    assert await on.reword("工行是哪个行业的啊") == ["工商银行属于哪个行业？"]
    await on.reword(CASUAL)
    await LLMReworder(Spy([]), zh_grammar=False).reword("工行是哪个行业的啊")
    assert seen == [RewordingsZh, Rewordings, Rewordings]
    assert RewordingsZh(rewordings=["DR007本周几天高于1.4%？"])
    with pytest.raises(ValueError):
        RewordingsZh(rewordings=["Which industry is ICBC in?"])
