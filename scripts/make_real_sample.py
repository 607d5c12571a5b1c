"""Rebuild the bundled sample day in connectors/samples/ from public data (deterministic).

The day is 2024-09-18, the FOMC's first cut of the 2024 easing cycle (50 bp, one
dissent). Real records (sources named in their ``source`` field):

* US Treasury daily par yield curve (1M..30Y) and FRED SOFR, DFF for a year before the day
  and the day itself (``../shared/data/market_corpus/rates``; public domain / NY Fed with
  attribution);
* the federal funds target range (upper bound) read from the FOMC statements' text;
* the 2024-07-31 and 2024-09-18 FOMC statements (Federal Reserve Board press releases);
* short excerpts of real 10-K sections (SEC EDGAR filing text, public record).

What has no real offline source (Chinese daily rates, news, social posts, one fictional
10-K) stays synthetic: re-dated from the previous synthetic sample, every record with
``source`` "synthetic:sample", and invented events only on fictional companies.

Run: python scripts/make_real_sample.py [--corpus ../shared/data/market_corpus]
"""

from __future__ import annotations

import argparse
import csv
import json
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from kg.report.market import fed_rate_number

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "connectors" / "samples"
DAY = date(2024, 9, 18)
OLD_DAY = date(2026, 11, 20)  # the previous synthetic sample day (records are re-dated)
SHIFT = DAY - OLD_DAY
HISTORY_START = date(2023, 9, 18)
SYN = "synthetic:sample"
TREASURY_SRC = "us-treasury:daily-par-yield-curve"
TENORS = [  # column, indicator id, name
    ("1 Mo", "US1M", "US 1-month Treasury par yield"),
    ("3 Mo", "US3M", "US 3-month Treasury par yield"),
    ("6 Mo", "US6M", "US 6-month Treasury par yield"),
    ("1 Yr", "US1Y", "US 1-year Treasury par yield"),
    ("2 Yr", "US2Y", "US 2Y Treasury yield"),
    ("5 Yr", "US5Y", "US 5-year Treasury par yield"),
    ("10 Yr", "US10Y", "US 10Y Treasury yield"),
    ("30 Yr", "US30Y", "US 30-year Treasury par yield"),
]
FRED = [  # file, column, indicator id, name, source
    ("fred_SOFR.csv", "SOFR", "SOFR", "Secured Overnight Financing Rate (SOFR)",
     "fred:SOFR (Source: Federal Reserve Bank of New York)"),
    ("fred_DFF.csv", "DFF", "US_EFFR", "US effective federal funds rate", "fred:DFF"),
]  # fmt: skip
STATEMENTS = ("2024-07-31", "2024-09-18")
FILINGS_10K = [  # file, company id, name, cik, chars
    ("jpm_10k_fy2022_item_1a_risk_factors.txt", "JPM", "JPMorgan Chase & Co.", "0000019617"),
    ("axp_10k_fy2022_item_7_mdna.txt", "AXP", "American Express Company", "0000004962"),
]
# Invented events on real companies in the previous synthetic news: moved to fictional
# companies (and their entity ids) so that no real company carries an invented event.
FICTIONAL = {
    "AAPL": ("Aster Devices", "Apple"),
    "MSFT": ("Bluefin Software", "Microsoft"),
    "NVDA": ("Cobalt Chips", "Nvidia"),
    "TSLA": ("Delta Motors", "Tesla"),
    "JPM": ("Eastgate Bank", "JPMorgan Chase"),
    "600519.SH": ("远山酒业", "贵州茅台"),
    "601398.SH": ("青松银行", "工商银行"),
    "000001.SZ": ("白鹭银行", "平安银行"),
    "300750.SZ": ("星河电池", "宁德时代"),
    "601318.SH": ("长风保险", "中国平安"),
}


def _ts(day: date, hh: int = 21) -> str:
    return f"{day.isoformat()}T{hh:02d}:00:00Z"


def _tick(ind: str, name: str, value: float, day: date, source: str, hh: int = 21) -> dict:
    return {"source": source, "indicator_id": ind, "name": name, "unit": "%",
            "value": value, "event_time": _ts(day, hh), "frequency": "daily"}  # fmt: skip


def treasury(corpus: Path) -> list[dict]:
    rows = []
    with open(corpus / "rates" / "us_treasury_par_yield_curve_daily_2021_2025.csv") as fh:
        for r in csv.DictReader(fh):
            d = date.fromisoformat(r["Date"])
            if HISTORY_START <= d <= DAY:
                for col, ind, name in TENORS:
                    if r.get(col):
                        rows.append(_tick(ind, name, float(r[col]), d, TREASURY_SRC))
    return rows


def fred(corpus: Path) -> list[dict]:
    rows = []
    for fname, col, ind, name, src in FRED:
        with open(corpus / "rates" / fname) as fh:
            for r in csv.DictReader(fh):
                d = date.fromisoformat(r["observation_date"])
                if HISTORY_START <= d <= DAY and r.get(col) and d.weekday() < 5:
                    rows.append(_tick(ind, name, float(r[col]), d, src, hh=13))
    return rows


_RANGE = re.compile(
    r"(?:raise|lower|maintain|keep)\s+the target range for the federal funds rate"
    r".*?(?:to|at)\s+([\d\-/]+)\s+to\s+([\d\-/]+)\s+percent"
)


def statement_text(corpus: Path, day: str) -> tuple[str, str]:
    raw = (corpus / "fomc_statements" / f"{day}-fomc-statement.md").read_text(encoding="utf-8")
    _, front, body = raw.split("---", 2)
    url = re.search(r"^url:\s*(\S+)", front, re.M).group(1)  # type: ignore[union-attr]
    body = re.sub(r"\n?For media inquiries.*", "", body, flags=re.S).strip()
    return body, url


def target_upper(corpus: Path) -> list[dict]:
    """The target range's upper bound on each business day, from the statements' text
    (the decision applies from the statement day in this sample)."""
    decisions: list[tuple[date, float]] = []
    for p in sorted((corpus / "fomc_statements").glob("*-fomc-statement.md")):
        d = date.fromisoformat(p.name[:10])
        m = _RANGE.search(p.read_text(encoding="utf-8").replace("\n", " "))
        if m and d <= DAY:
            decisions.append((d, fed_rate_number(m.group(2))))
    rows = []
    d = HISTORY_START
    while d <= DAY:
        if d.weekday() < 5:
            upper = [v for dd, v in decisions if dd <= d][-1]
            rows.append(_tick("US_FFR", "US federal funds target rate (upper bound)", upper, d,
                              "federalreserve.gov:fomc-statement", hh=18))  # fmt: skip
        d += timedelta(days=1)
    return rows


def _redate(ts: str) -> str:
    t = datetime.fromisoformat(ts.replace("Z", "+00:00")) + SHIFT
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def synthetic(rows: list[dict], keep: set[str] | None = None) -> list[dict]:
    out = []
    for r in rows:
        if keep is not None and r.get("indicator_id") not in keep:
            continue
        r = dict(r, source=SYN, event_time=_redate(r["event_time"]))
        out.append(r)
    return out


def _fictional(r: dict) -> dict:
    ents = r.get("entities") or []
    for real, (fake, real_name) in FICTIONAL.items():
        if real in ents:
            ents = [fake if e == real else e for e in ents]
            for k in ("title", "body"):
                if r.get(k):
                    r[k] = r[k].replace(real_name, fake).replace(f"({real})", "")
    r["entities"] = ents
    for k in ("title", "body"):
        if r.get(k):
            r[k] = re.sub(r"\s+", " ", r[k].replace("November 20", "September 18"))
            r[k] = r[k].replace("（合成样例）", "").replace("(synthetic)", "").strip()
    return r


def news(corpus: Path, old: list[dict]) -> list[dict]:
    out = []
    for r in old:
        if "FED" in (r.get("entities") or []):
            continue  # replaced by the real statements below
        out.append(_fictional(dict(r, source=SYN, event_time=_redate(r["event_time"]))))
    for day in STATEMENTS:
        body, url = statement_text(corpus, day)
        out.append({
            "source": "federalreserve.gov", "title": "Federal Reserve issues FOMC statement",
            "body": body, "event_time": f"{day}T18:00:00Z", "entities": ["FED"],
            "lang": "en", "url": url,
        })  # fmt: skip
    out.sort(key=lambda r: r["event_time"])
    return out


def social(old: list[dict]) -> list[dict]:
    out = []
    for r in old:
        text = r["text"]
        for short, code, fake in (
            ("茅台", "600519", "远山酒业"),
            ("宁德时代", "300750", "星河电池"),
            ("平安银行", "000001", "白鹭银行"),
        ):
            text = text.replace(short + code, fake)
        for real, (fake, real_name) in FICTIONAL.items():
            text = text.replace(f"${real}", f"${fake.split()[0].upper()}")
            text = text.replace(real.split(".")[0], fake).replace(real_name, fake)
        out.append(dict(r, source=SYN, text=text, event_time=_redate(r["event_time"])))
    return out


def filings(corpus: Path, old: list[dict]) -> list[dict]:
    idx = {r["file"]: r for r in csv.DictReader(open(corpus / "sec_10k" / "index.csv"))}
    out = []
    for fname, cid, name, cik in FILINGS_10K:
        text = (corpus / "sec_10k" / fname).read_text(encoding="utf-8")
        text = re.sub(r"[ \t]+", " ", text)[:3000]
        text = text[: text.rfind(".") + 1]
        meta = idx[fname]
        out.append({
            "source": "sec-edgar:10-K", "company": cid, "form_type": "10-K",
            "title": f"{name} 10-K FY{meta['fiscal_year']} {meta['section']} (excerpt)",
            "text": text, "event_time": "2024-09-16T12:00:00Z",
            "url": f"https://www.sec.gov/cgi-bin/browse-edgar?action=getcompany&CIK={cik}"
                   "&type=10-K",
        })  # fmt: skip
    for r in old:  # the fictional company's 10-K stays (synthetic)
        if r["company"].startswith("Contoso"):
            out.append(dict(r, source=SYN, event_time=_redate(r["event_time"])))
    return out


def _read(name: str) -> list[dict]:
    return [json.loads(x) for x in (OUT / name).read_text(encoding="utf-8").splitlines() if x]


def _write(name: str, rows: list[dict]) -> None:
    with open(OUT / name, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/data/market_corpus")
    ap.add_argument("--old", type=Path, default=None, help="folder of the old synthetic sample")
    a = ap.parse_args()
    global OUT
    src = a.old or OUT
    old = {n: [json.loads(x) for x in (src / n).read_text().splitlines() if x]
           for n in ("ticks.jsonl", "ticks_history.jsonl", "news.jsonl", "social.jsonl",
                     "filings.jsonl")}  # fmt: skip
    if any(r["source"] != "sample-synthetic" for r in old["ticks.jsonl"]):
        raise SystemExit("--old must be the previous synthetic sample (git show it)")
    real = treasury(a.corpus) + fred(a.corpus) + target_upper(a.corpus)
    day_rows = [r for r in real if r["event_time"].startswith(DAY.isoformat())]
    hist = [r for r in real if not r["event_time"].startswith(DAY.isoformat())]
    cn = {"CN10Y", "CN1Y", "SHIBOR_ON", "SHIBOR_3M", "DR007"}
    monthly = {"CN_CPI", "CN_PPI", "CN_PMI", "CN_M1", "CN_M2", "CN_LPR_1Y", "US_CPI"}
    day_rows += synthetic(old["ticks.jsonl"], cn)
    hist += synthetic(old["ticks_history.jsonl"], cn | monthly)
    hist.sort(key=lambda r: r["event_time"], reverse=True)  # newest first: no alerts
    _write("ticks.jsonl", day_rows)
    _write("ticks_history.jsonl", hist)
    _write("news.jsonl", news(a.corpus, old["news.jsonl"]))
    _write("social.jsonl", social(old["social.jsonl"]))
    _write("filings.jsonl", filings(a.corpus, old["filings.jsonl"]))


if __name__ == "__main__":
    main()
