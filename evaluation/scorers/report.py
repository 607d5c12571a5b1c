"""``livekg eval report``: the report's rule conclusions against a self-written reference
set of conclusions for real market days (evaluation/evalsets/report_reference.jsonl, written by
someone who had not seen the report code; label definitions in REPORT_REFERENCE.md).

For each reference the series are read from the shared market corpus (and the ChinaBond
curve) at run time, the report's signals are computed at its ``as_of`` and the rules of
its kind and window are run; the conclusion's label and reasons are compared with the
reference. The set is split deterministically before any tuning: odd ids are dev (rules
may be tuned on them), even ids are test (never tuned on); both figures are reported.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from datetime import date
from pathlib import Path
from typing import Any

from kg.report import market
from kg.report.facts import IndicatorMeta, Point, Series
from kg.report.rules import Rules, evaluate, load_rules

REFERENCE = Path(__file__).resolve().parents[1] / "evalsets" / "report_reference.jsonl"
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def split_of(ref_id: str) -> str:
    """dev for odd ids, test for even ones (fixed before tuning)."""
    return "dev" if int(ref_id.rsplit("-", 1)[1]) % 2 else "test"


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _series(ind: str, values: dict[date, float], src: str) -> Series:
    pts = [Point(day=d, value=v, ref=f"{src}:{d}", source=src) for d, v in sorted(values.items())]
    return Series(meta=IndicatorMeta(id=ind, name=ind), points=pts)


def load_corpus(shared: Path) -> tuple[dict[str, Series], list[market.PolicyEvent]]:
    """US 3M/2Y/10Y (Treasury par curve, FRED H.15 for the days it lacks), CN 1Y/10Y
    (ChinaBond), and the FOMC decisions (statements, then DFF steps after them)."""
    mc = shared / "market_corpus"
    us: dict[str, dict[date, float]] = {"US3M": {}, "US2Y": {}, "US10Y": {}}
    for r in _csv(mc / "rates" / "us_treasury_par_yield_curve_daily_2021_2025.csv"):
        d = date.fromisoformat(r["Date"])
        for col, ind in (("3 Mo", "US3M"), ("2 Yr", "US2Y"), ("10 Yr", "US10Y")):
            if r.get(col):
                us[ind][d] = float(r[col])
    fred: dict[str, dict[date, float]] = {}
    for name in ("DGS10", "T10Y2Y", "T10Y3M"):
        fred[name] = {date.fromisoformat(r["observation_date"]): float(r[name])
                      for r in _csv(mc / "rates" / f"fred_{name}.csv") if r.get(name)}  # fmt: skip
    for d, ten in fred["DGS10"].items():
        if d.year < 2021 or d in us["US10Y"]:
            continue
        us["US10Y"][d] = ten
        if d in fred["T10Y2Y"]:
            us["US2Y"][d] = round(ten - fred["T10Y2Y"][d], 2)
        if d in fred["T10Y3M"]:
            us["US3M"][d] = round(ten - fred["T10Y3M"][d], 2)
    series = {k: _series(k, v, "market_corpus") for k, v in us.items()}
    cn_path = shared / "china_rates" / "cn_gov_bond_yield_curve.csv"
    if cn_path.is_file():
        cn1: dict[date, float] = {}
        cn10: dict[date, float] = {}
        for r in _csv(cn_path):
            if r["date"] == "2023-12-31":  # a carry-forward row, not a trading day
                continue
            d = date.fromisoformat(r["date"])
            if r.get("y_1y") and r.get("y_10y"):
                cn1[d], cn10[d] = float(r["y_1y"]), float(r["y_10y"])
        series["CN1Y"] = _series("CN1Y", cn1, "china_rates")
        series["CN10Y"] = _series("CN10Y", cn10, "china_rates")
    statements = []
    for p in sorted((mc / "fomc_statements").glob("*-fomc-statement.md")):
        statements.append((date.fromisoformat(p.name[:10]), p.read_text(encoding="utf-8"),
                           p.name, "fomc_statement"))  # fmt: skip
    events = market.events_from_statements(statements)
    last = max(e.day for e in events) if events else date.min
    dff = _series("DFF", {date.fromisoformat(r["observation_date"]): float(r["DFF"])
                          for r in _csv(mc / "rates" / "fred_DFF.csv") if r.get("DFF")},
                  "fred_DFF")  # fmt: skip
    events += [e for e in market.events_from_steps(dff.points) if e.day > last]
    return series, events


def conclude(rules: Rules, series: dict[str, Series], events: list[market.PolicyEvent],
             ref: dict[str, Any]) -> dict[str, Any] | None:  # fmt: skip
    """The report's conclusion for one reference entry (None: no rule fired)."""
    day = date.fromisoformat(ref["as_of"])
    signals, _ = market.all_signals(rules, series, day, events)
    out = evaluate(rules, signals, kinds={ref["kind"]}, windows={ref["window"]})
    if not out:
        return None
    c = out[0]
    return {"label": c.label, "because": c.because, "signals": c.signals}


def run_report_eval(reference: Path | None = None, shared: Path | None = None) -> dict[str, Any]:
    shared = shared or SHARED
    if not (shared / "market_corpus" / "rates").is_dir():
        return {"ok": True, "skipped": True,
                "reason": f"market corpus not found at {shared / 'market_corpus'}"}  # fmt: skip
    rules = load_rules()
    series, events = load_corpus(shared)
    refs = [json.loads(x) for x in (reference or REFERENCE).read_text().splitlines() if x.strip()]
    per: dict[str, dict[str, dict[str, int]]] = defaultdict(
        lambda: defaultdict(lambda: {"n": 0, "label": 0, "because": 0, "no_answer": 0})
    )
    misses = []
    skipped = []
    for ref in refs:
        if ref["kind"].startswith("cn") and "CN10Y" not in series:
            skipped.append(ref["id"])
            continue
        split = split_of(ref["id"])
        got = conclude(rules, series, events, ref)
        for key in (ref["kind"], "all"):
            cell = per[key][split]
            cell["n"] += 1
            if got is None:
                cell["no_answer"] += 1
                continue
            cell["label"] += got["label"] == ref["expected"]
            cell["because"] += sorted(got["because"]) == sorted(ref["because"])
        if (
            got is None
            or got["label"] != ref["expected"]
            or sorted(got["because"]) != sorted(ref["because"])
        ):
            misses.append({"id": ref["id"], "split": split, "kind": ref["kind"],
                           "as_of": ref["as_of"], "window": ref["window"],
                           "expected": [ref["expected"], ref["because"]],
                           "got": [got["label"], got["because"]] if got else None})  # fmt: skip

    def score(c: dict[str, int]) -> dict[str, Any]:
        n = c["n"]
        return {"n": n, "label_agreement": round(c["label"] / n, 3) if n else None,
                "reason_agreement": round(c["because"] / n, 3) if n else None,
                "no_answer": c["no_answer"]}  # fmt: skip

    kinds = {k: {s: score(v[s]) for s in ("dev", "test")} for k, v in sorted(per.items())}
    return {
        "ok": True,
        "set": "self-written reference conclusions (evaluation/evalsets/report_reference.jsonl)",
        "split": "dev = odd ids (tuned on), test = even ids (never tuned on)",
        "n": len(refs) - len(skipped), "skipped": skipped,
        "dev": kinds.get("all", {}).get("dev"), "test": kinds.get("all", {}).get("test"),
        "per_kind": {k: v for k, v in kinds.items() if k != "all"}, "misses": misses,
    }  # fmt: skip
