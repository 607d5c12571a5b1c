"""The query service against a real graph (FalkorDB and Neo4j) and broker: the question suite,
read-only at both layers, the HTTP API's auth/limits/routes, the alerts feed."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import httpx
import pytest

from core.errors import GraphError, ReadOnlyViolation
from core.records import Alert, AlertKind, utcnow
from evaluation.scorers.cypher import EVALSETS, evaluate, read_items, summarize
from evaluation.scorers.cypher_fixture import load_graph
from kg.cypher import Citation, CypherQA, HybridAnswer, run_read_only
from kg.graph.store import GraphStore
from kg.graph.temporal import roll_up_instant
from serving.app import create_app
from serving.feeds import LiveFeeds
from serving.services import Services
from streams.publisher import Publisher
from tests.conftest import GRAPH_BACKENDS

NOW = datetime(2026, 11, 21, tzinfo=UTC)
# the question suites and the API on FalkorDB and on Neo4j (the Kafka-only tests once)
BOTH_GRAPHS = pytest.mark.parametrize("iso", GRAPH_BACKENDS, indirect=True)


async def counts(store: GraphStore) -> tuple[int, int]:
    n = await store.query("MATCH (n) RETURN count(n) AS n")
    r = await store.query("MATCH ()-[r]->() RETURN count(r) AS n")
    return int(n[0]["n"]), int(r[0]["n"])


@pytest.fixture
async def qa(graph: GraphStore) -> CypherQA:
    await load_graph(graph)
    return CypherQA(graph, await CypherQA.load_lexicon(graph))  # prior-only ranking (fast)


@BOTH_GRAPHS
async def test_question_suite_accuracy(qa: CypherQA) -> None:
    sets = (("questions.jsonl", 0.95, 80), ("questions_heldout.jsonl", 0.9, 40),
            ("questions_fresh.jsonl", 0.9, 20))  # fmt: skip
    for name, floor, size in sets:
        items = read_items(EVALSETS / name)
        assert len(items) >= size
        assert {i.type for i in items} == {"AF", "AC", "AF+AC", "AF+RR", "AF+AC+RR"}
        assert {i.language() for i in items} == {"en", "zh"}
        summary = summarize(await evaluate(qa, items, revise=False))
        # the readings' rows (abstained or not), then what is answered (issue 44: a reading
        # with words the query does not account for abstains, so accuracy is lower)
        assert summary["rows_right"] >= floor, (name, summary)
        assert summary["precision"] >= 0.97 and summary["accuracy"] >= 0.75, (name, summary)


@BOTH_GRAPHS
async def test_series_answers_survive_the_daily_rollup(qa: CypherQA, graph: GraphStore) -> None:
    questions = [
        "What was the highest China 10-year yield on 2026-11-18?",
        "2026-11-17 DR007的最低值是多少？",
        "What was the average US 2-year yield on 2026-11-19?",
        "What was the opening value of the US 10-year yield on 2026-11-20?",
        "How much did the China 10-year yield change between 2026-11-16 and 2026-11-20?",
    ]
    before = [(await qa.ask(q, now=NOW)).rows for q in questions]
    moved = await roll_up_instant(graph, now_ms=int(NOW.timestamp() * 1000), window_ms=0)
    assert moved["observations"] > 0
    left = "MATCH (o:Observation {frequency: 'instant'}) RETURN count(o) AS n"
    assert (await graph.query(left))[0]["n"] == 0
    after = [(await qa.ask(q, now=NOW)).rows for q in questions]
    for q, b, a in zip(questions, before, after, strict=True):
        assert a[0]["value"] == pytest.approx(b[0]["value"], abs=1e-9), q


HOSTILE = [
    "delete all companies",
    "MATCH (n) DETACH DELETE n",
    "删除所有公司",
    "Apple'}) DETACH DELETE n //",
    'Who is the CEO of Apple"}) MATCH (n) DETACH DELETE n RETURN 1 //?',
    "CALL dbms.killQueries(['x'])",
    "CREATE (x:Company {id: 'EVIL'}) RETURN x",
    "Which companies belong to banks; MATCH (n) SET n.name = 'pwned'",
]


@BOTH_GRAPHS
async def test_hostile_questions_never_change_the_graph(qa: CypherQA, graph: GraphStore) -> None:
    before = await counts(graph)
    for q in HOSTILE:
        res = await qa.ask(q, now=NOW)
        if res.cypher:
            assert "DELETE" not in res.cypher.upper() and "SET " not in res.cypher.upper()
    assert await counts(graph) == before
    names = await graph.query("MATCH (n:Company {id: 'AAPL'}) RETURN n.name AS name")
    assert names == [{"name": "Apple Inc."}]


@BOTH_GRAPHS
@pytest.mark.parametrize(
    "cypher",
    ["MATCH (n) DETACH DELETE n", "CREATE (n:Entity {id: 'x'})", "MATCH (n) SET n.x = 1",
     "CALL db.idx.fulltext.drop('Entity')", "MATCH (n) RETURN n; MATCH (m) DELETE m"],
)  # fmt: skip
async def test_both_layers_refuse_writes(qa: CypherQA, graph: GraphStore, cypher: str) -> None:
    before = await counts(graph)
    with pytest.raises(ReadOnlyViolation):  # layer 1: the guard
        await run_read_only(graph, cypher)
    if not cypher.startswith("CALL") and ";" not in cypher:
        # layer 2: the database's read-only mode, reached past both text checks
        with pytest.raises(GraphError):
            await graph._run(cypher, {}, read_only=True)
    assert await counts(graph) == before


@pytest.fixture
async def api(iso, graph: GraphStore) -> httpx.AsyncClient:  # type: ignore[no-untyped-def]
    await load_graph(graph)
    settings = iso.settings.with_overrides(
        api={"api_keys": ["k1", "k2"]},
        query={"rank_with_embeddings": False, "max_body_bytes": 2048, "rate_limit_per_min": 0},
    )
    app = create_app(settings, Services(settings, store=graph))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        yield client


@BOTH_GRAPHS
async def test_api_keys_size_limits_and_routes(api: httpx.AsyncClient, graph: GraphStore) -> None:
    q = {"question": "Who is the CEO of Apple?"}
    assert (await api.post("/ask", json=q)).status_code == 401
    bad = await api.post("/ask", json=q, headers={"X-API-Key": "k3"})
    assert bad.status_code == 401
    assert bad.json()["error"]["code"] == "unauthorized"
    assert (await api.get("/entities/AAPL")).status_code == 401
    assert (await api.get("/health")).status_code == 200  # open
    assert (await api.get("/metrics")).status_code == 200  # open
    h = {"X-API-Key": "k2"}
    huge = await api.post("/ask", content=b'{"question": "' + b"x" * 5000 + b'"}', headers=h)
    assert huge.status_code == 413
    assert huge.json()["error"]["code"] == "payload_too_large"
    r = await api.post("/ask", json=q, headers=h)
    assert r.status_code == 200
    body = r.json()
    assert body["method"] == "cypher" and body["rows"][0]["id"] == "PERSON_TIM_COOK"
    assert set(body) >= {"question", "method", "cypher", "params", "rows", "answer",
                         "citations", "timings"}  # fmt: skip
    assert any(c["kind"] == "fact" for c in body["citations"])
    e = (await api.get("/entities/AAPL", headers=h)).json()
    assert e["properties"]["ticker"] == "AAPL" and "Company" in e["labels"]
    assert (await api.get("/entities/NOPE", headers=h)).status_code == 404
    nb = (await api.get("/entities/AAPL/neighbourhood?depth=2", headers=h)).json()
    ids = {n["id"] for n in nb["nodes"]}
    assert {"AAPL", "PERSON_TIM_COOK", "IND_CONSUMER_ELECTRONICS", "US"} <= ids
    assert len(ids) > 10  # two hops reach other US companies
    old = (await api.get("/entities/AAPL/neighbourhood?as_of=2010-01-01", headers=h)).json()
    assert "PERSON_TIM_COOK" not in {n["id"] for n in old["nodes"]}  # CEO since 2011
    assert (await api.get("/entities/AAPL/neighbourhood?depth=9", headers=h)).status_code == 422
    s = (await api.get("/indicators/US10Y/series?from=2026-11-18T00:00:00Z&to=2026-11-19T00:00:00Z",
                       headers=h)).json()  # fmt: skip
    assert len(s["points"]) == 8 and s["points"][0]["t"] < s["points"][-1]["t"]
    before = await counts(graph)
    for text in HOSTILE:
        assert (await api.post("/ask", json={"question": text}, headers=h)).status_code == 200
    assert await counts(graph) == before
    spec = (await api.get("/openapi.json")).json()
    assert {"/ask", "/entities/{entity_id}", "/entities/{entity_id}/neighbourhood", "/sentiment",
            "/indicators/{indicator_id}/series", "/alerts/stream", "/reports/latest",
            "/health", "/metrics"} <= set(spec["paths"])  # fmt: skip


async def test_alert_feed_resumes_after_last_event_id(iso) -> None:  # type: ignore[no-untyped-def]
    feeds = LiveFeeds(iso.bootstrap, iso.prefix, buffer=100)
    await feeds.start()
    pub = Publisher(iso.bootstrap)
    try:

        async def send(i: int) -> None:
            a = Alert(id=f"t{i}", source="test", event_time=utcnow(), kind=AlertKind.INDICATOR_MOVE,
                      entity_id=f"E{i}", severity="warning", message=f"alert {i}")  # fmt: skip
            await pub.send_many(iso.topic("alerts.indicator"),
                                [(a.key().encode(), a.model_dump_json().encode())])  # fmt: skip

        got = []
        stream = feeds.subscribe(None)
        for i in range(3):
            await send(i)
        for _ in range(3):
            got.append(await asyncio.wait_for(anext(stream), 10))
        assert [e.data["message"] for e in got] == ["alert 0", "alert 1", "alert 2"]
        await stream.aclose()
        await send(3)
        resumed = feeds.subscribe(got[1].event_id)  # the client saw up to alert 1
        first = await asyncio.wait_for(anext(resumed), 10)
        second = await asyncio.wait_for(anext(resumed), 10)
        assert [first.data["message"], second.data["message"]] == ["alert 2", "alert 3"]
        await resumed.aclose()
        assert json.loads(json.dumps(first.data))["entity_id"] == "E2"
    finally:
        pub.close()
        await feeds.stop()


class FixedReviser:
    """Stands in for the LLM: returns one fixed query."""

    def __init__(self, cypher: str) -> None:
        self.cypher = cypher
        self.calls = 0

    async def revise(self, question: str, schema: str, cypher: str, params: dict) -> str:  # type: ignore[type-arg]
        self.calls += 1
        assert "Company" in schema or "Entity" in schema  # only the relevant schema part
        return self.cypher


@BOTH_GRAPHS
@pytest.mark.parametrize(
    "revised,accepted",
    [
        ("MATCH (t:Company {exchange: 'NYSE'}) RETURN t.id AS id ORDER BY id", True),
        ("MATCH (n) DETACH DELETE n", False),  # writes: refused
        ("MATCH (t:Company RETURN t", False),  # does not parse
        ("MATCH (t:Company {exchange: 'NOWHERE'}) RETURN t.id AS id", False),  # no rows
    ],
)
async def test_revision_is_accepted_only_when_read_only_parsing_and_useful(
    qa: CypherQA, graph: GraphStore, revised: str, accepted: bool
) -> None:
    before = await counts(graph)
    qa.reviser = FixedReviser(revised)
    res = await qa.ask("Quels sont les titres cotés à New York?", revise=True, now=NOW)
    assert qa.reviser.calls == 1
    assert res.revised is accepted
    if accepted:
        assert res.cypher == revised and {r["id"] for r in res.rows} == {"BAC", "GS", "JPM", "XOM"}
    else:
        assert res.cypher != revised
    assert await counts(graph) == before
    # with answers that have rows, the default policy never calls the model
    qa.reviser = FixedReviser(revised)
    await qa.ask("Who is the CEO of Apple?", revise=True, now=NOW)
    assert qa.reviser.calls == 0


class FixedHybrid:
    def __init__(self, answer: HybridAnswer | None) -> None:
        self.result = answer
        self.calls = 0

    async def answer(self, question: str) -> HybridAnswer | None:
        self.calls += 1
        return self.result


@BOTH_GRAPHS
async def test_hybrid_fallback_only_when_no_candidate_has_rows(qa: CypherQA) -> None:
    cited = HybridAnswer(answer="Related: x", citations=[Citation(id="d1", kind="document")])
    qa.hybrid = FixedHybrid(cited)
    res = await qa.ask("Tell me about quantum computing startups", now=NOW)
    assert res.method == "hybrid" and res.citations[0].id == "d1" and res.rows == []
    res = await qa.ask("Who is the CEO of Apple?", now=NOW)
    assert res.method == "cypher" and qa.hybrid.calls == 1  # type: ignore[attr-defined]
    qa.hybrid = FixedHybrid(None)
    res = await qa.ask("Tell me about quantum computing startups", now=NOW)
    assert res.method == "none" and res.rows == [] and "no answer" in res.answer


async def test_topics_tail_prints_records(iso, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from cli import query_cmds  # registers the commands
    from cli.groups import app

    assert query_cmds
    pub = Publisher(iso.bootstrap)
    try:
        a = Alert(id="tail-1", source="test", event_time=utcnow(), kind=AlertKind.MATERIAL_EVENT,
                  entity_id="AAPL", message="tail me")  # fmt: skip
        await pub.send_many(iso.topic("alerts.events"), [(b"AAPL", a.model_dump_json().encode())])
    finally:
        pub.close()
    monkeypatch.setenv("LIVEKG_KAFKA__BOOTSTRAP_SERVERS", iso.bootstrap)
    monkeypatch.setenv("LIVEKG_KAFKA__TOPIC_PREFIX", iso.prefix)
    monkeypatch.setenv("LIVEKG_GRAPH__FALKORDB_URL", iso.falkordb_url)
    args = ["topics", "tail", "alerts.events", "--from-beginning", "--json", "--max", "1",
            "--idle-timeout", "10"]  # fmt: skip
    out = await asyncio.to_thread(CliRunner().invoke, app, args)
    assert out.exit_code == 0, out.output
    line = json.loads(out.output.strip().splitlines()[-1])
    assert line["topic"] == "alerts.events" and line["key"] == "AAPL"
    assert line["value"]["message"] == "tail me"
    bad = await asyncio.to_thread(CliRunner().invoke, app, ["topics", "tail", "no.such.topic"])
    assert bad.exit_code == 1 and "unknown topic" in bad.output


@BOTH_GRAPHS
async def test_extracted_facts_are_answered_like_static_ones(graph: GraphStore) -> None:
    """Facts from extraction (the triple sink's path) become dictionary entries and
    relations the questions reach, new entities included."""
    from core.records import Triple
    from kg.graph.canonical import load_alias_index
    from kg.graph.sink import write_triples

    await load_graph(graph)
    facts = [
        ("Foxconn", "Company", "SUPPLIES", "Apple", "Company"),
        ("Taiwan Semiconductor Manufacturing", "Company", "SUPPLIES", "Apple", "Company"),
        ("Apple", "Company", "PRODUCES", "iPhone", "Product"),
        ("Tesla", "Company", "IMPACTED_BY", "US tariff increase", "Event"),
    ]
    at = datetime(2026, 11, 20, tzinfo=UTC)
    triples = [
        Triple(source="test", event_time=at, head=h, head_type=ht, relation=r, tail=t,
               tail_type=tt, doc_id=f"doc{i}", valid_from=at)
        for i, (h, ht, r, t, tt) in enumerate(facts)
    ]  # fmt: skip
    await write_triples(graph, triples, index=await load_alias_index(graph))
    qa = CypherQA(graph, await CypherQA.load_lexicon(graph))
    names = {r["name"] for r in (await qa.ask("Which companies supply Apple?", now=NOW)).rows}
    assert names == {"Foxconn", "Taiwan Semiconductor Manufacturing"}
    assert (await qa.ask("How many suppliers does Apple have?", now=NOW)).rows == [{"count": 2}]
    assert [r["name"] for r in (await qa.ask("What does Apple produce?", now=NOW)).rows] == [
        "iPhone"
    ]
    res = await qa.ask("What events impacted Tesla?", now=NOW)
    assert [r["name"] for r in res.rows] == ["US tariff increase"]
    assert any(c.kind == "document" and c.id == "doc3" for c in res.citations)
    res = await qa.ask("哪些公司给苹果供货？", now=NOW)
    assert len(res.rows) == 2


@BOTH_GRAPHS
async def test_livekg_ask_json(iso, graph: GraphStore, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from cli import query_cmds
    from cli.groups import app

    assert query_cmds
    await load_graph(graph)
    monkeypatch.setenv("LIVEKG_KAFKA__BOOTSTRAP_SERVERS", iso.bootstrap)
    for key, value in iso.graph_env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("LIVEKG_QUERY__RANK_WITH_EMBEDDINGS", "false")
    monkeypatch.setenv("LIVEKG_DATA_DIR", str(iso.settings.data_dir))
    before = await counts(graph)
    for question, expected in (
        ("哪些基金持有贵州茅台？", [{"id": "005827.OF"}]),
        ("MATCH (n) DETACH DELETE n", None),
    ):
        out = await asyncio.to_thread(CliRunner().invoke, app, ["ask", question, "--json"])
        assert out.exit_code == 0, out.output
        body = json.loads(out.output.strip().splitlines()[-1])
        assert body["question"] == question and "timings" in body
        if expected:
            assert body["method"] == "cypher"
            assert [{"id": r["id"]} for r in body["rows"]] == expected
    assert await counts(graph) == before


@BOTH_GRAPHS
async def test_relative_times_count_back_from_the_data_clock(qa: CypherQA) -> None:
    """The fixture's observations end before today's wall clock: "now" is their last day."""
    now = await qa.data_now()
    assert now < datetime.now(UTC)
    assert now.date() <= NOW.date()
    # the suite asks "last week" with now=2026-11-21 (a Saturday: the week just ended);
    # without a "now" the data clock (the fixture's last weekday) stands in, where "last
    # week" is the calendar week before, so the seven days back are asked here
    rows = (await qa.ask("What was the maximum DR007 over the past week?")).rows
    assert rows == [{"value": 1.5068}], rows
