"""SEC company facts: parsing, dedup across filings, amendments, the connector over HTTP."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import httpx
import pytest

from connectors.base import SchemaDriftError
from connectors.xbrl import (
    XbrlConnector,
    dedupe,
    parse_companyfacts,
    sample_files,
    sample_triples,
    triples_of,
)
from core.settings import ConnectorSettings
from kg.graph.ontology import default_ontology

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "connectors"
FACTS = FIX / "xbrl" / "CIK0000320193.json"


def test_parse_reads_every_fact_and_lists_bad_rows() -> None:
    cf = parse_companyfacts(FACTS.read_bytes())
    assert (cf.cik, cf.entity) == (320193, "Apple Inc.")
    assert len(cf.facts) == 10
    assert any("no numeric val" in r for r in cf.rejected)
    assert any("start after end" in r for r in cf.rejected)
    shares = next(f for f in cf.facts if f.concept == "EntityCommonStockSharesOutstanding")
    assert shares.start is None and shares.unit == "shares" and shares.taxonomy == "dei"
    eps = next(f for f in cf.facts if f.concept == "EarningsPerShareDiluted")
    assert eps.unit == "USD/share" and eps.value == 6.13


def test_dedupe_keeps_latest_filing_and_amendment_supersedes() -> None:
    cf = parse_companyfacts(FACTS.read_bytes())
    d = dedupe(cf.facts)
    assert len(d.kept) == 8 and d.superseded == 2
    fy22 = [f for f in d.kept if f.concept == "Revenues" and f.end == date(2022, 9, 24)]
    assert len(fy22) == 1 and fy22[0].accession == "0000320193-23-000106"  # the later 10-K
    ni = next(f for f in d.kept if f.concept == "NetIncomeLoss" and f.end == date(2023, 9, 30))
    assert ni.form == "10-K/A" and ni.value == 96_900_000_000  # amendment, same filing day
    assert ni.key in d.restated


def test_triples_are_in_schema_with_period_unit_and_provenance() -> None:
    cf = parse_companyfacts(FACTS.read_bytes())
    triples = triples_of(cf, head_id="AAPL")
    ont = default_ontology()
    for t in triples:
        assert ont.check(t.head, t.head_type, t.relation, t.tail, t.tail_type).ok
        assert t.attributes["unit"] and t.attributes["period_end"] and t.doc_id
    rev = next(t for t in triples if t.attributes["period"] == "FY2023" and t.tail == "Revenues")
    assert rev.attributes["value"] == 383_285_000_000
    assert rev.attributes["accession"] == "0000320193-23-000106"
    assert rev.attributes["fiscal_year"] == 2023  # the filing's own period
    q4 = next(t for t in triples if t.attributes["period"] == "3M to 2023-09-30")
    assert q4.attributes["period_start"] == "2023-07-02"
    old = next(t for t in triples if t.attributes["period"] == "FY2021")
    assert "fiscal_year" not in old.attributes  # a comparative: SEC's fy is the filing's
    assert old.attributes["report_fiscal_year"] == 2022


@pytest.mark.parametrize(
    "body", [b"", b"\x00\xff\xfe binary", b"[]", b'{"cik": "x", "facts": {}}', b'{"cik": 1}']
)
def test_bad_bodies_are_a_clear_schema_error(body: bytes) -> None:
    with pytest.raises(SchemaDriftError):
        parse_companyfacts(body)


def test_odd_shapes_inside_facts_are_rejected_not_fatal() -> None:
    doc = {"cik": 1, "entityName": "X", "facts": {"us-gaap": {"A": [], "B": {"units": {"USD": 5}}}}}
    cf = parse_companyfacts(json.dumps(doc).encode())
    assert cf.facts == [] and len(cf.rejected) == 2


def test_bundled_samples_are_real_filers_in_sec_format() -> None:
    assert {p.name for p in sample_files()} >= {"CIK0000789019.json", "CIK0000012927.json"}
    triples = sample_triples({789019: "MSFT"})
    msft = [t for t in triples if t.head_id == "MSFT"]
    rev = next(
        t
        for t in msft
        if t.attributes["concept"].endswith("RevenueFromContractWithCustomerExcludingAssessedTax")
        and t.attributes["period_end"] == "2023-06-30"
    )
    assert rev.attributes["value"] == 211_915_000_000
    # restated by us from the 10-K text, so the triple never claims to come from the SEC
    assert rev.source == "sample:xbrl-restated-from-10k"


async def test_connector_fetches_by_ticker_and_resumes_after_cursor() -> None:
    seen: list[str] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req.url.path)
        if req.url.path.endswith("company_tickers.json"):
            return httpx.Response(
                200, content=(FIX / "edgar" / "company_tickers.json").read_bytes()
            )
        if "/api/xbrl/companyfacts/CIK0000320193.json" in req.url.path:
            return httpx.Response(200, content=FACTS.read_bytes())
        return httpx.Response(404)

    cfg = ConnectorSettings(edgar_watchlist=["AAPL"], rate_limits={"edgar": 0})
    c = XbrlConnector(cfg, transport=httpx.MockTransport(handler))
    batch = await c.fetch("AAPL", None, {})
    assert len(batch.items) == 8 and batch.rejected == 2
    assert all(i.topic == "kg.triples" for i in batch.items)
    cursors = [i.cursor for i in batch.items]
    assert cursors == sorted(cursors)
    again = await c.fetch("AAPL", "2022-10-28|0000320193-22-000108", {})
    assert 0 < len(again.items) < len(batch.items)
    assert all(i.cursor > "2022-10-28|0000320193-22-000108" for i in again.items)


class _FakeProducer:
    """Just enough of confluent_kafka.Producer for the replay sender (unit test only)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes, bytes]] = []

    def produce(self, topic: str, key: bytes, value: bytes, on_delivery: object = None) -> None:
        self.sent.append((topic, key, value))

    def poll(self, _timeout: float) -> int:
        return 0

    def flush(self, _timeout: float) -> int:
        return 0


def test_replay_puts_the_sample_facts_on_kg_triples() -> None:
    from connectors.replay import replay_xbrl_samples
    from core.records import Triple
    from kg.graph.canonical import sec_filer_ids

    prod = _FakeProducer()
    report = replay_xbrl_samples("unused:9092", sec_filer_ids(), prefix="t1.", prod=prod)  # type: ignore[arg-type]
    assert report.produced == len(prod.sent) == len(sample_triples()) > 0
    assert {topic for topic, _, _ in prod.sent} == {"t1.kg.triples"}
    triples = [Triple.model_validate_json(v) for _, _, v in prod.sent]
    assert {t.head_id for t in triples} == {"MSFT", "AXP", "BA"}
    assert all(t.doc_id and t.attributes["accession"] == t.doc_id for t in triples)
