"""Regenerate the bundled SYNTHETIC sample day in connectors/samples/ (deterministic).

Every record is invented for demos and tests (source "sample-synthetic"); none of it
is real market data. Run: python scripts/make_samples.py
"""

from __future__ import annotations

import json
import math
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "connectors" / "samples"
DAY = datetime(2026, 11, 20, tzinfo=UTC)
SRC = "sample-synthetic"
rng = random.Random(20261120)

INDICATORS = [  # id, name, unit, start value, daily vol
    ("CN10Y", "China 10Y government bond yield", "%", 1.82, 0.02),
    ("CN1Y", "China 1Y government bond yield", "%", 1.41, 0.02),
    ("SHIBOR_ON", "SHIBOR overnight", "%", 1.36, 0.04),
    ("SHIBOR_3M", "SHIBOR 3 month", "%", 1.58, 0.01),
    ("DR007", "7-day interbank repo rate (DR007)", "%", 1.49, 0.03),
    ("US10Y", "US 10Y Treasury yield", "%", 4.18, 0.05),
    ("US2Y", "US 2Y Treasury yield", "%", 3.61, 0.05),
]

COMPANIES = [  # ticker, name
    ("AAPL", "Apple"), ("MSFT", "Microsoft"), ("NVDA", "Nvidia"), ("JPM", "JPMorgan Chase"),
    ("TSLA", "Tesla"), ("600519.SH", "贵州茅台"), ("601398.SH", "工商银行"),
    ("000001.SZ", "平安银行"), ("300750.SZ", "宁德时代"), ("601318.SH", "中国平安"),
]  # fmt: skip

EN_TEMPLATES = [
    ("{name} shares rise after quarterly revenue beats estimates", 1),
    ("{name} cuts full-year guidance as demand slows", -1),
    ("{name} announces $10 billion share buyback", 1),
    ("Regulators open probe into {name} accounting practices", -1),
    ("{name} holds steady ahead of central bank decision", 0),
    ("Analysts upgrade {name} to buy on margin recovery", 1),
    ("{name} faces downgrade as credit spreads widen", -1),
]
ZH_TEMPLATES = [
    ("{name}三季度净利润同比增长15%，超出市场预期", 1),
    ("{name}公告控股股东减持计划，股价承压", -1),
    ("{name}发布年度分红方案，每10股派现30元", 1),
    ("{name}收到监管问询函，涉及关联交易", -1),
    ("{name}召开业绩说明会，管理层维持全年指引", 0),
]
MACRO_NEWS = [
    ("央行开展2000亿元7天期逆回购操作，中标利率持平", "PBOC", 0),
    ("PBOC keeps one-year loan prime rate unchanged at 3.0%", "PBOC", 0),
    ("10年期国债收益率下行至年内低点，债市情绪偏暖", "CN10Y", 1),
    ("US Treasury yields climb as inflation data surprises to the upside", "US10Y", -1),
    ("Fed officials signal patience on further rate cuts", "US10Y", 0),
    ("China October CPI rises 0.3% year on year, PPI decline narrows", "CN_CPI", 0),
    ("Caixin manufacturing PMI slips below 50, signalling contraction", "CN_PMI", -1),
    ("M2货币供应量同比增长8.2%，社融规模回升", "CN_M2", 1),
]


def iso(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def write(name: str, rows: list[dict]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / name, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def ticks() -> list[dict]:
    rows = []
    for ind, name, unit, start, vol in INDICATORS:
        value = start
        for i in range(96):  # every 5 minutes over 8 hours
            t = DAY + timedelta(hours=1, minutes=5 * i)
            value += rng.gauss(0, vol / math.sqrt(96))
            if ind == "SHIBOR_ON" and i == 60:
                value += 0.12  # a synthetic jump the move detector should flag
            rows.append({
                "source": SRC, "indicator_id": ind, "name": name, "unit": unit,
                "value": round(value, 4), "event_time": iso(t), "frequency": "instant",
            })  # fmt: skip
    rows.sort(key=lambda r: r["event_time"])
    return rows


def news() -> list[dict]:
    rows = []
    for i in range(48):
        t = DAY + timedelta(minutes=10 * i + rng.randint(0, 9))
        if i % 4 == 3:
            title, entity, _ = MACRO_NEWS[(i // 4) % len(MACRO_NEWS)]
            rows.append({"source": SRC, "title": title, "event_time": iso(t), "entities": [entity],
                         "url": f"https://example.invalid/news/{i}"})  # fmt: skip
            continue
        ticker, name = COMPANIES[i % len(COMPANIES)]
        zh = not ticker.isalpha()
        templates = ZH_TEMPLATES if zh else EN_TEMPLATES
        title, _ = templates[rng.randrange(len(templates))]
        body = "" if zh else f"{name} ({ticker}) traded actively on {DAY:%B %d}. Synthetic sample."
        rows.append({
            "source": SRC, "title": title.format(name=name), "body": body,
            "event_time": iso(t), "entities": [ticker], "lang": "zh" if zh else "en",
            "url": f"https://example.invalid/news/{i}",
        })  # fmt: skip
    return rows


def social() -> list[dict]:
    posts = [
        "$AAPL looking strong into the close, adding more",
        "Selling my $TSLA here, margins keep shrinking",
        "$NVDA guidance was insane. Still bullish",
        "Bond market rally continues, 10Y yields dropping",
        "$JPM earnings next week, expecting a beat",
        "茅台600519又涨了，白酒板块集体走强",
        "宁德时代300750回调，新能源情绪转弱",
        "$MSFT cloud numbers disappoint, watching support",
        "Funding stress? overnight SHIBOR jumped today",
        "平安银行000001今天放量下跌，注意风险",
    ]
    rows = []
    for i in range(30):
        t = DAY + timedelta(minutes=15 * i + rng.randint(0, 14))
        rows.append({"source": SRC, "author": f"user{i % 7}", "text": posts[i % len(posts)] + f" #{i}",
                     "event_time": iso(t)})  # fmt: skip
    return rows


def filings() -> list[dict]:
    return [
        {
            "source": SRC, "company": "AAPL", "form_type": "8-K",
            "title": "Apple Inc. current report (synthetic excerpt)",
            "text": "Item 2.02 Results of Operations and Financial Condition. On November 20, 2026, "
                    "the registrant announced revenue of $94.9 billion for its fiscal quarter, "
                    "an increase of 6% year over year. Net income was $23.6 billion. "
                    "This excerpt is synthetic sample data.",
            "tables": [[["Metric", "Q4 FY26", "Q4 FY25"], ["Revenue ($bn)", "94.9", "89.5"],
                        ["Net income ($bn)", "23.6", "22.9"]]],
            "event_time": iso(DAY + timedelta(hours=5)), "url": "https://example.invalid/8k/1",
        },
        {
            "source": SRC, "company": "601398.SH", "form_type": "announcement",
            "title": "工商银行关于发行二级资本债券的公告（合成样例）",
            "text": "本行于2026年11月20日在全国银行间债券市场成功发行总额为300亿元人民币的二级资本债券，"
                    "品种为10年期固定利率债券，票面利率为2.05%。本文为合成样例数据。",
            "event_time": iso(DAY + timedelta(hours=6)), "url": "https://example.invalid/ann/1",
        },
    ]  # fmt: skip


def main() -> None:
    import extract_samples  # richer documents for knowledge extraction (scripts/)

    write("ticks.jsonl", ticks())
    write("news.jsonl", news() + extract_samples.news())
    write("social.jsonl", social())
    write("filings.jsonl", filings() + extract_samples.filings())
    (OUT / "README.md").write_text(
        "# Sample day (SYNTHETIC)\n\nEvery record here is invented by `scripts/make_samples.py` "
        "for demos and tests (source `sample-synthetic`). None of it is real market data.\n"
    )


if __name__ == "__main__":
    main()
