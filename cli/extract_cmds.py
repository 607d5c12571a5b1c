"""``livekg extract``, ``livekg eval extract``, ``livekg bench extract`` (kg/extract)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.groups import app, bench_app, eval_app
from cli.output import AlwaysJson, BaseUrl, emit_json
from core.settings import Settings
from evaluation.scorers.extract import evaluate
from evaluation.scorers.extract_gold import attach_texts, doc_fields, read_gold, score
from kg.extract import DocContext, Extractor, Mode
from kg.extract.corpus import load
from kg.extract.fastpath import extract_patterns
from kg.extract.model_tier import make_tier
from kg.extract.nlp_en import parse_many
from kg.extract.pipeline import ExtractDoc, bundled_index
from kg.extract.verify import VerifyStats
from kg.models.llm import make_llm_client

BATCH = 64  # documents whose English chunks spaCy parses in one nlp.pipe call
ModeOpt = Annotated[
    str, typer.Option("--mode", help="fast | single | multi | reflection | auto (the model tier)")
]


def _extractor(settings: Settings, mode: str, base_url: str | None) -> Any:
    client = None
    url = base_url or settings.llm.base_url  # a capable model is served: the LLM joins
    if Mode(mode) != Mode.FAST and settings.extract.llm and url:
        client = make_llm_client(settings, url)
    cfg = settings.extract
    if Mode(mode) == Mode.AUTO:  # the stream's composition: fast + the model tier
        ex = _extractor(settings, "fast", None)
        if client is not None and cfg.tier.enabled:
            ex.tier = make_tier(ex, client, cfg.tier)
        return ex
    return Extractor(
        client=client,
        index=bundled_index(),
        max_chunk_tokens=cfg.max_chunk_tokens,
        n_max=cfg.n_max,
        llm_max_chars=cfg.llm_max_chars,
        use_nlp=cfg.use_nlp,
        llm_max_chunks=cfg.max_llm_chunks_per_doc,
    )


async def _close(extractor: Any) -> None:
    if extractor.llm is not None:
        await extractor.llm.client.aclose()
    if extractor.tier is not None:
        await extractor.tier.client.aclose()


@app.command("extract")
def extract(
    file: Annotated[Path, typer.Argument(help="a document (.txt/.md) or a JSONL of documents")],
    mode: ModeOpt = "reflection",
    base_url: BaseUrl = None,
    json_: Annotated[bool, typer.Option("--json", help="one JSON line per triple")] = False,
) -> None:
    """Extract triples from documents and print them (with provenance)."""
    settings = Settings()
    docs = load(str(file))

    async def go() -> None:
        ex = _extractor(settings, mode, base_url)
        try:
            results = []
            for i in range(0, len(docs), BATCH):
                results += await ex.extract_many(docs[i : i + BATCH], Mode(mode))
            for result in results:
                for t in result.triples:
                    if json_:
                        sys.stdout.write(t.model_dump_json(exclude={"ingest_time"}) + "\n")
                    else:
                        print(f"({t.head} :{t.head_type}) -[{t.relation}]-> "
                              f"({t.tail} :{t.tail_type})"
                              f"  [{t.extractor}] {t.evidence[:80]!r}")  # fmt: skip
        finally:
            await _close(ex)

    asyncio.run(go())


@eval_app.command("extract")
def eval_extract(
    input: Annotated[
        str, typer.Option("--input", help="JSONL/text file, or corpus:dev|corpus:test")
    ] = "",
    mode: ModeOpt = "reflection",
    gold: Annotated[
        Path | None, typer.Option(help="gold JSONL (docs/extraction.md): score P/R/F1")
    ] = None,
    split: Annotated[
        str, typer.Option(help="with --gold: all | tune | heldout (sha1(id) % 10 < 7: tune)")
    ] = "all",
    errors: Annotated[bool, typer.Option(help="with --gold: list false pos./negatives")] = False,
    strict_attrs: Annotated[
        bool, typer.Option(help="with --gold: a metric fact must agree on value/unit/period")
    ] = False,
    limit: Annotated[int, typer.Option(help="first N documents (0: all)")] = 0,
    docs: Annotated[
        Path | None,
        typer.Option(help="with --gold: texts by id for gold lines without (real_docs_dev dir)"),
    ] = None,
    base_url: BaseUrl = None,
    dump: Annotated[Path | None, typer.Option(help="write the triples here (JSONL)")] = None,
    json_: AlwaysJson = True,
) -> None:
    """CheckRules, supported, coverage and entropy metrics over every triple produced."""
    settings = Settings()
    if gold is not None:
        emit_json(
            _score_gold(
                settings, gold, split, mode, base_url, limit, errors, strict_attrs, docs=docs
            )
        )
        return
    if not input:
        raise typer.BadParameter("give --input or --gold")
    docs = load(input)
    if limit:
        docs = docs[:limit]

    async def go() -> dict[str, Any]:
        ex = _extractor(settings, mode, base_url)
        try:
            out, results = await evaluate(ex, docs, Mode(mode))
            if ex.tier is not None:
                out["tier"] = ex.tier.stats.as_dict()
        finally:
            await _close(ex)
        if dump is not None:
            with dump.open("w", encoding="utf-8") as fh:
                for r in results:
                    for t in r.triples:
                        fh.write(t.model_dump_json(exclude={"ingest_time"}) + "\n")
        return out

    emit_json({"eval": "extract", "input": input, **asyncio.run(go())})


def _score_gold(
    settings: Settings,
    path: Path,
    split: str,
    mode: str,
    base_url: str | None,
    limit: int,
    errors: bool,
    strict_attrs: bool = False,
    *,
    docs: Path | None = None,
) -> dict[str, Any]:
    """Run the extractor over a gold file's documents and score them
    (evaluation/scorers/extract_gold.py)."""
    gdocs = read_gold(path, split)
    if docs is not None:  # real-document gold: texts (and 10-K grids) loaded by id
        gdocs = attach_texts(gdocs, docs)
    if limit:
        gdocs = gdocs[:limit]

    verification = VerifyStats()
    tier: dict[str, Any] = {}

    async def go() -> dict[str, list[tuple[str, str, str, dict[str, Any]]]]:
        ex = _extractor(settings, mode, base_url)
        out: dict[str, list[tuple[str, str, str, dict[str, Any]]]] = {}
        try:
            edocs = [ExtractDoc.model_validate(doc_fields(g)) for g in gdocs]
            for i in range(0, len(edocs), BATCH):
                for r in await ex.extract_many(edocs[i : i + BATCH], Mode(mode)):
                    out[r.doc.id] = [(t.head, t.relation, t.tail, t.attributes) for t in r.triples]
                    verification.merge(r.stats)
        finally:
            tier.update(ex.tier.stats.as_dict() if ex.tier is not None else {})
            await _close(ex)
        return out

    started = time.perf_counter()
    preds = asyncio.run(go())
    scores = score(gdocs, preds, strict_attrs=strict_attrs)
    return {
        "eval": "extract", "gold": str(path), "split": split, "mode": mode, "docs": len(gdocs),
        "strict_attrs": strict_attrs,
        "gold_triples": sum(len(d.gold) for d in gdocs),
        "predicted": sum(len(v) for v in preds.values()),
        "seconds": round(time.perf_counter() - started, 2),
        **scores.as_dict(errors=errors),
        "verification": verification.as_dict(),
        **({"tier": tier} if tier else {}),
    }  # fmt: skip


BENCH_STATEMENTS = (
    "the 10-year Treasury yield rose 7 bp to 4.25% on Tuesday.",
    "10年期国债收益率下行3bp至1.85%，资金面整体宽松。",
    "央行开展2000亿元7天期逆回购操作，中标利率持平于1.50%。",
    "the Committee decided to lower the target range for the federal funds rate by 1/4 "
    "percentage point to 4-1/4 to 4-1/2 percent.",
)


_NUMBER_WITH_UNIT = re.compile(r"[-+]?\d+(?:[.,/-]\d+)*\s*(?:%|bp|percent|亿元|元|个基点)?")


def _regex_scan_rate(texts: list[str]) -> float:
    """Same-run reference: statements/s of one compiled regex pass (numbers with units)
    over the same statements, the floor cost of reading them in Python at all."""
    started = time.perf_counter()
    for t in texts:
        _NUMBER_WITH_UNIT.findall(t)
    elapsed = time.perf_counter() - started
    return len(texts) / elapsed if elapsed else 0.0


def _bench_chunks(settings: Settings, n: int) -> dict[str, Any]:
    """The whole fast path (chunking, patterns, spaCy rules, reflection, verification) over
    ``n`` chunks of the bundled English dev sentences, beside the same-run reference: one
    batched spaCy parse (``nlp.pipe``, the same pipes) of the same chunk texts."""
    rows = [
        json.loads(line)
        for line in resources.files("kg.data")
        .joinpath("ie_dev/en_news_dev.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
        if line.strip()
    ]
    docs = [
        ExtractDoc(id=f"bench-{i}", text=rows[i % len(rows)]["text"], kind="news", lang="en")
        for i in range(n)
    ]
    ex = _extractor(settings, "fast", None)
    asyncio.run(ex.extract_many(docs[: min(20, n)], Mode.FAST))  # warm: model loaded once
    started = time.perf_counter()
    results = asyncio.run(ex.extract_many(docs, Mode.FAST))
    fast_s = time.perf_counter() - started
    texts = [c.chunk.text for r in results for c in r.chunks]
    started = time.perf_counter()
    parse_many(texts)
    ref_s = time.perf_counter() - started
    rate = len(texts) / fast_s if fast_s else 0.0
    ref = len(texts) / ref_s if ref_s else 0.0
    return {
        "chunks": len(texts),
        "chunks_per_s": round(rate, 1),
        "chunk_triples": sum(len(r.triples) for r in results),
        "reference": {"name": "spacy_parse_same_chunks", "value": round(ref, 1)},
        "ratio": round(rate / ref, 4) if ref else None,
    }


@bench_app.command("extract")
def bench_extract(
    statements: Annotated[
        int, typer.Option(help="indicator statements for the fast path")
    ] = 20_000,
    docs: Annotated[int, typer.Option(help="corpus:dev documents per mode (0: skip modes)")] = 2,
    modes: Annotated[
        str, typer.Option(help="comma-separated modes to time")
    ] = "fast,single,multi,reflection",
    base_url: BaseUrl = None,
    chunks: Annotated[
        int, typer.Option(help="English news chunks through the whole fast path (0: skip)")
    ] = 300,
    json_: AlwaysJson = True,
) -> None:
    """Fast path chunks/s beside one spaCy parse of the same chunks (``ratio``); pattern
    statements/s; chunks/s and LLM calls per chunk, mode by mode."""
    texts = [BENCH_STATEMENTS[i % len(BENCH_STATEMENTS)] for i in range(statements)]
    ctx = DocContext(
        doc_id="bench", main_entity="Federal Open Market Committee", main_type="Institution"
    )
    started = time.perf_counter()
    found = 0
    for t in texts:
        found += len(extract_patterns(t, ctx, "zh" if "年" in t or "央行" in t else "en"))
    fast_s = time.perf_counter() - started
    fast_rate = statements / fast_s if fast_s else 0.0
    scan_rate = _regex_scan_rate(texts)
    out: dict[str, Any] = {
        "bench": "extract",
        "fast_statements": statements,
        "fast_triples": found,
        "fast_statements_per_s": round(fast_rate, 1),
        "statements_reference": {"name": "regex_scan", "value": round(scan_rate, 1)},
        "statements_ratio": round(fast_rate / scan_rate, 4) if scan_rate else None,
    }
    settings = Settings()
    if chunks:
        out.update(_bench_chunks(settings, chunks))
    sample = load("corpus:dev")[:docs] if docs else []
    per_mode: dict[str, Any] = {}

    async def go() -> None:
        for m in [x.strip() for x in modes.split(",") if x.strip()]:
            ex = _extractor(settings, m, base_url)
            try:
                res, _ = await evaluate(ex, sample, Mode(m))
            finally:
                await _close(ex)
            per_mode[m] = {
                k: res[k]
                for k in (
                    "chunks",
                    "triples",
                    "chunks_per_s",
                    "llm_calls_per_chunk",
                    "triples_per_chunk",
                    "seconds",
                )
            }

    if sample:
        asyncio.run(go())
    out["modes"] = per_mode
    emit_json(out)
