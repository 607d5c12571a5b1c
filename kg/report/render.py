"""Markdown, HTML and a matplotlib chart of the key yields for a bond report."""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path

from kg.report.facts import Series
from kg.report.model import BondReportDoc

CHART_SERIES = ("CN10Y", "CN1Y", "US10Y", "US2Y", "DR007")


def chart(series: Mapping[str, Series], path: Path, *, days: int = 183) -> Path | None:
    """PNG of the key yields over the last ``days``; None when there is nothing to plot."""
    picked = {k: series[k] for k in CHART_SERIES if k in series and series[k].points}
    if not picked:
        return None
    import matplotlib

    matplotlib.use("Agg")  # no display; safe in worker threads
    import matplotlib.pyplot as plt

    end = max(s.points[-1].day for s in picked.values())
    fig, ax = plt.subplots(figsize=(8, 4), dpi=100)
    try:
        for sid, s in picked.items():
            pts = [p for p in s.points if (end - p.day).days <= days]
            ax.plot([p.day for p in pts], [p.value for p in pts], label=sid, linewidth=1.4)
        ax.set_ylabel("%")
        ax.set_title(f"Key yields to {end}")
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize=8)
        fig.autofmt_xdate()
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path)
    finally:
        plt.close(fig)
    return path


MODEL_MISSING = (
    "The language model was unavailable or too slow for this report: its commentary is "
    "missing and each section holds the computed analysis only."
)


def markdown(doc: BondReportDoc) -> str:
    lines = [f"# Bond market report {doc.at[:16].replace('T', ' ')} UTC", ""]
    if doc.chart:
        lines += [f"![Key yields]({Path(doc.chart).name})", ""]
    if doc.missing or doc.stale:
        missing = ", ".join(doc.missing) or "none"
        stale = ", ".join(doc.stale) or "none"
        lines += [f"> Missing indicators: {missing}. Stale indicators: {stale}.", ""]
    if doc.model_missing:
        lines += [f"> {MODEL_MISSING}", ""]
    for s in doc.sections:
        lines += [f"## {s.question}", "", s.text or "_No analysis could be produced._", ""]
        if s.facts:
            lines += ["Facts (computed from the graph):", ""]
            lines += [f"- {f.text} _(sources: {', '.join(f.sources[:3])})_" for f in s.facts]
            lines.append("")
        if s.triples:
            lines += ["Knowledge-graph triples:", ""]
            for t in s.triples:
                src = ", ".join((t.provenance.doc_ids or t.provenance.sources)[:2]) or "static"
                lines.append(f"- {t.text} _(source: {src}; {t.method.value})_")
            lines.append("")
        if s.removed:
            lines += ["Removed (unsupported numbers):", ""]
            lines += [f"- ~~{r.sentence}~~ ({', '.join(r.numbers)})" for r in s.removed]
            lines.append("")
    models = ", ".join(f"{k}: {v}" for k, v in doc.models.items())
    lines += ["---", f"Models: {models}. Text quality depends on the configured model; facts "
              "are computed, not generated.", ""]  # fmt: skip
    return "\n".join(lines)


def to_html(doc: BondReportDoc) -> str:
    e = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>Bond market report {e(doc.at)}</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:auto}"
        ".src{color:#666;font-size:90%}del{color:#a00}</style></head><body>",
        f"<h1>Bond market report {e(doc.at[:16].replace('T', ' '))} UTC</h1>",
    ]
    if doc.chart:
        parts.append(f"<img alt='Key yields' src='{e(Path(doc.chart).name)}'>")
    if doc.missing or doc.stale:
        parts.append(f"<p><b>Missing:</b> {e(', '.join(doc.missing) or 'none')}. "
                     f"<b>Stale:</b> {e(', '.join(doc.stale) or 'none')}.</p>")  # fmt: skip
    if doc.model_missing:
        parts.append(f"<p><b>{e(MODEL_MISSING)}</b></p>")
    for s in doc.sections:
        parts.append(
            f"<h2>{e(s.question)}</h2><p>{e(s.text or 'No analysis could be produced.')}</p>"
        )
        if s.facts:
            parts.append("<h3>Facts</h3><ul>" + "".join(
                f"<li>{e(f.text)} <span class='src'>{e(', '.join(f.sources[:3]))}</span></li>"
                for f in s.facts) + "</ul>")  # fmt: skip
        if s.triples:
            parts.append("<h3>Knowledge-graph triples</h3><ul>" + "".join(
                f"<li>{e(t.text)} <span class='src'>"
                f"{e(', '.join((t.provenance.doc_ids or t.provenance.sources)[:2]) or 'static')}"
                f"</span></li>" for t in s.triples) + "</ul>")  # fmt: skip
        if s.removed:
            parts.append("<h3>Removed</h3><ul>" + "".join(
                f"<li><del>{e(r.sentence)}</del> ({e(', '.join(r.numbers))})</li>"
                for r in s.removed) + "</ul>")  # fmt: skip
    models = ", ".join(f"{k}: {v}" for k, v in doc.models.items())
    parts.append(f"<hr><p class='src'>Models: {e(models)}. Text quality depends on the "
                 "configured model; facts are computed.</p>")  # fmt: skip
    parts.append("</body></html>")
    return "\n".join(parts)
