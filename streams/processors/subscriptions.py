"""graph.changes -> alerts.events: standing questions re-evaluated as the graph changes.

A faust agent (its state, one entry per subscription, is a faust table; graph.changes
has one partition, so one worker holds every subscription) over ``kg.subscribe``:
reload the subscriptions when the stored set changed, wake those a change may affect,
run their queries (guard, row cap, timeout), apply their conditions, publish alerts.

Exactly once per change: an alert's id is derived from the subscription id and the
change id, and the states are written only after the alerts were acknowledged (the
``StagedWrites`` discipline of the other alert agents). A crash before the states are
written re-evaluates the same change and republishes the same alert id; after, the
replayed change finds the answer it already saw and fires nothing.

Webhooks are posted after the alerts are published, each with retries (tenacity);
one that still fails goes to ``dlq`` (``webhook_failed``) with the alert as its bytes.
"""

from __future__ import annotations

import asyncio
import logging

import faust
import httpx
from tenacity import AsyncRetrying, stop_after_attempt, wait_exponential

from core import metrics
from core.batch import Decoded
from core.codec import DecodeFailure, dead_letter
from core.records import Alert, GraphChange
from core.topics import ALERTS_EVENTS, GRAPH_CHANGES
from kg.subscribe import storage
from kg.subscribe.evaluator import Evaluator
from streams.context import WorkerContext
from streams.processors.base import Outcome, send_dead, typed_agent
from streams.tables import StagedWrites, TableState

AGENT = "subscriptions"
TABLE = "subscription_state"
WEBHOOK_ATTEMPTS = 4
WEBHOOK_TIMEOUT_S = 5.0

log = logging.getLogger(__name__)


async def post_webhook(client: httpx.AsyncClient, url: str, alert: Alert) -> None:
    """POST the alert as JSON; retried with backoff, raises after the last attempt."""
    body = alert.model_dump(mode="json")
    async for attempt in AsyncRetrying(
        stop=stop_after_attempt(WEBHOOK_ATTEMPTS),
        wait=wait_exponential(multiplier=0.2, max=2.0),
        reraise=True,
    ):
        with attempt:
            resp = await client.post(url, json=body, timeout=WEBHOOK_TIMEOUT_S)
            resp.raise_for_status()


def register(app: faust.App, ctx: WorkerContext) -> None:
    q = ctx.settings.query
    evaluator = Evaluator(timeout_s=q.timeout_s, row_limit=q.row_limit)
    # its changelog topic is created by the worker before it joins (streams/tables.py)
    partitions = GRAPH_CHANGES.partitions or ctx.settings.kafka.topic_partitions
    table = TableState(app.Table(TABLE, default=None, partitions=partitions))
    webhooks: set[asyncio.Task[None]] = set()
    client: list[httpx.AsyncClient] = []

    async def deliver(alerts: list[Alert]) -> None:
        if not client:
            client.append(httpx.AsyncClient())
            ctx.closers.append(client[0].aclose)
        for alert in alerts:
            sub = evaluator.subs.get(alert.subscription_id or "")
            if sub is None or not sub.webhook:
                continue
            try:
                await post_webhook(client[0], sub.webhook, alert)
                metrics.EVENTS_OUT.labels(AGENT, "webhook").inc()
            except Exception as exc:  # every failure ends in the DLQ, never in a crash
                failure = DecodeFailure("webhook_failed", f"{sub.webhook}: {exc!r}"[:1000])
                value = alert.__pydantic_serializer__.to_json(alert)
                letter = dead_letter(topic=ALERTS_EVENTS.name, raw_value=value, raw_key=None,
                                     failure=failure, source=f"webhook:{sub.id}")  # fmt: skip
                await send_dead(ctx, AGENT, [letter])

    async def handle(decoded: Decoded) -> Outcome:
        changes: list[GraphChange] = [r for r in decoded.records if isinstance(r, GraphChange)]
        if not changes:
            return Outcome()
        store = await ctx.graph()
        await evaluator.refresh(store)
        if not evaluator.subs:
            return Outcome()
        staged = StagedWrites(table)
        result = await evaluator.evaluate_batch(store, changes, staged.get)
        for sid, state in result.states.items():
            staged.set(sid, state, 0)
        for _ in result.failed:
            metrics.ERRORS.labels(AGENT, "evaluation").inc()

        async def acknowledged() -> None:  # only once the alerts are acknowledged
            await staged.write_acked()  # state in the changelog before offsets commit
            await storage.mark_fired(store, result.fired)
            if result.alerts:
                task = asyncio.create_task(deliver(result.alerts))
                webhooks.add(task)
                task.add_done_callback(webhooks.discard)

        return Outcome(outputs={ALERTS_EVENTS.name: result.alerts}, after_ack=acknowledged)

    typed_agent(app, ctx, name=AGENT, sources=[GRAPH_CHANGES.name], handler=handle)
