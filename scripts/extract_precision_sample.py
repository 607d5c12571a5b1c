"""A random sample of English sentence facts from real filings, for judging by hand (issue 28).

The fast path runs over the market corpus's dev 10-K sections (the filer from the corpus
index as ``company``, as the product reads a filing) and its dev 8-Ks; table facts
(``table:*``) and FOMC statements are left out, so the sample is the prose facts of
filings, the weak part. ``--seed`` draws the sample (write it down: a sample one tuned
on is no honest figure; draw a fresh one with a new seed after changing the rules, with
``--exclude`` naming the tuning sample's ``--sample-json``, so none of its sentences is drawn
again).
``--source kpi`` draws from the KPI-EDGAR train+valid 10-K sentences instead (each
with its filer as ``company``). Each fact is printed with its rule, the attributes a judge checks (value, unit, period,
kind) and its evidence sentence. ``--json`` writes every sentence fact (not only the
sample) for comparing two versions of the rules with ``--compare OLD.json``.

Run: .venv/bin/python scripts/extract_precision_sample.py --seed 2801 [--n 50] [--json F]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

from kg.extract import ExtractDoc, Extractor, Mode
from kg.extract.corpus import DEFAULT_CORPUS, corpus_docs
from kg.extract.pipeline import bundled_index

KPI = DEFAULT_CORPUS.parent / "ie_dev/kpi_edgar/kpi_edgar_train_valid.jsonl"
SHOWN = ("value", "unit", "period", "kind", "change", "change_value", "low_value", "high_value",
         "role", "status", "act", "hedged")  # fmt: skip


def sentence_facts(source: str = "corpus") -> list[dict[str, Any]]:
    """Every English sentence fact of the dev filings (or of the KPI-EDGAR train+valid
    10-K sentences, each with its filer), in a stable order."""
    if source == "kpi":
        rows = [json.loads(line) for line in KPI.open(encoding="utf-8")]
        docs = [ExtractDoc(id=r["id"], text=r["text"], company=r.get("company", ""),
                           kind="filing", lang="en") for r in rows]  # fmt: skip
    else:
        docs = [d for d in corpus_docs(split="dev") if d.form_type in ("10-K", "8-K")]
    results = asyncio.run(Extractor(index=bundled_index()).extract_many(docs, Mode.FAST))
    facts = [
        {
            "doc": r.doc.id,
            "rule": t.extractor,
            "head": t.head,
            "relation": t.relation,
            "tail": t.tail,
            "attrs": {k: t.attributes[k] for k in SHOWN if k in t.attributes},
            "evidence": " ".join(t.evidence.split()),
        }
        for r in results
        for t in r.triples
        if not t.extractor.startswith("table:")
    ]
    return sorted(facts, key=lambda f: (f["doc"], f["evidence"], f["head"], f["tail"]))


def key(f: dict[str, Any]) -> tuple[str, str, str, str, str]:
    return (f["doc"], f["head"], f["relation"], f["tail"], json.dumps(f["attrs"], sort_keys=True))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--source", choices=("corpus", "kpi"), default="corpus")
    ap.add_argument("--json", default="", help="write every sentence fact to this file")
    ap.add_argument("--compare", default="", help="a --json file of another version")
    ap.add_argument("--sample-json", default="", help="write the drawn sample to this file")
    ap.add_argument(
        "--exclude", default="", help="a --sample-json file: its sentences are not drawn again"
    )
    args = ap.parse_args()
    if not (DEFAULT_CORPUS / "sec_10k").is_dir():
        raise SystemExit(f"{DEFAULT_CORPUS} is absent (../shared/data)")
    facts = sentence_facts(args.source)
    print(f"{len(facts)} sentence facts; by rule: {dict(Counter(f['rule'] for f in facts))}")
    if args.json:
        Path(args.json).write_text(json.dumps(facts, ensure_ascii=False, indent=1) + "\n")
    if args.compare:
        old = {key(f): f for f in json.loads(Path(args.compare).read_text())}
        new = {key(f): f for f in facts}
        for tag, keys in (("-", old.keys() - new.keys()), ("+", new.keys() - old.keys())):
            for k in sorted(keys):
                f = old.get(k) or new[k]
                print(f"{tag} {f['rule']} | {f['head']} | {f['relation']} | {f['tail']} "
                      f"{f['attrs']} || {f['evidence'][:200]}")  # fmt: skip
        return
    if args.exclude:
        seen = {(f["doc"], f["evidence"]) for f in json.loads(Path(args.exclude).read_text())}
        facts = [f for f in facts if (f["doc"], f["evidence"]) not in seen]
        print(f"{len(facts)} facts from sentences not in {args.exclude}")
    sample = random.Random(args.seed).sample(facts, min(args.n, len(facts)))
    if args.sample_json:
        Path(args.sample_json).write_text(json.dumps(sample, ensure_ascii=False, indent=1) + "\n")
    for i, f in enumerate(sample, 1):
        print(f"[{i}] {f['rule']} | {f['head']} | {f['relation']} | {f['tail']} {f['attrs']}")
        print(f"     {f['doc']}: {f['evidence'][:400]}")


if __name__ == "__main__":
    main()
