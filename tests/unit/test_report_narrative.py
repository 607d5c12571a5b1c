"""The bond report's background commentary (kg/report/narrative.py) with a fake model on
the bundled sample day: number-checked in English and Chinese, written into the stored
report afterwards, never delaying it, and nothing written for a superseded report."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from core.settings import ReportSettings
from evaluation.bench.report import sample_docs
from kg.models.llm_errors import LLMUnavailable
from kg.report import build_bond_report, latest_report
from kg.report.model import BondReportDoc
from kg.report.narrative import (
    Narrative,
    Narrator,
    allowed_for_report,
    apply_narrative,
    candidate_facts,
    write_narrative,
)
from kg.report.numbers import unsupported_in
from tests.fakes.llm import FakeLLM
from tests.unit.test_report import sample_series

AT = datetime(2024, 9, 18, 22, tzinfo=UTC)
EN = "The 3-month bill fell 11.0 bp in US3M terms. Yields will hit 9.99% next year."
ZH = "1. US3M下行11.0个基点。\n2. 收益率明年将升至9.99%。"


async def _report(tmp_path: Path) -> BondReportDoc:
    return await build_bond_report(None, ReportSettings(), at=AT, series=sample_series(),
                                   docs=sample_docs(), out_dir=tmp_path)  # fmt: skip


def _llm() -> FakeLLM:
    def prose(req):  # type: ignore[no-untyped-def]
        return ZH if "中文" in req.messages[-1].content else EN

    return FakeLLM({"report.select_facts": {"facts": [1, 2, 3]}, "report.narrative": prose})


async def test_every_number_is_a_fact_in_both_languages(tmp_path: Path) -> None:
    doc = await _report(tmp_path)
    facts = candidate_facts(doc)
    assert facts and all(not f.stale for f in facts)
    nar = await write_narrative(doc, _llm())
    assert "11.0 bp" in nar.en and "9.99" not in nar.en
    assert "11.0个基点" in nar.zh and "9.99" not in nar.zh
    assert {r.origin for r in nar.removed} == {"narrative:en", "narrative:zh"}
    # the list markers are gone before the check: only the invented figure's sentence goes
    assert [r.sentence for r in nar.removed if r.origin == "narrative:zh"] == [
        "收益率明年将升至9.99%。"
    ]
    assert nar.unsupported_numbers == [] and len(nar.selected) == 3
    allowed = allowed_for_report(doc)
    assert unsupported_in(nar.en, allowed) == [] and unsupported_in(nar.zh, allowed) == []


async def test_the_stored_report_gets_the_commentary_afterwards(tmp_path: Path) -> None:
    doc = await _report(tmp_path)
    before = doc.text
    assert "No model commentary" in before
    apply_narrative(doc, await write_narrative(doc, _llm()))
    stored = latest_report(tmp_path)
    assert stored is not None and "11.0 bp" in stored.narrative
    assert "Commentary" in stored.text and "No model commentary" not in stored.text
    assert "11.0个基点" in stored.extra["text_zh"] and stored.unsupported_numbers == []
    assert "9.99" not in stored.text + stored.extra["text_zh"]
    md = await asyncio.to_thread(Path(stored.markdown or "").read_text, encoding="utf-8")
    assert "11.0 bp" in md


async def test_a_model_that_is_down_leaves_the_report_as_it_was(tmp_path: Path) -> None:
    doc = await _report(tmp_path)
    text = doc.text
    down = FakeLLM([LLMUnavailable("down")] * 10, max_retries=0)
    nar = await write_narrative(doc, down)
    assert nar.en == nar.zh == "" and nar.errors
    apply_narrative(doc, nar)
    assert doc.text == text and doc.narrative == ""


async def test_submit_never_waits_and_a_superseded_report_gets_no_prose(tmp_path: Path) -> None:
    doc = await _report(tmp_path)
    gate = asyncio.Event()
    written: list[str] = []

    async def write(d: BondReportDoc) -> Narrative:
        await gate.wait()
        written.append(d.id)
        return Narrative(report_id=d.id)

    narrator = Narrator(write)
    docs = [doc.model_copy(update={"id": f"r{i}"}) for i in range(3)]
    for d in docs:
        narrator.submit(d)  # returns at once although the writer is blocked
    assert written == []
    gate.set()
    await narrator.idle()
    assert written == ["r2"] and narrator.superseded == 2
