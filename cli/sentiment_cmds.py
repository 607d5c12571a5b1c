"""Sentiment commands: ``train sentiment``, ``train export-instructions``,
``eval sentiment`` and ``bench sentiment``."""

from __future__ import annotations

import logging
import random
import time
from pathlib import Path
from typing import Annotated

import typer

from cli.groups import bench_app, eval_app, train_app
from cli.output import AlwaysJson, emit_json
from core.runtime_state import endpoints
from core.settings import Settings
from evaluation.bench.sentiment import load_eval_set, run_bench, run_eval
from evaluation.train.sentiment import TrainConfig, train, write_context_index, write_dev_sets
from kg.models.llm import make_llm_client
from kg.sentiment.data import load_examples, shared_training_set
from kg.sentiment.external_search import external_sources
from kg.sentiment.instructions import export_jsonl
from kg.sentiment.model import ARTIFACTS, load_from_settings
from kg.sentiment.rag import ContextRetriever, CorpusSource, KnowledgeSource
from kg.sentiment.service import LLMSentiment, SentimentEngine
from kg.sentiment.teacher import TeacherMissing, part_files

DEFAULT_DATA = Path("../shared/data")
FORMATS = ("twitter", "fpb", "fiqa", "finfe")
CLASSIFIERS = ("router", "accurate", "encoder", "e5-encoder", "zh-encoder", "lexical", "e5", "llm")
TRAIN_PARTS = (
    "all",
    "e5",
    "encoder",
    "e5-encoder",
    "zh-encoder",
    "zh-lexical",
    "teacher",
    "memory",
    "lexical",
    "metrics",
)
# Options shared by the sentiment commands (training data, classifier construction).
TwitterFiqaDir = Annotated[Path, typer.Option(help="folder with twitter/fiqa data")]
ThreadsOpt = Annotated[int, typer.Option(help="CPU threads")]
QuantizeOpt = Annotated[
    bool | None,
    typer.Option("--quantize/--no-quantize", help="int8 encoder (default: settings)"),
]
RuntimeOpt = Annotated[str | None, typer.Option(help="onnx | torch (encoders; default: settings)")]


@train_app.command("sentiment")
def train_sentiment(
    data_dir: TwitterFiqaDir = DEFAULT_DATA,
    out: Annotated[
        Path | None, typer.Option(help="artifact folder (default: the package's)")
    ] = None,
    epochs: Annotated[
        float | None, typer.Option(help="encoder epochs (default: each recipe's)")
    ] = None,
    rank: Annotated[int | None, typer.Option(help="LoRA rank (default: recipe)")] = None,
    top_layers: Annotated[
        int | None, typer.Option(help="layers adapted from the top (default: recipe)")
    ] = None,
    lr: Annotated[float | None, typer.Option(help="learning rate (default: recipe)")] = None,
    threads: ThreadsOpt = 2,
    only: Annotated[
        str,
        typer.Option(
            help="all | e5 | encoder | e5-encoder | zh-encoder (+ zh-lexical) | zh-lexical "
            "| teacher (the accurate tier) | memory | lexical (others kept) | metrics (none)"
        ),
    ] = "all",
    finfe: Annotated[
        bool,
        typer.Option(
            help="train the Chinese student on FinFE's train split too (no declared licence; "
            "--no-finfe leaves it out)"
        ),
    ] = True,
    teacher: Annotated[
        bool,
        typer.Option(
            help=r"distil from the all-mpnet-base-v2 teacher (pip install -e '.\[teacher]')"
        ),
    ] = True,
    json_: AlwaysJson = True,
) -> None:
    """Train the CPU classifiers on ../shared/data; write artifacts + metrics.json."""
    if only not in TRAIN_PARTS:
        raise typer.BadParameter(f"--only: one of {', '.join(TRAIN_PARTS)}")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if not data_dir.is_dir():
        raise typer.BadParameter(f"{data_dir} is not a folder (needs ../shared/data)")
    if only == "teacher" or (teacher and only in ("all", "encoder", "e5-encoder")):
        try:
            part_files()
        except TeacherMissing as e:
            raise typer.BadParameter(str(e), param_hint="--teacher") from e
    cfg = TrainConfig(
        data_dir=data_dir,
        out_dir=out or ARTIFACTS,
        epochs=epochs,
        rank=rank,
        top_layers=top_layers,
        lr=lr,
        num_threads=threads,
        only=only,
        teacher=teacher,
        finfe=finfe,
    )
    metrics = train(cfg)
    emit_json({"train": "sentiment", "out": str(cfg.out_dir), **metrics})


@train_app.command("sentiment-dev")
def sentiment_dev(
    out: Annotated[Path, typer.Option(help="folder to write (outside the repository)")],
    data_dir: Annotated[Path, typer.Option(help="folder with the shared data")] = DEFAULT_DATA,
    finfe: Annotated[bool, typer.Option(help="include FinFE's dev hold-out")] = True,
    json_: AlwaysJson = True,
) -> None:
    """Write the dev hold-out of ``train sentiment`` as files for ``eval sentiment``, and
    ``context_index.jsonl``, the documents to retrieve their context from (``--corpus``)."""
    if not data_dir.is_dir():
        raise typer.BadParameter(f"{data_dir} is not a folder (needs ../shared/data)")
    counts = write_dev_sets(data_dir, out, finfe)
    index = write_context_index(data_dir, out / "context_index.jsonl", finfe)
    emit_json({"train": "sentiment-dev", "out": str(out), "rows": counts, "index_docs": index})


@train_app.command("export-instructions")
def export_instructions(
    out: Annotated[Path, typer.Option(help="JSONL file to write")] = Path(
        "sentiment_instructions.jsonl"
    ),
    data_dir: TwitterFiqaDir = DEFAULT_DATA,
    data: Annotated[Path | None, typer.Option(help="one labelled file instead of data-dir")] = None,
    format_: Annotated[str, typer.Option("--format", help="format of --data")] = "twitter",
    seed: Annotated[int, typer.Option(help="instruction choice seed")] = 0,
    json_: AlwaysJson = True,
) -> None:
    """Instruction-tuning JSONL (Zhang et al. 3.2.1) for fine-tuning a model served by vLLM."""
    examples = load_examples(data, format_) if data else shared_training_set(data_dir)
    n = export_jsonl(examples, out, seed=seed)
    emit_json({"export": "sentiment-instructions", "n": n, "path": str(out)})


def _classifier(kind: str, threads: int, quantize: bool | None, runtime: str | None):  # type: ignore[no-untyped-def]
    """The CPU classifier as configured (settings), with command-line overrides."""
    over: dict[str, object] = {"classifier": kind, "num_threads": threads}
    if quantize is not None:
        over["quantize"] = quantize
    if runtime:
        over["runtime"] = runtime
    return load_from_settings(Settings().sentiment.model_copy(update=over))


def _engine(  # type: ignore[no-untyped-def]
    classifier: str,
    *,
    rag: bool,
    corpus: Path | None,
    threads: int,
    quantize: bool | None,
    runtime: str | None,
    context_weight: float | None = None,
):
    if context_weight is None:
        context_weight = Settings().sentiment.rag_context_weight

    retriever = None
    sources: list[str] = []
    if rag:
        found: list[KnowledgeSource] = []
        if corpus is not None:
            found.append(CorpusSource.from_jsonl(corpus))
            sources.append(f"corpus:{corpus.name}")
        cfg = Settings().sentiment
        for source in external_sources(cfg.rag_search):  # sentiment.rag_search, if any
            found.append(source)
            sources.append(source.name)
        if found:
            retriever = ContextRetriever.from_settings(found, cfg)
    if classifier == "llm":
        settings = Settings()
        try:
            base = endpoints(settings).llm_base_url
        except Exception:
            base = None

        def client():  # type: ignore[no-untyped-def]
            return make_llm_client(settings, base)

        llm = LLMSentiment(client(), factory=client)
        return SentimentEngine(llm=llm, retriever=retriever), sources
    clf = _classifier(classifier, threads, quantize, runtime)
    return SentimentEngine(clf, retriever=retriever, context_weight=context_weight), sources


@eval_app.command("sentiment")
def eval_sentiment(
    data: Annotated[Path, typer.Option(help="labelled file")],
    format_: Annotated[str, typer.Option("--format", help="twitter | fpb | fiqa | finfe")],
    no_rag: Annotated[bool, typer.Option("--no-rag", help="score the bare input")] = False,
    corpus: Annotated[
        Path | None, typer.Option(help="JSONL corpus to retrieve context from")
    ] = None,
    classifier: Annotated[str, typer.Option(help=" | ".join(CLASSIFIERS))] = "router",
    limit: Annotated[int | None, typer.Option(help="first N examples only")] = None,
    sample: Annotated[
        int | None, typer.Option(help="a seeded random sample of N examples (after --limit)")
    ] = None,
    seed: Annotated[int, typer.Option(help="seed of --sample")] = 0,
    context_weight: Annotated[
        float | None,
        typer.Option(help="weight of the input+context pass (default: sentiment.*)"),
    ] = None,
    threads: ThreadsOpt = 2,
    quantize: QuantizeOpt = None,
    runtime: RuntimeOpt = None,
    json_: AlwaysJson = True,
) -> None:
    """Accuracy, macro-F1, per-class figures and texts/s on a labelled file; with
    ``--corpus``, also with vs without context on the items that got context."""
    if format_ not in FORMATS:
        raise typer.BadParameter(f"--format must be one of {FORMATS}")
    if classifier not in CLASSIFIERS:
        raise typer.BadParameter(f"--classifier must be one of {CLASSIFIERS}")
    examples = load_eval_set(data, format_, limit)
    if sample is not None and sample < len(examples):
        examples = random.Random(seed).sample(examples, sample)
    engine, sources = _engine(
        classifier,
        rag=not no_rag,
        corpus=corpus,
        threads=threads,
        quantize=quantize,
        runtime=runtime,
        context_weight=context_weight,
    )
    result = run_eval(engine, examples)
    emit_json(
        {
            "eval": "sentiment",
            "data": str(data),
            "format": format_,
            "rag": bool(sources),
            "rag_sources": sources,
            "sample": {"n": sample, "seed": seed} if sample is not None else None,
            **result,
        }
    )


@bench_app.command("sentiment")
def bench_sentiment(
    n: Annotated[int, typer.Option(help="texts in the throughput phase")] = 3000,
    batch: Annotated[int, typer.Option(help="micro-batch size")] = 64,
    rate: Annotated[float, typer.Option(help="docs/s in the latency phase")] = 100.0,
    seconds: Annotated[float, typer.Option(help="length of the latency phase")] = 10.0,
    classifier: Annotated[str, typer.Option(help=" | ".join(CLASSIFIERS[:-1]))] = "router",
    threads: ThreadsOpt = 2,
    quantize: QuantizeOpt = None,
    runtime: RuntimeOpt = None,
    json_: AlwaysJson = True,
) -> None:
    """Default classifier throughput (texts/s) and micro-batched arrival-to-score p99."""
    if classifier not in CLASSIFIERS[:-1]:
        raise typer.BadParameter(f"--classifier must be one of {CLASSIFIERS[:-1]}")
    t0 = time.perf_counter()
    clf = _classifier(classifier, threads, quantize, runtime)
    result = run_bench(clf, n=n, batch=batch, rate=rate, seconds=seconds)
    result["threads"] = threads
    result["wall_s"] = round(time.perf_counter() - t0, 1)
    emit_json(result)
