"""Two-stage RAG (Chen et al. section 3.3) with graceful degradation.

Stage 1: K1 = Retriever(Q); F_select = LLM(Q, K1, F). Stage 2: K2 = Retriever(Q,
F_select); A = LLM(Q, F_select, K2), told to prune irrelevant knowledge. Without a
model, or when it is down or answers garbage, F_select falls back to the question's
facts and A is empty; what failed is recorded, nothing is raised.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from pydantic import BaseModel, Field

from kg.models.llm import LLMClient
from kg.models.llm_errors import LLMTimeout, LLMUnavailable
from kg.models.prompts.report import FactSelection, analysis_v1, select_facts_v1
from kg.report.facts import Fact
from kg.retrieve.service import context_text
from kg.retrieve.types import RetrievedItem, Retriever

log = logging.getLogger(__name__)

T = TypeVar("T")


class BudgetSpent(Exception):
    """The report's model time is used up: the call was not made or was cut short."""


async def _within(call: Callable[[], Awaitable[T]], deadline: float | None) -> T:
    """``call()`` bounded by ``deadline`` (a ``time.perf_counter`` instant), so the
    report's model budget is a hard limit, not a check between questions."""
    if deadline is None:
        return await call()
    remaining = deadline - time.perf_counter()
    if remaining < 0.5:
        raise BudgetSpent("LLM budget spent before the call")
    try:
        async with asyncio.timeout(remaining):
            return await call()
    except TimeoutError:
        raise BudgetSpent(f"LLM budget spent during the call ({remaining:.1f}s left)") from None


class RagResult(BaseModel):
    selected: list[Fact] = Field(default_factory=list)
    k1: list[RetrievedItem] = Field(default_factory=list)
    k2: list[RetrievedItem] = Field(default_factory=list)
    llm_text: str = ""
    llm_used: bool = False
    errors: list[str] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)


_END = re.compile(r"[。！？]|[.!?](?=[\s\"')\]]|$)")


def whole_sentences(text: str) -> str:
    """The text up to its last complete sentence: an answer cut at ``max_tokens`` must
    not end mid-sentence in a published report."""
    text = text.strip()
    ends = [m.end() for m in _END.finditer(text)]
    return text[: ends[-1]].strip() if ends else ""


def fact_lines(facts: Sequence[Fact]) -> str:
    return "\n".join(f"{i}: {f.text}" for i, f in enumerate(facts, 1))


PRIORITY = {"level": 0, "spread": 1, "vs_average": 1, "policy_change": 1, "spread_change": 2}


def for_llm(facts: Sequence[Fact], limit: int) -> list[Fact]:
    """The facts shown to the model: levels, spreads, funding and policy first, then
    1-month changes, then the rest (a small model's context and time are scarce)."""

    def rank(f: Fact) -> tuple[int, int]:
        if f.kind == "change":
            return (3 if f.horizon == "1m" else 4, 0)
        return (PRIORITY.get(f.kind, 5), 0)

    return sorted(facts, key=rank)[:limit]


async def _retrieve(
    retriever: Retriever | None, query: str, k: int, errors: list[str], at: int | None
) -> list[RetrievedItem]:
    if retriever is None or k < 1:
        return []
    try:
        return await retriever.search(query, k, at=at)
    except Exception as exc:  # a broken index must not stop the report
        errors.append(f"retrieval failed: {type(exc).__name__}: {exc}"[:300])
        log.warning("report retrieval failed: %r", exc)
        return []


async def two_stage(
    question: str,
    facts: Sequence[Fact],
    *,
    retriever: Retriever | None,
    llm: LLMClient | None,
    k1: int = 8,
    k2: int = 8,
    at: int | None = None,
    max_tokens: int = 200,
    use_llm: bool = True,
    max_llm_facts: int = 12,
    knowledge_chars: int = 1500,
    deadline: float | None = None,
) -> RagResult:
    """Both stages; model calls stop at ``deadline`` (``time.perf_counter`` time), and
    a budget or model failure in stage 1 skips stage 2's call."""
    res = RagResult()
    facts = for_llm(facts, max_llm_facts) if llm is not None and use_llm else list(facts)
    t0 = time.perf_counter()
    res.k1 = await _retrieve(retriever, question, k1, res.errors, at)
    res.timings["retrieve_k1_s"] = round(time.perf_counter() - t0, 4)
    selected = list(facts)
    if llm is not None and use_llm and facts:
        t = time.perf_counter()
        try:
            msgs = select_facts_v1(question=question, facts=fact_lines(facts),
                                   knowledge=context_text(res.k1, knowledge_chars))  # fmt: skip
            pick = await _within(lambda: llm.structured(
                msgs, FactSelection, prompt_name=select_facts_v1.id, max_tokens=48,
                max_repairs=0), deadline)  # fmt: skip
            idx = sorted({n - 1 for n in pick.facts if 0 < n <= len(facts)})
            if idx:
                selected = [facts[i] for i in idx]
                res.llm_used = True
            else:
                res.errors.append("stage 1: the model selected no valid fact; using all")
        except BudgetSpent as exc:
            use_llm = False
            res.errors.append(f"stage 1: {exc}")
        except (LLMTimeout, LLMUnavailable) as exc:  # a model that cannot answer now
            use_llm = False
            res.errors.append(f"stage 1 LLM failed: {type(exc).__name__}: {exc}"[:300])
        except Exception as exc:
            res.errors.append(f"stage 1 LLM failed: {type(exc).__name__}: {exc}"[:300])
        res.timings["llm_select_s"] = round(time.perf_counter() - t, 4)
    res.selected = selected
    t = time.perf_counter()
    q2 = question + " " + " ".join(f.text for f in selected[:6])
    res.k2 = await _retrieve(retriever, q2, k2, res.errors, at)
    res.timings["retrieve_k2_s"] = round(time.perf_counter() - t, 4)
    if llm is not None and use_llm and selected:
        t = time.perf_counter()
        try:
            msgs = analysis_v1(question=question, facts=fact_lines(selected),
                               knowledge=context_text(res.k2, knowledge_chars))  # fmt: skip
            res.llm_text = whole_sentences(
                await _within(
                    lambda: llm.chat(msgs, prompt_name=analysis_v1.id, max_tokens=max_tokens),
                    deadline,
                )
            )
            res.llm_used = True
        except BudgetSpent as exc:
            res.errors.append(f"stage 2: {exc}")
        except Exception as exc:
            res.errors.append(f"stage 2 LLM failed: {type(exc).__name__}: {exc}"[:300])
        res.timings["llm_analysis_s"] = round(time.perf_counter() - t, 4)
    return res
