"""The knowledge-graph suite on a real graph: static load, idempotence, point-in-time,
rollups, DLQ reasons from the sink handler.

Runs on FalkorDB (the ``stack`` fixture) and, through ``Neo4jStore`` and the official
driver, on a real Neo4j 5 Community server (tests/bolt_server.py), each test in a graph
of its own (FalkorDB) or on the session's emptied Neo4j database.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from core.batch import Inbound
from core.codec import encode
from core.records import DeadLetter, IndicatorTick, Triple
from core.runtime_state import Endpoints
from kg.graph import sink
from kg.graph.canonical import load_alias_index
from kg.graph.static import StaticBundle, load_bundle, load_universe
from kg.graph.store import GraphStore
from kg.graph.temporal import DAY_MS, facts_as_of, roll_up_instant
from streams.context import WorkerContext
from streams.processors.graph_sink import TripleSink
from tests.conftest import GRAPH_BACKENDS, Isolated

pytestmark = pytest.mark.parametrize("iso", GRAPH_BACKENDS, indirect=True)


@pytest.fixture
async def store(graph: GraphStore) -> AsyncIterator[GraphStore]:
    """The test's own graph (see ``graph`` in conftest: nothing shared is touched)."""
    await sink.ensure_schema(graph)
    yield graph


def t(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def triple(head: str, ht: str, rel: str, tail: str, tt: str, when: datetime, **kw: Any) -> Triple:
    return Triple(
        source="test", event_time=when, head=head, head_type=ht, relation=rel, tail=tail,
        tail_type=tt, doc_id=kw.pop("doc_id", f"doc-{when.date()}"), **kw,
    )  # fmt: skip


async def snapshot(store: GraphStore) -> tuple[list[Any], list[Any]]:
    """Every node and relationship with all properties, order-independent."""
    nodes = await store.query("MATCH (n) RETURN n.id AS id, labels(n) AS l, properties(n) AS p")
    rels = await store.query(
        "MATCH (a)-[r]->(b) RETURN a.id AS a, type(r) AS t, b.id AS b, properties(r) AS p"
    )

    def canon(rows: list[dict[str, Any]]) -> list[bytes]:
        return sorted(orjson.dumps(r, option=orjson.OPT_SORT_KEYS) for r in rows)

    return canon(nodes), canon(rels)  # type: ignore[return-value]


async def test_static_universe_loads_with_partitions(store: GraphStore) -> None:
    report = await load_universe(store)
    assert report.errors == [] and report.entities >= 80 and report.relations >= 100
    labels = await store.label_counts()
    assert labels["Company"] >= 30 and labels["Bond"] >= 6 and labels["Indicator"] >= 11
    parts = await store.partition_counts()
    assert set(parts["nodes"]) == {"static"}
    again = await load_universe(store)  # reloading is an upsert
    assert again.errors == [] and await store.label_counts() == labels
    index = await load_alias_index(store)
    assert index.resolve("贵州茅台", "Company").id == "600519.SH"
    assert index.resolve("SHIBOR overnight", "Indicator").id == "SHIBOR_ON"


async def test_static_load_reports_bad_rows(store: GraphStore) -> None:
    bundle = StaticBundle.model_validate(
        {
            "entities": [
                {"id": "X1", "type": "Company", "name": "X One"},
                {"id": "X2", "type": "Starship", "name": "Nope"},
            ],
            "relations": [
                {"head": "X1", "relation": "BELONGS_TO", "tail": "MISSING"},
                {"head": "X1", "relation": "PRODUCES", "tail": "X1"},
            ],
        }
    )
    report = await load_bundle(store, bundle, source="bad.json")
    assert report.entities == 1 and report.relations == 0
    assert len(report.errors) == 3
    assert any("Starship" in e for e in report.errors)
    assert any("unknown tail id" in e for e in report.errors)
    assert any("range_mismatch" in e for e in report.errors)


async def test_same_triples_twice_leave_the_graph_unchanged(store: GraphStore) -> None:
    await load_universe(store)
    index = await load_alias_index(store)
    triples = [
        triple("Apple", "ORG", "Produces", "iPhone", "PRODUCT", t(2026)),
        triple("苹果", "COMP", "Produces", "iPhone", "PRODUCT", t(2026), doc_id="other"),
        triple("NVIDIA", "ORG", "Supplies", "Microsoft", "COMP", t(2026)),
        triple("Apple", "ORG", "HAS_CEO", "Tim Cook", "PERSON", t(2026)),
        triple("PBOC", "GOV", "sets_policy", "RRR cut", "Policy", t(2026, 2)),
        triple("RRR cut", "Policy", "MAY_LEAD_TO", "bond rally", "MarketStatus", t(2026, 2)),
    ]
    first = await sink.write_triples(store, triples, index=index)
    assert first == 5  # the two Apple/iPhone statements are one fact
    before = await snapshot(store)
    await sink.write_triples(store, triples, index=index)
    await sink.write_triples(store, list(reversed(triples)), batch=2, index=index)
    assert await snapshot(store) == before
    [fact] = await store.query(
        "MATCH (:Entity {id: 'AAPL'})-[f:PRODUCES]->(p) RETURN f.sources AS s, f.doc_ids AS d, "
        "p.id AS pid, p.canonical AS canonical, f.partition AS part, f.written_at AS w"
    )
    assert sorted(fact["d"]) == ["doc-2026-01-01", "other"] and len(fact["s"]) == 2
    assert fact["pid"] == "new:product:iphone" and fact["canonical"] is False
    assert fact["part"] == "dynamic" and fact["w"] > 0
    # a known CEO restated from a document: resolves to the static person, one node
    people = await store.query("MATCH (p:Person) WHERE p.name = 'Tim Cook' RETURN p.id AS id")
    assert [r["id"] for r in people] == ["PERSON_TIM_COOK"]


async def test_known_entities_skip_writes_and_recover_when_stale(store: GraphStore) -> None:
    """Entities known to exist are not written again; if one vanished behind the sink's
    back, the fact write notices (fewer rows matched) and redoes the batch in full."""
    await load_universe(store)
    index = await load_alias_index(store)
    known = sink.KnownEntities()
    first = [triple("Apple", "ORG", "Produces", "iPhone", "PRODUCT", t(2026))]
    assert await sink.write_triples(store, first, index=index, known=known) == 1
    assert "AAPL" in known and "new:product:iphone" in known
    await store.execute("MATCH (p:Entity {id: 'new:product:iphone'}) DETACH DELETE p")
    second = [triple("Apple", "ORG", "Produces", "iPhone", "PRODUCT", t(2026), doc_id="d2")]
    assert await sink.write_triples(store, second, index=index, known=known) == 1
    [fact] = await store.query(
        "MATCH (:Entity {id: 'AAPL'})-[f:PRODUCES]->(p:Product) RETURN f.doc_ids AS d, p.id AS pid"
    )
    assert fact == {"d": ["d2"], "pid": "new:product:iphone"}
    assert "new:product:iphone" in known
    before = await snapshot(store)
    await sink.write_triples(store, second + first, index=index, known=known)
    after = await snapshot(store)
    assert len(after[1]) == len(before[1])  # no duplicate edges; provenance merged
    [fact] = await store.query(
        "MATCH (:Entity {id: 'AAPL'})-[f:PRODUCES]->() RETURN f.doc_ids AS d"
    )
    assert sorted(fact["d"]) == ["d2", "doc-2026-01-01"]


async def test_point_in_time_with_superseding_facts(store: GraphStore) -> None:
    await load_universe(store)
    index = await load_alias_index(store)
    # Written newest first: the chain must not depend on arrival order.
    await sink.write_triples(
        store,
        [triple("Apple", "ORG", "HAS_CEO", "Jane Roe", "PERSON", t(2030))],
        index=index,
    )
    await sink.write_triples(
        store,
        [triple("Apple", "ORG", "HAS_CEO", "John Doe", "PERSON", t(2028))],
        index=index,
    )

    async def ceo(at: datetime) -> list[str]:
        rows = await facts_as_of(store, "AAPL", at, relation="HAS_CEO")
        return [r["tail"] for r in rows]

    assert await ceo(t(2020)) == ["PERSON_TIM_COOK"]  # static fact, valid since 2011
    assert await ceo(t(2029)) == ["new:person:johndoe"]
    assert await ceo(t(2031)) == ["new:person:janeroe"]
    assert await ceo(t(2000)) == []
    # superseded, not deleted: all three facts remain, closed in order
    chain = await store.query(
        "MATCH (:Entity {id: 'AAPL'})-[f:HAS_CEO]->(p) "
        "RETURN p.id AS p, f.valid_from AS vf, f.valid_to AS vt, f.superseded_by AS by "
        "ORDER BY vf"
    )
    assert [r["p"] for r in chain] == [
        "PERSON_TIM_COOK", "new:person:johndoe", "new:person:janeroe"
    ]  # fmt: skip
    assert chain[0]["vt"] == chain[1]["vf"] and chain[1]["vt"] == chain[2]["vf"]
    assert chain[2]["vt"] is None and chain[0]["by"] is not None
    # known-at: a query as of 2031 that only trusts facts ingested before they existed
    rows = await facts_as_of(store, "AAPL", t(2031), relation="HAS_CEO", known_at=0)
    assert rows == []


async def test_ticks_then_daily_rollup(store: GraphStore) -> None:
    await load_universe(store)
    day0 = 20_400 * DAY_MS
    ticks = [
        IndicatorTick(source="test", indicator_id="CN10Y", value=v,
                      event_time=datetime.fromtimestamp((day0 + i * 3_000) / 1000, UTC))
        for i, v in enumerate([1.80, 1.86, 1.79, 1.82])
    ] + [
        IndicatorTick(source="test", indicator_id="NEW_IDX", value=5.0,
                      event_time=datetime.fromtimestamp((day0 + 10) / 1000, UTC)),
    ]  # fmt: skip
    await sink.write_ticks(store, ticks)
    await sink.write_ticks(store, ticks)  # replay: no duplicates
    assert (await store.label_counts())["Observation"] == 5
    # the tick sink reuses the static CN10Y entity; an unknown indicator becomes one
    [cn] = await store.query("MATCH (i:Indicator {id: 'CN10Y'}) RETURN i.last_value AS v")
    assert cn["v"] == 1.82
    done = await roll_up_instant(store, now_ms=day0 + DAY_MS + 1, window_ms=3_600_000)
    assert done == {"observations": 5, "days": 2}
    assert (await store.label_counts()).get("Observation", 0) == 0
    [d] = await store.query(
        "MATCH (:Entity {id: 'CN10Y'})-[:HAS_DAILY]->(d:DailyObservation) "
        "RETURN d.open AS o, d.high AS h, d.low AS l, d.close AS c, d.n AS n, d.mean AS m"
    )
    assert (d["o"], d["h"], d["l"], d["c"], d["n"]) == (1.80, 1.86, 1.79, 1.82, 4)
    assert abs(d["m"] - 1.8175) < 1e-9
    # a later run merges more instant data for the same day into the same node
    late_at = datetime.fromtimestamp((day0 + 50_000) / 1000, UTC)
    late = [IndicatorTick(source="test", indicator_id="CN10Y", value=1.90, event_time=late_at)]
    await sink.write_ticks(store, late)
    await roll_up_instant(store, now_ms=day0 + DAY_MS + 1, window_ms=3_600_000)
    [d] = await store.query(
        "MATCH (d:DailyObservation {id: 'CN10Y@2025-11-08'}) RETURN d.n AS n, d.close AS c, "
        "d.high AS h"
    )
    assert (d["n"], d["c"], d["h"]) == (5, 1.90, 1.90)


async def test_ticks_with_known_indicators_survive_a_graph_emptied_behind_them(
    store: GraphStore,
) -> None:
    """The tick sink skips creating indicators it already wrote; when the graph lost them
    (emptied behind its back) the observations still land: the stale set is detected by
    the observation statement's count and the batch rewritten."""
    known = sink.KnownEntities()
    when = datetime(2026, 1, 2, tzinfo=UTC)
    ticks = [IndicatorTick(source="test", indicator_id="KNOWN_IDX", value=1.0, event_time=when)]
    await sink.write_ticks(store, ticks, known=known)
    assert "KNOWN_IDX" in known
    await store.execute("MATCH (n) DETACH DELETE n")
    again = [IndicatorTick(source="test", indicator_id="KNOWN_IDX", value=2.0, event_time=when)]
    await sink.write_ticks(store, again, known=known)
    rows = await store.query(
        "MATCH (:Indicator {id: 'KNOWN_IDX'})-[:HAS_OBSERVATION]->(o:Observation) "
        "RETURN o.value AS v"
    )
    assert [r["v"] for r in rows] == [2.0]


class Captured:
    def __init__(self) -> None:
        self.sent: dict[str, list[Any]] = {}

    async def __call__(self, logical: str, records: list[Any]) -> None:
        self.sent.setdefault(logical, []).extend(records)


async def test_sink_handler_dead_letters_bad_triples_and_writes_the_rest(
    iso: Isolated, graph: GraphStore
) -> None:
    await sink.ensure_schema(graph)
    await load_universe(graph)
    ctx = WorkerContext(
        settings=iso.settings,
        endpoints=Endpoints(kafka_bootstrap=iso.bootstrap, falkordb_url=iso.falkordb_url),
    )
    captured = Captured()
    ctx.send = captured  # type: ignore[method-assign]
    good = [
        triple("Tesla", "ORG", "Produces", "Model Y", "PRODUCT", t(2026)),
        triple("CATL", "ORG", "Supplies", "Tesla", "COMP", t(2026)),
    ]
    bad = {
        "unknown_head_type": triple("x", "Spaceship", "Produces", "y", "PRODUCT", t(2026)),
        "empty_name": triple("...", "ORG", "Produces", "y", "PRODUCT", t(2026)),
        "name_too_long": triple("A" * 300, "ORG", "Produces", "y", "PRODUCT", t(2026)),
        "invalid_time": triple(
            "Tesla",
            "ORG",
            "Produces",
            "y",
            "PRODUCT",
            t(2026),
            valid_from=t(2027),
            valid_to=t(2026),
        ),
        "unknown_relation": triple("Tesla", "ORG", "Adores", "y", "PRODUCT", t(2026)),
    }
    values = [encode(x) for x in (*good, *bad.values())] + [b"{not json"]
    items = [Inbound(topic="kg.triples", value=v, partition=0, offset=i)
             for i, v in enumerate(values)]  # fmt: skip
    handler = TripleSink(ctx)
    try:
        await handler.handle(items)
        dead: list[DeadLetter] = captured.sent["dlq"]
        assert len(dead) == len(bad) + 1
        reasons = sorted(d.error.split(":")[0] for d in dead if d.error_type == "invalid_triple")
        assert reasons == sorted(bad)
        assert any(d.error_type == "malformed_json" for d in dead)
        rows = await graph.query(
            "MATCH (h:Entity)-[f]->(t:Entity) WHERE f.partition = 'dynamic' "
            "RETURN h.id AS h, type(f) AS r, t.id AS t ORDER BY r"
        )
        assert [(r["h"], r["r"], r["t"]) for r in rows] == [
            ("TSLA", "PRODUCES", "new:product:modely"),
            ("300750.SZ", "SUPPLIES", "TSLA"),
        ]
    finally:
        await ctx.close()


async def test_rag_graph_sources_answer_a_whole_batch_per_item(store: GraphStore) -> None:
    """Sentiment RAG asks the graph once per micro-batch; each item still gets its own
    newest documents (its entities, its time window, at most ``limit``) and facts."""
    from kg.sentiment.rag import GraphFactsSource, GraphNewsSource, RagQuery, filings_source

    await store.execute(
        "CREATE (:Entity {id: 'A'}), (:Entity {id: 'B'}), (:Entity {id: 'X', name: 'Xcorp'})"
    )
    docs = [
        ("n0", "news", 1000, ["A"]),
        ("n1", "news", 2000, ["A"]),
        ("n2", "news", 3000, ["A", "B"]),
        ("n3", "social", 4000, ["A"]),
        ("n4", "news", 5000, ["A"]),
        ("old", "news", 10, ["B"]),
        ("f1", "filing", 3500, ["A"]),
    ]
    for doc_id, kind, ms, entities in docs:
        await store.execute(
            "CREATE (d:Document {id: $id, kind: $kind, published_at: $t, title: $id, "
            "text: 'body of ' + $id}) WITH d MATCH (e:Entity) WHERE e.id IN $entities "
            "CREATE (d)-[:MENTIONS]->(e)",
            {"id": doc_id, "kind": kind, "t": ms, "entities": entities},
        )
    await store.execute(
        "MATCH (a:Entity {id: 'A'}), (x:Entity {id: 'X'}) CREATE (a)-[:SUPPLIES]->(x)"
    )

    def q(entities: list[str], since: int | None = None, until: int | None = None) -> RagQuery:
        at = lambda ms: datetime.fromtimestamp(ms / 1000, tz=UTC) if ms is not None else None  # noqa: E731
        return RagQuery(text="t", cleaned="t", entities=entities, since=at(since), until=at(until))

    batch = [q(["A"], 2000, 4500), q(["B"]), q(["A", "B"], 0, 10**9), q([])]
    news = await GraphNewsSource(store).search_many(batch, limit=2)
    assert [[d.id for d in found] for found in news] == [
        ["n3", "n2"],
        ["n2", "old"],
        ["n4", "n3"],
        [],
    ]
    assert news[0][0].text == "body of n3" and news[0][0].published_at is not None
    filings = await filings_source(store).search_many(batch, limit=2)
    assert [[d.id for d in found] for found in filings] == [["f1"], [], ["f1"], []]
    facts = await GraphFactsSource(store).search_many(batch, limit=5)
    assert [len(found) for found in facts] == [1, 0, 1, 0]
    assert facts[0][0].text == "A supplies Xcorp."
    single = await GraphNewsSource(store).search(batch[0], limit=2)
    assert [d.id for d in single] == ["n3", "n2"]


async def test_read_only_queries_cannot_write(store: GraphStore) -> None:
    """The guard refuses writes before the database sees them; behind it, a read-only
    transaction (FalkorDB RO_QUERY, a Neo4j READ session) refuses them too."""
    from core.errors import GraphError, ReadOnlyViolation

    with pytest.raises(ReadOnlyViolation):
        await store.query("CREATE (n:Entity {id: 'sneaky'})")
    with pytest.raises(GraphError):  # bypass the guard: the database refuses by itself
        await store._run("CREATE (n:Entity {id: 'sneaky'})", {}, read_only=True)
    assert await store.query("MATCH (n:Entity {id: 'sneaky'}) RETURN n.id AS id") == []
    assert await store.query("RETURN 'CREATE' AS word") == [{"word": "CREATE"}]
