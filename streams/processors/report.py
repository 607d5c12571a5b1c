"""The bond-market report on start (as soon as the graph holds a curve history), then on
a timer (every ``report.interval_s``) and a crontab (``report.crontab``, e.g. the
Shanghai close), on the leader worker only.

A thin shell: ``kg.report.build_bond_report`` does the work; this holds the retrieval
service between runs (its index follows the graph incrementally and its clusters are
rebuilt every ``report.retrieve.rebuild_interval_s``), stores the report (files and a
``:Report`` node) and publishes one ``BondReport`` per question to ``reports.bond``.
Model prose only from a served model (``llm.base_url``): the worker does not load the
in-process model, and the report says so in one line. Errors are logged and counted,
never raised.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import faust

from core import metrics
from kg.models.embed import make_embedder
from kg.models.llm import make_llm_client
from kg.report.build import build_bond_report, report_llm, reports_dir, store_in_graph
from kg.report.facts import curve_history_count
from kg.report.model import BondReportDoc
from kg.report.narrative import Narrative, Narrator, apply_narrative, write_narrative
from kg.report.publish import records_for
from kg.retrieve import MethodRetriever, RetrievalService
from streams.context import WorkerContext

log = logging.getLogger(__name__)

AGENT = "bond_report"


@dataclass
class ReportState:
    service: Any = None  # kg.retrieve.RetrievalService, built on first use
    rebuilt_at: float = field(default_factory=time.monotonic)
    narrator: Any = None  # kg.report.narrative.Narrator: prose after publishing


def narrative_wanted(ctx: WorkerContext) -> bool:
    """Background prose (kg/report/narrative.py) with a served model or the embedded
    instruction model (not the old 135M one)."""
    cfg, llm = ctx.settings.report, ctx.settings.llm
    if not (cfg.use_llm and cfg.narrative):
        return False
    if llm.base_url and not llm.embedded_server:
        return True
    return bool(ctx.endpoints.llm_base_url or llm.base_url) and "smollm" not in llm.model.lower()


async def narrate(ctx: WorkerContext, doc: BondReportDoc) -> Narrative | None:
    """The published report's commentary, en and zh, number-checked, into its files."""
    cfg = ctx.settings.report
    url = ctx.settings.llm.base_url or ctx.endpoints.llm_base_url
    tight = ctx.settings.with_overrides(llm={"timeout_s": cfg.narrative_budget_s, "max_retries": 0})
    llm = make_llm_client(tight, url, priority="interactive")
    try:
        # stage 1 by the model only when it is served: on the embedded CPU model the
        # selection call took 125 of 328 s (sample day, load 15-18); the ranked facts then
        served = bool(ctx.settings.llm.base_url and not ctx.settings.llm.embedded_server)
        nar = await write_narrative(doc, llm, budget_s=cfg.narrative_budget_s,
                                    max_tokens=cfg.narrative_max_tokens,
                                    select=served)  # fmt: skip
    finally:
        await llm.aclose()
    await asyncio.to_thread(apply_narrative, doc, nar)
    lag = time.time() - datetime.fromisoformat(doc.created_at).timestamp()
    log.info("bond report %s: narrative %.1fs after the report (en %d, zh %d chars, %d "
             "sentences dropped, errors %s)", doc.id, lag, len(nar.en), len(nar.zh),
             len(nar.removed), nar.errors)  # fmt: skip
    return nar


async def run_report(
    ctx: WorkerContext, state: ReportState, *, at: Any = None
) -> BondReportDoc | None:
    cfg = ctx.settings.report
    try:
        store = await ctx.graph()
        retriever = None
        served = bool(ctx.settings.llm.base_url)
        try:
            if not (cfg.use_llm and served):
                pass  # retrieval feeds the model's prose only
            elif state.service is None:
                r = cfg.retrieve
                state.service = RetrievalService(
                    store, make_embedder(ctx.settings.embed), refresh_s=r.refresh_s,
                    top_n=r.top_n, cluster_threshold=r.cluster_threshold,
                    temperature=r.temperature, chunk_size=r.chunk_size,
                )  # fmt: skip
            if state.service is not None:
                if time.monotonic() - state.rebuilt_at > cfg.retrieve.rebuild_interval_s:
                    await state.service.rebuild()
                    state.rebuilt_at = time.monotonic()

                retriever = MethodRetriever(state.service, cfg.method)
        except Exception as exc:
            log.warning("bond report: retrieval unavailable: %r", exc)
        llm = None
        background = narrative_wanted(ctx)  # prose after publishing, never before
        if cfg.use_llm and served and not background:
            llm = report_llm(ctx.settings, ctx.settings.llm.base_url)
        try:
            models = {"llm": llm.model if llm else "none", "embed": ctx.settings.embed.model}
            doc = await build_bond_report(
                store, cfg, at=at, retriever=retriever, llm=llm, models=models,
                served=served, out_dir=reports_dir(ctx.settings.data_dir, cfg),
            )  # fmt: skip
        finally:
            if llm is not None:
                await llm.aclose()
        await store_in_graph(store, doc)
        await ctx.send("reports.bond", records_for(doc))
        if background and doc.as_of:
            if state.narrator is None:
                state.narrator = Narrator(lambda d: narrate(ctx, d))
            state.narrator.submit(doc)  # returns at once: the report is not delayed
    except Exception as exc:  # a timer that raises stops firing: log, count, go on
        metrics.ERRORS.labels(AGENT, type(exc).__name__).inc()
        log.warning("bond report failed: %r", exc)
        return None
    log.info("bond report %s for %s: %.1fs", doc.id, doc.as_of or "no data",
             doc.timings.get("total_s", 0.0))  # fmt: skip
    return doc


async def curve_count(ctx: WorkerContext) -> int:
    return await curve_history_count(await ctx.graph())


async def first_report(ctx: WorkerContext, state: ReportState, *, poll_s: float = 5.0,
                       tries: int = 120) -> BondReportDoc | None:  # fmt: skip
    """The first report as soon as the graph holds curve data (not 30 minutes later),
    and once more when a replay or backfill still writing history has settled."""
    last: int | None = None
    reported: int | None = None
    doc = None
    for _ in range(tries):
        try:
            n = await curve_count(ctx)
        except Exception as exc:  # the graph may not be up yet
            log.debug("first bond report: graph not ready: %r", exc)
            n = 0
        settled = n == last
        if n >= 2 and n != reported and (reported is None or settled):
            got = await run_report(ctx, state)
            if got is not None and got.as_of:
                doc, reported = got, n
        if reported is not None and settled and n == reported:
            return doc
        last = n
        await asyncio.sleep(poll_s)
    return doc


def register(app: faust.App, ctx: WorkerContext) -> None:
    cfg = ctx.settings.report
    if not cfg.enabled:
        return
    state = ReportState()

    @app.task(on_leader=True)
    async def bond_report_on_start() -> None:
        await first_report(ctx, state)

    @app.timer(interval=cfg.interval_s, on_leader=True, name=AGENT)
    async def bond_report() -> None:
        await run_report(ctx, state)

    if cfg.crontab:

        @app.crontab(cfg.crontab, on_leader=True)
        async def bond_report_close() -> None:
            await run_report(ctx, state)
