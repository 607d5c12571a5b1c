"""``livekg replay``, ``livekg connect run|list|reset`` and ``livekg bench replay``."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer
from prometheus_client import start_http_server
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from cli.groups import app, bench_app, connect_app
from cli.output import AlwaysJson, DataDir, emit_json, settings_for
from connectors.checkpoint import CheckpointStore
from connectors.registry import SOURCES, build
from connectors.replay import replay_file
from connectors.runner import PollReport, Runner, checkpoint_dir, kafka_bootstrap
from core.settings import Settings
from evaluation.bench.replay import run_bench


def _bootstrap(s: Settings) -> str:
    return kafka_bootstrap(s)


def _count_rows(path: Path) -> int:
    with open(path, "rb") as fh:
        n = sum(1 for line in fh if line.strip())
    return n - 1 if path.suffix.lower() == ".csv" else n


@app.command()
def replay(
    file: Path,
    topic: Annotated[str, typer.Option(help="target topic, e.g. raw.news")],
    rate: Annotated[float | None, typer.Option(help="records per second (default: max)")] = None,
    data_dir: DataDir = None,
    progress: Annotated[bool, typer.Option(help="progress bar on stderr")] = True,
) -> None:
    """Replay a JSONL or CSV file of records into TOPIC (validated first; invalid rows reported)."""
    s = settings_for(data_dir)
    bootstrap = _bootstrap(s)
    if progress and sys.stderr.isatty():
        columns = (BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task(f"replay -> {topic}", total=_count_rows(file))
            report = replay_file(
                file, topic, bootstrap, prefix=s.kafka.topic_prefix, rate=rate,
                progress=lambda n: bar.update(task, completed=n),
            )  # fmt: skip
    else:
        report = replay_file(file, topic, bootstrap, prefix=s.kafka.topic_prefix, rate=rate)
    emit_json({"topic": topic, "produced": report.produced, "invalid": report.invalid,
               "errors": report.errors[:20], "seconds": round(report.seconds, 3)})  # fmt: skip


@connect_app.command("list")
def list_sources(data_dir: DataDir = None) -> None:
    """Known sources, whether they need internet, and their checkpoints."""
    s = settings_for(data_dir)
    store = CheckpointStore(checkpoint_dir(s))
    rows = []
    for info in SOURCES.values():
        try:
            streams = list(info.build(s).streams())
        except Exception as exc:  # a misconfigured source still lists
            streams = [f"<error: {exc}>"]
        rows.append(
            {
                "source": info.name,
                "needs_internet": info.needs_internet,
                "description": info.description,
                "streams": streams,
                "checkpoints": store.summary(info.name),
            }
        )
    for r in rows:
        net = "internet" if r["needs_internet"] else "offline"
        typer.echo(f"{r['source']:<12} {net:<9} {len(r['streams']):>3} streams  {r['description']}")
    emit_json({"sources": rows})


@connect_app.command("run")
def run_source(
    source: Annotated[
        str, typer.Argument(help="akshare | yfinance | edgar | feeds | social-feed | file")
    ],
    once: Annotated[bool, typer.Option("--once", help="one poll, then exit")] = False,
    data_dir: DataDir = None,
    metrics_port: Annotated[int, typer.Option(help="serve /metrics on this port (0: off)")] = 0,
    metrics_host: Annotated[str, typer.Option(help="address for /metrics")] = "127.0.0.1",
) -> None:
    """Poll SOURCE on its schedule (or once), producing to the raw topics with checkpoints."""
    s = settings_for(data_dir)
    connector = build(source, s)
    runner = Runner(connector, bootstrap=_bootstrap(s), settings=s)
    if metrics_port:
        start_http_server(metrics_port, addr=metrics_host)

    def show(r: PollReport) -> None:
        d = r.as_dict()
        typer.echo(
            f"{source}: {d['produced']} produced, {d['rows']} rows, {d['duplicates']} duplicates, "
            f"{d['rejected']} rejected, {len(r.failed)} failed streams ({d['seconds']}s)",
            err=True,
        )

    async def main() -> PollReport:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        return await runner.run(once=once, stop=stop, on_report=show)

    try:
        report = asyncio.run(main())
    finally:
        runner.close()
    emit_json(report.as_dict())
    if report.failed:
        raise typer.Exit(1)


@connect_app.command("reset")
def reset(
    source: str,
    data_dir: DataDir = None,
) -> None:
    """Forget SOURCE's checkpoint (the next run starts from its initial lookback)."""
    removed = CheckpointStore(checkpoint_dir(settings_for(data_dir))).reset(source)
    emit_json({"source": source, "reset": removed})


@bench_app.command("replay")
def bench_replay(
    records: Annotated[int, typer.Option(help="records to replay")] = 100_000,
    json_out: AlwaysJson = True,
    data_dir: DataDir = None,
) -> None:
    """Replay throughput into raw.ticks, counted once acknowledged by the broker.

    Uses the running (or configured) broker, else starts embedded services for the run.
    """
    emit_json(run_bench(settings_for(data_dir), records))
