"""``livekg up | down | status | topics create``: the embedded runtime (``worker`` and ``api``,
the processes it runs, are in ``cli.process_cmds``)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from cli.groups import app, topics_app
from cli.output import DataDir, emit_json, settings_for
from connectors.replay import replay_samples
from core.errors import LivekgError
from core.runtime_state import endpoints, pid_alive, read_state
from core.settings import GraphBackend, Settings
from kg.graph.canonical import sec_filer_ids
from ops.runtime import EmbeddedRuntime, stop_recorded
from serving.status import snapshot
from streams.admin import create_topics

console = Console(stderr=True)


@app.command()
def up(
    data_dir: DataDir = None,
    workers: Annotated[int | None, typer.Option(help="faust workers (default: settings)")] = None,
    llm: Annotated[bool, typer.Option(help="start the local LLM server")] = True,
    sample: Annotated[bool, typer.Option(help="replay the bundled sample day once")] = True,
    detach: Annotated[
        bool, typer.Option(help="run in the background; stop with `livekg down`")
    ] = False,
    prometheus: Annotated[
        bool | None,
        typer.Option(
            "--prometheus/--no-prometheus",
            help="start Prometheus with the alert rules (default: when the binary is on PATH)",
        ),
    ] = None,
    graph: Annotated[
        GraphBackend | None,
        typer.Option(
            "--graph",
            help="graph to start: falkordb or neo4j (local Neo4j 5 Community); "
            "default: settings graph.backend",
        ),
    ] = None,
) -> None:
    """Start the whole stack (embedded broker, graph, LLM, workers, API) and keep it running."""
    if graph is not None:  # as LIVEKG_GRAPH__BACKEND, so detached and child processes agree
        os.environ["LIVEKG_GRAPH__BACKEND"] = graph.value
    settings = settings_for(data_dir)
    state = read_state(settings.state_file)
    if state and pid_alive(state.supervisor_pid):
        console.print(
            f"[red]already running[/] (supervisor pid {state.supervisor_pid}); `livekg down` first"
        )
        raise typer.Exit(1)
    if detach:
        _detach(settings, workers=workers, llm=llm, sample=sample, prometheus=prometheus)
        return
    runtime = EmbeddedRuntime(settings)
    stopping = False

    def on_signal(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        with console.status("starting livekg..."):
            ep = runtime.start_all(workers=workers, llm=llm, prometheus=prometheus)
            if sample:
                _replay_sample_once(settings, ep.kafka_bootstrap)
        runtime.state.ready = True
        runtime.save()
        console.print(f"[green]livekg is up[/]  data: {runtime.data_dir}")
        console.print(f"  dashboard  {runtime.state.api_url}/")
        console.print(f"  API docs   {runtime.state.api_url}/docs")
        console.print(f"  metrics    {runtime.state.api_url}/metrics")
        console.print(
            f"  Kafka      {ep.kafka_bootstrap}   graph {ep.neo4j_uri or ep.falkordb_url}"
        )
        if ep.llm_base_url:
            console.print(f"  LLM        {ep.llm_base_url}")
        prom = runtime.state.services.get("prometheus")
        if prom is not None:
            console.print(f"  Prometheus http://127.0.0.1:{prom.port}/alerts")
        console.print("Ctrl-C (or `livekg down`) stops everything.")
        while not stopping:
            for name in runtime.restart_dead():
                console.print(f"[yellow]restarted {name}[/]")
            time.sleep(1.0)
    except LivekgError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from None
    except OSError as exc:  # full disk, read-only or missing data directory: say so, stop clean
        typer.echo(f"error: cannot write the data directory {runtime.data_dir}: {exc}", err=True)
        raise typer.Exit(1) from None
    finally:
        console.print("stopping livekg...")
        runtime.stop_all()
        console.print("stopped.")


def _replay_sample_once(settings: Settings, bootstrap: str) -> None:
    marker = Path(settings.data_dir) / ".sample-replayed"
    if marker.exists():
        return
    reports = replay_samples(bootstrap, sec_filer_ids(), prefix=settings.kafka.topic_prefix)
    marker.write_text("\n".join(f"{r.topic} {r.produced}" for r in reports))
    for r in reports:
        console.print(f"  replayed {r.produced:5d} sample records into {r.topic}")


def _detach(
    settings: Settings, *, workers: int | None, llm: bool, sample: bool, prometheus: bool | None
) -> None:
    args = [sys.executable, "-m", "cli.main", "up", "--data-dir", str(settings.data_dir)]
    if workers is not None:
        args += ["--workers", str(workers)]
    args += ["--llm" if llm else "--no-llm", "--sample" if sample else "--no-sample"]
    if prometheus is not None:
        args.append("--prometheus" if prometheus else "--no-prometheus")
    log_dir = Path(settings.data_dir) / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    with open(log_dir / "supervisor.log", "ab") as out:
        proc = subprocess.Popen(
            args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, env=os.environ.copy(),
        )  # fmt: skip
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        state = read_state(settings.state_file)
        if state and state.ready and state.supervisor_pid == proc.pid:
            console.print(f"[green]livekg is up[/] (pid {proc.pid}); dashboard {state.api_url}/")
            return
        if proc.poll() is not None:
            tail = (log_dir / "supervisor.log").read_text(errors="replace")[-3000:]
            console.print(f"[red]livekg failed to start[/]:\n{tail}")
            raise typer.Exit(1)
        time.sleep(0.3)
    console.print("[red]timed out waiting for livekg to start[/]; see logs in " + str(log_dir))
    raise typer.Exit(1)


@app.command()
def down(data_dir: DataDir = None) -> None:
    """Stop everything `livekg up` started (by the PIDs recorded in runtime.json)."""
    stopped = stop_recorded(settings_for(data_dir))
    console.print("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))


@app.command()
def status(
    data_dir: DataDir = None,
    json_: Annotated[bool, typer.Option("--json", help="one JSON line")] = False,
) -> None:
    """Services, per-topic record counts and graph node counts."""
    snap = asyncio.run(snapshot(settings_for(data_dir)))
    if json_:
        emit_json(snap)
        return
    console.print_json(data=snap)


@topics_app.command("create")
def topics_create(data_dir: DataDir = None) -> None:
    """Create the topic catalog on the configured (or running embedded) broker."""
    s = settings_for(data_dir)
    created = create_topics(
        endpoints(s).kafka_bootstrap,
        partitions=s.kafka.topic_partitions,
        replication=s.kafka.replication_factor,
        prefix=s.kafka.topic_prefix,
    )
    emit_json({"created": created})
