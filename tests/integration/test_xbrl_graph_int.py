"""XBRL and table facts on a real graph: one filer node per company across sources, the
number, unit, period and accession on the edge (FalkorDB and Neo4j, like test_kg_graph)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from connectors.xbrl import sample_triples
from kg.extract.pipeline import ExtractDoc, Extractor, bundled_index
from kg.extract.xbrl_check import check_against_graph
from kg.graph import sink
from kg.graph.canonical import load_alias_index, sec_filer_ids
from kg.graph.store import GraphStore
from tests.conftest import GRAPH_BACKENDS

pytestmark = pytest.mark.parametrize("iso", GRAPH_BACKENDS, indirect=True)

TABLE_10K = (
    "SUMMARY RESULTS OF OPERATIONS\n\n(In millions, except per share amounts)\n\n"
    "| | Year Ended June 30, 2023 | Year Ended June 30, 2022 |\n|---|---|---|\n"
    "| Revenue | $211,915 | $198,270 |\n| Diluted earnings per share | $9.68 | $9.65 |\n"
)


@pytest.fixture
async def store(graph: GraphStore) -> AsyncIterator[GraphStore]:
    await sink.ensure_schema(graph)
    yield graph


async def test_xbrl_and_table_facts_land_on_one_filer_with_their_numbers(store: GraphStore) -> None:
    index = await load_alias_index(store)
    xbrl = sample_triples(sec_filer_ids())
    doc = ExtractDoc(id="msft-10k", text=TABLE_10K, kind="filing", company="MSFT")
    table = (await Extractor(index=bundled_index(), use_nlp=False).extract(doc)).triples
    assert table and all(t.attributes["unit"] for t in table)
    await sink.write_triples(store, [*xbrl, *table], index=index)
    rows = await store.query(
        "MATCH (c:Entity)-[f:DISCLOSES]->(m:FinMetric) WHERE f.period_end = '2023-06-30' "
        "RETURN c.id AS c, m.name AS m, f.value AS v, f.unit AS u, f.accession AS acc, "
        "f.doc_ids AS docs ORDER BY m"
    )
    assert {r["c"] for r in rows} == {"MSFT"}  # 'MICROSOFT CORPORATION' and 'MSFT': one node
    xr = next(r for r in rows if r["acc"])
    assert xr["docs"] == [xr["acc"]]  # provenance: the filing's accession
    rev = next(r for r in rows if r["m"] == "Revenue")
    assert rev["v"] == 211_915_000_000 and rev["u"] == "USD" and rev["docs"] == ["msft-10k"]
    ba = await store.query(
        "MATCH (c:Entity {id: 'BA'})-[f:DISCLOSES]->(m:FinMetric {name: 'Revenues'}) "
        "RETURN f.value AS v, f.period AS p ORDER BY p"
    )
    assert [r["v"] for r in ba] == [58_158e6, 62_286e6, 66_608e6]
    # the table values checked against the XBRL facts now in the graph
    report = await check_against_graph(store, table, index)
    assert len(report.compared) == 4 and report.rate == 0.0  # revenue, EPS: 2 years each
    wrong = [t.model_copy(update={"attributes": {**t.attributes, "value": 1e9}}) for t in table]
    assert (await check_against_graph(store, wrong[:1], index)).rate == 1.0
