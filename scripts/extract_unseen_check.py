"""English sentence relations on text no rule was written on, for reading by hand.

FIRE's held-out part may be scored only once, so the precision of the rules on unseen
sentences is estimated here instead: the fast path runs over the Twitter financial-news
headlines (train split only), the FiQA task-1 headlines and posts (train files only), the
KPI-EDGAR 10-K sentences (train+valid) or the
sentences of the market corpus's dev 10-K sections (no filer given, as FIRE sentences
come; the corpus's test split, ``sha1(file name) % 5 == 0``, is left alone), and every triple of a relation FIRE scores is listed with
its rule and sentence, or a random sample of them per rule (``--sample N``), to be judged
by reading. ``--json`` writes the triples for comparing two versions of the rules.

Run: .venv/bin/python scripts/extract_unseen_check.py [--source twitter|kpi|tenk|fiqa] [--sample 10]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import hashlib
import json
import random
import re
from collections import Counter
from pathlib import Path

from kg.extract import ExtractDoc, Extractor, Mode
from kg.extract.pipeline import bundled_index

DATA = Path(__file__).resolve().parents[2] / "shared/data"
TWITTER = DATA / "twitter_financial_news_sentiment/sent_train.csv"
KPI = DATA / "ie_dev/kpi_edgar/kpi_edgar_train_valid.jsonl"
TENK = DATA / "market_corpus/sec_10k"
FIQA = DATA / "fiqa_sentiment"  # task 1 train files only (headlines and posts)
FIRE_RELATIONS = frozenset(
    {"BELONGS_TO", "DISCLOSES", "EXECUTIVE_OF", "HAS_CEO", "HAS_CHAIRMAN", "HAS_STAKE_IN",
     "INVOLVED_IN", "OPERATES_IN", "PRODUCES"}
)  # fmt: skip


def texts(source: str) -> list[str]:
    if source == "twitter":
        with TWITTER.open(encoding="utf-8") as fh:
            rows = [re.sub(r"https?://\S+", "", r["text"]).strip() for r in csv.DictReader(fh)]
    elif source == "fiqa":
        rows = []
        for name in ("task1_headline_ABSA_train.json", "task1_post_ABSA_train.json"):
            data = json.loads((FIQA / name).read_text(encoding="utf-8"))
            rows += [re.sub(r"https?://\S+", "", r["sentence"]).strip() for r in data.values()]
    elif source == "tenk":
        rows = []
        for f in sorted(TENK.glob("*.txt")):
            if int(hashlib.sha1(f.name.encode()).hexdigest(), 16) % 5 == 0:
                continue  # the corpus's test split
            parts = re.split(r"(?<=[.!?])\s+(?=[A-Z])|\n\s*\n", f.read_text(encoding="utf-8"))
            rows += [" ".join(p.split()) for p in parts if len(" ".join(p.split())) < 600]
    else:
        with KPI.open(encoding="utf-8") as fh:
            rows = [json.loads(line)["text"] for line in fh]
    return sorted({t for t in rows if len(t) > 30})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", choices=("twitter", "kpi", "tenk", "fiqa"), default="twitter")
    ap.add_argument("--sample", type=int, default=0, help="random triples per rule (0: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default="", help="write the triples to this file")
    args = ap.parse_args()
    path = {"twitter": TWITTER, "kpi": KPI, "tenk": TENK, "fiqa": FIQA}[args.source]
    if not path.exists():
        raise SystemExit(f"{path} is absent (../shared/data)")
    docs = [ExtractDoc(id=f"{args.source}-{i}", text=t) for i, t in enumerate(texts(args.source))]
    results = asyncio.run(Extractor(index=bundled_index()).extract_many(docs, Mode.FAST))
    found = [
        {"rule": t.extractor, "head": t.head, "relation": t.relation, "tail": t.tail,
         "text": r.doc.text}
        for r in results
        for t in r.triples
        if t.relation in FIRE_RELATIONS
    ]  # fmt: skip
    print(f"{len(docs)} sentences, {len(found)} triples of FIRE's relations")
    by_rule = Counter(f["rule"] for f in found)
    rng = random.Random(args.seed)
    for rule, n in by_rule.most_common():
        rows = [f for f in found if f["rule"] == rule]
        if args.sample and len(rows) > args.sample:
            rows = rng.sample(rows, args.sample)
        print(f"== {rule} ({n})")
        for f in rows:
            print(f"  {f['head']} | {f['relation']} | {f['tail']} || {f['text'][:140]}")
    if args.json:
        Path(args.json).write_text(json.dumps(found, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main()
