"""``livekg ask``, ``livekg topics tail``, ``livekg eval cypher``, ``livekg bench serve``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from cli.groups import app, bench_app, eval_app, topics_app
from cli.output import emit_json, fail
from core.errors import LivekgError
from core.runtime_state import Endpoints, endpoints
from core.settings import Settings
from core.topics import spec
from evaluation.bench.serve import run_serve_bench
from evaluation.scorers.cypher import (
    EVALSETS,
    dump_all,
    dump_failures,
    evaluate,
    read_items,
    summarize,
)
from evaluation.scorers.cypher_fixture import load_graph, load_sample_day
from kg.cypher import CypherQA, LLMReviser
from kg.cypher.hybrid import RetrievalAnswerer
from kg.cypher.reword import LLMReworder
from kg.graph.store import open_store
from kg.graph.store.falkor import FalkorStore
from kg.models.embed import make_embedder
from kg.models.llm import make_llm_client
from ops.runtime import services
from streams.tail import TopicReader

JsonFlag = Annotated[bool, typer.Option("--json", help="print one JSON object")]
T = TypeVar("T")


@contextlib.asynccontextmanager
async def _qa(
    settings: Settings,
    falkordb_url: str | None,
    *,
    revise: bool,
    llm_url: str | None,
    graph_name: str | None = None,
    ensure_sample: bool = False,
    revise_policy: str = "fallback",
    reword: bool = False,
) -> AsyncIterator[Any]:
    """A ``CypherQA`` on the configured graph (``graph_name`` overrides the name)."""
    if graph_name:
        settings = settings.with_overrides(graph={"graph_name": graph_name})
    store = open_store(settings, falkordb_url)
    llm = None
    try:
        if ensure_sample:  # a temporary graph: the sample graph (universe + sample ticks)
            await load_sample_day(store)
        embedder = None
        if settings.query.rank_with_embeddings:
            embedder = await asyncio.to_thread(make_embedder, settings.embed)
        if revise or reword:
            llm = make_llm_client(settings, llm_url)
        reviser = LLMReviser(llm) if revise else None
        lexicon = await CypherQA.load_lexicon(store)
        hybrid = None
        if embedder is not None:
            hybrid = RetrievalAnswerer(store, embedder)
        q = settings.query
        yield CypherQA(
            store,
            lexicon,
            embedder=embedder,
            reviser=reviser,
            hybrid=hybrid,
            timeout_s=q.timeout_s,
            row_limit=q.row_limit,
            revise_policy=revise_policy,  # type: ignore[arg-type]
            reworder=LLMReworder(llm) if reword else None,
            reword_policy=q.reword_policy,
            reword_budget_s=q.reword_budget_s,
        )
    finally:
        if llm is not None:
            await llm.aclose()
        await store.close()


def _on_stack(settings: Settings, go: Callable[[Settings, Endpoints], Coroutine[Any, Any, T]]) -> T:
    """``go`` on the running stack's graph, else on a temporary one ``services`` starts;
    a livekg error ends the command as one JSON line."""
    try:
        with services(settings, llm=False) as (s, ep):
            return asyncio.run(go(s, ep))
    except LivekgError as exc:
        fail(exc)


@app.command("ask")
def ask(
    question: Annotated[str, typer.Argument(help="a question in English or Chinese")],
    revise: Annotated[
        bool | None, typer.Option("--revise/--no-revise", help="LLM revision (default: settings)")
    ] = None,
    reword: Annotated[
        bool | None,
        typer.Option(
            "--reword/--no-reword",
            help="an abstained question is reworded by the model and read again (default: "
            "settings query.reword)",
        ),
    ] = None,
    now: Annotated[
        str | None, typer.Option(help="ISO time 'now' means (relative time expressions)")
    ] = None,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            help="ISO time: answer as the graph knew it then (only facts recorded by then; "
            "relative times count from it)",
        ),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Answer a question from the graph: Cypher (read-only), rows, answer, citations.

    Uses the running stack's graph; without one, starts a temporary graph and loads the
    sample graph (bundled universe + sample ticks) into it.
    """
    settings = Settings()
    use_llm = settings.query.revise if revise is None else revise
    # default: reword where a model is served (never loading one in-process by default)
    asked_reword = settings.query.reword if reword is None else reword
    at = datetime.fromisoformat(now.replace("Z", "+00:00")) if now else None
    try:
        known = datetime.fromisoformat(as_of.replace("Z", "+00:00")) if as_of else None
    except ValueError as exc:
        fail(exc)

    async def go(s: Settings, ep: Any) -> Any:
        temporary = s.data_dir != settings.data_dir  # services() started a stack for us
        async with _qa(
            s,
            ep.falkordb_url,
            revise=use_llm,
            llm_url=ep.llm_base_url,
            ensure_sample=temporary,
            reword=bool(ep.llm_base_url) if asked_reword is None else asked_reword,
        ) as qa:
            return await qa.ask(question, revise=use_llm, now=at, as_of=known)

    result = _on_stack(settings, go)
    if json_:
        emit_json(result.model_dump(mode="json"))
        return
    read = result.interpretation
    if read is not None:
        typer.echo(f"[{result.status}, confidence {read.confidence:.2f}] {read.text}")
    if result.abstention is not None:
        for k, c in enumerate(result.abstention.choices, 1):
            typer.echo(f"  reading {k}: {c.text}")
    typer.echo(result.answer)
    if result.time is not None:
        t = result.time
        known_text = t.known_at.isoformat() if t.known_at else "everything recorded"
        typer.echo(f"(valid: {t.valid}; known as of: {known_text})")
    if result.cypher:
        typer.echo(f"\n{result.cypher}\nparams: {json.dumps(result.params, ensure_ascii=False)}")


@eval_app.command("cypher")
def eval_cypher(
    questions: Annotated[
        Path | None, typer.Option("--questions", help="JSONL (default: the bundled suite)")
    ] = None,
    graph: Annotated[
        str,
        typer.Option(
            help="fixture: a fresh graph with the universe + the suite's "
            "observations; sample: a fresh graph with the universe + the real sample day "
            "(connectors/samples/ticks_history.jsonl + ticks.jsonl, through the tick sink); "
            "current: the configured graph as it is"
        ),
    ] = "fixture",
    dump: Annotated[
        Path | None,
        typer.Option(help="write every question's outcome, confidence and evidence (JSONL)"),
    ] = None,
    llm: Annotated[bool, typer.Option("--llm/--no-llm", help="also run with LLM revision")] = True,
    failures: Annotated[int, typer.Option(help="failed questions listed in the output")] = 20,
    revise_policy: Annotated[
        str, typer.Option(help="fallback: revise only answers without rows; always: every one")
    ] = "fallback",
    reword: Annotated[
        bool,
        typer.Option(
            "--reword/--no-reword",
            help="the model's run rewords abstained questions (query.reword_policy) "
            "instead of revising them",
        ),
    ] = False,
    json_: JsonFlag = True,
) -> None:
    """Accuracy of NL -> Cypher overall, per type and per language, without and with LLM
    revision (revision is tried only where the heuristic path returned no rows); with
    ``--reword`` the model's run rewords the abstained questions instead."""
    path = questions or EVALSETS / "questions.jsonl"
    try:
        items = read_items(path)
    except (OSError, ValueError) as exc:
        fail(exc)
    if graph not in ("fixture", "sample", "current"):
        fail(ValueError(f"--graph must be fixture, sample or current, not {graph!r}"))
    settings = Settings()
    fresh = graph in ("fixture", "sample")
    name = f"livekg_eval_cypher_{uuid.uuid4().hex[:8]}" if fresh else None

    async def go(s: Settings, ep: Any) -> dict[str, Any]:
        out: dict[str, Any] = {
            "questions": str(path),
            "graph": graph,
            "revise_policy": revise_policy,
            "model_run": "reword" if reword else "revise",  # what "with_revision" did
        }
        try:
            if name:
                store = open_store(s.with_overrides(graph={"graph_name": name}), ep.falkordb_url)
                load = load_sample_day if graph == "sample" else load_graph
                out["observations_loaded"] = await load(store)
                await store.close()
            modes = [False, True] if llm else [False]
            for revise in modes:
                t0 = time.perf_counter()
                async with _qa(
                    s,
                    ep.falkordb_url,
                    revise=revise and not reword,
                    llm_url=ep.llm_base_url,
                    graph_name=name,
                    revise_policy=revise_policy,
                    reword=revise and reword,
                ) as qa:
                    scored = await evaluate(qa, items, revise=revise and not reword)
                key = "with_revision" if revise else "without_revision"
                out[key] = {**summarize(scored), "seconds": round(time.perf_counter() - t0, 2)}
                out[key]["failures"] = dump_failures(scored, failures)
                if dump is not None and not revise:
                    lines = [json.dumps(r, ensure_ascii=False) for r in dump_all(scored)]
                    dump.write_text("\n".join(lines) + "\n", encoding="utf-8")
        finally:
            if name:
                await _drop_graph(s, ep.falkordb_url, name)
        base = out["without_revision"]
        out.update(
            accuracy=base["accuracy"],
            by_type=base["by_type"],
            by_lang=base["by_lang"],
            **{
                k: base[k]
                for k in (
                    "answered",
                    "abstained",
                    "answered_wrong",
                    "answered_wrong_share",
                    "precision",
                    "rows_right",
                )
            },
        )
        return out

    result = _on_stack(settings, go)
    emit_json(result)


async def _drop_graph(settings: Settings, url: str | None, name: str) -> None:
    store = open_store(settings.with_overrides(graph={"graph_name": name}), url)
    try:
        if isinstance(store, FalkorStore):
            await store.delete_graph()
    finally:
        await store.close()


@topics_app.command("tail")
def topics_tail(
    topic: Annotated[str, typer.Argument(help="logical topic name, e.g. alerts.indicator")],
    from_beginning: Annotated[bool, typer.Option("--from-beginning")] = False,
    last: Annotated[int, typer.Option(help="also show the N newest records per partition")] = 0,
    max_records: Annotated[int, typer.Option("--max", help="stop after N records (0: never)")] = 0,
    idle_timeout: Annotated[
        float, typer.Option(help="stop after this many idle seconds (0: never)")
    ] = 0.0,
    json_: JsonFlag = False,
) -> None:
    """Watch a topic: one line per record (JSON lines with --json). Ctrl-C stops."""
    settings = Settings()
    try:
        spec(topic)
        bootstrap = endpoints(settings).kafka_bootstrap
        reader = TopicReader(bootstrap)
        reader.assign(
            [settings.kafka.topic_prefix + topic],
            start="beginning" if from_beginning else "end",
            last=last,
        )
    except (LivekgError, KeyError) as exc:
        fail(exc)
    n = 0
    idle_since = time.monotonic()
    try:
        while not max_records or n < max_records:
            msgs = reader.poll(0.5)
            if not msgs:
                if idle_timeout and time.monotonic() - idle_since > idle_timeout:
                    break
                continue
            idle_since = time.monotonic()
            for m in msgs:
                text = (m.value or b"").decode("utf-8", "replace")
                if json_:
                    try:
                        value: Any = json.loads(text)
                    except ValueError:
                        value = text
                    line = {
                        "topic": topic,
                        "partition": m.partition,
                        "offset": m.offset,
                        "key": (m.key or b"").decode("utf-8", "replace"),
                        "value": value,
                    }
                    sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
                else:
                    sys.stdout.write(f"{m.partition}:{m.offset} {text}\n")
                sys.stdout.flush()
                n += 1
                if max_records and n >= max_records:
                    break
    except KeyboardInterrupt:
        pass
    finally:
        reader.close()


@bench_app.command("serve")
def bench_serve(
    asks: Annotated[int, typer.Option(help="POST /ask requests timed")] = 200,
    alerts: Annotated[int, typer.Option(help="alerts produced and timed to the SSE client")] = 100,
    json_: JsonFlag = True,
) -> None:
    """ask_p95_ms (HTTP POST /ask on the sample graph, no LLM revision) and sse_p95_ms
    (alert produced to its topic -> received by an SSE client), through a real API server."""
    with services(Settings()) as (settings, ep):
        result = asyncio.run(run_serve_bench(settings, ep, asks=asks, alerts=alerts))
    emit_json(result)
