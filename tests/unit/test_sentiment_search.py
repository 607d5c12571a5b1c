"""External search connectors for RAG (kg/sentiment/external_search.py) over httpx's
transport seam: the live code path, search-engine answers from tests/fixtures/search."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from core.settings import SearchConnectorSettings, Settings
from kg.sentiment.external_search import (
    ElasticsearchSource,
    SearxngSource,
    external_sources,
    searxng_time_range,
)
from kg.sentiment.rag import ContextRetriever, build_query

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "search"
HEADLINE = "$ACME Acme Corp cuts full-year guidance after weak quarter https://t.co/x"
EVENT = datetime(2024, 5, 1, 14, 0, tzinfo=UTC)


def es_cfg(**kw: object) -> SearchConnectorSettings:
    return SearchConnectorSettings(kind="elasticsearch", url="http://es:9200/", **kw)


def es_transport(log: list[httpx.Request], status: int = 200) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        log.append(request)
        if status != 200:
            return httpx.Response(status, json={"error": "boom"})
        body = json.loads((FIX / "es_msearch.json").read_text())
        n = len(request.content.decode().strip().splitlines()) // 2
        body["responses"] = body["responses"][:n]
        return httpx.Response(200, json=body)

    return httpx.MockTransport(handler)


def searx_transport(log: list[httpx.Request], status: int = 200) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        log.append(request)
        if status != 200:
            return httpx.Response(status, text="Forbidden")
        return httpx.Response(200, content=(FIX / "searxng_search.json").read_bytes())

    return httpx.MockTransport(handler)


def test_elasticsearch_msearch_request_and_hits() -> None:
    log: list[httpx.Request] = []
    src = ElasticsearchSource(es_cfg(index="articles", api_key="k3y"), es_transport(log))
    q1 = build_query(HEADLINE, event_time=EVENT, exclude_ids=["doc-1"])
    q2 = build_query("Another headline about bonds", event_time=EVENT)

    found = asyncio.run(src.search_many([q1, q2], 5))

    (req,) = log  # one request for the whole micro-batch
    assert req.method == "POST" and req.url == "http://es:9200/_msearch"
    assert req.headers["content-type"] == "application/x-ndjson"
    assert req.headers["authorization"] == "ApiKey k3y"
    lines = [json.loads(line) for line in req.content.decode().splitlines()]
    assert [lines[0], lines[2]] == [{"index": "articles"}] * 2
    body = lines[1]
    assert body["size"] == 5
    assert body["query"]["bool"]["must"]["multi_match"]["query"] == q1.cleaned
    assert "$ACME" not in q1.cleaned and "https" not in q1.cleaned
    window = body["query"]["bool"]["filter"][0]["range"]["published_at"]
    assert window["gte"] == (EVENT - timedelta(hours=72)).isoformat()
    assert window["lte"] == (EVENT + timedelta(hours=1)).isoformat()
    assert body["query"]["bool"]["filter"][1]["bool"]["must_not"]["ids"]["values"] == ["doc-1"]

    hits, failed = found
    assert failed == []  # the second search's error costs only that search
    assert [d.id for d in hits] == [
        "elasticsearch:rt-20240501-acme",
        "elasticsearch:bb-20240501-acme-2",
        "elasticsearch:old-2023-acme",
    ]
    assert hits[0].title.startswith("Acme Corp cuts") and "\n\n" in hits[0].text
    assert hits[0].published_at == datetime(2024, 5, 1, 13, 5, tzinfo=UTC)
    assert hits[1].published_at == datetime.fromtimestamp(1714570200, UTC)  # epoch ms


def test_elasticsearch_context_through_algorithm_1() -> None:
    """Hits pass the same window and overlap filters as the graph's own documents."""
    src = ElasticsearchSource(es_cfg(name="archive"), es_transport([]))
    retriever = ContextRetriever([src], timeout_s=5.0)
    result = asyncio.run(retriever.retrieve(build_query(HEADLINE, event_time=EVENT)))

    assert "archive:rt-20240501-acme" in result.context_ids
    assert "archive:old-2023-acme" not in result.context_ids  # outside the 72 h window
    assert result.candidates == 2
    assert "guidance" in result.context
    assert "chief financial officer" not in result.context  # unit overlap <= 0.7
    assert {u.source for u in result.units} == {"archive"}


def test_elasticsearch_failure_costs_the_context_only() -> None:
    log: list[httpx.Request] = []
    src = ElasticsearchSource(es_cfg(), es_transport(log, status=503))
    with pytest.raises(httpx.HTTPStatusError):
        asyncio.run(src.search(build_query(HEADLINE), 5))
    retriever = ContextRetriever([src], timeout_s=5.0)
    result = asyncio.run(retriever.retrieve(build_query(HEADLINE, event_time=EVENT)))
    assert result.units == [] and result.candidates == 0
    assert len(log) == 2


def test_searxng_request_results_and_time_range() -> None:
    log: list[httpx.Request] = []
    src = SearxngSource(
        SearchConnectorSettings(kind="searxng", url="http://searx:8080", language="en"),
        searx_transport(log),
    )
    now = datetime.now(UTC)
    live = build_query(HEADLINE, event_time=now)
    docs = asyncio.run(src.search(live, 10))

    (req,) = log
    assert req.url.path == "/search"
    params = dict(req.url.params)
    assert params["format"] == "json" and params["categories"] == "news"
    assert params["language"] == "en" and params["q"] == live.cleaned
    assert params["time_range"] == "week"  # a 72 h window back from now
    assert [d.id for d in docs] == [
        "searxng:https://news.example.com/acme-guidance-cut",
        "searxng:https://blog.example.org/unrelated",
    ]  # the result without a URL is skipped
    assert docs[0].published_at == datetime(2024, 5, 1, 13, 10, tzinfo=UTC)  # naive -> UTC
    assert docs[1].published_at is None
    assert len(asyncio.run(src.search(live, 1))) == 1  # limit


def test_searxng_time_range_only_for_live_windows() -> None:
    now = datetime(2024, 5, 1, 14, 0, tzinfo=UTC)
    day = build_query("x y", event_time=now, window=timedelta(hours=20))
    month = build_query("x y", event_time=now, window=timedelta(days=20))
    replay = build_query("x y", event_time=now - timedelta(days=30))
    assert searxng_time_range(day, now) == "day"
    assert searxng_time_range(month, now) == "month"
    assert searxng_time_range(replay, now) is None  # "last week" would miss its articles
    assert searxng_time_range(build_query("x y"), now) is None  # no event time


def test_searxng_403_says_how_to_enable_json() -> None:
    src = SearxngSource(
        SearchConnectorSettings(kind="searxng", url="http://searx:8080"),
        searx_transport([], status=403),
    )
    with pytest.raises(PermissionError, match=r"search\.formats"):
        asyncio.run(src.search(build_query(HEADLINE), 5))


def test_source_survives_event_loops_and_closes() -> None:
    """The eval CLI calls ``asyncio.run`` twice; the client follows the running loop."""
    log: list[httpx.Request] = []
    src = SearxngSource(
        SearchConnectorSettings(kind="searxng", url="http://searx:8080"), searx_transport(log)
    )
    for _ in range(2):
        assert asyncio.run(src.search(build_query(HEADLINE), 5))

    async def use_and_close() -> None:
        await src.search(build_query(HEADLINE), 5)
        client = src._client
        await src.aclose()
        assert client is not None and client.is_closed

    asyncio.run(use_and_close())
    assert len(log) == 3


def test_per_source_timeout() -> None:
    """A source's own ``timeout_s`` replaces the retriever's for that source only."""

    class Slow:
        def __init__(self, name: str, delay: float, timeout_s: float | None) -> None:
            self.name, self.delay, self.timeout_s = name, delay, timeout_s

        async def search(self, query, limit):  # type: ignore[no-untyped-def]
            from kg.sentiment.rag import ContextDoc

            await asyncio.sleep(self.delay)
            return [ContextDoc(id=f"{self.name}:1", source=self.name, text=query.cleaned)]

    patient = Slow("patient", 0.15, timeout_s=2.0)
    hasty = Slow("hasty", 0.15, timeout_s=None)  # the retriever's 0.05 s
    retriever = ContextRetriever([patient, hasty], timeout_s=0.05)
    result = asyncio.run(retriever.retrieve(build_query(HEADLINE)))
    assert result.context_ids == ["patient:1"]


def test_settings_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "LIVEKG_SENTIMENT__RAG_SEARCH",
        json.dumps(
            [
                {"kind": "elasticsearch", "url": "http://es:9200", "index": "wire"},
                {"kind": "searxng", "url": "http://searx:8080", "timeout_s": 2},
            ]
        ),
    )
    cfg = Settings().sentiment.rag_search
    sources = external_sources(cfg)
    assert [type(s) for s in sources] == [ElasticsearchSource, SearxngSource]
    assert sources[0].cfg.index == "wire" and sources[1].timeout_s == 2.0
    monkeypatch.setenv("LIVEKG_SENTIMENT__RAG_SEARCH", '[{"kind": "bing", "url": "x"}]')
    with pytest.raises(ValueError, match="elasticsearch"):
        Settings()


async def test_worker_engine_asks_configured_connectors(tmp_path: Path) -> None:
    """The stream's engine adds ``sentiment.rag_search`` to the graph's sources, and the
    worker context closes their clients on stop."""
    from core.runtime_state import Endpoints
    from streams.context import WorkerContext
    from streams.processors.sentiment import make_engine

    settings = Settings(
        data_dir=tmp_path,
        sentiment={"rag_search": [{"kind": "searxng", "url": "http://searx:8080"}]},
    )
    ctx = WorkerContext(
        settings=settings, endpoints=Endpoints(kafka_bootstrap="x:1", falkordb_url=None)
    )
    engine = make_engine(ctx, store=object())
    assert engine.retriever is not None
    assert engine.retriever.timeout_s == settings.sentiment.rag_timeout_s
    assert engine.retriever.max_docs == settings.sentiment.rag_max_docs_per_source
    names = [s.name for s in engine.retriever.sources]
    assert names[-1] == "searxng" and len(names) == 4  # news, filings, facts, searxng
    searx = engine.retriever.sources[-1]
    assert isinstance(searx, SearxngSource)
    searx.transport = searx_transport([])
    assert await searx.search(build_query(HEADLINE), 3)
    client = searx._client
    assert len(ctx.closers) == 1
    await ctx.close()
    assert client is not None and client.is_closed and ctx.closers == []
