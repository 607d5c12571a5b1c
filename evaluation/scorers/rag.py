"""``livekg eval rag``: HybridRAG's RAG metrics (section 2.4) for VectorRAG, GraphRAG,
HybridRAG and cluster-based triples on a question set with ground-truth answers.

Faithfulness (F = |V|/|S|), answer relevance (mean cosine of the question with n
questions generated from the answer), context precision and context recall, per
method. With a model configured the judge is the model, with the seed's prompts
(``kg.models.prompts.rag_eval``); without one (or with ``judge="lexical"``) every metric has a
named deterministic stand-in, reported as such in ``judge``:

- statements are the answer's sentences; a statement is supported when at least
  ``SUPPORT`` of its content tokens (Latin words, CJK bigrams) occur in the context
  and every number in it does;
- answer relevance is the cosine of the question's and the answer's embeddings;
- a context item is relevant when it supports a ground-truth sentence at ``ITEM``;
- a ground-truth sentence is attributable when the whole context supports it.

Without a model the answer is extractive (the first sentence of each of the top two
context items), so faithfulness is near 1 by construction there: the lexical run
measures retrieval (context precision and recall), not generation.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from evaluation.scorers.retrieval import context_precision, scored_service
from kg.graph.store import open_store
from kg.models.llm import LLMClient, make_llm_client
from kg.models.prompts.rag_eval import (
    Questions,
    Statements,
    Verdicts,
    answer_v1,
    attributable_v1,
    questions_v1,
    relevant_v1,
    statements_v1,
    verify_v1,
)
from kg.retrieve.service import context_text
from kg.retrieve.text import norm, sentences
from kg.retrieve.types import RetrievedItem

BUNDLED = Path(__file__).resolve().parents[1] / "evalsets" / "rag_eval.jsonl"
SUPPORT = 0.6  # share of a statement's content tokens found in the context
ITEM = 0.5  # share of a ground-truth sentence's tokens one context item must cover
_WORD = re.compile(r"[0-9a-z]+(?:[.'][0-9a-z]+)*|[\u3400-\u9fff]{2,}")
_NUM = re.compile(r"\d+(?:[.,/]\d+)*")
_STOP = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was "
    "were will with what how does did do which who why when said".split()
)
METHODS = ("dense", "graph", "hybrid", "tfr")  # VectorRAG, GraphRAG, HybridRAG, TFR


class RagQuestion(BaseModel):
    question: str
    ground_truth: str
    entities: list[str] = Field(default_factory=list)


def load_rag_questions(path: Path | None = None) -> list[RagQuestion]:
    lines = (path or BUNDLED).read_text(encoding="utf-8").splitlines()
    return [RagQuestion.model_validate_json(line) for line in lines if line.strip()]


def content_tokens(text: str) -> set[str]:
    """Latin words without stopwords, and CJK bigrams (runs of CJK split in pairs)."""
    out: set[str] = set()
    for w in _WORD.findall(norm(text)):
        if w[0] >= "\u3400":
            out.update(w[i : i + 2] for i in range(len(w) - 1))
        elif w not in _STOP:
            out.add(w)
    return out


def numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUM.findall(text)}


def support(statement: str, context: str) -> float:
    """Share of the statement's content tokens in ``context``; 0 when a number of the
    statement is missing from it (a number is the part most often invented)."""
    toks = content_tokens(statement)
    if not toks:
        return 0.0
    if not numbers(statement) <= numbers(context):
        return 0.0
    return len(toks & content_tokens(context)) / len(toks)


def faithfulness_lexical(answer: str, context: str) -> float:
    stmts = sentences(answer)
    if not stmts:
        return 0.0
    return sum(support(s, context) >= SUPPORT for s in stmts) / len(stmts)


def relevance_flags_lexical(items: Sequence[RetrievedItem], ground_truth: str) -> list[bool]:
    gts = sentences(ground_truth)
    return [any(support(g, _item_text(i)) >= ITEM for g in gts) for i in items]


def context_recall_lexical(ground_truth: str, context: str) -> float:
    gts = sentences(ground_truth)
    if not gts:
        return 0.0
    return sum(support(g, context) >= SUPPORT for g in gts) / len(gts)


def cosine_mean(q: np.ndarray, others: np.ndarray) -> float:
    """Mean cosine of ``q`` with each row of ``others`` (0 when there are none)."""
    if others.size == 0:
        return 0.0
    qn = q / (np.linalg.norm(q) or 1.0)
    on = others / np.maximum(np.linalg.norm(others, axis=1, keepdims=True), 1e-12)
    return float(np.clip(on @ qn, 0.0, 1.0).mean())


def extractive_answer(items: Sequence[RetrievedItem], n: int = 2) -> str:
    """The model-free answerer: the first sentence of each of the top ``n`` items."""
    out = []
    for it in items[:n]:
        first = sentences(_item_text(it))
        if first:
            out.append(first[0].rstrip("。.") + ".")
    return " ".join(out)


def _item_text(item: RetrievedItem) -> str:
    ev = item.provenance.evidence
    return f"{item.text}. {ev}" if ev and ev not in item.text else item.text


def _numbered(prefix: str, texts: Sequence[str]) -> str:
    return "\n".join(f"{prefix} {i}: {t}" for i, t in enumerate(texts, 1))


def _share(verdicts: Sequence[str], n: int) -> list[bool]:
    flags = [v == "Yes" for v in verdicts[:n]]
    return flags + [False] * (n - len(flags))  # a missing verdict is a "No"


class Judge:
    """The seed's LLM-judged metrics; every call is bounded by the client's timeout."""

    def __init__(self, llm: LLMClient, n_questions: int = 3) -> None:
        self.llm = llm
        self.n = n_questions

    async def _verdicts(
        self, msgs: list[Any], prompt_id: str, n: int, max_tokens: int
    ) -> list[bool]:
        """One structured Yes/No verdict per numbered line of ``msgs``, ``n`` of them."""
        v = await self.llm.structured(msgs, Verdicts, prompt_name=prompt_id,
                                      max_tokens=max_tokens, max_repairs=1)  # fmt: skip
        return _share(v.verdicts, n)

    async def answer(self, question: str, context: str) -> str:
        msgs = answer_v1(question=question, passages=context)
        return (await self.llm.chat(msgs, prompt_name=answer_v1.id, max_tokens=96)).strip()

    async def faithfulness(self, question: str, answer: str, context: str) -> float:
        st = await self.llm.structured(statements_v1(question=question, answer=answer),
                                       Statements, prompt_name=statements_v1.id,
                                       max_tokens=200, max_repairs=1)  # fmt: skip
        stmts = [s for s in st.statements if s.strip()]
        if not stmts:
            return 0.0
        msgs = verify_v1(passages=context, statements=_numbered("statement", stmts))
        return sum(await self._verdicts(msgs, verify_v1.id, len(stmts), 120)) / len(stmts)

    async def generated_questions(self, answer: str) -> list[str]:
        q = await self.llm.structured(questions_v1(answer=answer, n=self.n), Questions,
                                      prompt_name=questions_v1.id, max_tokens=120,
                                      max_repairs=1)  # fmt: skip
        return [x for x in q.questions if x.strip()][: self.n]

    async def relevance_flags(self, question: str, items: Sequence[RetrievedItem],
                              ground_truth: str) -> list[bool]:  # fmt: skip
        if not items:
            return []
        lines = _numbered("item", [_item_text(i)[:300] for i in items])
        msgs = relevant_v1(question=question, ground_truth=ground_truth, items=lines)
        return await self._verdicts(msgs, relevant_v1.id, len(items), 120)

    async def context_recall(self, ground_truth: str, context: str) -> float:
        gts = sentences(ground_truth)
        if not gts:
            return 0.0
        msgs = attributable_v1(passages=context, sentences=_numbered("sentence", gts))
        return sum(await self._verdicts(msgs, attributable_v1.id, len(gts), 60)) / len(gts)


async def score_one(
    q: RagQuestion,
    items: Sequence[RetrievedItem],
    embedder: Any,
    judge: Judge | None,
    context_chars: int = 1500,
) -> dict[str, float | str]:
    """The four metrics of one question's retrieved ``items`` (and the answer to them)."""
    context = context_text(items, context_chars)
    if judge is not None:
        answer = await judge.answer(q.question, context)
        faith = await judge.faithfulness(q.question, answer, context)
        gen = await judge.generated_questions(answer)
        flags = await judge.relevance_flags(q.question, items, q.ground_truth)
        recall = await judge.context_recall(q.ground_truth, context)
    else:
        answer = extractive_answer(items)
        faith = faithfulness_lexical(answer, context)
        gen = [answer] if answer else []
        flags = relevance_flags_lexical(items, q.ground_truth)
        recall = context_recall_lexical(q.ground_truth, context)
    vecs = await embedder.embed([q.question, *gen], "query") if gen else None
    relevance = cosine_mean(np.asarray(vecs[0]), np.asarray(vecs[1:])) if vecs is not None else 0.0
    return {"answer": answer, "faithfulness": faith, "answer_relevance": relevance,
            "context_precision": context_precision(flags, len(flags)) if flags else 0.0,
            "context_recall": recall}  # fmt: skip


async def evaluate_rag(service: Any, questions: Sequence[RagQuestion], k: int,
                       methods: Sequence[str] = METHODS, judge: Judge | None = None,
                       ) -> dict[str, Any]:  # fmt: skip
    """Mean metrics per method; failures of the judge count as zeros and are listed."""
    await service.refresh(force=True)
    out: dict[str, Any] = {}
    for m in methods:
        rows: list[dict[str, Any]] = []
        errors: list[str] = []
        t0 = time.perf_counter()
        for q in questions:
            items = await service.search(q.question, m, k)
            try:
                rows.append(await score_one(q, items, service.embedder, judge))
            except Exception as exc:  # a judge that answers garbage: a zero, not a crash
                errors.append(f"{q.question[:40]}: {type(exc).__name__}: {exc}"[:200])
                rows.append({"faithfulness": 0.0, "answer_relevance": 0.0,
                             "context_precision": 0.0, "context_recall": 0.0})  # fmt: skip
        n = max(len(rows), 1)
        out[m] = {key: round(sum(float(r[key]) for r in rows) / n, 4)
                  for key in ("faithfulness", "answer_relevance", "context_precision",
                              "context_recall")}  # fmt: skip
        out[m]["seconds"] = round(time.perf_counter() - t0, 3)
        out[m]["errors"] = errors
    return out


def run_rag_eval(settings: Any, data: Path | None, k: int, methods: Sequence[str],
                 judge: str = "auto", *,
                 services: Callable[..., Any]) -> dict[str, Any]:  # fmt: skip
    """On the running graph, or a temporary one loaded with the bundled samples.
    ``judge``: ``llm`` (the configured model), ``lexical`` or ``auto`` (the model only
    when one is served: ``llm.base_url``; the embedded 135M model is no judge).
    ``services`` is the runtime's context manager, given by the CLI."""
    questions = load_rag_questions(data)
    use_llm = judge == "llm" or (judge == "auto" and bool(settings.llm.base_url))
    with services(settings, llm=use_llm) as (s, ep):
        return asyncio.run(_run(s, ep.falkordb_url, ep.llm_base_url if use_llm else None,
                                questions, k, methods, use_llm))  # fmt: skip


async def _run(settings: Any, falkordb_url: str | None, llm_url: str | None,
               questions: list[RagQuestion], k: int, methods: Sequence[str],
               use_llm: bool) -> dict[str, Any]:  # fmt: skip
    store = open_store(settings, falkordb_url)
    client = make_llm_client(settings, llm_url) if use_llm else None
    try:
        service, _ = await scored_service(settings, store)
        embedder = service.embedder
        res = await evaluate_rag(service, questions, k, methods,
                                 Judge(client) if client else None)  # fmt: skip
    finally:
        if client is not None:
            await client.aclose()
        await store.close()
    return {"eval": "rag", "questions": len(questions), "k": k, "embedder": embedder.model_id,
            "judge": f"llm:{client.model}" if client else "lexical (deterministic stand-ins)",
            "answerer": f"llm:{client.model}" if client else "extractive (top-2 first sentences)",
            "methods": res}  # fmt: skip
