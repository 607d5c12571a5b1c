"""HybridRAG's RAG metrics: the deterministic stand-ins hand-checked, the LLM judge with
a fake model (good and garbage verdicts), and TFR tuning on the tune split only."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.scorers.rag import (
    Judge,
    RagQuestion,
    content_tokens,
    context_recall_lexical,
    cosine_mean,
    extractive_answer,
    faithfulness_lexical,
    load_rag_questions,
    relevance_flags_lexical,
    score_one,
    support,
)
from evaluation.scorers.retrieval import EvalQuery, load_queries, tune_tfr
from kg.models.llm_errors import StructuredOutputError
from kg.retrieve.index import RetrievalIndex, TripleRow
from kg.retrieve.types import ItemKind, Method, RetrievedItem
from tests.fakes.embed import FakeEmbedder
from tests.fakes.llm import FakeLLM

CTX = "Moody's downgraded Harbor Steel Corp's credit rating to Ba1, citing weaker margins."


def _doc(i: int, text: str) -> RetrievedItem:
    return RetrievedItem(id=f"d{i}", kind=ItemKind.DOCUMENT, text=text, score=1.0,
                         method=Method.DENSE)  # fmt: skip


def test_support_needs_the_words_and_every_number() -> None:
    assert support("Moody's downgraded Harbor Steel to Ba1.", CTX) == pytest.approx(1.0)
    assert support("Harbor Steel was downgraded to Ba2.", CTX) == 0.0  # 2 is not in it
    assert support("Apple bought back shares.", CTX) == 0.0
    assert content_tokens("宁德时代分红") == {"宁德", "德时", "时代", "代分", "分红"}


def test_lexical_metrics_hand_computed() -> None:
    answer = "Moody's downgraded Harbor Steel Corp to Ba1. Revenue rose 14% to $3.2 billion."
    assert faithfulness_lexical(answer, CTX) == pytest.approx(0.5)  # 1 of 2 statements
    gt = "Moody's downgraded Harbor Steel Corp's credit rating to Ba1. Moody's cited margins."
    assert context_recall_lexical(gt, CTX) == pytest.approx(1.0)
    assert context_recall_lexical(gt, "Apple announces a buyback.") == 0.0
    items = [_doc(1, "Apple announces a buyback."), _doc(2, CTX)]
    assert relevance_flags_lexical(items, gt) == [False, True]
    assert extractive_answer(items) == "Apple announces a buyback. " + CTX
    v = np.array([1.0, 0.0])
    assert cosine_mean(v, np.array([[1.0, 0.0], [0.0, 1.0]])) == pytest.approx(0.5)
    assert cosine_mean(v, np.zeros((0, 2))) == 0.0


async def test_score_one_with_a_fake_judge() -> None:
    q = RagQuestion(question="What did Moody's do?", ground_truth=CTX)
    items = [_doc(1, CTX), _doc(2, "Apple announces a buyback.")]
    llm = FakeLLM({
        "rag_eval.answer": "Moody's cut Harbor Steel to Ba1.",
        "rag_eval.statements": {"statements": ["Moody's cut Harbor Steel.", "It is Ba1."]},
        "rag_eval.verify": {"verdicts": ["Yes"]},  # a missing verdict counts as "No"
        "rag_eval.questions": {"questions": ["What did Moody's do?"]},
        "rag_eval.relevant": {"verdicts": ["Yes", "No"]},
        "rag_eval.attributable": {"verdicts": ["Yes"]},
    })  # fmt: skip
    emb = FakeEmbedder(dim=16)
    r = await score_one(q, items, emb, Judge(llm))
    assert r["faithfulness"] == pytest.approx(0.5) and r["context_recall"] == 1.0
    assert r["context_precision"] == pytest.approx(1.0)
    assert r["answer_relevance"] == pytest.approx(1.0)  # the same question: cosine 1
    garbage = FakeLLM({"rag_eval.statements": "no json here {"}, max_retries=0)
    with pytest.raises(StructuredOutputError):  # evaluate_rag turns it into a zero
        await score_one(q, items, emb, Judge(garbage))


def test_bundled_sets_have_splits_and_ground_truth() -> None:
    tune, test = load_queries(split="tune"), load_queries(split="test")
    assert tune and test and not {q.query for q in tune} & {q.query for q in test}
    assert len(load_queries(split="all")) == len(tune) + len(test)
    qs = load_rag_questions()
    assert len(qs) >= 10 and all(q.ground_truth and q.entities for q in qs)


class _Service:
    def __init__(self, ix: RetrievalIndex, emb: FakeEmbedder) -> None:
        self.index, self.emb = ix, emb

    async def refresh(self, force: bool = False) -> None:
        return None

    async def search(self, query: str, method: str, k: int, *, at=None):
        return self.index.tfr_triples(self.emb.embed_sync([query], "query")[0], k, at)


async def test_tune_tfr_chooses_on_tune_and_restores_the_index() -> None:
    emb = FakeEmbedder(dim=16)
    ix = RetrievalIndex(dim=16)
    rows = [TripleRow(id=f"f{i}", head=h, head_name=h, relation="R", tail=f"T{i}",
                      tail_name=f"tail {i}") for i, h in enumerate(["A", "A", "B", "C"])]  # fmt: skip
    ix.add_triples(rows, lambda t: emb.embed_sync(t, "passage"))
    svc = _Service(ix, emb)
    tune = [EvalQuery(query="A R tail 0", relevant_entities=["A"])]
    test = [EvalQuery(query="B R tail 2", relevant_entities=["B"])]
    out = await tune_tfr(svc, tune, test, 2, {"temperature": (0.1, 1.0), "top_n": (20,)})
    assert len(out["grid"]) == 2 and set(out["test"]) == {"chosen", "seed_default"}
    assert out["test"]["chosen"]["temperature"] in (0.1, 1.0)
    assert (ix.temperature, ix.top_n) == (1.0, 200)  # restored
