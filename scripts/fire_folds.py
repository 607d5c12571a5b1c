"""FIRE dev tune part scored per fold group, for working on rules without the held-out part.

Folds: ``sha1(id) % 10`` (0..6 inside tune). New rules are written looking at folds 0-4
("build") only; folds 5-6 ("check") show whether they generalise. The held-out part
(``% 10 >= 7``) is never read here.

Run: .venv/bin/python scripts/fire_folds.py [--errors REL] [--fp]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

from evaluation.scorers.extract_gold import GoldDoc, doc_fields, read_gold, score
from kg.extract import ExtractDoc, Extractor, Mode
from kg.extract.pipeline import bundled_index

FIRE = Path(__file__).resolve().parents[2] / "shared/data/ie_dev/fire/fire_dev.jsonl"


def fold_of(doc_id: str) -> int:
    return int(hashlib.sha1(doc_id.encode()).hexdigest(), 16) % 10


def predict(docs: list[GoldDoc]) -> dict[str, list[tuple[str, str, str, str]]]:
    ex = Extractor(index=bundled_index())
    edocs = [ExtractDoc.model_validate(doc_fields(g)) for g in docs]
    res = asyncio.run(ex.extract_many(edocs, Mode.FAST))
    return {r.doc.id: [(t.head, t.relation, t.tail, t.extractor) for t in r.triples] for r in res}


def brief(d: dict[str, Any]) -> str:
    return f"tp {d['tp']} fp {d['fp']} fn {d['fn']} P {d['precision']:.3f} R {d['recall']:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--errors", default="", help="list build-fold errors of this relation")
    ap.add_argument("--fp", action="store_true", help="list build-fold false positives")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    docs = read_gold(FIRE, "tune")  # the held-out part is never read
    preds = predict(docs)
    groups = {
        "build(0-4)": [d for d in docs if fold_of(d.id) < 5],
        "check(5-6)": [d for d in docs if fold_of(d.id) >= 5],
        "tune": docs,
    }
    out: dict[str, Any] = {}
    for name, ds in groups.items():
        s = score(ds, {d.id: [p[:3] for p in preds.get(d.id, [])] for d in ds})
        out[name] = s.as_dict(errors=name == "build(0-4)")
    if args.json:
        print(json.dumps({k: {x: v[x] for x in v if x != "errors"} for k, v in out.items()}))
        return
    for name, d in out.items():
        print(f"{name:11s} {brief(d)}")
        for rel, r in d["by_relation"].items():
            print(f"    {rel:13s} {brief(r)}")
    texts = {d.id: d.text for d in docs}
    for e in out["build(0-4)"]["errors"]:
        if (args.fp and e["kind"] == "fp") or (args.errors and args.errors in e["triple"]):
            print(e["kind"], e["doc"], e["triple"], "||", texts[e["doc"]][:220].replace("\n", " "))


if __name__ == "__main__":
    main()
