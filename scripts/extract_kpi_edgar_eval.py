"""Reported-metric facts against KPI-EDGAR train+valid (no rule was written on it): each
sentence goes through the fast path with its filer as ``company``; a predicted
``DISCLOSES`` fact with a figure is correct when its metric matches an annotated KPI (or
thereof) span by ie_dev's name rules and one of its figures is a value span linked to that
KPI (cy / py / py1 / increase / decrease, digits compared). Recall: annotated KPI-value
links found.

Run: .venv/bin/python scripts/extract_kpi_edgar_eval.py
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from kg.extract import ExtractDoc, Extractor, Mode
from kg.extract.pipeline import bundled_index
from kg.graph.names import names_match

KPI = (
    Path(__file__).resolve().parents[2] / "shared/data/ie_dev/kpi_edgar/kpi_edgar_train_valid.jsonl"
)
VALUE_TYPES = {"cy", "py", "py1", "increase", "decrease", "increase_py", "decrease_py"}
FIGURES = ("value", "amount", "val", "value2", "chg", "prior", "prior2", "prior3", "cmp", "raw",
           "level", "vals")  # fmt: skip


def digits(s: str) -> str:
    m = re.search(r"\d[\d,]*(?:\.\d+)?", s)
    return m.group(0).replace(",", "") if m else ""


def main() -> None:
    rows = [json.loads(line) for line in KPI.open(encoding="utf-8")]
    docs = [ExtractDoc(id=r["id"], text=r["text"], company=r.get("company", ""), kind="filing",
                       lang="en") for r in rows]  # fmt: skip
    ex = Extractor(index=bundled_index())
    results = asyncio.run(ex.extract_many(docs, Mode.FAST))
    pred_n = correct = 0
    links_total = links_found = 0
    for row, res in zip(rows, results, strict=True):
        spans = row["spans"]
        pairs = []  # (kpi text, value digits)
        for link in row["links"]:
            a, b = spans[link["head"]], spans[link["tail"]]
            k, v = (a, b) if a["type"] in ("kpi", "thereof", "kpi_coref") else (b, a)
            if k["type"] in ("kpi", "thereof", "kpi_coref") and v["type"] in VALUE_TYPES:
                pairs.append((k["text"], digits(v["text"])))
        links_total += len(pairs)
        facts = [t for t in res.triples if t.relation == "DISCLOSES"
                 and any(t.attributes.get(f) for f in FIGURES)]  # fmt: skip
        found: set[int] = set()
        for t in facts:
            pred_n += 1
            figs = {digits(str(t.attributes.get(f, ""))) for f in FIGURES} - {""}
            hit = [i for i, (k, v) in enumerate(pairs) if names_match(t.tail, k) and v in figs]
            if hit:
                correct += 1
                found.update(hit)
        links_found += len(found)
    p = correct / pred_n if pred_n else 0.0
    r = links_found / links_total if links_total else 0.0
    with_period = sum(
        1 for res in results for t in res.triples
        if t.relation == "DISCLOSES" and t.attributes.get("period") and t.attributes.get("unit")
    )  # fmt: skip
    print(json.dumps({"sentences": len(rows), "predicted_metric_facts": pred_n,
                      "with_period_and_unit": with_period,
                      "correct": correct, "precision": round(p, 3), "kpi_value_links":
                      links_total, "found": links_found, "recall": round(r, 3)}))  # fmt: skip


if __name__ == "__main__":
    main()
