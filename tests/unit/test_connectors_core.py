"""Connector plumbing without a broker: webhook, checkpoints, dedupe, retries, parsing."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from connectors import social
from connectors.base import Batch, PermanentSourceError, RetryableSourceError, SourceError
from connectors.checkpoint import Checkpoint, CheckpointStore
from connectors.http import retry_after_seconds
from connectors.policy import RetryPolicy, with_retries
from connectors.registry import SOURCES, build
from connectors.replay import FileConnector, read_csv
from connectors.runner import DedupeWindow, content_key
from connectors.text import cashtags, html_document
from core.metrics import CONNECTOR_ERRORS
from core.records import IndicatorTick, RawNews, RawSocialPost
from core.settings import ConnectorSettings, Settings

FAST = RetryPolicy(attempts=3, initial_s=0.001, max_s=0.01)


class FakeSink:
    def __init__(self, fail: bool = False) -> None:
        self.sent: list[RawSocialPost] = []
        self.fail = fail

    async def send(self, records: list[RawSocialPost]) -> None:
        if self.fail:
            raise RuntimeError("broker unreachable")
        self.sent.extend(records)


def app_with(sink: FakeSink) -> FastAPI:
    app = FastAPI()
    app.include_router(social.router)
    app.dependency_overrides[social.get_sink] = lambda: sink
    return app


async def test_webhook_accepts_posts_and_keeps_cashtags() -> None:
    sink = FakeSink()
    transport = httpx.ASGITransport(app=app_with(sink))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        one = await client.post(
            "/ingest/social", json={"text": "long $NVDA, short $intc", "author": "@a"}
        )
        many = await client.post(
            "/ingest/social",
            json=[
                {
                    "text": "CN 10y at 2.28%",
                    "created_at": "2024-06-12T01:00:00+08:00",
                    "entities": ["cn10y"],
                },
                {"text": "same post", "id": "p-1", "source": "x.com"},
            ],
        )
    assert one.status_code == 202 and many.status_code == 202
    assert many.json()["accepted"] == 2 and many.json()["ids"][1] == "p-1"
    first, second, third = sink.sent
    assert first.text == "long $NVDA, short $intc" and first.entities == ["NVDA", "INTC"]
    assert first.key() == "NVDA"
    assert second.entities == ["CN10Y"] and second.event_time.hour == 17  # 01:00+08 -> 17:00Z
    assert third.source == "x.com"


async def test_webhook_refuses_invalid_posts_and_reports_broker_failure() -> None:
    sink = FakeSink()
    transport = httpx.ASGITransport(app=app_with(sink))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        bad = await client.post("/ingest/social", json=[{"text": "ok"}, {"text": ""}])
        assert bad.status_code == 422 and sink.sent == []  # all or nothing
    down = httpx.ASGITransport(app=app_with(FakeSink(fail=True)))
    async with httpx.AsyncClient(transport=down, base_url="http://t") as client:
        r = await client.post("/ingest/social", json={"text": "hello"})
    assert r.status_code == 503 and "broker unreachable" in r.text


def test_checkpoint_store_is_atomic_and_round_trips(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "cp")
    assert store.load("edgar") is None
    cp = Checkpoint(source="edgar", offsets={"raw.filings": {"0": 12}})
    cp.stream("AAPL").cursor = "2024-08-01T18:03:56.000Z|0000320193-24-000081|9999"
    cp.stream("AAPL").state = {"etag": '"x"'}
    store.save(cp)
    again = store.load("edgar")
    assert again == cp
    assert [p.name for p in (tmp_path / "cp").iterdir()] == ["edgar.json"]  # no temp left
    assert store.summary("edgar") == {"AAPL": cp.streams["AAPL"].cursor}
    assert store.reset("edgar") and store.load("edgar") is None


def test_dedupe_by_content_not_by_id_or_ingest_time() -> None:
    a = RawNews(
        source="feed:a", title="Fed holds", body="x", event_time="2024-06-12T18:00:00Z", url="u1"
    )
    b = RawNews(
        source="feed:b", title="Fed holds", body="x", event_time="2024-06-12T18:00:00Z", url="u2"
    )
    c = RawNews(source="feed:a", title="Fed cuts", body="x", event_time="2024-06-12T18:00:00Z")
    assert content_key(a) == content_key(b) != content_key(c)
    w = DedupeWindow(size=2, ttl_s=3600)
    w.add_all([content_key(a), content_key(c)])
    assert content_key(b) in w
    w.add_all(["k3", "k4"])  # evicts the oldest beyond the window size
    assert content_key(a) not in w


async def test_retries_count_errors_and_stop_on_permanent() -> None:
    calls = {"n": 0}

    async def flaky() -> str:
        calls["n"] += 1
        if calls["n"] < 3:
            raise RetryableSourceError("HTTP 503")
        return "ok"

    before = CONNECTOR_ERRORS.labels("t-src", "RetryableSourceError")._value.get()
    assert await with_retries(flaky, policy=FAST, source="t-src", what="GET x") == "ok"
    assert CONNECTOR_ERRORS.labels("t-src", "RetryableSourceError")._value.get() - before == 2

    async def gone() -> str:
        calls["n"] += 1
        raise PermanentSourceError("HTTP 404")

    calls["n"] = 0
    with pytest.raises(SourceError, match="t-src: GET y failed: HTTP 404"):
        await with_retries(gone, policy=FAST, source="t-src", what="GET y")
    assert calls["n"] == 1


def test_retry_after_header_forms() -> None:
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past


def test_html_document_keeps_tables_as_rows_and_in_text() -> None:
    html = (
        b"<html><body><p>Intro</p><table><tr><th>Item</th><th>Q2</th></tr>"
        b"<tr><td>Net sales</td><td>85,777</td></tr></table><p>After</p></body></html>"
    )
    doc = html_document(html, with_tables=True)
    assert doc.tables == [[["Item", "Q2"], ["Net sales", "85,777"]]]
    assert "Net sales\t85,777" in doc.text and doc.text.index("Item") == doc.table_pos[0]
    assert cashtags("$AAPL vs $aapl and US$5 or $BRK.B") == ["AAPL", "BRK.B"]


async def test_file_connector_reads_csv_with_json_cells(tmp_path: Path) -> None:
    p = tmp_path / "news.csv"
    p.write_text(
        "source,title,entities,event_time\n"
        't,"Fed, again","[""SPX""]",2024-06-12T18:00:00Z\n'
        "t,,[],bad\n",
        encoding="utf-8",
    )
    assert next(iter(read_csv(p)))[1]["entities"] == ["SPX"]
    c = FileConnector({str(p): "raw.news"}, ConnectorSettings())
    batch: Batch = await c.fetch(str(p), None, {})
    assert batch.rows == 2 and batch.rejected == 1
    (item,) = batch.items
    assert item.record.title == "Fed, again" and item.record.entities == ["SPX"]
    assert item.cursor == "000000000002"
    assert (await c.fetch(str(p), item.cursor, {})).items == []


def test_registry_builds_every_source() -> None:
    s = Settings(
        connectors=ConnectorSettings(feeds=["https://x/rss"], social_feeds=["https://y/p"])
    )
    for name in SOURCES:
        c = build(name, s)
        assert c.name == name and (c.topics or name == "file")  # file: topics from config
    with pytest.raises(KeyError, match="unknown source"):
        build("nope", s)


def test_indicator_tick_content_key_includes_value() -> None:
    t1 = IndicatorTick(
        source="s", indicator_id="CN10Y", value=2.28, event_time="2024-06-03T00:00:00Z"
    )
    t2 = IndicatorTick(
        source="s", indicator_id="CN10Y", value=2.29, event_time="2024-06-03T00:00:00Z"
    )
    assert content_key(t1) != content_key(t2)


def test_batch_rejects_text_that_cannot_be_sent_with_where_it_is() -> None:
    """A lone surrogate in a Python-built field (an akshare frame cell; found by the
    fuzzer) would fail at send time: the row is rejected with its field, the rest go on."""
    batch = Batch()
    ok = {"source": "ak", "title": "央行开展逆回购", "event_time": "2024-06-12T18:00:00Z"}
    batch.add("raw.news", "c1", RawNews, {**ok, "body": "a\ud800b"})
    batch.add("raw.news", "c2", RawNews, {**ok, "entities": ["600519", "\udc80"]})
    batch.add("raw.news", "c3", RawNews, ok)
    assert batch.rows == 3 and batch.rejected == 2 and len(batch.items) == 1
    assert batch.errors == [
        "RawNews body: not valid Unicode (cursor c1)",
        "RawNews entities.1: not valid Unicode (cursor c2)",
    ]
