"""The bond-market report on a timer (every ``report.interval_s``) and a crontab
(``report.crontab``, e.g. the Shanghai close), on the leader worker only.

A thin shell: ``kg.report.build_bond_report`` does the work; this holds the retrieval
service between runs (its index follows the graph incrementally and its clusters are
rebuilt every ``report.retrieve.rebuild_interval_s``), stores the report (files and a
``:Report`` node) and publishes one ``BondReport`` per question to ``reports.bond``.
The model is used only when one is served (``endpoints.llm_base_url``): the worker does
not load the in-process model. Errors are logged and counted, never raised.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import faust

from core import metrics
from kg.report.build import build_bond_report, reports_dir, store_in_graph
from kg.report.model import BondReportDoc
from kg.report.publish import records_for
from streams.context import WorkerContext

log = logging.getLogger(__name__)

AGENT = "bond_report"


@dataclass
class ReportState:
    service: Any = None  # kg.retrieve.RetrievalService, built on first use
    rebuilt_at: float = field(default_factory=time.monotonic)


async def run_report(
    ctx: WorkerContext, state: ReportState, *, at: Any = None
) -> BondReportDoc | None:
    cfg = ctx.settings.report
    try:
        store = await ctx.graph()
        retriever = None
        try:
            if state.service is None:
                from kg.embed import make_embedder
                from kg.retrieve import RetrievalService

                r = cfg.retrieve
                state.service = RetrievalService(
                    store, make_embedder(ctx.settings.embed), refresh_s=r.refresh_s,
                    top_n=r.top_n, cluster_threshold=r.cluster_threshold,
                    temperature=r.temperature, chunk_size=r.chunk_size,
                )  # fmt: skip
            if time.monotonic() - state.rebuilt_at > cfg.retrieve.rebuild_interval_s:
                await state.service.rebuild()
                state.rebuilt_at = time.monotonic()
            from kg.retrieve import MethodRetriever

            retriever = MethodRetriever(state.service, cfg.method)
        except Exception as exc:
            log.warning("bond report: retrieval unavailable: %r", exc)
        llm = None
        if cfg.use_llm and ctx.endpoints.llm_base_url:
            from kg.report.build import report_llm

            llm = report_llm(ctx.settings, ctx.endpoints.llm_base_url)
        try:
            models = {"llm": llm.model if llm else "none", "embed": ctx.settings.embed.model}
            doc = await build_bond_report(
                store, cfg, at=at, retriever=retriever, llm=llm, models=models,
                llm_leads=cfg.llm_leads if cfg.llm_leads is not None else llm is not None,
                out_dir=reports_dir(ctx.settings.data_dir, cfg),
            )  # fmt: skip
        finally:
            if llm is not None:
                await llm.aclose()
        await store_in_graph(store, doc)
        await ctx.send("reports.bond", records_for(doc))
    except Exception as exc:  # a timer that raises stops firing: log, count, go on
        metrics.ERRORS.labels(AGENT, type(exc).__name__).inc()
        log.warning("bond report failed: %r", exc)
        return None
    log.info("bond report %s: %d questions, %.1fs", doc.id, len(doc.sections),
             doc.timings.get("total_s", 0.0))  # fmt: skip
    return doc


def register(app: faust.App, ctx: WorkerContext) -> None:
    cfg = ctx.settings.report
    if not cfg.enabled:
        return
    state = ReportState()

    @app.timer(interval=cfg.interval_s, on_leader=True, name=AGENT)
    async def bond_report() -> None:
        await run_report(ctx, state)

    if cfg.crontab:

        @app.crontab(cfg.crontab, on_leader=True)
        async def bond_report_close() -> None:
            await run_report(ctx, state)
