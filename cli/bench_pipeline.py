"""``livekg bench pipeline`` and ``livekg bench sentiment-stream``: through the broker."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.groups import bench_app
from cli.output import AlwaysJson, emit_json
from core.settings import GraphBackend, Settings
from evaluation.bench.pipeline import run_pipeline_bench
from evaluation.bench.sentiment_stream import run_sentiment_stream_bench
from ops.runtime import services


@bench_app.command("pipeline")
def bench_pipeline(
    events: Annotated[int, typer.Option(help="events in the burst phase")] = 20_000,
    rate: Annotated[float, typer.Option(help="events/s in the steady (latency) phase")] = 1000.0,
    steady_events: Annotated[
        int | None, typer.Option(help="default: min(events, 10 x rate)")
    ] = None,
    mix: Annotated[str, typer.Option(help="docs | ticks | mixed")] = "mixed",
    workers: Annotated[int, typer.Option(help="worker processes in one group")] = 1,
    partitions: Annotated[
        int | None, typer.Option(help="partitions per topic (default: the setting)")
    ] = None,
    graph: Annotated[
        GraphBackend | None,
        typer.Option("--graph", help="neo4j: on a private local Neo4j and broker"),
    ] = None,
    json_: AlwaysJson = True,
) -> None:
    """Broker -> normalize -> graph sink throughput and produce-to-graph latency."""
    if mix not in {"docs", "ticks", "mixed"}:
        raise typer.BadParameter("mix must be docs, ticks or mixed")
    steady = steady_events if steady_events is not None else int(min(events, 10 * rate))
    base = Settings()
    if graph is not None:
        base = base.with_overrides(graph={"backend": graph.value})
    # Neo4j has one database: the bench empties it, so it never uses a running stack's
    with services(base, fresh=graph == GraphBackend.NEO4J) as (settings, ep):
        result = run_pipeline_bench(
            settings, ep, events=events, rate=rate, steady_events=steady, mix=mix,
            workers=workers, partitions=partitions,
        )  # fmt: skip
    emit_json(result)


@bench_app.command("sentiment-stream")
def bench_sentiment_stream(
    rate: Annotated[float, typer.Option(help="documents/s produced to docs.clean")] = 100.0,
    seconds: Annotated[float, typer.Option(help="length of the run")] = 20.0,
    json_: AlwaysJson = True,
) -> None:
    """Clean document -> sentiment score latency through the broker and a real worker."""
    with services(Settings()) as (settings, ep):
        result = run_sentiment_stream_bench(settings, ep, rate=rate, seconds=seconds)
    emit_json(result)
