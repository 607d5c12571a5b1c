"""``livekg bench report``: the bond report's own time on the bundled sample day.

The report is built in-process from the sample's series and documents (no graph, no
model: the graph read is the ``graph`` reference's business), ``n`` times, in English and
Chinese, with its files. The same-run reference does the same arithmetic with no livekg
code: for each series of the sample, the 1d/1w/1m changes and the 60-day volatility
with plain Python loops, and the text joined from f-strings. ``ratio`` = report time /
reference time (how much the facts, rules, number check and rendering cost on top).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from connectors.replay import SAMPLES_DIR
from core.settings import Settings
from kg.report import DocIn, build_bond_report
from kg.report.facts import indicator_catalog, series_from_rows

AT = "2024-09-18T22:00:00Z"


def sample_rows() -> list[dict[str, Any]]:
    """The bundled sample day's ticks (history, then the day) as series rows."""
    rows = []
    for name in ("ticks_history.jsonl", "ticks.jsonl"):
        for i, line in enumerate((SAMPLES_DIR / name).read_text().splitlines()):
            r = json.loads(line)
            t = datetime.fromisoformat(r["event_time"].replace("Z", "+00:00"))
            rows.append({"ind": r["indicator_id"], "t": int(t.timestamp() * 1000),
                         "v": r["value"], "id": f"{name}:{i}", "src": r["source"]})  # fmt: skip
    return rows


def sample_docs() -> list[DocIn]:
    """The bundled sample news as report documents (ids ``sample-news-<line>``)."""
    docs = []
    for i, line in enumerate((SAMPLES_DIR / "news.jsonl").read_text().splitlines()):
        r = json.loads(line)
        t = datetime.fromisoformat(r["event_time"].replace("Z", "+00:00"))
        docs.append(DocIn(id=f"sample-news-{i}", title=r["title"], text=r.get("body") or "",
                          source=r["source"], published_at=int(t.timestamp() * 1000),
                          entities=r.get("entities", [])))  # fmt: skip
    return docs


def _reference(rows: list[dict[str, Any]]) -> str:
    """The same arithmetic in plain Python: daily closes, changes, volatility, text."""
    by: dict[str, dict[str, float]] = {}
    for r in rows:
        day = datetime.fromtimestamp(r["t"] / 1000, UTC).date().isoformat()
        by.setdefault(r["ind"], {})[day] = r["v"]
    out = []
    for ind, days in sorted(by.items()):
        keys = sorted(days)
        vals = [days[k] for k in keys]
        if len(vals) < 25:
            continue
        d1, d5, d21 = (round((vals[-1] - vals[-1 - n]) * 100, 1) for n in (1, 5, 21))
        diffs = [(b - a) * 100 for a, b in zip(vals[-62:-1], vals[-61:], strict=False)]
        vol = statistics.pstdev(diffs) if len(diffs) > 1 else 0.0
        out.append(f"{ind} {vals[-1]:.2f}% {d1:+.1f} {d5:+.1f} {d21:+.1f} bp (vol {vol:.1f})")
    return "\n".join(out)


def run_report_bench(settings: Settings, *, n: int = 20) -> dict[str, Any]:
    rows, docs = sample_rows(), sample_docs()
    series = series_from_rows(rows, indicator_catalog())
    cfg = settings.report
    times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:

        async def once(lang: str) -> Any:
            return await build_bond_report(None, cfg, at=AT, series=series, docs=docs,
                                           lang=lang, out_dir=Path(tmp))  # fmt: skip

        asyncio.run(once("en"))  # warm-up (imports, caches)
        for i in range(n):
            t = time.perf_counter()
            doc = asyncio.run(once("zh" if i % 2 else "en"))
            times.append(time.perf_counter() - t)
    ref: list[float] = []
    for _ in range(n):
        t = time.perf_counter()
        _reference(rows)
        ref.append(time.perf_counter() - t)
    p50 = statistics.median(times)
    ref50 = statistics.median(ref)
    q = statistics.quantiles(times, n=20) if len(times) >= 2 else times * 19
    return {
        "ok": True, "bench": "report", "n": n, "as_of": doc.as_of,
        "p50_ms": round(p50 * 1000, 2), "p95_ms": round(q[18] * 1000, 2),
        "unsupported_numbers": len(doc.unsupported_numbers),
        "reference": {"name": "same_arithmetic_plain_python", "p50_ms": round(ref50 * 1000, 2)},
        "ratio": round(p50 / ref50, 2) if ref50 else None,
        "note": "in-process, no graph read and no model; the machine is shared (noisy)",
    }  # fmt: skip
