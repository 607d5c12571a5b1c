"""A report as ``reports.bond`` records: one ``BondReport`` per question."""

from __future__ import annotations

from datetime import datetime

from core.records import BondReport, CitedRef
from kg.report.model import BondReportDoc

SOURCE = "livekg.report"


def records_for(doc: BondReportDoc) -> list[BondReport]:
    at = datetime.fromisoformat(doc.at)
    model = doc.models.get("llm", "")
    out = []
    for s in doc.sections:
        triples = []
        for t in s.triples:
            src = ", ".join((t.provenance.doc_ids or t.provenance.sources)[:3])
            triples.append(CitedRef(ref=t.id, text=f"{t.text} [sources: {src or 'static'}]"))
        out.append(BondReport(
            id=f"{doc.id}:{s.question_id}", source=SOURCE, event_time=at,
            question=s.question, answer=s.text, model_id=model, report_id=doc.id,
            question_id=s.question_id,
            facts=[CitedRef(ref=f.id, text=f.text) for f in s.facts], triples=triples,
            unsupported_numbers=s.unsupported_numbers,
            removed=[r.sentence for r in s.removed], missing=s.missing, stale=s.stale,
            chart=doc.chart, timings=doc.timings,
        ))  # fmt: skip
    return out
