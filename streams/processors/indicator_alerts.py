"""raw.ticks -> alerts.indicator: moves and threshold crossings per indicator.

A faust agent (its state is a faust table, co-partitioned with raw.ticks by indicator
id) over the pure rules in streams/moves.py. It consumes raw.ticks in its own consumer
group, beside the tick sink that writes the graph.
"""

from __future__ import annotations

import faust

from core.batch import Decoded
from core.records import Alert, IndicatorTick
from core.topics import ALERTS_INDICATOR, RAW_TICKS
from streams.context import WorkerContext
from streams.moves import IndicatorState, MoveRules, update
from streams.processors.base import Outcome, typed_agent
from streams.tables import StagedWrites, TableState

AGENT = "indicator_alerts"
TABLE = "indicator_alert_state"


def register(app: faust.App, ctx: WorkerContext) -> None:
    cfg = ctx.settings.indicator_alerts
    rules = MoveRules.model_validate(cfg.model_dump())
    table = TableState(
        app.Table(TABLE, default=None, partitions=ctx.settings.kafka.topic_partitions)
    )

    async def handle(decoded: Decoded) -> Outcome:
        alerts: list[Alert] = []
        # written once the alerts are acknowledged (a replayed tick is ignored by event
        # time, so a state written first could lose its alerts in a crash)
        staged = StagedWrites(table)
        for rec, origin in zip(decoded.records, decoded.origins, strict=True):
            tick: IndicatorTick = rec  # type: ignore[assignment]
            raw = staged.get(tick.indicator_id)
            state = IndicatorState.model_validate(raw) if raw else None
            new, fired = update(state, tick, rules)
            if new is not None and new is not state:
                staged.set(tick.indicator_id, new.model_dump(mode="json"), origin.partition)
            alerts += fired
        return Outcome(outputs={ALERTS_INDICATOR.name: alerts}, after_ack=staged.write_acked)

    # Invalid ticks are dead-lettered once, by the tick sink that reads the same topic;
    # here they are only counted.
    typed_agent(
        app, ctx, name=AGENT, sources=[RAW_TICKS.name], handler=handle,
        dead_letter_undecodable=False,
    )  # fmt: skip
