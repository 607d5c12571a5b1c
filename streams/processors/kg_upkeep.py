"""Dynamic partition upkeep: roll instant observations into daily history on a timer.

Instant ticks (seconds cycle) are kept for ``kg.instant_window_s``; older ones are
folded into one ``DailyObservation`` per indicator and day and removed (FinQA:
instant data on a seconds cycle, historical data daily). The work is
``kg.graph.temporal.roll_up_instant``; this is only the timer around it, run by the leader
worker, and it never lets an error escape.
"""

from __future__ import annotations

import logging
import time

import faust

from core import metrics
from kg.graph.temporal import roll_up_instant
from streams.context import WorkerContext

log = logging.getLogger(__name__)

AGENT = "kg_upkeep"


async def run_upkeep(ctx: WorkerContext, *, now_ms: int | None = None) -> dict[str, int]:
    """One upkeep pass; returns what was rolled up (empty on failure)."""
    kg = ctx.settings.kg
    try:
        store = await ctx.graph()
        done = await roll_up_instant(
            store,
            now_ms=now_ms if now_ms is not None else int(time.time() * 1000),
            window_ms=int(kg.instant_window_s * 1000),
            limit=kg.upkeep_limit,
        )
    except Exception as exc:  # a timer that raises stops firing: log, count, go on
        metrics.ERRORS.labels(AGENT, type(exc).__name__).inc()
        log.warning("kg upkeep failed: %r", exc)
        return {}
    metrics.GRAPH_WRITES.labels("daily").inc(done["days"])
    if done["observations"]:
        log.info("kg upkeep: %(observations)d instant observations -> %(days)d days", done)
    return done


def register(app: faust.App, ctx: WorkerContext) -> None:
    @app.timer(interval=ctx.settings.kg.upkeep_interval_s, on_leader=True, name=AGENT)
    async def kg_upkeep() -> None:
        await run_upkeep(ctx)
