"""``livekg kg stats|query|load-static`` and ``livekg bench kg``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import orjson
import typer

from cli.groups import bench_app, kg_app
from cli.output import AlwaysJson, emit_json, run_or_fail
from core.errors import LivekgError, ServiceUnavailable
from core.runtime_state import read_state, running_service
from core.settings import GraphBackend, Settings
from evaluation.bench.kg import graph_service, run_kg_bench
from kg.graph import sink
from kg.graph.ontology import default_ontology
from kg.graph.static import bundled_universe_path, load_file
from kg.graph.store import open_store


def graph_store(settings: Settings) -> Any:
    """The configured graph, or the embedded one ``livekg up`` started."""
    if not settings.embedded_graph:
        return open_store(settings)
    state = read_state(settings.state_file)
    if state is None or running_service(state, "graph") is None or not state.falkordb_url:
        raise ServiceUnavailable(
            "no graph database: run `livekg up` or set LIVEKG_GRAPH__FALKORDB_URL"
        )
    return open_store(settings, state.falkordb_url)


async def _stats(settings: Settings) -> dict[str, Any]:
    ontology = default_ontology()
    async with graph_store(settings) as store:
        labels = await store.label_counts()
        rels = await store.relationship_counts()
        parts = await store.partition_counts()
    by_partition: dict[str, dict[str, int]] = {"static": {}, "dynamic": {}, "other": {}}
    for label, n in sorted(labels.items()):
        part = ontology.partition_of(label)
        by_partition[part.value if part else "other"][label] = n
    return {
        "graph": settings.graph.graph_name,
        "nodes": sum(parts["nodes"].values()),
        "labels": labels,  # a node counts under each of its labels (Entity, ancestors)
        "labels_by_partition": by_partition,
        "relationships": rels,
        "partitions": parts,
        "ontology_version": ontology.version,
    }


@kg_app.command("stats")
def kg_stats(json_: AlwaysJson = True) -> None:
    """Node and relationship counts per label and partition."""
    emit_json(run_or_fail(_stats(Settings())))


@kg_app.command("query")
def kg_query(
    cypher: str,
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="name=value (JSON values)")
    ] = None,
    json_: AlwaysJson = True,
) -> None:
    """Run a read-only Cypher query (writes are refused before reaching the graph)."""
    params: dict[str, Any] = {}
    for p in param or []:
        name, _, raw = p.partition("=")
        try:
            params[name] = orjson.loads(raw)
        except orjson.JSONDecodeError:
            params[name] = raw

    async def go() -> dict[str, Any]:
        async with graph_store(Settings()) as store:
            rows = await store.query(cypher, params)
        return {"rows": rows, "count": len(rows)}

    emit_json(run_or_fail(go()))


@kg_app.command("load-static")
def kg_load_static(
    file: Annotated[
        Path | None, typer.Argument(help="JSON or CSV file (default: bundled universe)")
    ] = None,
    json_: AlwaysJson = True,
) -> None:
    """Upsert static-partition entities and relations (format: docs/knowledge-graph.md)."""
    path = file or bundled_universe_path()

    async def go() -> dict[str, Any]:
        async with graph_store(Settings()) as store:
            await sink.ensure_schema(store)
            report = await load_file(store, path)
        return report.model_dump()

    try:
        result = run_or_fail(go())
    except ValueError as exc:
        emit_json({"ok": False, "error": "ValueError", "message": str(exc)})
        raise typer.Exit(1) from exc
    emit_json({"ok": not result["errors"], **result})


@bench_app.command("kg")
def bench_kg(
    triples: Annotated[int, typer.Option(help="triples through the sink path")] = 100_000,
    queries: Annotated[int, typer.Option(help="2-hop queries timed")] = 500,
    replay: Annotated[bool, typer.Option(help="replay the same triples (idempotence)")] = True,
    database: Annotated[
        str | None,
        typer.Option(
            help="Neo4j: an EMPTY scratch database to use (default: create and drop one; "
            "Neo4j Community cannot, so give one there)"
        ),
    ] = None,
    graph: Annotated[
        GraphBackend | None,
        typer.Option(
            "--graph",
            help="falkordb or neo4j (default: settings graph.backend); neo4j with no URI "
            "starts a throwaway local Neo4j for the run",
        ),
    ] = None,
    json_: AlwaysJson = True,
) -> None:
    """Triples/s through the graph sink and 2-hop query latency, in a graph of its own
    (never the configured one), beside the same run's raw UNWIND MERGE rate."""
    settings = Settings()
    if graph is not None:
        settings = settings.with_overrides(graph={"backend": graph.value})
    try:
        with graph_service(settings) as ep:
            private = settings.embedded_graph and bool(ep.neo4j_uri)
            if private:  # the throwaway server: no auth, its one database is the scratch
                settings = settings.with_overrides(
                    graph={"neo4j_uri": ep.neo4j_uri, "neo4j_password": ""}
                )
            result = run_kg_bench(
                settings, ep, triples=triples, queries=queries, replay=replay,
                database=database, private_server=private,
            )  # fmt: skip
    except LivekgError as exc:
        emit_json({"bench": "kg", "ok": False, "error": type(exc).__name__, "message": str(exc)})
        raise typer.Exit(1) from None
    emit_json(result)
