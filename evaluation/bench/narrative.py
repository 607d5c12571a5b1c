"""``livekg bench narrative``: market days of the bundled sample replayed with the
report's background narrative on (issue 42).

For each of the last ``days`` US market days of ``connectors/samples`` (a year of US
Treasury, FRED and Chinese rate history), oldest first:

1. the bond report is built in process from the sample's series and news at 22:00 UTC of
   that day, its files written (``build_bond_report``, no graph, no model): ``report_s``;
2. it is handed to the stream's ``Narrator`` (``submit`` returns at once: ``submit_ms``,
   the report is never waited for), which writes the commentary with the served model
   exactly as ``streams/processors/report.py``'s ``narrate`` does (``write_narrative``
   then ``apply_narrative``, an interactive-priority client with the narrative's budget
   as its timeout and no retries);
3. once the narrative is in the report's files: ``narrative_after_report_s`` (from the
   report's files being written to the commentary being in them), the model's prompt
   and generation time per language, the sentences kept and dropped, and the kept text
   checked again, independently, against the report's facts (``unsupported``: must be
   0).

The model is the running or configured server (``llm.base_url``, ``--base-url``), else
the embedded model server started alone for the run (``nice``: its CPU priority) and
stopped after it. ``stack``: the whole embedded stack instead (broker, graph, model
server, worker, API), the sample day replayed into it as ``livekg up`` does, and the
peak resident memory of every process of the stack sampled while both run.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from core.settings import Settings
from evaluation.bench.llm import local_server
from evaluation.bench.report import sample_docs, sample_rows
from evaluation.bench.rss import RssSampler
from kg.models.llm import make_llm_client
from kg.models.llm_runtime import local_model_path
from kg.report import build_bond_report
from kg.report.facts import Series, indicator_catalog, series_from_rows
from kg.report.model import BondReportDoc
from kg.report.narrative import (
    PROMPT_VERSION,
    Narrative,
    Narrator,
    allowed_for_report,
    apply_narrative,
    write_narrative,
)
from kg.report.numbers import unsupported_in
from kg.retrieve.text import sentences

BAR_S = 120.0  # issue 42: each narrative within two minutes of its report


def market_days(series: dict[str, Series], n: int, indicator: str = "US10Y") -> list[str]:
    """The last ``n`` days with a close of ``indicator`` (the report's curve), oldest first."""
    days = sorted({p.day.isoformat() for p in series[indicator].points})
    return days[-n:]


def _memory_of(sampler: RssSampler) -> dict[str, Any]:
    """The replay's peak memory from the benches' one sampler, in MiB and GiB."""
    sampler.done.set()
    return {
        "peak_rss_mib": {k: round(v, 1) for k, v in sorted(sampler.peak.items())},
        "peak_total_rss_mib": round(sampler.peak_total, 1),
        "peak_total_gib": round(sampler.peak_total / 1024, 2),
    }


def _kept_check(doc: BondReportDoc, nar: Narrative) -> tuple[dict[str, int], list[str]]:
    """Sentences kept per language and any number in them the report's facts do not
    support (an independent second pass over the published prose)."""
    allowed = allowed_for_report(doc, titles=False)
    kept, bad = {}, []
    for lang in ("en", "zh"):
        text = getattr(nar, lang) or ""
        ss = sentences(text) if text else []
        kept[lang] = len(ss)
        for s in ss:
            bad += unsupported_in(s, allowed)
    return kept, bad


async def replay_days(
    settings: Settings,
    base_url: str,
    days: list[str],
    out_dir: Path,
    *,
    budget_s: float,
    max_tokens: int,
    max_facts: int,
) -> list[dict[str, Any]]:
    """The replay itself (see the module docstring): one row per market day."""
    rows, docs = sample_rows(), sample_docs()
    series = series_from_rows(rows, indicator_catalog())
    cfg = settings.report
    tight = settings.with_overrides(llm={"timeout_s": budget_s, "max_retries": 0})
    out: list[dict[str, Any]] = []
    done_at: dict[str, float] = {}

    async def narrate(doc: BondReportDoc) -> Narrative:  # as streams/processors/report.py
        llm = make_llm_client(tight, base_url, priority="interactive")
        try:
            nar = await write_narrative(doc, llm, budget_s=budget_s, max_tokens=max_tokens,
                                        max_facts=max_facts)  # fmt: skip
        finally:
            await llm.aclose()
        await asyncio.to_thread(apply_narrative, doc, nar)
        done_at[doc.id] = time.perf_counter()
        return nar

    narrator = Narrator(narrate)
    for day in days:
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        doc = await build_bond_report(None, cfg, at=f"{day}T22:00:00Z", series=series,
                                      docs=docs, out_dir=out_dir)  # fmt: skip
        published = time.perf_counter()
        narrator.submit(doc)
        submit_ms = (time.perf_counter() - published) * 1000
        await narrator.idle()
        nar = next((n for n in reversed(narrator.done) if n.report_id == doc.id), None)
        row: dict[str, Any] = {
            "day": day, "as_of": doc.as_of, "load_1m": round(load, 2),
            "report_s": round(published - t0, 3), "submit_ms": round(submit_ms, 3),
            "report_unsupported": len(doc.unsupported_numbers),
        }  # fmt: skip
        if nar is None:
            row.update(narrative=False, errors=["no narrative"])
            out.append(row)
            continue
        kept, bad = _kept_check(doc, nar)
        row.update(
            narrative=bool(nar.en or nar.zh),
            narrative_after_report_s=round(done_at.get(doc.id, published) - published, 2),
            within_bar=done_at.get(doc.id, published) - published <= BAR_S,
            timings=nar.timings,
            sentences_kept=kept,
            sentences_dropped=len(nar.removed),
            dropped=[r.model_dump() for r in nar.removed],
            unsupported=len(bad),
            unsupported_numbers=bad,
            en=nar.en,
            zh=nar.zh,
            errors=nar.errors,
        )
        out.append(row)
    return out


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    lags = [r["narrative_after_report_s"] for r in rows if "narrative_after_report_s" in r]
    reports = [r["report_s"] for r in rows]

    def per(key: str) -> list[float]:
        return [float(r["timings"][key]) for r in rows if key in r.get("timings", {})]

    def median_of(key: str) -> float | None:
        values = per(key)
        return round(statistics.median(values), 2) if values else None

    gen_tokens = sum(per("en_tokens")) + sum(per("zh_tokens"))
    gen_s = sum(per("en_gen_s")) + sum(per("zh_gen_s"))
    med = statistics.median
    return {
        "days": len(rows),
        "narratives": sum(1 for r in rows if r.get("narrative")),
        "both_languages": sum(1 for r in rows if r.get("en") and r.get("zh")),
        "narrative_after_report_s": {
            "median": round(med(lags), 1) if lags else None,
            "max": round(max(lags), 1) if lags else None,
        },
        "within_120s": sum(1 for r in rows if r.get("within_bar")),
        "unsupported": sum(r.get("unsupported", 0) for r in rows),
        "sentences_dropped": sum(r.get("sentences_dropped", 0) for r in rows),
        "sentences_kept": sum(sum(r.get("sentences_kept", {}).values()) for r in rows),
        "report_s": {"median": round(med(reports), 3), "max": round(max(reports), 3)},
        "submit_ms_max": round(max(r["submit_ms"] for r in rows), 3),
        "prompt_s_median": {lang: median_of(f"{lang}_prompt_s") for lang in ("en", "zh")},
        "gen_s_median": {lang: median_of(f"{lang}_gen_s") for lang in ("en", "zh")},
        "gen_tokens_per_s": round(gen_tokens / gen_s, 2) if gen_s else None,
        "load_1m": {"min": min(r["load_1m"] for r in rows), "max": max(r["load_1m"] for r in rows)},
        "errors": sum(len(r.get("errors", [])) for r in rows),
    }


def run_narrative_replay(
    settings: Settings,
    *,
    days: int = 20,
    base_url: str | None = None,
    nice: int = 5,
    stack: bool = False,
    budget_s: float | None = None,
    max_tokens: int | None = None,
    max_facts: int = 4,
) -> dict[str, Any]:
    cfg = settings.report
    budget = budget_s if budget_s is not None else cfg.narrative_budget_s
    tokens = max_tokens if max_tokens is not None else cfg.narrative_max_tokens
    series = series_from_rows(sample_rows(), indicator_catalog())
    chosen = market_days(series, days)
    load0 = os.getloadavg()
    memory = RssSampler(os.getpid(), every=0.5)  # the whole tree: stack, model, API
    memory.start()
    t0 = time.perf_counter()
    served_by = "configured"
    with tempfile.TemporaryDirectory(prefix="livekg-narrative-") as tmp:
        out_dir = Path(tmp) / "reports"

        def go(url: str) -> list[dict[str, Any]]:
            return asyncio.run(replay_days(settings, url, chosen, out_dir, budget_s=budget,
                                           max_tokens=tokens, max_facts=max_facts))  # fmt: skip

        try:
            if stack:
                served_by = "stack"
                rows = _with_stack(settings, Path(tmp), go)
            elif base_url or settings.llm.base_url:
                rows = go(base_url or settings.llm.base_url)
            else:
                served_by = "embedded"
                log = Path(tmp) / "llm.log"
                with local_server(settings, nice=nice, log=log) as (url, _pid):
                    rows = go(url)
        finally:
            mem = _memory_of(memory)
    return {
        "bench": "narrative",
        "model": settings.llm.model,
        "model_file": str(local_model_path(settings.llm.local_model))
        if served_by != "configured"
        else None,
        "served_by": served_by,
        "prompt_version": PROMPT_VERSION,
        "budget_s": budget,
        "max_tokens": tokens,
        "max_facts": max_facts,
        "bar_s": BAR_S,
        "summary": summarise(rows),
        "memory": mem,
        "wall_s": round(time.perf_counter() - t0, 1),
        "load_avg_at_start": [round(x, 2) for x in load0],
        "load_avg_at_end": [round(x, 2) for x in os.getloadavg()],
        "cpu_count": os.cpu_count(),
        "per_day": rows,
    }


def _with_stack(
    settings: Settings, data_dir: Path, go: Any, min_s: float = 420.0
) -> list[dict[str, Any]]:
    """The whole embedded stack (as ``livekg up``: broker, graph, model server, worker,
    API; the sample day replayed into it), the narrative replay on its model server,
    and the stack kept up at least ``min_s`` from its start (the worker reads the sample,
    writes its own report and narrative meanwhile) so the memory sampled is its peak."""
    from connectors.replay import replay_samples  # the stack's own path, only here
    from kg.graph.canonical import sec_filer_ids
    from ops.runtime import EmbeddedRuntime

    stack_settings = settings.with_overrides(data_dir=data_dir / "stack")
    runtime = EmbeddedRuntime(stack_settings)
    started = time.monotonic()
    try:
        ep = runtime.start_all(workers=1, llm=True, api=True, prometheus=False)
        replay_samples(ep.kafka_bootstrap, sec_filer_ids(),
                       prefix=stack_settings.kafka.topic_prefix)  # fmt: skip
        rows: list[dict[str, Any]] = go(ep.llm_base_url or "")
        time.sleep(max(0.0, started + min_s - time.monotonic()))
        return rows
    finally:
        runtime.stop_all()
