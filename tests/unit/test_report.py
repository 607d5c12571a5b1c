"""The bond report without services: facts F, computed analysis, two-stage RAG with a
fake model (good, garbage, down), files, and the bad-input cases."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from core.settings import ReportSettings
from kg.llm_errors import LLMUnavailable
from kg.report import build_bond_report, compute_facts, latest_report
from kg.report.facts import IndicatorMeta, Point, Series, indicator_catalog, series_from_rows
from kg.report.numbers import allowed_from, check_text
from kg.report.render import markdown
from kg.retrieve.types import ItemKind, Method, Provenance, RetrievedItem
from tests.fakes.llm import FakeLLM

SAMPLES = Path(__file__).resolve().parents[2] / "connectors" / "samples"
AT = datetime(2026, 11, 20, 12, tzinfo=UTC)


def sample_series() -> dict[str, Series]:
    rows = []
    for name in ("ticks_history.jsonl", "ticks.jsonl"):
        for i, line in enumerate((SAMPLES / name).read_text().splitlines()):
            r = json.loads(line)
            t = datetime.fromisoformat(r["event_time"].replace("Z", "+00:00"))
            rows.append({"ind": r["indicator_id"], "t": int(t.timestamp() * 1000),
                         "v": r["value"], "id": f"{name}:{i}"})  # fmt: skip
    return series_from_rows(rows, indicator_catalog())


def _series(ind: str, values: list[float], start: date, unit: str = "%", freq: str = "daily"):
    meta = IndicatorMeta(id=ind, name=ind, unit=unit, frequency=freq)
    pts = [Point(day=start + timedelta(days=i), value=v, ref=f"{ind}:{i}")
           for i, v in enumerate(values)]  # fmt: skip
    return Series(meta=meta, points=pts)


def test_facts_hand_computed() -> None:
    start = date(2026, 1, 1)
    n = 200
    ten = _series("CN10Y", [2.0 + 0.001 * i for i in range(n)], start)
    one = _series("CN1Y", [1.5] * n, start)
    dr = _series("DR007", [1.5] * (n - 1) + [1.7], start)
    at = datetime.combine(start + timedelta(days=n - 1), datetime.min.time(), UTC)
    fs = compute_facts({"CN10Y": ten, "CN1Y": one, "DR007": dr}, at, ["CN10Y", "CN1Y", "DR007"])
    by_id = {f.id.split("@")[0]: f for f in fs.facts}
    assert by_id["CN10Y:level"].value == pytest.approx(2.199)
    assert by_id["CN10Y:change:1d"].value == pytest.approx(0.1)  # 0.001 % = 0.1 bp
    assert by_id["CN10Y:change:1w"].value == pytest.approx(0.7)
    assert by_id["CN10Y:change:1m"].value == pytest.approx(3.0)
    assert by_id["CN10Y:change:6m"].value == pytest.approx(18.2)
    spread = by_id["CN10Y-CN1Y:spread"]
    assert spread.value == pytest.approx(69.9) and spread.unit == "bp"
    assert by_id["CN10Y-CN1Y:spread_change:1m"].state == "steepening"
    vs = by_id["DR007:vs_avg20"]  # 1.7 against mean(19 x 1.5, 1.7) = 1.51 -> +19 bp
    assert vs.value == pytest.approx(19.0) and vs.state == "tight"
    assert all(f.sources for f in fs.facts)
    assert fs.missing == [] and fs.stale == []


def test_facts_missing_stale_and_gaps() -> None:
    s = _series("CN10Y", [2.0] * 10, date(2026, 1, 1))
    fs = compute_facts({"CN10Y": s}, datetime(2026, 3, 1, tzinfo=UTC), ["CN10Y", "US10Y"])
    assert fs.missing == ["US10Y"] and fs.stale == ["CN10Y"]
    assert "CN10Y:6m" in fs.gaps  # ten days of history cannot give a 6-month change
    assert all(f.stale for f in fs.facts)


def test_sample_report_structure(tmp_path: Path) -> None:
    doc = asyncio.run(build_bond_report(None, ReportSettings(), at=AT, series=sample_series(),
                                        out_dir=tmp_path))  # fmt: skip
    assert len(doc.sections) == 5 and doc.unsupported_numbers == []
    assert doc.missing == [] and doc.stale == []
    assert doc.facts and all(f.sources for f in doc.facts)
    kinds = {f.kind for f in doc.facts}
    assert {"level", "change", "spread", "spread_change", "vs_average", "policy_change"} <= kinds
    assert "steepening" in doc.text or "flattening" in doc.text
    assert "tight" in doc.text or "loose" in doc.text or "neutral" in doc.text
    assert Path(doc.chart or "").read_bytes()[:4] == b"\x89PNG"
    assert "# Bond market report" in Path(doc.markdown or "").read_text()
    assert "<h1>" in Path(doc.html or "").read_text()
    again = latest_report(tmp_path)
    assert again is not None and again.id == doc.id and again.timings["total_s"] > 0
    # every published number is supported by the facts
    allowed = allowed_from(doc.facts if doc.facts else [], [])
    for s in doc.sections:
        assert check_text(s.text, allowed_from(s.facts, [t.text for t in s.triples])).removed \
            == [] or s.facts == []  # fmt: skip
    assert allowed.values


TRIPLE = RetrievedItem(
    id="f1", kind=ItemKind.TRIPLE, text="PBOC conducts reverse repo 2000亿元", score=0.9,
    method=Method.TFR, head="PBOC", relation="CONDUCTS", tail="REVERSE_REPO",
    provenance=Provenance(doc_ids=["doc-1"], sources=["t-1"]),
)  # fmt: skip


class StaticRetriever:
    method = Method.TFR

    async def search(self, query: str, k: int, *, at: int | None = None) -> list[RetrievedItem]:
        return [TRIPLE]


async def test_llm_prose_checked_kept_or_removed(tmp_path: Path) -> None:
    good = "China 10Y yields stood at 1.83%. The PBOC injected 2000亿元. Yields will hit 2.35%."
    llm = FakeLLM({"report.select_facts": {"facts": [1, 2, 99]},
                   "report.analysis": good})  # fmt: skip
    doc = await build_bond_report(None, ReportSettings(), at=AT, series=sample_series(),
                                  question="What is the outlook for CN10Y?", llm=llm,
                                  retriever=StaticRetriever(), out_dir=tmp_path)  # fmt: skip
    s = doc.sections[0]
    assert s.llm_text == "China 10Y yields stood at 1.83%. The PBOC injected 2000亿元."
    assert [r.sentence for r in s.removed] == ["Yields will hit 2.35%."]
    assert s.removed[0].origin == "llm" and doc.unsupported_numbers == []
    assert "2.35" not in doc.text and len(s.facts) == 2  # 99 is no fact: ignored
    assert s.triples[0].provenance.doc_ids == ["doc-1"]


async def test_llm_garbage_or_down_still_gives_a_report(tmp_path: Path) -> None:
    for llm, down in ((FakeLLM({"report.select_facts": "not json at all {",
                                "report.analysis": "42 42 42 99.9% 1234亿"}), False),
                      (FakeLLM([LLMUnavailable("down")] * 20, max_retries=0), True)):  # fmt: skip
        doc = await build_bond_report(None, ReportSettings(), at=AT, series=sample_series(),
                                      llm=llm, out_dir=tmp_path)  # fmt: skip
        assert doc.unsupported_numbers == [] and len(doc.sections) == 5
        assert all(s.computed_text for s in doc.sections)
        assert any("LLM" in e for e in doc.errors)
        assert "99.9" not in doc.text and "1234" not in doc.text
        assert doc.model_missing is down
        assert ("language model was unavailable" in markdown(doc)) is down


async def test_empty_graph_unknown_question_and_stale(tmp_path: Path) -> None:
    doc = await build_bond_report(None, ReportSettings(), at=AT, series={}, out_dir=tmp_path)
    assert set(doc.missing) >= {"CN10Y", "US10Y", "DR007"} and doc.facts == []
    assert "No data is available" in doc.text and doc.chart is None
    assert doc.unsupported_numbers == []
    doc = await build_bond_report(None, ReportSettings(), at=AT, series=sample_series(),
                                  question="Will it rain on Mars?")  # fmt: skip
    assert any("names no known indicator" in e for e in doc.errors)
    assert doc.sections[0].facts  # the core indicators answer instead
    late = datetime(2027, 6, 1, tzinfo=UTC)
    doc = await build_bond_report(None, ReportSettings(), at=late, series=sample_series())
    assert "CN10Y" in doc.stale and "stale" in doc.text
    doc = await build_bond_report(None, ReportSettings(), at=AT)  # no store at all
    assert any("no graph store" in e for e in doc.errors) and doc.unsupported_numbers == []


async def test_warm_up_reports_a_failing_model() -> None:
    from kg.report.build import warm_up

    assert await warm_up(FakeLLM(default_text="OK")) is None
    why = await warm_up(FakeLLM([LLMUnavailable("down")] * 5, max_retries=0))
    assert why is not None and "LLMUnavailable" in why


class SlowLLM(FakeLLM):
    """A model that takes ``delay`` seconds per call (a slow in-process model)."""

    def __init__(self, delay: float) -> None:
        super().__init__({"report.select_facts": {"facts": [1]}, "report.analysis": "ok"},
                         timeout_s=60.0, max_retries=0)  # fmt: skip
        self.delay = delay

    async def _complete(self, req):  # type: ignore[no-untyped-def]
        await asyncio.sleep(self.delay)
        return await super()._complete(req)


async def test_model_budget_is_a_hard_deadline_over_all_calls(tmp_path: Path) -> None:
    # each call would take 5 s and the per-call timeout allows it; the report's budget
    # (0.6 s) cuts the first call short and no later question asks the model
    llm = SlowLLM(5.0)
    cfg = ReportSettings(llm_budget_s=0.6)
    doc = await build_bond_report(None, cfg, at=AT, series=sample_series(), llm=llm,
                                  out_dir=tmp_path)  # fmt: skip
    assert llm.calls == []  # the one call started was cancelled before it completed
    assert len(doc.sections) == 5
    assert any("budget spent" in e for e in doc.errors)
    assert all(s.computed_text for s in doc.sections) and doc.unsupported_numbers == []


def test_model_text_cut_at_max_tokens_keeps_whole_sentences() -> None:
    from kg.report.rag import whole_sentences

    assert whole_sentences("Yields fell to 1.85%. Funding is loose and") == "Yields fell to 1.85%."
    assert whole_sentences("收益率下行。资金面") == "收益率下行。"
    assert whole_sentences("no sentence ends here") == ""
