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
from kg.llm import LLMClient
from kg.report.facts import (
    SPREADS,
    FactSet,
    Series,
    compute_facts,
    indicator_catalog,
    load_history,
)
from kg.report.model import BondReportDoc, Section
from kg.report.numbers import allowed_from, check_text, subject_keys
from kg.report.questions import CORE_INDICATORS, Question, all_indicators, load_questions
from kg.report.rag import two_stage
from kg.report.render import chart, markdown, to_html
from kg.report.signals import analysis
from kg.retrieve.text import mention_key, query_spans
from kg.retrieve.types import Retriever
from kg.store.base import GraphStore

log = logging.getLogger(__name__)

LATEST = "latest.json"


def question_for(text: str) -> tuple[Question, list[str]]:
    """An ad-hoc question and the indicators it names (by id, name, Chinese name or
    alias); a question naming none gets the core indicators and a note."""
    spans = query_spans(text, max_units=12)

    from kg.static import bundled_universe_path

    data = json.loads(bundled_universe_path().read_text(encoding="utf-8"))
    named: list[str] = []
    for e in data["entities"]:
        if e.get("type") != "Indicator":
            continue
        keys = [e["id"], e.get("name", ""), e.get("name_zh", ""), *e.get("aliases", []),
                *subject_keys(e["id"], e.get("name", ""))]  # fmt: skip
        if any(mention_key(k) in spans for k in keys if k):
            named.append(e["id"])
    if re.search(r"curve|spread|steep|flat|利差|曲线", text, re.IGNORECASE):
        for _, a, b, _ in SPREADS:  # a curve question needs both legs of its spreads
            if a in named and b not in named:
                named.append(b)
            elif b in named and a not in named:
                named.append(a)
    notes = []
    if not named:
        notes.append("the question names no known indicator; the core bond indicators are used")
        named = list(CORE_INDICATORS)
    return Question(id="adhoc", question=text, indicators=named, topics=["adhoc"]), notes


def _parse_at(at: datetime | str | None) -> datetime:
    if at is None:
        return datetime.now(UTC)
    if isinstance(at, str):
        at = datetime.fromisoformat(at.replace("Z", "+00:00"))
    return at if at.tzinfo else at.replace(tzinfo=UTC)


async def build_bond_report(
    store: GraphStore | None,
    cfg: ReportSettings,
    *,
    at: datetime | str | None = None,
    question: str | None = None,
    questions: list[Question] | None = None,
    retriever: Retriever | None = None,
    llm: LLMClient | None = None,
    llm_leads: bool = False,
    out_dir: Path | None = None,
    models: dict[str, str] | None = None,
    series: dict[str, Series] | None = None,
) -> BondReportDoc:
    t_start = time.perf_counter()
    when = _parse_at(at)
    errors: list[str] = []
    if question:
        q, notes = question_for(question)
        qs = [q]
        errors += notes
    else:
        qs = questions or load_questions(cfg.questions_file)
    ids = all_indicators(qs)
    timings: dict[str, float] = {}
    t = time.perf_counter()
    if series is None:
        series = {}
        if store is None:
            errors.append("no graph store: no indicator history")
        else:
            try:
                series = await load_history(store, ids, when, days=cfg.history_days)
            except Exception as exc:
                errors.append(f"history unavailable: {type(exc).__name__}: {exc}"[:300])
    timings["history_s"] = round(time.perf_counter() - t, 4)
    facts: FactSet = compute_facts(series, when, wanted=ids)
    errors += facts.errors
    sections: list[Section] = []
    llm_failed = False  # a timed-out call still holds an in-process model: stop asking
    # one hard deadline for all model calls of this report (not a check between
    # questions: a report must finish in its time whatever the model does)
    deadline = time.perf_counter() + cfg.llm_budget_s
    at_ms = int(when.timestamp() * 1000)
    for q in qs:
        cand = facts.by_subject(q.indicators)
        use_llm = (cfg.use_llm and llm is not None and not llm_failed
                   and deadline - time.perf_counter() > 1.0)  # fmt: skip
        t = time.perf_counter()
        rag = await two_stage(q.question, cand, retriever=retriever, llm=llm, k1=cfg.k1,
                              k2=cfg.k2, at=at_ms, max_tokens=cfg.llm_max_tokens,
                              use_llm=use_llm, max_llm_facts=cfg.llm_max_facts,
                              knowledge_chars=cfg.llm_knowledge_chars,
                              deadline=deadline)  # fmt: skip
        llm_failed = llm_failed or any(
            m in e for e in rag.errors for m in ("LLMTimeout", "Unavailable", "budget spent")
        )
        if cfg.use_llm and llm is not None and not use_llm:
            rag.errors.append("LLM budget spent or model failing; computed analysis only")
        triples = rag.k2 or rag.k1
        computed = analysis(q, facts, triples)
        allowed = allowed_from(
            facts.facts, [f"{it.text} {it.provenance.evidence}" for it in (*rag.k1, *rag.k2)]
        )
        c_check = check_text(computed, allowed, origin="computed")
        l_check = check_text(rag.llm_text, allowed, origin="llm") if rag.llm_text else None
        parts = [c_check.text]
        if l_check and l_check.text:
            parts = [l_check.text, *parts] if llm_leads else [*parts, l_check.text]
        text = " ".join(p for p in parts if p)
        final = check_text(text, allowed, origin="final")  # belt and braces
        removed = [*c_check.removed, *(l_check.removed if l_check else []), *final.removed]
        sections.append(Section(
            question_id=q.id, question=q.question, facts=rag.selected, triples=triples,
            computed_text=c_check.text, llm_text=l_check.text if l_check else "",
            text=final.text, removed=removed, unsupported_numbers=final.unsupported_numbers,
            missing=[i for i in q.indicators if i in facts.missing],
            stale=[i for i in q.indicators if i in facts.stale], errors=rag.errors,
        ))  # fmt: skip
        timings[f"question_{q.id}_s"] = round(time.perf_counter() - t, 4)
        for k, v in rag.timings.items():
            timings[f"{q.id}_{k}"] = v
    created = datetime.now(UTC)
    rid = "bond-" + when.strftime("%Y%m%dT%H%M%SZ") + "-" + stable_id(*(q.question for q in qs))[:8]
    doc = BondReportDoc(
        id=rid, at=when.isoformat(), created_at=created.isoformat(),
        question=" / ".join(q.question for q in qs), sections=sections,
        facts=_unique([f for s in sections for f in s.facts]),
        triples=_unique([t for s in sections for t in s.triples]),
        text="\n\n".join(s.text for s in sections if s.text),
        unsupported_numbers=[n for s in sections for n in s.unsupported_numbers],
        removed=[r for s in sections for r in s.removed],
        missing=facts.missing, stale=facts.stale, gaps=facts.gaps,
        errors=errors + [e for s in sections for e in s.errors],
        model_missing=bool(cfg.use_llm and llm is not None and llm_failed),
        models={"facts": "computed", **(models or {})},
    )  # fmt: skip
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


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def report_llm(settings: Settings, base_url: str | None) -> LLMClient:
    """The report's model client: a per-call deadline of ``report.llm_timeout_s`` and no
    retries, so a slow local model cannot push a report past its time budget; served
    before the stream's extraction calls by the embedded server."""
    from kg.llm import make_llm_client

    tight = settings.with_overrides(
        llm={"timeout_s": settings.report.llm_timeout_s, "max_retries": 0}
    )
    return make_llm_client(tight, base_url, priority="interactive")


async def warm_up(llm: LLMClient) -> str | None:
    """One tiny call before the report, so loading an in-process model is not charged
    to the first real call's deadline. Returns why it failed (then skip the model)."""
    from kg.prompts.chat import simple_v1

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
    png = chart(series, folder / "yields.png")
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


REPORT_CYPHER = """
MERGE (r:Report {id: $id})
  ON CREATE SET r.partition = 'dynamic', r.kind = 'bond', r.created_at = timestamp()
SET r.at = $at, r.question = $question, r.text = $text, r.path = $path,
    r.fact_ids = $fact_ids, r.triple_ids = $triple_ids, r.missing = $missing
WITH r
UNWIND $entities AS eid
MATCH (e:Entity {id: eid})
MERGE (r)-[:ABOUT]->(e)
"""


async def store_in_graph(store: GraphStore, doc: BondReportDoc) -> None:
    """A ``:Report`` node linked (``ABOUT``) to the indicators its facts describe."""
    entities = sorted(
        {p for f in doc.facts for p in f.subject.split("-")} & set(indicator_catalog())
    )
    await store.execute(REPORT_CYPHER, {
        "id": doc.id, "at": int(_parse_at(doc.at).timestamp() * 1000), "question": doc.question,
        "text": doc.text[:20_000], "path": doc.json_path or "",
        "fact_ids": [f.id for f in doc.facts], "triple_ids": [t.id for t in doc.triples],
        "missing": doc.missing, "entities": entities,
    })  # fmt: skip
