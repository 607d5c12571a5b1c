"""The bond report's pure parts: windows, signals, curve-shape labels, statement parsing,
rules as data, headline ranking, rendering (en/zh), the number check, model prose and
its budget. The sample day (connectors/samples, 2024-09-18) is read without a graph."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from core.settings import ReportSettings
from evaluation.bench.report import sample_docs, sample_rows
from kg.models.llm_errors import LLMUnavailable
from kg.report import build_bond_report, latest_report, load_rules, market
from kg.report.facts import IndicatorMeta, Point, Series, indicator_catalog, series_from_rows
from kg.report.rules import Rules, evaluate
from kg.retrieve.types import ItemKind, Method, Provenance, RetrievedItem
from tests.fakes.llm import FakeLLM

AT = datetime(2024, 9, 18, 22, tzinfo=UTC)


def sample_series() -> dict[str, Series]:
    return series_from_rows(sample_rows(), indicator_catalog())


def _series(ind: str, values: list[float], start: date) -> Series:
    pts, d = [], start
    for i, v in enumerate(values):
        while d.weekday() >= 5:
            d += timedelta(days=1)
        pts.append(Point(day=d, value=v, ref=f"{ind}:{i}"))
        d += timedelta(days=1)
    return Series(meta=IndicatorMeta(id=ind, name=ind), points=pts)


def test_rules_file_validates_and_rejects_bad_rules(tmp_path: Path) -> None:
    rules = load_rules()
    assert {r.kind for r in rules.rules} >= {"curve_shape", "policy_decision", "reading"}
    bad = tmp_path / "rules.toml"
    text = (Path(__file__).resolve().parents[2] / "kg/data/report_rules.toml").read_text()
    bad.write_text(text.replace('curve = "us"', 'curve = "mars"', 1))
    with pytest.raises(ValueError, match="unknown curve"):
        load_rules(bad)
    bad.write_text(text.replace('windows = ["1d", "1w", "1m"]', 'windows = ["2y"]', 1))
    with pytest.raises(ValueError, match="unknown windows"):
        load_rules(bad)


@pytest.mark.parametrize(
    ("d2", "d10", "shape", "lead"),
    [
        (-57, -15, "bull_steepening", "front_end_led"),
        (-6, -11, "bull_flattening", "long_end_led"),
        (28, 47, "bear_steepening", "long_end_led"),
        (70, 51, "bear_flattening", "front_end_led"),
        (10, 10, "parallel", ""),
        (-10, 9, "mixed", "front_end_led"),
    ],
)
def test_shape_labels_follow_the_definitions(d2: float, d10: float, shape: str, lead: str) -> None:
    assert market.shape_label(d2, d10, load_rules().thresholds) == (shape, lead)


def test_windows_are_trading_days_and_calendar_months() -> None:
    s = _series("X", [1.0 + 0.01 * i for i in range(60)], date(2024, 1, 1))
    pts = s.points
    assert market.base_point(pts, "1d") == pts[-2]
    last = pts[-1].day
    wk = market.base_point(pts, "1w")
    assert wk is not None and wk.day <= last - timedelta(days=7)
    assert market.month_back(date(2024, 3, 31)) == date(2024, 2, 29)  # clamped
    ch = market.change_bp(pts, "1d")
    assert ch is not None and ch[0] == pytest.approx(1.0)


def test_statement_parsing_decision_range_and_dissent() -> None:
    prev = ("In support of its goals, the Committee decided to maintain the target range for "
            "the federal funds rate at 5-1/4 to 5-1/2 percent. Voting for the monetary policy "
            "action were Jerome H. Powell, Chair.")  # fmt: skip
    cur = ("In light of the progress on inflation, the Committee decided to lower the target "
           "range for the federal funds rate by 1/2 percentage point to 4-3/4 to 5 percent. "
           "Voting against this action was Michelle W. Bowman, who preferred to lower the "
           "target range by 1/4 percentage point at this meeting.")  # fmt: skip
    events = market.events_from_statements(
        [(date(2024, 9, 18), cur, "b", "fed"), (date(2024, 7, 31), prev, "a", "fed")]
    )
    e = events[-1]
    assert (e.decision, e.change_bp, e.low, e.high) == ("cut", -50.0, 4.75, 5.0)
    assert len(e.dissents) == 1 and "Michelle W. Bowman" in e.dissents[0]
    added, dropped, changed = market.changed_sentences(e, events[0])
    assert changed and "lower the target range" in changed[0][1]
    assert all("Voting" not in s for s in added + dropped)


def test_rules_name_the_signals_that_fired() -> None:
    rules = load_rules()
    sig = {"us.shape_1d": "bear_steepening", "us.lead_1d": "long_end_led",
           "us.front_chg_1d": 2.0, "us.long_chg_1d": 5.0, "us.spread_chg_1d": 3.0,
           "policy.decision_today": "cut"}  # fmt: skip
    out = {c.rule_id: c for c in evaluate(rules, sig, windows={"1d"})}
    assert out["curve_shape"].label == "bear_steepening"
    assert out["curve_shape"].because == ["long_end_led"]
    assert "us.shape_1d" in out["curve_shape"].signals
    sold = out["long_end_sold_on_cut"]
    assert set(sold.signals) >= {"policy.decision_today", "us.long_chg_1d"}
    assert "bear steepening" in out["curve_shape"].text and "熊陡" in out["curve_shape"].text_zh
    assert "funding_vs_policy" not in out  # its signal is absent: no conclusion


def test_headline_ranks_by_move_against_own_volatility() -> None:
    rules = Rules.model_validate({**load_rules().model_dump(), "headline": {
        "candidates": ["A", "B", "C", "D"]}})  # fmt: skip
    calm = [1.0 + (0.001 if i % 2 else 0.0) for i in range(80)]
    wild = [1.0 + (0.2 if i % 2 else 0.0) for i in range(80)]
    series = {
        "A": _series("A", [*calm, calm[-1] + 0.05], date(2024, 1, 1)),  # 5 bp, very calm
        "B": _series("B", [*wild, wild[-1] + 0.30], date(2024, 1, 1)),  # 30 bp, noisy
        "C": _series("C", [*calm, calm[-1]], date(2024, 1, 1)),
        "D": _series("D", [*calm, calm[-1] - 0.01], date(2024, 1, 1)),
    }
    day = series["A"].points[-1].day
    moves = {k: m for k, s in series.items() if (m := market.move_of(s, day, rules.thresholds))}
    top = [m.indicator for m in market.headline(rules, moves)]
    assert top[0] == "A" and top.index("B") > top.index("D")


async def test_sample_day_report_en_and_zh(tmp_path: Path) -> None:
    series, docs = sample_series(), sample_docs()
    doc = await build_bond_report(None, ReportSettings(), at=AT, series=series, docs=docs,
                                  out_dir=tmp_path)  # fmt: skip
    assert doc.as_of == "2024-09-18" and doc.unsupported_numbers == [] and doc.removed == []
    assert 3 <= len(doc.headline) <= 5 and doc.headline[0].indicator == "US3M"
    assert not any(h.synthetic for h in doc.headline)
    curve = {r.id: r for r in doc.tables["curve"].rows}
    assert curve["US10Y"].level == pytest.approx(3.70)
    assert curve["US2Y"].changes["1m"] == pytest.approx(-45.0)
    assert {c.label for c in doc.curve_shape if c.window == "1m" and c.kind == "curve_shape"} == {
        "bull_steepening"}  # fmt: skip
    assert doc.policy is not None and doc.policy.decision == "cut" and doc.policy.dissents
    assert doc.policy.statement is not None and doc.policy.statement.source == "federalreserve.gov"
    assert any(c.signals for c in doc.conclusions)
    assert doc.drivers and all(not c.synthetic for d in doc.drivers for c in d.citations)
    assert set(doc.synthetic) >= {"CN10Y", "DR007"}
    lines = [x for x in doc.text.splitlines() if len(x) > 20]
    assert len(lines) == len(set(lines))  # no repeated paragraph
    assert doc.text.count("No model commentary") == 1
    assert doc.chart and doc.chart.endswith("yields.svg")
    assert latest_report(tmp_path) is not None
    zh = await build_bond_report(None, ReportSettings(), at=AT, series=series, docs=docs,
                                 lang="zh")  # fmt: skip
    assert "美联储" in zh.text and "熊陡" in zh.text and zh.unsupported_numbers == []
    assert [h.indicator for h in zh.headline] == [h.indicator for h in doc.headline]
    assert "债券市场分析" in doc.extra["text_zh"]


class StaticRetriever:
    method = Method.TFR

    async def search(self, query: str, k: int, *, at: int | None = None) -> list[RetrievedItem]:
        return [RetrievedItem(id="t1", kind=ItemKind.TRIPLE, text="FOMC lowered the target range",
                              method=Method.TFR, score=1.0,
                              provenance=Provenance(doc_ids=["doc-1"]))]  # fmt: skip


async def test_served_model_prose_is_number_checked() -> None:
    text = "The 3-month bill fell 11.0 bp in US3M terms. Yields will hit 9.99% next year."
    llm = FakeLLM({"report.select_facts": {"facts": [1, 2]}, "report.analysis": text})
    doc = await build_bond_report(None, ReportSettings(), at=AT, series=sample_series(),
                                  docs=sample_docs(), llm=llm, retriever=StaticRetriever(),
                                  served=True)  # fmt: skip
    assert "9.99" not in doc.text and doc.unsupported_numbers == []
    assert any("9.99" in r.sentence for r in doc.removed)
    assert "US3M" in doc.narrative and not doc.model_note


async def test_embedded_model_one_line_and_down_model_says_so() -> None:
    doc = await build_bond_report(None, ReportSettings(), at=AT, series=sample_series(),
                                  llm=FakeLLM(), served=False)  # fmt: skip
    assert doc.narrative == "" and doc.text.count("served model") == 1
    down = FakeLLM([LLMUnavailable("down")] * 20, max_retries=0)
    doc = await build_bond_report(None, ReportSettings(), at=AT, series=sample_series(),
                                  llm=down)  # fmt: skip
    assert doc.model_missing and any("LLM" in e for e in doc.errors)
    assert doc.text.count("No model commentary") == 1 and doc.headline


class SlowLLM(FakeLLM):
    def __init__(self, delay: float) -> None:
        super().__init__({"report.select_facts": {"facts": [1]}, "report.analysis": "ok."},
                         timeout_s=60.0, max_retries=0)  # fmt: skip
        self.delay = delay

    async def _complete(self, req):  # type: ignore[no-untyped-def]
        await asyncio.sleep(self.delay)
        return await super()._complete(req)


async def test_model_budget_is_a_hard_deadline() -> None:
    llm = SlowLLM(5.0)
    doc = await build_bond_report(None, ReportSettings(llm_budget_s=0.6), at=AT,
                                  series=sample_series(), llm=llm, served=True)  # fmt: skip
    assert llm.calls == [] and doc.model_missing
    assert any("budget spent" in e for e in doc.errors) and doc.headline


async def test_empty_graph_says_so() -> None:
    doc = await build_bond_report(None, ReportSettings(), at=AT, series={})
    assert doc.headline == [] and "No bond market data" in doc.text and doc.missing
    doc = await build_bond_report(None, ReportSettings(), at=AT)  # no store at all
    assert any("no graph store" in e for e in doc.errors)


def test_model_text_cut_at_max_tokens_keeps_whole_sentences() -> None:
    from kg.report.rag import whole_sentences

    assert whole_sentences("Yields fell to 1.85%. Funding is loose and") == "Yields fell to 1.85%."
    assert whole_sentences("收益率下行。资金面") == "收益率下行。"


def test_eval_report_skips_cleanly_without_the_corpus(tmp_path: Path) -> None:
    from evaluation.scorers.report import run_report_eval, split_of

    out = run_report_eval(shared=tmp_path)
    assert out["ok"] and out["skipped"] and "market corpus" in out["reason"]
    assert (split_of("ref-001"), split_of("ref-002")) == ("dev", "test")


def test_eval_report_on_the_self_written_set(shared_data: Path) -> None:
    from evaluation.scorers.report import run_report_eval

    if not (shared_data / "market_corpus").is_dir():
        pytest.skip("market_corpus is absent")
    out = run_report_eval(shared=shared_data)
    assert out["dev"]["n"] + out["test"]["n"] == out["n"] >= 59
    assert out["dev"]["label_agreement"] >= 0.9 and out["test"]["label_agreement"] >= 0.9
    assert set(out["per_kind"]) >= {"curve_shape", "policy_decision", "front_end_vs_policy"}


def test_statement_with_unicode_hyphens_still_parses() -> None:
    text = ("the Committee decided to raise the target range for the federal funds rate to "
            "1\u20111/2 to 1-3/4 percent. Voting against this action was Esther L. George, "
            "who preferred to raise the target range to 1-1/4 to 1-1/2 percent.")  # fmt: skip
    e = market.parse_statement(text, date(2022, 6, 15), prev_high=1.0)
    assert e is not None and (e.decision, e.change_bp, e.low) == ("hike", 75.0, 1.5)
    assert len(e.dissents) == 1


async def test_first_report_on_start_then_once_the_history_settles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from streams.processors import report as proc

    counts = iter([0, 0, 120, 900, 2000, 2000, 2000, 2000])

    class Store:
        async def query(self, cypher: str, params: dict) -> list[dict]:
            return [{"n": next(counts)}]

    class Ctx:
        async def graph(self) -> Store:
            return Store()

    runs: list[int] = []

    async def fake_run(ctx: object, state: object, *, at: object = None) -> object:
        runs.append(1)
        return type("Doc", (), {"as_of": "2024-09-18"})()

    monkeypatch.setattr(proc, "run_report", fake_run)
    doc = await proc.first_report(Ctx(), proc.ReportState(), poll_s=0.0, tries=8)  # type: ignore[arg-type]
    assert doc is not None and len(runs) == 2  # as soon as data came, and once settled
