"""Regenerate the bundled SYNTHETIC indicator history (connectors/samples/ticks_history.jsonl).

Invented for demos and tests (source "sample-synthetic"); none of it is real market
data. About 9.5 months of business-day closes before the sample day (2026-11-20) for
the daily bond indicators of kg/data/universe.json, and monthly releases of the macro
series, with plausible dynamics: mean-reverting random walks bridged so each daily
series ends at the sample day's opening value, month-end funding spikes, two Fed cuts
and one LPR cut. Rows are written newest first: the move detector ignores ticks older
than the last one it saw, so replaying history raises no alerts.
Run: python scripts/make_history.py
"""

from __future__ import annotations

import json
import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "connectors" / "samples" / "ticks_history.jsonl"
SRC = "sample-synthetic"
START, END = date(2026, 2, 2), date(2026, 11, 19)
rng = random.Random(20261119)

# id, name, unit, start, end (= the sample day's first value), daily vol (%), hour UTC
DAILY = [
    ("CN10Y", "China 10Y government bond yield", "%", 1.96, 1.8177, 0.012, 7),
    ("CN1Y", "China 1Y government bond yield", "%", 1.47, 1.4089, 0.010, 7),
    ("SHIBOR_ON", "SHIBOR overnight", "%", 1.42, 1.3592, 0.025, 3),
    ("SHIBOR_3M", "SHIBOR 3 month", "%", 1.66, 1.58, 0.004, 3),
    ("DR007", "7-day interbank repo rate (DR007)", "%", 1.55, 1.49, 0.018, 7),
    ("US10Y", "US 10Y Treasury yield", "%", 4.38, 4.18, 0.035, 21),
    ("US2Y", "US 2Y Treasury yield", "%", 3.95, 3.61, 0.035, 21),
]
FUNDING = {"SHIBOR_ON", "DR007"}
# Policy rates as daily step series: (id, name, [(from day, value)])
POLICY = [
    ("US_FFR", "US federal funds target rate (upper bound)",
     [(START, 4.50), (date(2026, 9, 17), 4.25), (date(2026, 10, 29), 4.00)]),
]  # fmt: skip
# Monthly releases: id, name, unit, values Feb..Nov (released around the 12th-15th)
MONTHLY = [
    ("CN_CPI", "China CPI (YoY)", "%", [0.2, 0.1, 0.3, 0.1, 0.0, 0.2, 0.4, 0.3, 0.2, 0.3]),
    ("CN_PPI", "China PPI (YoY)", "%", [-2.6, -2.5, -2.7, -2.4, -2.3, -2.4, -2.2, -2.1, -2.1, -1.9]),
    ("CN_PMI", "China official manufacturing PMI", "index",
     [49.1, 50.2, 49.5, 49.7, 49.4, 49.8, 49.6, 50.1, 49.8, 49.2]),
    ("CN_M2", "China M2 money supply (YoY)", "%", [7.0, 7.2, 7.4, 7.5, 7.6, 7.9, 8.0, 8.1, 8.2, 8.2]),
    ("CN_M1", "China M1 money supply (YoY)", "%", [0.4, 1.1, 1.5, 2.0, 2.3, 2.8, 3.1, 3.5, 4.0, 4.4]),
    ("CN_LPR_1Y", "China 1Y loan prime rate", "%", [3.1, 3.1, 3.1, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0]),
    ("US_CPI", "US CPI (YoY)", "%", [2.8, 2.6, 2.4, 2.5, 2.7, 2.8, 2.9, 3.0, 2.9, 2.8]),
]  # fmt: skip


def iso(d: date, hour: int) -> str:
    return datetime(d.year, d.month, d.day, hour, tzinfo=UTC).isoformat().replace("+00:00", "Z")


def business_days() -> list[date]:
    days, d = [], START
    while d <= END:
        if d.weekday() < 5:
            days.append(d)
        d += timedelta(days=1)
    return days


def row(ind: str, name: str, unit: str, value: float, when: str, freq: str) -> dict:
    return {"source": SRC, "indicator_id": ind, "name": name, "unit": unit,
            "value": round(value, 4), "event_time": when, "frequency": freq}  # fmt: skip


def daily_rows() -> list[dict]:
    days = business_days()
    n = len(days)
    rows = []
    for ind, name, unit, start, end, vol, hour in DAILY:
        walk, x = [], 0.0
        for _ in days:
            x = 0.97 * x + rng.gauss(0, vol)  # mean-reverting noise around the trend
            walk.append(x)
        for i, d in enumerate(days):
            frac = i / (n - 1)
            # bridge: trend from start to end, noise pinned to 0 at both ends
            value = start + (end - start) * frac + walk[i] - walk[-1] * frac
            if ind in FUNDING and (d + timedelta(days=3)).month != d.month:
                value += 0.06  # month-end funding pressure
            if i == n - 1:
                value = end - 0.005 if ind in FUNDING else end
            rows.append(row(ind, name, unit, value, iso(d, hour), "daily"))
    for ind, name, steps in POLICY:
        for d in days:
            value = [v for since, v in steps if since <= d][-1]
            rows.append(row(ind, name, "%", value, iso(d, 19), "daily"))
    return rows


def monthly_rows() -> list[dict]:
    rows = []
    for ind, name, unit, values in MONTHLY:
        for i, v in enumerate(values):
            month = 2 + i
            day = 20 if ind == "CN_LPR_1Y" else 12
            d = date(2026, month, day)
            if d > END:
                continue
            rows.append(row(ind, name, unit, v, iso(d, 2), "monthly"))
    return rows


def main() -> None:
    rows = daily_rows() + monthly_rows()
    rows.sort(key=lambda r: (r["event_time"], r["indicator_id"]), reverse=True)  # newest first
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(rows)} rows -> {OUT}")


if __name__ == "__main__":
    main()
