"""Assemble a bond-market report: facts F, two-stage RAG, checked text, files, graph.

``build_bond_report`` never raises for missing inputs: an empty graph, unknown entities,
missing or stale indicators, a retrieval or model failure all end up in the report's
``missing``/``stale``/``errors`` and in its text. The facts section is computed, and
the published text passes the number check (``unsupported_numbers`` is empty).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core import metrics
from core.records import stable_id
from core.settings import ReportSettings, Settings
from kg.graph.queries import cypher
from kg.graph.store.base import GraphStore
from kg.models.llm import LLMClient, make_llm_client
from kg.models.prompts.chat import simple_v1
from kg.report.compose import Analysis, DocIn, analyse
from kg.report.facts import DAY_MS, Series, load_history
from kg.report.model import BondReportDoc, Driver, ReportSource, Section
from kg.report.numbers import Allowed, Removal, allowed_from, check_text, unsupported_in
from kg.report.rag import two_stage
from kg.report.render import CHART_SERIES, chart, markdown, text, to_html
from kg.report.rules import load_rules
from kg.retrieve.text import mention_key
from kg.retrieve.types import Retriever

log = logging.getLogger(__name__)

LATEST = "latest.json"


def _parse_at(at: datetime | str | None) -> datetime:
    if at is None:
        return datetime.now(UTC)
    if isinstance(at, str):
        at = datetime.fromisoformat(at.replace("Z", "+00:00"))
    return at if at.tzinfo else at.replace(tzinfo=UTC)


async def latest_market_time(store: GraphStore, ids: list[str], at: datetime) -> datetime:
    """The time of the newest curve observation on or before ``at``: the report analyses
    the latest market day in the graph (a replayed or backfilled day included), and its
    history window ends there, not at the wall clock."""
    params = {"ids": ids, "at": int(at.timestamp() * 1000)}
    ts = [r["t"] for q in (cypher("latest_observation_time"), cypher("latest_daily_time"))
          for r in await store.query(q, params) if r.get("t") is not None]  # fmt: skip
    if not ts:
        return at
    return datetime.fromtimestamp(max(int(t) for t in ts) / 1000, UTC).replace(
        hour=23, minute=59, second=59)  # fmt: skip


async def load_documents(store: GraphStore, at: datetime, *, days: int, history_days: int
                         ) -> list[DocIn]:  # fmt: skip
    """News in the driver window and the FOMC statements of the history window."""
    until = int(at.timestamp() * 1000)
    news = {"since": until - (days + 1) * DAY_MS, "until": until, "kinds": ["news"]}
    rows = await store.query(cypher("report_news"), news)
    statements = {"since": until - history_days * DAY_MS, "until": until}
    rows += await store.query(cypher("report_statements"), statements)
    out: dict[str, DocIn] = {}
    for r in rows:
        out[str(r["id"])] = DocIn(
            id=str(r["id"]), title=r.get("title") or "", text=r.get("text") or "",
            source=r.get("source") or "", published_at=int(r.get("published_at") or 0),
            url=r.get("url") or "", entities=[str(e) for e in r.get("entities") or [] if e],
        )  # fmt: skip
    return list(out.values())


async def attach_facts(store: GraphStore, drivers: list[Driver], per_driver: int = 3) -> None:
    """The facts extracted from each driver's cited documents (graph edges whose
    ``doc_ids`` name them), cited by fact id."""
    ids = [c.id for d in drivers for c in d.citations]
    if not ids:
        return
    rows = await store.query(cypher("facts_from_documents"), {"ids": ids})
    rows.sort(key=lambda r: str(r.get("id")))
    for d in drivers:
        mine = {c.id for c in d.citations}
        for r in rows:
            if len(d.facts) >= per_driver:
                break
            if set(r.get("docs") or []) & mine:
                d.facts.append(ReportSource(
                    id=str(r["id"]), kind="triple", source=",".join(sorted(mine)),
                    title=f"{r['head']} {str(r['rel']).lower()} {r['tail']}",
                ))  # fmt: skip


MODEL_NOTE = {
    "embedded": ("No model commentary: narrative prose needs a served model (llm.base_url); "
                 "the analysis above is complete without it.",
                 "无模型评述：叙述需要已部署的模型（llm.base_url）；以上分析不依赖它即完整。"),
    "off": ("No model commentary (model not used for this report); the analysis above is "
            "complete without it.", "无模型评述（本报告未使用模型）；以上分析不依赖它即完整。"),
    "failed": ("No model commentary: the model failed or ran out of its time budget "
               "(report.llm_budget_s); the analysis above is complete without it.",
               "无模型评述：模型失败或超出时间预算（report.llm_budget_s）；以上分析不依赖它即完整。"),
}  # fmt: skip


def allowed_for(a: Analysis, extra_texts: list[str]) -> Allowed:
    """What the report's text may state: the analysis' facts, tied to their subjects
    (named by id, table label or tenor, in English or Chinese), and quoted source text."""
    allowed = allowed_from(a.facts, extra_texts)
    for f in a.facts:
        keys = allowed.keys.setdefault(f.subject, [])
        for part in f.subject.split("-"):
            for lab in (a.labels.get(part), a.labels_zh.get(part), _tenor(part),
                        _tenor(part, "zh")):  # fmt: skip
                if lab:
                    keys.append(mention_key(lab))
        if f.subject.count("-") == 1:
            keys += ["2s10s", "3m10y", mention_key("利差"), "sofr", "effr"]
        if f.subject == "US_FFR":
            keys += ["fomc", mention_key("美联储"), "federal funds"]
            if a.policy and a.policy.range:
                for v in a.policy.range.split("-"):
                    allowed.add(float(v), "pct", "US_FFR")
                allowed.add(len(a.policy.dissents), "", "US_FFR")
        if f.kind == "zscore" and f.reference is not None:
            allowed.add(f.reference, "bp", f.subject)
    return allowed


def _tenor(ind: str, lang: str = "en") -> str:
    m = re.fullmatch(r"[A-Z]{2}(\d+)([YM])", ind)
    if not m:
        return ""
    if lang == "en":
        return m.group(1) + m.group(2)
    return m.group(1) + ("年期" if m.group(2) == "Y" else "个月")


def check_lines(text: str, allowed: Allowed) -> tuple[str, list[Removal], list[str]]:
    """Each line of the text checked; a line with an unsupported number is dropped."""
    kept, removed = [], []
    for line in text.splitlines():
        bad = unsupported_in(line, allowed) if line.strip() else []
        if bad:
            removed.append(Removal(sentence=line, numbers=bad, origin="report"))
        else:
            kept.append(line)
    out = "\n".join(kept)
    residual = [n for line in kept for n in unsupported_in(line, allowed)]
    return out, removed, residual


async def build_bond_report(
    store: GraphStore | None,
    cfg: ReportSettings,
    *,
    at: datetime | str | None = None,
    question: str | None = None,
    retriever: Retriever | None = None,
    llm: LLMClient | None = None,
    llm_leads: bool = False,
    out_dir: Path | None = None,
    models: dict[str, str] | None = None,
    series: dict[str, Series] | None = None,
    docs: list[DocIn] | None = None,
    lang: str = "en",
    served: bool | None = None,
) -> BondReportDoc:
    """The analysis of the latest market day on or before ``at`` (default now), with
    model prose only from a served model and within ``cfg.llm_budget_s``."""
    del llm_leads  # the narrative has its own section
    t_start = time.perf_counter()
    when = _parse_at(at)
    rules = load_rules(getattr(cfg, "rules_file", None))
    errors: list[str] = []
    if question:
        errors.append("ad-hoc questions are answered by `livekg ask`; this is the standing "
                      "bond report")  # fmt: skip
    timings: dict[str, float] = {}
    t = time.perf_counter()
    ids = list(dict.fromkeys([*rules.indicators(), *CHART_SERIES]))
    if series is None:
        series = {}
        if store is None:
            errors.append("no graph store: no indicator history")
        else:
            try:
                c = rules.curves[0]
                market_at = min(when, await latest_market_time(store, [c.front, c.long], when))
                series = await load_history(store, ids, market_at, days=cfg.history_days)
            except Exception as exc:
                errors.append(f"history unavailable: {type(exc).__name__}: {exc}"[:300])
    if docs is None:
        docs = []
        if store is not None:
            try:
                c = rules.curves[0]
                market_at = min(when, await latest_market_time(store, [c.front, c.long], when))
                docs = await load_documents(store, market_at, days=rules.thresholds.driver_days,
                                            history_days=cfg.history_days)  # fmt: skip
            except Exception as exc:
                errors.append(f"documents unavailable: {type(exc).__name__}: {exc}"[:300])
    timings["history_s"] = round(time.perf_counter() - t, 4)
    t = time.perf_counter()
    a = analyse(rules, series, when.date(), docs)
    timings["analysis_s"] = round(time.perf_counter() - t, 4)
    created = datetime.now(UTC)
    rid = "bond-" + when.strftime("%Y%m%dT%H%M%SZ") + "-" + stable_id(
        a.as_of if a else "none", lang)[:8]  # fmt: skip
    doc = BondReportDoc(
        id=rid, at=when.isoformat(), created_at=created.isoformat(), lang=lang,
        question="bond market analysis", models={"facts": "computed", **(models or {})},
    )  # fmt: skip
    if a is None:
        doc.errors = [*errors, "no US curve data on or before this time: nothing to analyse"]
        doc.missing = rules.indicators()
        doc.text = "No bond market data yet." if lang == "en" else "暂无债券市场数据。"
        doc.model_note = doc.text
    else:
        doc.as_of, doc.facts, doc.headline, doc.tables = a.as_of, a.facts, a.headline, a.tables
        doc.curve_shape, doc.conclusions, doc.policy = a.curve_shape, a.conclusions, a.policy
        doc.drivers, doc.signals, doc.synthetic, doc.missing = (
            a.drivers, a.signals, a.synthetic, a.missing)  # fmt: skip
        doc.extra["labels_zh"] = a.labels_zh
        if store is not None:
            try:
                await attach_facts(store, doc.drivers)
            except Exception as exc:
                errors.append(f"driver facts unavailable: {type(exc).__name__}: {exc}"[:300])
        cites = [*(c for d in a.drivers for c in (*d.citations, *d.facts))]
        if a.policy:
            cites += [c for c in (a.policy.statement, a.policy.previous) if c]
        unique: dict[str, ReportSource] = {}
        for cite in cites:
            unique.setdefault(cite.id, cite)
        doc.citations = list(unique.values())
        allowed = allowed_for(a, [*a.statement_texts, *(c.title for c in doc.citations)])
        allowed.dates.update(c.published_at[:10] for c in doc.citations if c.published_at)
        allowed.dates.add(a.as_of)
        # model prose: a served model only (the embedded one is too slow for this)
        use_model = cfg.use_llm and llm is not None and served is not False
        if cfg.use_llm and served is False:
            doc.model_note = MODEL_NOTE["embedded"][0]
            doc.extra["model_note_zh"] = MODEL_NOTE["embedded"][1]
        elif not use_model:
            doc.model_note = MODEL_NOTE["off"][0]
            doc.extra["model_note_zh"] = MODEL_NOTE["off"][1]
        elif llm is not None:
            t = time.perf_counter()
            narrative, errs = await _narrative(doc, a, cfg, llm, retriever, when, allowed)
            timings["narrative_s"] = round(time.perf_counter() - t, 4)
            errors += errs
            if narrative:
                doc.narrative = narrative
            else:
                doc.model_missing = True
                doc.model_note = MODEL_NOTE["failed"][0]
                doc.extra["model_note_zh"] = MODEL_NOTE["failed"][1]
        doc.text, removed, doc.unsupported_numbers = check_lines(text(doc, lang), allowed)
        doc.removed += removed
        other = "zh" if lang == "en" else "en"
        doc.extra[f"text_{other}"] = check_lines(text(doc, other), allowed)[0]
    doc.errors = errors + doc.errors
    doc.sections = [Section(
        question_id="analysis", question=doc.question, facts=doc.facts, text=doc.text,
        computed_text=doc.text, llm_text=doc.narrative, removed=doc.removed,
        unsupported_numbers=doc.unsupported_numbers, missing=doc.missing,
        errors=list(doc.errors),
    )]  # fmt: skip
    if out_dir is not None:
        t = time.perf_counter()
        try:
            await asyncio.to_thread(save, doc, series, out_dir)
        except OSError as exc:
            doc.errors.append(f"could not write the report files: {exc}"[:300])
        timings["render_s"] = round(time.perf_counter() - t, 4)
    timings["total_s"] = round(time.perf_counter() - t_start, 4)
    doc.timings = timings
    metrics.REPORT_LAST.labels("bond").set(time.time())  # the "no report lately" alert
    if doc.json_path:  # again, now with the timings
        await asyncio.to_thread(_write, Path(doc.json_path), doc.model_dump_json(indent=1))
    return doc


async def _narrative(
    doc: BondReportDoc, a: Analysis, cfg: ReportSettings, llm: LLMClient,
    retriever: Retriever | None, when: datetime, allowed: Allowed,
) -> tuple[str, list[str]]:  # fmt: skip
    """Two-stage RAG (Chen et al.) over the headline facts and the rule conclusions; the
    number check keeps only sentences whose figures are facts. Bounded by the budget."""
    deadline = time.perf_counter() + cfg.llm_budget_s
    ids = {fid for h in a.headline for fid in h.fact_ids}
    chosen = [f for f in a.facts if f.id in ids or f.kind in ("policy_change", "spread")]
    conclusions = " ".join(c.text for c in a.conclusions if c.show)
    q = ("Explain today's US bond market moves and what they imply, using only these facts "
         f"and conclusions: {conclusions}")  # fmt: skip
    rag = await two_stage(q, chosen, retriever=retriever, llm=llm, k1=cfg.k1, k2=cfg.k2,
                          at=int(when.timestamp() * 1000), max_tokens=cfg.llm_max_tokens,
                          use_llm=True, max_llm_facts=cfg.llm_max_facts,
                          knowledge_chars=cfg.llm_knowledge_chars, deadline=deadline)  # fmt: skip
    errors = [f"LLM: {e}" if "LLM" not in e else e for e in rag.errors]
    if not rag.llm_text:
        return "", errors or ["LLM gave no text"]
    for it in (*rag.k1, *rag.k2):
        allowed.add_text(f"{it.text} {it.provenance.evidence}")
    checked = check_text(rag.llm_text, allowed, origin="llm")
    doc.removed += checked.removed
    return checked.text, errors


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def report_llm(settings: Settings, base_url: str | None) -> LLMClient:
    """The report's model client: a per-call deadline of ``report.llm_timeout_s`` and no
    retries, so a slow local model cannot push a report past its time budget; served
    before the stream's extraction calls by the embedded server."""
    tight = settings.with_overrides(
        llm={"timeout_s": settings.report.llm_timeout_s, "max_retries": 0}
    )
    return make_llm_client(tight, base_url, priority="interactive")


async def warm_up(llm: LLMClient) -> str | None:
    """One tiny call before the report, so loading an in-process model is not charged
    to the first real call's deadline. Returns why it failed (then skip the model)."""
    try:
        await llm.chat(simple_v1(text="Say OK."), prompt_name=simple_v1.id, max_tokens=1)
    except Exception as exc:
        return f"LLM warm-up failed: {type(exc).__name__}: {exc}"[:300]
    return None


def _unique(items: list[Any]) -> list[Any]:
    seen, out = set(), []
    for it in items:
        if it.id not in seen:
            seen.add(it.id)
            out.append(it)
    return out


def save(doc: BondReportDoc, series: dict[str, Series], out_dir: Path) -> None:
    """Files under ``out_dir/<id>/`` (JSON, Markdown, HTML, chart) and ``latest.json``."""
    folder = out_dir / doc.id
    folder.mkdir(parents=True, exist_ok=True)
    png = chart(series, folder / "yields.svg")
    doc.chart = str(png) if png else None
    doc.markdown = str(folder / "report.md")
    doc.html = str(folder / "report.html")
    doc.json_path = str(folder / "report.json")
    Path(doc.markdown).write_text(markdown(doc), encoding="utf-8")
    Path(doc.html).write_text(to_html(doc), encoding="utf-8")
    Path(doc.json_path).write_text(doc.model_dump_json(indent=1), encoding="utf-8")
    tmp = out_dir / (LATEST + ".tmp")
    tmp.write_text(doc.model_dump_json(include={"id", "at", "json_path"}), encoding="utf-8")
    tmp.replace(out_dir / LATEST)


def reports_dir(data_dir: Path, cfg: ReportSettings | None = None) -> Path:
    """Where reports are stored: ``report.out_dir`` or ``<data_dir>/reports/bond``."""
    if cfg is not None and cfg.out_dir is not None:
        return Path(cfg.out_dir)
    return Path(data_dir) / "reports" / "bond"


def latest_report(out_dir: Path) -> BondReportDoc | None:
    """The most recent stored report (``out_dir`` as from ``reports_dir``), or None."""

    pointer = Path(out_dir) / LATEST
    try:
        path = Path(json.loads(pointer.read_text(encoding="utf-8"))["json_path"])
        return BondReportDoc.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, KeyError, ValueError):
        return None


async def store_in_graph(store: GraphStore, doc: BondReportDoc) -> None:
    """A ``:Report`` node linked (``ABOUT``) to the indicators it describes and
    (``CITES``) to every observation behind its facts and every document it cites."""
    entities = sorted({p for f in doc.facts for p in f.subject.split("-")})
    await store.execute(cypher("report_store"), {
        "id": doc.id, "at": int(_parse_at(doc.at).timestamp() * 1000), "as_of": doc.as_of,
        "question": doc.question, "text": doc.text[:20_000], "path": doc.json_path or "",
        "fact_ids": [f.id for f in doc.facts], "citation_ids": [c.id for c in doc.citations],
        "missing": doc.missing, "entities": entities, "lang": doc.lang,
        "headline": [f"{h.indicator} {h.change_bp:+.1f} bp" for h in doc.headline],
    })  # fmt: skip
    sources = sorted({s for f in doc.facts for s in f.sources})
    docs = sorted({c.id for c in doc.citations} | {s for s in sources if s.startswith("doc")})
    for label, ids in (("Observation", sources), ("DailyObservation", sources),
                       ("Document", docs)):  # fmt: skip
        if ids:
            await store.execute(cypher("report_cites", label=label), {"id": doc.id, "ids": ids})
