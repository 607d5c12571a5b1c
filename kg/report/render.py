"""The bond report as text (en/zh), Markdown, HTML and a chart of the key yields.

The text is built from the analysis once, section by section; a sentence is never
written twice (``_Lines`` drops repeats), so each fact appears once.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path

from kg.report.facts import Series
from kg.report.model import BondReportDoc, Table
from kg.report.rules import word

CHART_SERIES = ("US3M", "US2Y", "US10Y", "US30Y", "US_FFR")

T = {
    "title": ("Bond market analysis for {day}", "债券市场分析 {day}"),
    "synthetic": ("Synthetic inputs (sample data, not real): {ids}; synthetic documents are "
                  "never cited for real moves.",
                  "合成输入（样例数据，非真实）：{ids}；合成文档不会被引用来解释真实行情。"),
    "headline": ("What moved", "今日要点"),
    "curve": ("US Treasury curve", "美债收益率曲线"),
    "funding": ("Funding and policy rates", "资金与政策利率"),
    "shape": ("Curve shape", "曲线形态"),
    "policy": ("Policy", "货币政策"),
    "drivers": ("Drivers (from the graph)", "驱动因素（来自知识图谱）"),
    "conclusions": ("Conclusions (rules over computed signals)", "结论（基于计算信号的规则）"),
    "narrative": ("Commentary (model, number-checked)", "评述（模型生成，已核对数字）"),
    "cols": (("tenor", "id", "level %", "1d bp", "1w bp", "1m bp"),
             ("期限", "代码", "收益率 %", "1日 bp", "1周 bp", "1月 bp")),
    "added": ("New in the statement against the previous one", "与上次声明相比新增"),
    "dropped": ("Dropped from the previous statement", "上次声明中被删除"),
    "changed": ("Reworded against the previous statement", "与上次声明相比措辞变化"),
    "was": ("was", "原为"),
    "fact": ("extracted fact", "抽取的事实（原文）"),
    "dissent": ("Dissent", "反对票"),
    "no_policy": ("No policy decision in the data.", "数据中没有货币政策决议。"),
    "signals": ("signals", "信号"),
    "synthetic_tag": (" (synthetic)", "（合成）"),
}  # fmt: skip


def _t(key: str, lang: str) -> str:
    v = T[key]
    return v[0] if lang == "en" else v[1]  # type: ignore[return-value]


class _Lines(list[str]):
    """Lines of text where a repeated (non-empty) line is dropped."""

    def add(self, line: str) -> None:
        if line and line in self:
            return
        self.append(line)


def headline_line(h: object, lang: str) -> str:
    ind, chg, lvl, z, vol = (h.indicator, h.change_bp, h.level, h.z, h.vol_bp)  # type: ignore[attr-defined]
    syn = _t("synthetic_tag", lang) if h.synthetic else ""  # type: ignore[attr-defined]
    if lang == "zh":
        return (f"{ind}{syn} 当日 {chg:+.1f} bp 至 {lvl:.2f}%，为其日波动（{vol:.1f} bp）的 "
                f"{z:+.1f} 倍。")  # fmt: skip
    return (f"{ind}{syn} {chg:+.1f} bp on the day to {lvl:.2f}%, {z:+.1f} sigma of its daily "
            f"volatility ({vol:.1f} bp).")  # fmt: skip


def table_lines(tab: Table, lang: str, labels_zh: Mapping[str, str]) -> list[str]:
    cols = T["cols"][0 if lang == "en" else 1]
    out = [" | ".join(cols)]
    for r in tab.rows:
        if r.level is None:
            continue
        label = r.label if lang == "en" else labels_zh.get(r.id, r.label)
        syn = _t("synthetic_tag", lang) if r.synthetic else ""
        ch = [f"{v:+.1f}" if v is not None else "-" for v in r.changes.values()]
        out.append(" | ".join([label + syn, r.id, f"{r.level:.2f}", *ch]))
    return out


def text(doc: BondReportDoc, lang: str = "en", labels_zh: Mapping[str, str] | None = None) -> str:
    """The whole report as plain text, in one language."""
    zh = labels_zh or doc.extra.get("labels_zh", {})
    L = _Lines()
    L.add(_t("title", lang).format(day=doc.as_of))
    if doc.synthetic:
        L.add(_t("synthetic", lang).format(ids=", ".join(doc.synthetic)))
    if doc.model_note:
        L.add(doc.model_note if lang == "en" else doc.extra.get("model_note_zh", doc.model_note))
    L.add("")
    L.add("## " + _t("headline", lang))
    for h in doc.headline:
        L.add("- " + headline_line(h, lang))
    for key in ("curve", "funding"):
        tab = doc.tables.get(key)
        if tab and tab.rows:
            L.add("")
            L.add("## " + _t(key, lang))
            for line in table_lines(tab, lang, zh):
                L.add(line)
    L.add("")
    L.add("## " + _t("shape", lang))
    for c in doc.curve_shape:
        if c.show:
            L.add("- " + (c.text if lang == "en" else c.text_zh))
    for c in doc.conclusions:
        if c.kind.startswith("inversion"):
            L.add("- " + (c.text if lang == "en" else c.text_zh))
    L.add("")
    L.add("## " + _t("policy", lang))
    decision = [c for c in doc.conclusions if c.kind in ("policy_decision", "policy_path")]
    if doc.policy is None:
        L.add(_t("no_policy", lang))
    else:
        for c in decision:
            L.add("- " + (c.text if lang == "en" else c.text_zh))
        if not any(c.kind == "policy_decision" for c in decision):
            p = doc.policy
            L.add(f"- {p.last_day}: {word(p.decision, lang)} {p.change_bp:+.0f} bp, {p.range}%.")
        src = doc.policy.statement
        quote = "（英文原文）" if lang == "zh" else ""
        cite = f" [source {src.id}]" if src else ""
        for dissent in doc.policy.dissents:
            L.add(f"- {_t('dissent', lang)}{quote}: \u201c{dissent}\u201d{cite}")
        if doc.policy.changed:
            L.add(f"- {_t('changed', lang)}{quote}:")
            for old, new in doc.policy.changed:
                L.add(f"  ~ \u201c{new}\u201d ({_t('was', lang)} \u201c{old}\u201d)")
        if doc.policy.added:
            L.add(f"- {_t('added', lang)}{quote}:")
            for s in doc.policy.added:
                L.add(f"  + \u201c{s}\u201d")
        if doc.policy.dropped:
            L.add(f"- {_t('dropped', lang)}{quote}:")
            for s in doc.policy.dropped:
                L.add(f"  - \u201c{s}\u201d")
    L.add("")
    L.add("## " + _t("drivers", lang))
    for d in doc.drivers:
        cites = "; ".join(
            f"\u201c{c.title}\u201d{_t('synthetic_tag', lang) if c.synthetic else ''} ({c.source}, "
            f"{c.published_at[:10]}) [source {c.id}]" for c in d.citations)  # fmt: skip
        L.add(f"- {d.move}: {cites}")
        for f in d.facts:
            L.add(f"  {_t('fact', lang)}: \u201c{f.title}\u201d [source {f.id}]")
    L.add("")
    L.add("## " + _t("conclusions", lang))
    for c in doc.conclusions:
        if not c.show or c.kind.startswith("inversion") or c.kind.startswith("policy_"):
            continue
        sig = ", ".join(sorted(c.signals))
        L.add(f"- {c.text if lang == 'en' else c.text_zh} [{_t('signals', lang)}: {sig}]")
    prose = doc.extra.get(f"narrative_{lang}", doc.narrative)
    if prose:  # the background narrative writes both languages (kg/report/narrative.py)
        L.add("")
        L.add("## " + _t("narrative", lang))
        L.add(prose)
    return "\n".join(L).strip() + "\n"


def markdown(doc: BondReportDoc) -> str:
    out = text(doc, doc.lang or "en")
    if doc.chart:
        out = out.replace("\n", f"\n\n![Key yields]({Path(doc.chart).name})\n", 1)
    return "# " + out


def to_html(doc: BondReportDoc) -> str:
    e = html.escape
    lang = doc.lang or "en"
    parts = ["<!doctype html><html><head><meta charset='utf-8'>",
             f"<title>{e(_t('title', lang).format(day=doc.as_of))}</title>",
             "<style>body{font-family:sans-serif;max-width:60em;margin:auto}"
             "td,th{padding:2px 8px;text-align:right}</style></head><body>"]  # fmt: skip
    body = text(doc, lang)
    if doc.chart:
        parts.append(f"<img alt='Key yields' src='{e(Path(doc.chart).name)}'>")
    parts.append(f"<pre>{e(body)}</pre></body></html>")
    return "\n".join(parts)


COLORS = ("#4f9cff", "#ffb74d", "#8be28b", "#ff8a80", "#c792ea")


def chart(series: Mapping[str, Series], path: Path, *, days: int = 183) -> Path | None:
    """An SVG line chart of the key yields over the last ``days`` (written by hand: no
    plotting library to import, so a report renders in milliseconds); None when there
    is nothing to plot. ``path``'s suffix is replaced by ``.svg``."""
    picked = {k: series[k] for k in CHART_SERIES if k in series and series[k].points}
    if not picked:
        return None
    end = max(s.points[-1].day for s in picked.values())
    lines = {k: [p for p in s.points if 0 <= (end - p.day).days <= days] for k, s in picked.items()}
    lines = {k: v for k, v in lines.items() if v}
    values = [p.value for v in lines.values() for p in v]
    lo, hi = min(values), max(values)
    hi = hi if hi > lo else lo + 1.0
    w, h, left, top, bottom = 760, 320, 48, 24, 40
    pw, ph = w - left - 110, h - top - bottom

    def xy(day_back: int, v: float) -> str:
        x = left + pw * (1 - day_back / days)
        y = top + ph * (1 - (v - lo) / (hi - lo))
        return f"{x:.1f},{y:.1f}"

    e = html.escape
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">',
           f'<rect width="{w}" height="{h}" fill="#ffffff"/>',
           f'<text x="{left}" y="15" font-size="13">Key US yields (%) to {end}</text>']  # fmt: skip
    for i in range(5):
        v = lo + (hi - lo) * i / 4
        y = top + ph * (1 - i / 4)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" '
                   f'stroke="#ddd"/><text x="4" y="{y + 4:.1f}">{v:.2f}</text>')  # fmt: skip
    for i, back in enumerate((days, days // 2, 0)):
        day = end.fromordinal(end.toordinal() - back)
        out.append(f'<text x="{left + pw * (1 - back / days) - 30:.1f}" y="{h - 18}">{day}</text>')
        del i
    for n, (sid, pts) in enumerate(lines.items()):
        color = COLORS[n % len(COLORS)]
        coords = " ".join(xy((end - p.day).days, p.value) for p in pts)
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.6" '
                   f'points="{coords}"/>')  # fmt: skip
        ly = top + 14 * n + 6
        out.append(f'<line x1="{left + pw + 12}" y1="{ly}" x2="{left + pw + 32}" y2="{ly}" '
                   f'stroke="{color}" stroke-width="3"/><text x="{left + pw + 36}" '
                   f'y="{ly + 4}">{e(sid)}</text>')  # fmt: skip
    out.append("</svg>")
    target = path.with_suffix(".svg")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(out), encoding="utf-8")
    return target
