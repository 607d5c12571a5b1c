"""``livekg drill``: the fault drills at full size (docs/reliability.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.groups import app
from cli.output import AlwaysJson, emit_json
from core.settings import GraphBackend
from evaluation.drill import FULL_SIZES, run_drills
from evaluation.drill.result import DrillResult


@app.command("drill")
def drill(
    only: Annotated[
        list[str] | None, typer.Option("--only", help="run only this drill (repeatable)")
    ] = None,
    events: Annotated[
        int | None, typer.Option(help="override the event count of every drill that sends")
    ] = None,
    graph: Annotated[
        GraphBackend, typer.Option("--graph", help="the drill stack's graph: falkordb or neo4j")
    ] = GraphBackend.FALKORDB,
    json_: AlwaysJson = True,
) -> None:
    """Crash, restart and outage drills on a private embedded stack; exits 1 if any fails.

    Prints one line per drill on stderr as it finishes, then one JSON line
    ``{"graph", "drills": [{"name", "sent", "in_graph", "outputs", "lost", "duplicated",
    "recovery_s", ...}]}``. ``--graph neo4j`` runs them on the local Neo4j 5 Community.
    """
    sizes = {k: dict(v) for k, v in FULL_SIZES.items()}
    if events is not None:
        for v in sizes.values():
            if "events_n" in v:
                v["events_n"] = events

    def show(r: DrillResult) -> None:
        mark = "ok " if r.ok else "FAIL"
        typer.echo(
            f"{mark} {r.name}: sent {r.sent}, in graph {r.in_graph}, lost {r.lost}, "
            f"duplicated {r.duplicated}, redelivered {r.redelivered}, "
            f"recovery {r.recovery_s:.1f}s {'; '.join(r.notes)}",
            err=True,
        )

    try:
        results = run_drills(only or None, sizes=sizes, on_result=show, graph=graph.value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    emit_json({"graph": graph.value, "drills": [r.model_dump(mode="json") for r in results]})
    if not all(r.ok for r in results):
        raise typer.Exit(1)
