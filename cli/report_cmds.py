"""``livekg retrieve``, ``livekg report bond``, ``livekg eval report``, ``livekg eval retrieval``,
``livekg bench retrieve`` (docs/retrieval.md, docs/reports.md)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.groups import app, bench_app, eval_app, report_app
from cli.kg_cmds import graph_store
from cli.output import AlwaysJson, DataDir, emit_json, fail, settings_for
from core.errors import LivekgError
from core.runtime_state import endpoints
from core.settings import GraphBackend, Settings
from evaluation.bench.narrative import run_narrative_replay
from evaluation.bench.report import run_report_bench
from evaluation.bench.retrieve import run_retrieve_bench, run_retrieve_graph_bench
from evaluation.scorers.rag import run_rag_eval
from evaluation.scorers.report import run_report_eval
from evaluation.scorers.retrieval import run_eval
from kg.models.embed import make_embedder
from kg.report.build import _parse_at, build_bond_report, report_llm, reports_dir, store_in_graph
from kg.report.publish import records_for
from kg.retrieve import Method, MethodRetriever, RetrievalService
from ops.runtime import services
from streams.publisher import Publisher

METHODS = "bm25|dense|triples|tfr|graph|hybrid"


def _at_ms(at: str | None) -> int | None:
    if not at:
        return None

    return int(_parse_at(at).timestamp() * 1000)


@app.command("retrieve")
def retrieve(
    query: str,
    method: Annotated[str, typer.Option(help=METHODS)] = "hybrid",
    k: Annotated[int, typer.Option(min=1, max=200)] = 10,
    at: Annotated[str | None, typer.Option(help="only facts valid at this ISO time")] = None,
    data_dir: DataDir = None,
    json_: AlwaysJson = True,
) -> None:
    """Retrieve scored items with provenance from the running graph."""
    try:
        meth = Method(method)
    except ValueError:
        emit_json({"ok": False, "error": "BadParameter", "message": f"--method: one of {METHODS}"})
        raise typer.Exit(2) from None
    settings = settings_for(data_dir)

    async def go() -> dict[str, Any]:
        r = settings.report.retrieve
        async with graph_store(settings) as store:
            t0 = time.perf_counter()
            service = RetrievalService(
                store, make_embedder(settings.embed), top_n=r.top_n,
                cluster_threshold=r.cluster_threshold, temperature=r.temperature,
                chunk_size=r.chunk_size, cache_dir=settings.data_dir,
            )  # fmt: skip
            await service.refresh(force=True)
            t1 = time.perf_counter()
            items = await service.search(query, meth, k, at=_at_ms(at))
            t2 = time.perf_counter()
        return {
            "ok": True, "query": query, "method": meth.value, "k": k, "count": len(items),
            "items": [i.model_dump(mode="json") for i in items], "index": service.index.stats,
            "timings": {"index_s": round(t1 - t0, 4), "search_s": round(t2 - t1, 4)},
        }  # fmt: skip

    try:
        emit_json(asyncio.run(go()))
    except LivekgError as exc:
        fail(exc)


@report_app.command("bond")
def report_bond(
    at: Annotated[str | None, typer.Option(help="analysis time, ISO (default: now)")] = None,
    lang: Annotated[str, typer.Option(help="en | zh")] = "en",
    out: Annotated[Path | None, typer.Option(help="report folder (default data dir)")] = None,
    llm: Annotated[bool, typer.Option(help="model prose (served model only)")] = True,
    publish: Annotated[bool, typer.Option(help="publish to reports.bond if a broker runs")] = True,
    data_dir: DataDir = None,
    json_: AlwaysJson = True,
) -> None:
    """The bond-market analysis of the latest market day: headline, curve and funding
    tables, curve shape, policy, drivers (cited) and rule conclusions (with signals)."""
    if lang not in ("en", "zh"):
        emit_json({"ok": False, "error": "BadParameter", "message": "--lang: en | zh"})
        raise typer.Exit(2)
    settings = settings_for(data_dir)
    emit_json(asyncio.run(_report(settings, at=at, lang=lang, out=out, use_llm=llm,
                                  publish=publish)))  # fmt: skip


async def _report(
    settings: Settings, *, at: str | None, lang: str, out: Path | None, use_llm: bool,
    publish: bool,
) -> dict[str, Any]:  # fmt: skip

    cfg = settings.report
    notes: list[str] = []
    store = None
    try:
        store = graph_store(settings)
        await store.ping()
    except Exception as exc:
        notes.append(f"graph unavailable: {exc}"[:300])
        store = None
    # model prose only from a served model (llm.base_url): the embedded one is too slow
    # for a report and is not started for it
    served = bool(settings.llm.base_url)
    client = None
    retriever = None
    embed_id = "none"
    if use_llm and cfg.use_llm and served:
        try:
            client = report_llm(settings, settings.llm.base_url)
        except Exception as exc:
            notes.append(f"LLM unavailable: {type(exc).__name__}: {exc}"[:300])
        if client is not None and store is not None:
            try:
                embedder = make_embedder(settings.embed)
                embed_id = embedder.model_id
                r = cfg.retrieve
                service = RetrievalService(
                    store, embedder, top_n=r.top_n, cluster_threshold=r.cluster_threshold,
                    temperature=r.temperature, chunk_size=r.chunk_size,
                    cache_dir=settings.data_dir,
                )  # fmt: skip
                retriever = MethodRetriever(service, cfg.method)
            except Exception as exc:
                notes.append(f"retrieval unavailable: {type(exc).__name__}: {exc}"[:300])
    try:
        doc = await build_bond_report(
            store, cfg, at=at, retriever=retriever, llm=client, lang=lang,
            served=served if use_llm else None,
            out_dir=out or reports_dir(settings.data_dir, cfg),
            models={"llm": client.model if client else "none", "embed": embed_id},
        )  # fmt: skip
        doc.errors = notes + doc.errors
        if store is not None:
            try:
                await store_in_graph(store, doc)
            except Exception as exc:
                doc.errors.append(f"could not store the report in the graph: {exc}"[:300])
        if publish:
            doc.extra["published"] = await _publish(settings, doc)
    finally:
        if client is not None:
            await client.aclose()
        if store is not None:
            await store.close()
    return {"ok": True, **doc.model_dump(mode="json", exclude={"sections", "triples"})}


async def _publish(settings: Settings, doc: Any) -> int:
    """Send the report's records to reports.bond when a broker is reachable."""
    try:
        bootstrap = endpoints(settings).kafka_bootstrap
    except Exception:
        return 0
    records = records_for(doc)
    topic = settings.kafka.topic_prefix + "reports.bond"
    items = [(r.key().encode(), r.__pydantic_serializer__.to_json(r)) for r in records]
    pub = Publisher(bootstrap)
    try:
        await pub.send_many(topic, items)
    finally:
        await asyncio.to_thread(pub.close)
    return len(items)


@eval_app.command("report")
def eval_report(
    data: Annotated[Path | None, typer.Option(help="reference JSONL (default: bundled)")] = None,
    shared: Annotated[
        Path | None, typer.Option(help="shared data folder (default ../shared/data)")
    ] = None,
    json_: AlwaysJson = True,
) -> None:
    """The report's rule conclusions against the self-written reference conclusions for
    real days (label and reason agreement per kind; dev = odd ids, test = even ids)."""
    emit_json(run_report_eval(data, shared))


@eval_app.command("retrieval")
def eval_retrieval(
    data: Annotated[Path | None, typer.Option(help="JSONL queries (default: bundled set)")] = None,
    k: Annotated[int, typer.Option(min=1)] = 5,
    methods: Annotated[
        str, typer.Option(help="comma-separated")
    ] = "bm25,dense,triples,tfr,graph,hybrid",
    split: Annotated[str, typer.Option(help="tune | test | all")] = "test",
    tune: Annotated[
        bool, typer.Option(help="choose TFR temperature and n on the tune split, judge on --split")
    ] = False,
    json_: AlwaysJson = True,
) -> None:
    """precision@k, recall@k, nDCG@k and cluster diversity per method on a query set."""
    if split not in ("tune", "test", "all"):
        emit_json({"ok": False, "error": "BadParameter", "message": "--split: tune|test|all"})
        raise typer.Exit(2)

    emit_json(run_eval(Settings(), data, k, methods.split(","), split, tune, services=services))


@eval_app.command("rag")
def eval_rag(
    data: Annotated[
        Path | None, typer.Option(help="JSONL questions with ground_truth (default: bundled)")
    ] = None,
    k: Annotated[int, typer.Option(min=1)] = 5,
    methods: Annotated[str, typer.Option(help="comma-separated")] = "dense,graph,hybrid,tfr",
    judge: Annotated[str, typer.Option(help="auto | llm | lexical")] = "auto",
    json_: AlwaysJson = True,
) -> None:
    """HybridRAG's faithfulness, answer relevance, context precision and context recall
    per method (VectorRAG=dense, GraphRAG=graph, HybridRAG=hybrid, TFR)."""
    if judge not in ("auto", "llm", "lexical"):
        emit_json({"ok": False, "error": "BadParameter", "message": "--judge: auto|llm|lexical"})
        raise typer.Exit(2)

    emit_json(run_rag_eval(Settings(), data, k, methods.split(","), judge, services=services))


@bench_app.command("report")
def bench_report(
    n: Annotated[int, typer.Option(min=2, help="reports built (en and zh alternating)")] = 20,
    json_: AlwaysJson = True,
) -> None:
    """The bond report's own time on the sample day, beside the same arithmetic in plain
    Python (ratio)."""
    emit_json(run_report_bench(Settings(), n=n))


@bench_app.command("narrative")
def bench_narrative(
    days: Annotated[int, typer.Option(min=1, help="market days of the sample, last first")] = 20,
    base_url: Annotated[str | None, typer.Option(help="this OpenAI-compatible server")] = None,
    nice: Annotated[int, typer.Option(help="nice of the model server started for the run")] = 5,
    stack: Annotated[
        bool, typer.Option(help="the whole embedded stack with the sample replayed; its memory")
    ] = False,
    budget_s: Annotated[float | None, typer.Option(help="default narrative_budget_s")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="default narrative_max_tokens")] = None,
    json_: AlwaysJson = True,
) -> None:
    """Market days of the sample replayed with the report's background narrative on: per
    day the report's time, the narrative's delay after it, prompt and generation time,
    sentences kept and dropped, unsupported numbers (docs/reports.md)."""
    emit_json(
        run_narrative_replay(
            Settings(),
            days=days,
            base_url=base_url,
            nice=nice,
            stack=stack,
            budget_s=budget_s,
            max_tokens=max_tokens,
        )
    )


@bench_app.command("retrieve")
def bench_retrieve(
    triples: Annotated[
        int | None,
        typer.Option(help="synthetic triples in the index (default 100,000; neo4j 5,000)"),
    ] = None,
    queries: Annotated[int, typer.Option(help="timed queries per method")] = 200,
    graph: Annotated[
        GraphBackend | None,
        typer.Option(
            "--graph",
            help="neo4j: the dense stage through Neo4j's vector index on a throwaway local "
            "Neo4j, beside the in-memory search; falkordb (default): the in-memory methods, "
            "FalkorDB's retrieval path",
        ),
    ] = None,
    json_: AlwaysJson = True,
) -> None:
    """p50/p95 latency per retrieval method over a synthetic index of N triples."""
    if graph == GraphBackend.NEO4J:
        emit_json(run_retrieve_graph_bench(Settings(), triples=triples or 5000, queries=queries))
        return
    result = run_retrieve_bench(Settings(), triples=triples or 100_000, queries=queries)
    emit_json({**result, "graph": (graph or GraphBackend.FALKORDB).value})
