"""SYNTHETIC documents with real structure (who did what, when, how much) for the sample
day, so knowledge extraction has something to find (used by make_samples.py).

Every company, person and number here is invented or illustrative ("synthetic sample");
none of it is real market data or a real statement.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

DAY = datetime(2026, 11, 20, tzinfo=UTC)
SRC = "sample-synthetic"
NOTE = " (Synthetic sample: invented for the livekg demo.)"


def _iso(minutes: int) -> str:
    return (DAY + timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")


def news() -> list[dict]:
    rows = [
        ("Northwind Robotics names Maria Chen chief executive officer",
         "Northwind Robotics named Maria Chen as chief executive officer, effective December 1, "
         "2026. Northwind Robotics expanded operations in Mexico and Germany this year. "
         "Revenue increased 14% to $3.2 billion, the company said." + NOTE, ["Northwind Robotics"]),
        ("Treasury yields climb after inflation data",
         "The 10-year Treasury yield rose 7 bp to 4.25% on Friday, and the 2-year Treasury "
         "yield climbed 5 bp to 3.66%. The dollar index gained 0.4% to 104.2." + NOTE, ["US10Y"]),
        ("Federal Reserve issues FOMC statement (synthetic)",
         "The Federal Open Market Committee decided to lower the target range for the federal "
         "funds rate by 1/4 percentage point to 3-3/4 to 4 percent. The Committee will continue "
         "reducing its holdings of Treasury securities.\nVoting for the monetary policy action "
         "were Jerome H. Powell, Chair; John C. Williams, Vice Chair; Lisa D. Cook.\n" + NOTE,
         ["FED"]),
        ("Moody's downgrades Harbor Steel",
         "Moody's downgraded Harbor Steel Corp's credit rating to Ba1, citing weaker margins. "
         "Harbor Steel Corp operates in Canada and Brazil." + NOTE, ["Harbor Steel Corp"]),
        ("Contoso Cloud earnings call: cloud revenue up 18%",
         "Contoso Cloud revenue increased 18% to $12.4 billion in the quarter. Operating income "
         "was $4.1 billion. \"We are investing ahead of demand,\" said Lena Park, Contoso CFO. "
         "Contoso announced a partnership with Fabrikam to build data centers in Japan." + NOTE,
         ["Contoso"]),
        ("央行开展逆回购操作，资金面整体宽松（合成样例）",
         "央行开展2000亿元7天期逆回购操作，中标利率持平于1.40%。资金面整体宽松，10年期国债收益率下行3bp至1.78%，"
         "债市走强。受降准预期影响，1年期国债收益率下行2bp至1.35%。本文为合成样例数据。", ["PBOC"]),
        ("债市早报：DR007回落，国开债发行顺利（合成样例）",
         "DR007下行4bp至1.52%，资金面均衡。国家开发银行今日发行300亿元金融债。"
         "中诚信国际将远山地产集团主体信用等级下调至AA。本文为合成样例数据。", ["DR007"]),
    ]  # fmt: skip
    out = []
    for i, (title, body, entities) in enumerate(rows):
        zh = any("\u4e00" <= ch <= "\u9fff" for ch in title)
        out.append({
            "source": SRC, "title": title, "body": body, "event_time": _iso(30 + 55 * i),
            "entities": entities, "lang": "zh" if zh else "en",
            "url": f"https://example.invalid/rich-news/{i}",
        })  # fmt: skip
    return out


def filings() -> list[dict]:
    text = (
        "ITEM 1. BUSINESS\n\nContoso Robotics Inc. designs industrial robots. We operate in "
        "the United States, Japan and Germany. In 2026 we completed our acquisition of Tailspin "
        "Automation.\n\nITEM 1A. RISK FACTORS\n\nCyberattacks on our factories could adversely "
        "affect our operations. Shortages of semiconductor components could harm our margins. "
        "We face risks related to export controls.\n\nITEM 7. MANAGEMENT'S DISCUSSION AND "
        "ANALYSIS\n\nRevenue increased 12% to $4.1 billion. Operating income was $610 million. "
        "(in millions)\n\n| Line item | 2026 | 2025 |\n|---|---|---|\n| Revenue | 4,100 | "
        "3,660 |\n| Operating income | 610 | 540 |\n| Capital expenditures | 350 | 300 |\n\n"
        "This filing is synthetic sample data."
    )
    return [{
        "source": SRC, "company": "Contoso Robotics Inc.", "form_type": "10-K",
        "title": "Contoso Robotics Inc. annual report (synthetic excerpt)", "text": text,
        "event_time": _iso(7 * 60), "url": "https://example.invalid/10k/contoso",
    }]  # fmt: skip
