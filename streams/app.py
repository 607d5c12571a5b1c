"""Build the faust App: topics from the catalog, processors registered on it.

Only construction lives here; each processor module registers its agents with
``register(app, ctx)``. ``streams.worker`` runs the result.
"""

from __future__ import annotations

from pathlib import Path

import faust
from aiohttp import web

from core import metrics
from core.runtime_state import Endpoints
from core.settings import Settings
from core.topics import CATALOG
from streams.context import WorkerContext
from streams.kafka_compat import install_empty_fetch_backoff
from streams.lag import LagProbe, run_probe
from streams.processors import enabled as enabled_processors


def _host_label(worker_id: str) -> str:
    return "".join(c if c.isalnum() or c == "-" else "-" for c in worker_id.lower())[:50]


def build_app(
    settings: Settings, endpoints: Endpoints, *, worker_id: str = "0"
) -> tuple[faust.App, WorkerContext]:
    install_empty_fetch_backoff(
        settings.streams.empty_fetch_backoff_ms, settings.ops.idle_max_pause_ms
    )
    brokers = [f"kafka://{hp.strip()}" for hp in endpoints.kafka_bootstrap.split(",")]
    datadir = Path(settings.data_dir).resolve() / "faust" / f"worker-{worker_id}"
    datadir.mkdir(parents=True, exist_ok=True)
    app = faust.App(
        settings.kafka.consumer_group,
        broker=brokers,
        store=settings.streams.store,
        datadir=str(datadir),
        topic_partitions=settings.kafka.topic_partitions,
        topic_replication_factor=settings.kafka.replication_factor,
        broker_session_timeout=settings.streams.broker_session_timeout_s,
        broker_rebalance_timeout=settings.streams.rebalance_timeout_s,
        # Static membership: a restarted worker takes its old place in the group at
        # once instead of waiting for the broker to expire the dead member.
        consumer_group_instance_id=f"{settings.kafka.consumer_group}-worker-{worker_id}",
        processing_guarantee="at_least_once",
        consumer_auto_offset_reset="earliest",
        broker_commit_every=10_000,
        broker_commit_interval=1.0,
        web_host="127.0.0.1",
        web_port=settings.streams.web_port,
        # faust puts this URL in its group metadata and asserts it on every assignment.
        # Kafka hands a restarted static member its previous assignment without a
        # rebalance, so it must not change with the (freshly picked) web port.
        canonical_url=f"http://livekg-worker-{_host_label(worker_id)}",
        web_in_thread=False,
        producer_linger_ms=5,
        producer_max_batch_size=1_000_000,
        stream_buffer_maxsize=20_000,
        logging_config=None,
    )
    ctx = WorkerContext(settings=settings, endpoints=endpoints, worker_id=worker_id)
    for name, spec in CATALOG.items():
        ctx.topics[name] = app.topic(
            ctx.physical(name),
            key_serializer="raw",
            value_serializer="raw",
            partitions=spec.partitions or settings.kafka.topic_partitions,
        )
    for register in enabled_processors(settings.streams.processors):
        register(app, ctx)

    @app.page("/metrics")
    async def _metrics(self: object, request: web.Request) -> web.Response:
        body, ctype = metrics.render()
        return web.Response(body=body, headers={"Content-Type": ctype})

    @app.page("/healthz")
    async def _health(self: object, request: web.Request) -> web.Response:
        return web.json_response({"ok": True, "worker": worker_id})

    _lag_probe(app, ctx)
    metrics.UP.labels("worker").set(1)
    return app, ctx


def lag_groups(app: faust.App, ctx: WorkerContext) -> dict[str, list[str]]:
    """Consumer group -> physical topics it consumes: faust's group, one per lane."""
    group = ctx.settings.kafka.consumer_group
    groups: dict[str, list[str]] = {group: []}
    for agent in app.agents.values():
        groups[group] += list(getattr(agent.channel, "topics", ()))
    for name, lane in ctx.lanes.items():
        groups[f"{group}.{name}"] = [ctx.physical(t) for r in lane.routes for t in r.sources]
    return groups


def _lag_probe(app: faust.App, ctx: WorkerContext) -> None:
    interval = ctx.settings.ops.lag_interval_s
    if interval <= 0:
        return

    async def consumer_lag() -> None:
        probe = LagProbe(ctx.endpoints.kafka_bootstrap, lag_groups(app, ctx))
        await run_probe(probe, interval)

    app.task(consumer_lag)
