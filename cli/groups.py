"""The CLI's command groups. Feature modules attach commands to these groups, and
``cli.main`` imports each feature module once (see ``COMMAND_MODULES`` there)."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="livekg",
    help="Live market knowledge: streams, knowledge graph, sentiment, reports.",
    no_args_is_help=True,
    add_completion=False,
)
bench_app = typer.Typer(help="Benchmarks. Each prints one JSON line as its last output line.")
eval_app = typer.Typer(help="Evaluations on labelled data. Each prints one JSON line last.")
train_app = typer.Typer(help="Train and export models.")
kg_app = typer.Typer(help="Knowledge graph: stats, queries, static data.")
llm_app = typer.Typer(help="Language models.")
connect_app = typer.Typer(help="Source connectors.")
topics_app = typer.Typer(help="Kafka topics of the catalog.")
report_app = typer.Typer(help="Bond-market reports (two-stage RAG over the knowledge graph).")
subscribe_app = typer.Typer(help="Standing questions: alerts when their answer changes.")

for sub, name in (
    (bench_app, "bench"),
    (eval_app, "eval"),
    (train_app, "train"),
    (kg_app, "kg"),
    (llm_app, "llm"),
    (connect_app, "connect"),
    (topics_app, "topics"),
    (report_app, "report"),
    (subscribe_app, "subscribe"),
):
    app.add_typer(sub, name=name)
