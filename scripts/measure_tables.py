"""Issue 28 figures: table facts on the market-corpus 10-K sections and TAT-QA dev tables,
the table-vs-XBRL disagreement rate on the bundled company facts, and the duplicate-entity
rate before/after filer resolution on the corpus.

    .venv/bin/python scripts/measure_tables.py [--sample 30] [--seed 28] > out.json

Reads ../shared/data (dev data only: the corpus has no labels, TAT-QA is its dev split).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from connectors.xbrl import sample_triples  # noqa: E402
from kg.extract.corpus import split_of  # noqa: E402
from kg.extract.pipeline import (  # noqa: E402
    ExtractDoc,
    Extractor,
    bundled_index,
    short_names,
    universe_index,
)
from kg.extract.table_text import scan  # noqa: E402
from kg.extract.tables import from_data, read_table  # noqa: E402
from kg.extract.types import DocContext  # noqa: E402
from kg.extract.xbrl_check import compare  # noqa: E402
from kg.graph.canonical import (  # noqa: E402
    AliasIndex,
    bundled_sec_tickers,
    duplicate_entity_rate,
    is_self_reference,
    normalize_key,
    sec_filer_ids,
)

DATA = ROOT.parent / "shared" / "data"
CORPUS = DATA / "market_corpus" / "sec_10k"
TATQA = DATA / "ie_dev" / "tatqa" / "tatqa_dataset_dev.json"
COMPANY_TYPES = {"Company", "Organization", "Institution"}


def universe_only_index() -> AliasIndex:
    """The alias dictionary before this change: the static universe alone."""
    return universe_index()


def corpus_docs(split: str) -> list[tuple[dict[str, str], ExtractDoc]]:
    """The corpus 10-K sections of one split (kg.extract.corpus: sha1(name) % 5 == 0 is test)."""
    rows = list(csv.DictReader(open(CORPUS / "index.csv", encoding="utf-8")))
    out = []
    for r in rows:
        if split_of(r["file"]) != split:
            continue
        text = (CORPUS / r["file"]).read_text(encoding="utf-8")
        doc = ExtractDoc(
            id=r["file"], text=text, kind="filing", company=r["ticker"], form_type="10-K",
            title=f"{r['company']} 10-K FY{r['fiscal_year']} {r['section']}",
        )  # fmt: skip
        out.append((r, doc))
    return out


def reference_entity(name: str, filers: dict[str, set[str]], subject: str) -> str:
    """The real entity a mention names (hand rules: a filer's names, tickers, CIK; 'we')."""
    if is_self_reference(name):
        return subject
    key = normalize_key(name)
    for ticker, keys in filers.items():
        if key in keys:
            return ticker
    return f"other:{key}"


async def corpus_tables(sample: int, seed: int, split: str) -> dict[str, Any]:
    docs = corpus_docs(split)
    ex = Extractor(index=bundled_index(), use_nlp=False)
    facts: list[Any] = []
    drops: Counter[str] = Counter()
    flat_rejected = flat_tables = 0
    for _r, doc in docs:
        s = scan(doc.text)
        flat_rejected += s.rejected
        flat_tables += len(s.tables)
        res = await ex.extract(doc)
        drops.update({k: v for k, v in res.stats.dropped.items() if k.startswith("table_")})
        facts += [t for t in res.triples if t.extractor.startswith("table:")]
    with_pu = [t for t in facts if t.attributes.get("period_end") and t.attributes.get("unit")]
    rng = random.Random(seed)
    return {
        "documents": len(docs),
        "table_facts": len(facts),
        "with_period_and_unit": len(with_pu),
        "fraction_with_period_and_unit": round(len(with_pu) / len(facts), 4) if facts else None,
        "flat_tables_rebuilt": flat_tables,
        "flat_blocks_left_alone": flat_rejected,
        "dropped_cells": dict(drops),
        "sample": [_show(t) for t in rng.sample(facts, min(sample, len(facts)))],
        "_facts": facts,
    }


def _show(t: Any) -> dict[str, Any]:
    a = t.attributes
    keys = ("value", "unit", "period", "period_end", "period_start", "column_kind", "raw")
    return {"doc": t.doc_id, "head": t.head, "metric": t.tail, **{k: a.get(k) for k in keys}}


def tatqa_tables(sample: int, seed: int) -> dict[str, Any]:
    data = json.loads(TATQA.read_text(encoding="utf-8"))
    ctx = DocContext(doc_id="tatqa", main_entity="Filer")
    drops: Counter[str] = Counter()
    facts = []
    for item in data:
        para = " ".join(p["text"] for p in item["paragraphs"][:1])[:300]
        read = read_table(from_data(item["table"]["table"]), ctx, context=para)
        drops.update(read.dropped)
        facts += [(item["table"]["uid"], c) for c in read.candidates]
    rng = random.Random(seed)
    picked = rng.sample(facts, min(sample, len(facts)))
    return {
        "tables": len(data),
        "table_facts": len(facts),
        "with_period_and_unit": sum(
            1 for _, c in facts if c.props.get("period_end") and c.props.get("unit")
        ),
        "dropped_cells": dict(drops),
        "column_kinds": dict(Counter(str(c.props["column_kind"]) for _, c in facts)),
        "units": dict(Counter(str(c.props["unit"]) for _, c in facts)),
        "sample": [
            {
                "table": uid,
                "metric": c.tail,
                **{
                    k: c.props.get(k)
                    for k in ("value", "unit", "period", "period_end", "column_kind", "raw")
                },
            }
            for uid, c in picked
        ],
    }


async def duplicates(split: str) -> dict[str, Any]:
    docs = corpus_docs(split)
    filers: dict[str, set[str]] = {}
    for r, _ in docs:
        names = {r["company"], r["ticker"], f"CIK{r['cik']}", *short_names(r["company"])}
        filers.setdefault(r["ticker"], set()).update(normalize_key(n) for n in names)
    for ticker, (_cik, title) in bundled_sec_tickers().items():
        if ticker in filers:
            filers[ticker].add(normalize_key(title))
    out = {}
    for label, index in (("before", universe_only_index()), ("after", bundled_index())):
        ex = Extractor(index=index, use_nlp=True)
        assigned = []
        for r, doc in docs:
            text, _ = ex.chunks_of(doc)
            ctx = ex.context(doc, text)
            res = await ex.extract(doc)
            mentions = [(ctx.main_entity, ctx.main_type)] if ctx.main_entity else []
            # how the other sources name the same filer: the EDGAR record's company field
            # (ticker or CIK) and the XBRL company facts' entityName (SEC's title)
            title = bundled_sec_tickers().get(r["ticker"], (0, ""))[1]
            mentions += [(r["ticker"], "Company"), (f"CIK{r['cik']}", "Company")]
            mentions += [(title, "Company")] if title else []
            for t in res.triples:
                for name, typ in ((t.head, t.head_type), (t.tail, t.tail_type)):
                    if typ in COMPANY_TYPES:
                        mentions.append((name, typ))
            for name, typ in mentions:
                node = index.resolve(name, typ).id
                if label == "after" and is_self_reference(name):
                    node = index.resolve(r["ticker"], "Company").id
                assigned.append((node, reference_entity(name, filers, r["ticker"])))
        rep = duplicate_entity_rate(assigned)
        filer_only = duplicate_entity_rate([a for a in assigned if not a[1].startswith("other:")])
        filer_nodes = {t: n for t, n in rep.split.items() if not t.startswith("other:")}
        out[label] = {
            "mentions": rep.mentions, "nodes": rep.nodes, "entities": rep.entities,
            "duplicate_rate": round(rep.rate, 4), "filers_split": filer_nodes,
            "filer_nodes": filer_only.nodes, "filer_entities": filer_only.entities,
            "filer_duplicate_rate": round(filer_only.rate, 4),
        }  # fmt: skip
    return out


def xbrl_disagreement(corpus_facts: list[Any]) -> dict[str, Any]:
    xbrl = sample_triples(sec_filer_ids())
    same = {t.head: "MSFT" for t in corpus_facts if "Microsoft" in t.head}
    same.update({t.head: t.head_id or t.head for t in xbrl})
    report = compare(corpus_facts, xbrl, same_filer=same)
    return report.as_dict()


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", type=int, default=30)
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--skip-duplicates", action="store_true")
    args = ap.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"no market corpus at {CORPUS}")
    out: dict[str, Any] = {}
    for split in ("dev", "test"):
        corpus = await corpus_tables(args.sample, args.seed, split)
        facts = corpus.pop("_facts")
        out[f"corpus_10k_{split}"] = corpus
        out[f"xbrl_vs_table_{split}"] = xbrl_disagreement(facts)
        if not args.skip_duplicates:
            out[f"duplicate_entities_{split}"] = await duplicates(split)
    out["tatqa_dev"] = tatqa_tables(args.sample, args.seed)
    print(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    asyncio.run(main())
