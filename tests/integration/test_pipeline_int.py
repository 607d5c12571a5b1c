"""The first flow on the real broker and graph, through a real worker process."""

from __future__ import annotations

import base64
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from core.records import DeadLetter, IndicatorTick, RawNews, RawSocialPost
from core.runtime_state import Endpoints
from core.settings import Settings
from kg.graph.store import GraphStore
from ops.runtime import spawn_worker, stop_pid
from tests.conftest import Isolated
from tests.integration.streamkit import produce, read_topic, wait_for

T = "2026-11-20T08:00:00Z"
MAX_BYTES = 50_000


def _settings(iso: Isolated) -> Settings:
    return iso.settings.with_overrides(
        streams={"max_record_bytes": MAX_BYTES, "processors": ["normalize", "graph_sink"]}
    )


class Worker:
    def __init__(self, iso: Isolated, data: Path) -> None:
        self.settings = _settings(iso)
        self.ep = Endpoints(kafka_bootstrap=iso.bootstrap, falkordb_url=iso.falkordb_url)
        self.data = data
        self.proc, self.port = spawn_worker(self.settings, self.ep, data)

    def restart(self) -> None:
        self.proc, self.port = spawn_worker(self.settings, self.ep, self.data)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def metrics(self) -> str:
        return httpx.get(f"http://127.0.0.1:{self.port}/metrics", timeout=5).text


@pytest.fixture
def worker(iso: Isolated, tmp_path: Path) -> Iterator[Worker]:
    w = Worker(iso, tmp_path / "worker")
    yield w
    stop_pid(w.proc.pid)


async def count(graph: GraphStore, label: str) -> int:
    rows = await graph.query(f"MATCH (n:{label}) RETURN count(n) AS c")
    return int(rows[0]["c"]) if rows else 0


def news(i: int) -> RawNews:
    return RawNews(
        source="test", title=f"Headline {i}: $AAPL and bonds", event_time=T, entities=["AAPL"]
    )


def tick(i: int, indicator: str = "CN10Y") -> IndicatorTick:
    return IndicatorTick(
        source="test",
        indicator_id=indicator,
        value=1.8 + i / 1000,
        event_time=f"2026-11-20T08:{i // 60 % 60:02d}:{i % 60:02d}Z",
    )


async def test_flow_into_graph_and_bad_input_to_dlq(
    iso: Isolated, worker: Worker, graph: GraphStore
) -> None:
    produce(iso.bootstrap, iso.topic("raw.news"), [news(i) for i in range(10)])
    produce(iso.bootstrap, iso.topic("raw.ticks"), [tick(i) for i in range(20)])
    bad = {
        "raw.news": b'{"source": "x", "title": "unterminated',
        "raw.ticks": orjson.dumps(
            {"source": "x", "indicator_id": "X", "value": "high", "event_time": T}
        ),
        "raw.social": orjson.dumps(
            {"source": "x", "text": "y" * (MAX_BYTES + 10), "event_time": T}
        ),
        "raw.filings": b"\xff\xfe\xfa not utf-8",
    }
    for topic, raw in bad.items():
        produce(iso.bootstrap, iso.topic(topic), [raw], key=b"bad")

    async def flowed() -> bool:
        return await count(graph, "Document") == 10 and await count(graph, "Observation") == 20

    await wait_for(flowed, "10 documents and 20 observations in the graph")
    rows = await graph.query("MATCH (i:Indicator {id: 'CN10Y'}) RETURN i.last_value AS v")
    assert rows == [{"v": pytest.approx(1.819)}]

    dead = [
        DeadLetter.model_validate_json(v)
        for v in read_topic(iso.bootstrap, iso.topic("dlq"), expect=4)
    ]
    by_topic = {d.topic: d for d in dead}
    assert set(by_topic) == set(bad)
    assert by_topic["raw.news"].error_type == "malformed_json"
    assert by_topic["raw.ticks"].error_type == "schema" and "value" in by_topic["raw.ticks"].error
    assert by_topic["raw.social"].error_type == "oversize"
    assert by_topic["raw.filings"].error_type == "invalid_utf8"
    for topic, raw in bad.items():  # nothing lost: the exact bytes are kept
        assert base64.b64decode(by_topic[topic].raw_value_b64) == raw

    # the worker survived and keeps processing
    assert worker.alive()
    produce(
        iso.bootstrap,
        iso.topic("raw.social"),
        [RawSocialPost(source="t", text=f"$TSLA post {i}", event_time=T) for i in range(5)],
    )

    async def more() -> bool:
        return await count(graph, "Document") == 15

    await wait_for(more, "5 more documents")
    assert len(read_topic(iso.bootstrap, iso.topic("docs.clean"), expect=15)) == 15
    text = worker.metrics()
    assert 'livekg_dlq_total{agent="normalize",error_type="oversize"} 1.0' in text
    assert 'livekg_events_in_total{agent="tick_sink",topic="raw.ticks"} 21.0' in text


async def test_kill_and_restart_loses_and_duplicates_nothing(
    iso: Isolated, worker: Worker, graph: GraphStore
) -> None:
    n_ticks, n_news = 3000, 1500
    ticks = [tick(i, indicator=f"IND{i % 7}") for i in range(n_ticks)]
    docs = [news(i) for i in range(n_news)]

    def feed() -> None:  # a replay in progress while the worker dies
        for start in range(0, n_ticks, 300):
            produce(iso.bootstrap, iso.topic("raw.ticks"), ticks[start : start + 300])
            produce(iso.bootstrap, iso.topic("raw.news"), docs[start // 2 : start // 2 + 150])

    feeder = threading.Thread(target=feed)
    feeder.start()

    async def some() -> bool:
        return await count(graph, "Observation") > 0

    await wait_for(some, "the first observations")
    os.kill(worker.proc.pid, signal.SIGKILL)  # mid-replay, no clean shutdown
    worker.proc.wait(10)
    feeder.join()
    worker.restart()

    async def complete() -> bool:
        return (
            await count(graph, "Observation") >= n_ticks
            and await count(graph, "Document") >= n_news
        )

    await wait_for(complete, "every event in the graph after the restart", timeout=180)
    assert await count(graph, "Observation") == n_ticks
    assert await count(graph, "Document") == n_news
    rows = await graph.query(
        "MATCH (:Indicator)-[r:HAS_OBSERVATION]->(:Observation) RETURN count(r) AS c"
    )
    assert rows[0]["c"] == n_ticks
    rows = await graph.query("MATCH (d:Document)-[r:MENTIONS]->() RETURN count(r) AS c")
    assert rows[0]["c"] == n_news
