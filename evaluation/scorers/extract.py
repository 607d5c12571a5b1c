"""Run the extractor over documents and compute the seed-004 metrics (``livekg eval
extract``), plus the per-mode benchmark numbers (``livekg bench extract``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from kg.extract.pipeline import DocResult, ExtractDoc, Extractor
from kg.extract.quality import ScoredTriple, report
from kg.extract.types import Mode


async def run_docs(extractor: Extractor, docs: Sequence[ExtractDoc], mode: Mode) -> list[DocResult]:
    return [await extractor.extract(doc, mode) for doc in docs]


def metrics(
    extractor: Extractor, results: Sequence[DocResult], mode: Mode, seconds: float
) -> dict[str, Any]:
    chunk_text = {c.chunk.id: c.chunk.text for r in results for c in r.chunks}
    scored = [
        ScoredTriple(
            t.head,
            t.head_type,
            t.relation,
            t.tail,
            t.tail_type,
            chunk_text[t.chunk_id or ""],
            r.ctx,
        )
        for r in results
        for t in r.triples
    ]
    chunks = sum(len(r.chunks) for r in results)
    out: dict[str, Any] = {"mode": mode.value}
    out.update(
        report(
            scored, chunks, len(results), ontology=extractor.ontology, verifier=extractor.verifier
        )
    )
    calls = sum(r.llm_calls for r in results)
    llm_runs = [c.llm for r in results for c in r.chunks if c.llm.calls]
    stats = results[0].stats if results else None
    merged = type(stats)() if stats else None
    for r in results:
        if merged is not None:
            merged.merge(r.stats)
    by_component: dict[str, int] = {}
    for r in results:
        for t in r.triples:
            comp = t.extractor.split(":")[0]
            by_component[comp] = by_component.get(comp, 0) + 1
    out.update({
        "llm_calls_per_chunk": round(calls / chunks, 3) if chunks else 0.0,
        "llm_chunks": len(llm_runs),
        "llm_errors": sum(len(c.errors) for c in llm_runs),
        "reflection_iterations_mean": (
            round(sum(c.iterations for c in llm_runs) / len(llm_runs), 3) if llm_runs else 0.0
        ),
        "llm_latency_s_mean": round(sum(c.latency_s for c in llm_runs) / max(calls, 1), 3),
        "triples_by_component": by_component,
        "verification": merged.as_dict() if merged else {},
        "chunks_per_s": round(chunks / seconds, 3) if seconds else 0.0,
        "seconds": round(seconds, 2),
    })  # fmt: skip
    return out


async def evaluate(
    extractor: Extractor, docs: Sequence[ExtractDoc], mode: Mode
) -> tuple[dict[str, Any], list[DocResult]]:
    started = time.perf_counter()
    results = await run_docs(extractor, docs, mode)
    return metrics(extractor, results, mode, time.perf_counter() - started), results
