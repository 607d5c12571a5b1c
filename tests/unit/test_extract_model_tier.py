"""Extraction's model tier (kg/extract/model_tier.py) against a fake model: where it reads,
what it keeps, the budget and the queue, and bad input (no crash, no fact outside the
schema). Every text here is written for this test."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kg.extract.model_tier import (
    ModelBudget,
    ModelTier,
    TierQueue,
    candidate_windows,
    needs_model,
    profile_of,
    schema_for,
    windows_of,
)
from kg.extract.pipeline import DocResult, ExtractDoc, Extractor, bundled_index
from kg.extract.types import Mode
from kg.models.prompts.extract import fact_model, facts_v3
from tests.fakes import FakeLLM

CALL = (
    "Operator: Our next question comes from Tam Rivers with Selkirk Research.\n\n"
    "Tam Rivers: Thanks. Could you talk about margins this quarter?\n\n"
    "Gil Harrow: Sure. At Brontide Foods, adjusted operating margin came in around 14.2% in "
    "the fourth quarter of 2023, and we feel good about the pipeline.\n"
)


def _fact(head: str, rel: str, tail: str, value: str = "", ht: str = "Company",
          tt: str = "FinMetric") -> dict[str, str]:  # fmt: skip
    return {"head": head, "head_type": ht, "relation": rel, "tail": tail, "tail_type": tt,
            "value": value}  # fmt: skip


MARGIN = _fact("Brontide Foods", "DISCLOSES", "adjusted operating margin", "14.2%")
INVENTED = _fact("Brontide Foods", "DISCLOSES", "net sales", "$9 billion")
NO_VALUE = _fact("Brontide Foods", "DISCLOSES", "gross margin")
HARROW = _fact("Gil Harrow", "EXECUTIVE_OF", "Brontide Foods", ht="Person", tt="Company")
# the slot form (extract.slots.v4): CALL names no company in its header, the figure does
SLOT_MARGIN = {"metric": "adjusted operating margin", "value": "14.2%", "company": "Brontide Foods"}


def _tier(responses: Any, **kw: Any) -> tuple[Extractor, ModelTier, FakeLLM]:
    ex = Extractor(index=bundled_index(), use_nlp=False)
    llm = FakeLLM(responses)
    kw.setdefault("confirm", "off")  # the second check has its own tests (test_extract_tier_confirm)
    ex.tier = ModelTier(ex, llm, **kw)
    return ex, ex.tier, llm


def _run(ex: Extractor, text: str, kind: str = "news", doc_id: str = "d1") -> DocResult:
    return asyncio.run(ex.extract(ExtractDoc(id=doc_id, text=text, kind=kind), Mode.AUTO))


def _tier_triples(result: DocResult) -> list[Any]:
    return [t for t in result.triples if t.mode == "auto"]


def test_profiles() -> None:
    assert profile_of("news", "en", CALL) == "call"
    rates = "The Fed held interest rates steady; Treasury yields fell as inflation cooled."
    assert profile_of("news", "en", rates) == "central_bank"
    assert profile_of("commentary", "zh", "央行开展逆回购操作，资金面宽松。") == "zh_bond"
    assert profile_of("news", "en", "Dalmore Tools said it would buy Fennick.") == "firms"
    assert profile_of("social", "en", CALL) == "social"


def test_schema_slice_and_its_response_model() -> None:
    call = schema_for("call")
    assert {r.type for r in call.relations} <= {
        "DISCLOSES",
        "EXECUTIVE_OF",
        "HAS_CEO",
        "PRODUCES",
        "OPERATES_IN",
        "SUPPLIES",
    }
    assert "SETS_POLICY" in {r.type for r in schema_for("central_bank").relations}
    for r in call.relations:
        assert set(r.domain) <= set(call.entity_types) and set(r.range) <= set(call.entity_types)
    model = fact_model(call)
    model.model_validate({"facts": [MARGIN]})
    with pytest.raises(ValueError):  # a relation outside the slice is no answer
        model.model_validate({"facts": [_fact("A", "SETS_POLICY", "B", tt="Policy")]})
    msgs = facts_v3(text="x", schema=call, profile="call")
    assert "SETS_POLICY" not in msgs[0].content and "Brontide" not in msgs[0].content


def test_windows_are_cut_at_boundaries_and_capped() -> None:
    text = " ".join(f"Sentence number {i} says little." for i in range(200))
    wins = windows_of(text, 300)
    assert all(len(t) <= 300 for _, t in wins)
    assert "".join(t for _, t in wins).replace(" ", "") == text.replace(" ", "")
    assert all(text[o : o + len(t)] == t for o, t in wins)


def test_the_tier_reads_only_where_the_rules_are_silent() -> None:
    ex, _, _ = _tier({"extract.slots": {}}, mode=Mode.SINGLE)
    told = "Varnia Steel said on Monday that it appointed Ona Pell as chief executive officer."
    fast = asyncio.run(ex.extract(ExtractDoc(id="f", text=told, kind="news"), Mode.FAST))
    if fast.triples:  # the rules read it: nothing for the model
        assert not needs_model(fast)
    result = asyncio.run(ex.extract(ExtractDoc(id="c", text=CALL, kind="news"), Mode.FAST))
    assert needs_model(result)
    assert candidate_windows(result, 1200)
    tweet = asyncio.run(ex.extract(ExtractDoc(id="s", text=CALL, kind="social"), Mode.FAST))
    assert not needs_model(tweet)  # social posts: never the model


def test_nothing_is_computed_twice() -> None:
    ex, tier, llm = _tier({"extract.slots": {"figures": [SLOT_MARGIN]}}, mode=Mode.SINGLE)
    _run(ex, CALL, doc_id="a")
    calls = len(llm.calls)
    assert calls == 1
    _run(ex, CALL, doc_id="b")  # the same text again (a wire reprint): no call
    assert len(llm.calls) == calls and tier.stats.skipped_seen >= 1


def test_mixed_scripts_and_a_big_document_do_not_crash() -> None:
    mixed = (
        "Brontide Foods 营收 rose — مرحبا 🚀 revenue grew 5% to ¥3.2 billion in 2024年第三季度。"
        "Тест \u200b\u0000 ok. "
    ) * 20
    ex, _, _ = _tier({"extract.slots": {"figures": [SLOT_MARGIN]}}, mode=Mode.SINGLE,
                        max_windows=2)  # fmt: skip
    for t in _run(ex, mixed).triples:
        assert ex.ontology.check(t.head, t.head_type, t.relation, t.tail, t.tail_type).ok
    para = "Traders at Selkirk Research watched 12 screens and 3 phones all day long. "
    big = (para * (5_000_000 // len(para) + 1))[:5_000_000]
    ex, _, llm = _tier({"extract.slots": {}}, mode=Mode.SINGLE, max_windows=2)
    _run(ex, big, doc_id="big")
    assert len(llm.calls) <= 2  # capped before any call, whatever the size


@pytest.mark.parametrize("bad", ["not json at all", '{"figures": [{"metric": ', "```\n[]\n```",
                                 '{"figures": "Brontide"}'])  # fmt: skip
def test_malformed_json_gives_no_fact_and_no_crash(bad: str) -> None:
    ex, tier, _ = _tier({"extract.slots": bad}, mode=Mode.SINGLE)
    result = _run(ex, CALL)
    assert _tier_triples(result) == []
    # no JSON object: an error; an object whose slot is not a list of its form: dropped
    assert sum(tier.stats.errors.values()) + tier.stats.dropped["schema_output"] >= 1


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_budget_holds_model_time_to_its_share() -> None:
    clock = _Clock()
    half = ModelBudget(share=0.5, threads=1, burst_s=10.0, clock=clock)
    assert half.wait_s() == 0.0
    half.charge(5.0)  # the burst (5 core-s) is spent
    assert half.wait_s() == 0.0
    half.charge(4.0)  # 4 core-s in debt: 8 s at half a core
    assert half.wait_s() == pytest.approx(8.0)
    clock.t = 8.0
    assert half.wait_s() == pytest.approx(0.0)
    two = ModelBudget(share=1.0, threads=2, burst_s=0.0, clock=_Clock())
    two.charge(3.0)  # a 2-thread call of 3 s is 6 core-s: 6 s idle at one core
    assert two.wait_s() == pytest.approx(6.0) and two.slots == 1
    assert ModelBudget(share=0, clock=_Clock()).wait_s() == 0.0  # no limit (GPU)


def test_queue_priority_backpressure_and_idle() -> None:
    async def go() -> list[str]:
        q = TierQueue(bound=3)
        await q.put("firms", 1)
        await q.put("filing", 2)
        await q.put("call", 0)
        assert q.full() and not q.put_nowait("more", 0)  # full: the caller keeps it
        got = [await q.get() for _ in range(3)]
        getter = asyncio.ensure_future(q.get())
        await asyncio.sleep(0)
        assert not getter.done()  # empty: waiting, not polling
        getter.cancel()
        return got

    assert asyncio.run(go()) == ["call", "firms", "filing"]


def test_eval_mode_auto_is_the_fast_path_plus_the_tier() -> None:
    from cli.extract_cmds import _extractor
    from core.settings import Settings

    ex = _extractor(Settings(), "auto", "http://127.0.0.1:9/v1")
    assert ex.llm is None and isinstance(ex.tier, ModelTier)  # no per-chunk LLM mode
    assert _extractor(Settings(), "auto", None).tier is None  # no model: the fast path
    off = Settings().with_overrides(extract={"tier": {"enabled": False}})
    assert _extractor(off, "auto", "http://127.0.0.1:9/v1").tier is None


def test_an_answer_is_read_before_a_question() -> None:
    ex, _, _ = _tier({"extract.slots": {}}, mode=Mode.SINGLE)
    text = (
        "Tam Rivers: Could you say whether 2024 pricing, 2025 volumes and 3 plants matter? "
        "And what about 4 new lines? Or 5 regions?\n\n"
        "Gil Harrow: Sure. At Brontide Foods, adjusted operating margin was 14.2% in the "
        "fourth quarter of 2023, and the pipeline is healthy across all of our markets.\n"
    )
    result = asyncio.run(ex.extract(ExtractDoc(id="q", text=text, kind="news"), Mode.FAST))
    first = candidate_windows(result, 200)[0]
    assert "14.2%" in first.text and "?" not in first.text
