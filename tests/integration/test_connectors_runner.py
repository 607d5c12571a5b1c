"""The runner on the real broker: delivery-confirmed checkpoints, crash recovery, faults."""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from confluent_kafka import Consumer, TopicPartition

from connectors.checkpoint import CheckpointStore
from connectors.feeds import FeedConnector
from connectors.replay import FileConnector, replay_file
from connectors.runner import Runner, checkpoint_dir
from core.metrics import CONNECTOR_ERRORS, CONNECTOR_PRODUCED
from core.records import RawNews
from core.settings import Settings

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "connectors"
ROOT = Path(__file__).resolve().parents[2]


def read_topic(bootstrap: str, topic: str) -> list[tuple[bytes, dict[str, Any], dict[str, bytes]]]:
    """Every record in ``topic`` as (key, value, headers)."""
    c = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "t-read", "enable.auto.commit": False}
    )
    try:
        meta = c.list_topics(topic, timeout=10).topics[topic]
        ends = {}
        assign = []
        for p in meta.partitions:
            lo, hi = c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            if hi > lo:
                ends[p] = hi
                assign.append(TopicPartition(topic, p, lo))
        out = []
        if not assign:
            return out
        c.assign(assign)
        deadline = time.monotonic() + 60
        while ends and time.monotonic() < deadline:
            for m in c.consume(1000, timeout=1):
                if m.error():
                    continue
                out.append((m.key(), orjson.loads(m.value()), dict(m.headers() or [])))
                if m.offset() + 1 >= ends.get(m.partition(), 0):
                    ends.pop(m.partition(), None)
        assert not ends, f"could not read to the end of {topic}"
        return out
    finally:
        c.close()


def settings_for(iso: Any, **connectors: Any) -> Settings:
    base = {"backoff_initial_s": 0.001, "backoff_max_s": 0.01, "max_attempts": 3}
    base["rate_limits"] = {"feeds": 0}
    base.update(connectors)
    return iso.settings.with_overrides(connectors=base)


def write_news(path: Path, n: int, *, bad_every: int = 0) -> list[str]:
    """JSONL of n news rows (every ``bad_every``-th row invalid); returns the valid titles."""
    titles = []
    with open(path, "wb") as fh:
        for i in range(n):
            if bad_every and i % bad_every == bad_every - 1:
                fh.write(b'{"source": "t", "title": "", "event_time": "not a time"}\n')
                continue
            t = f"headline {i:05d} about $AAPL"
            titles.append(t)
            hh, mm, ss = i // 3600 % 24, i // 60 % 60, i % 60
            when = f"2024-06-12T{hh:02d}:{mm:02d}:{ss:02d}Z"
            row = {"source": "t", "title": t, "entities": [f"E{i % 7}"], "event_time": when}
            fh.write(orjson.dumps(row) + b"\n")
    return titles


def feed_transport(status: dict[str, list[int]]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        pending = status.get(request.url.path)
        if pending:
            return httpx.Response(pending.pop(0))
        name = {"/rss": "rss.xml", "/atom": "atom.xml", "/json": "feed.json"}[request.url.path]
        return httpx.Response(
            200, content=(FIX / "feeds" / name).read_bytes(), headers={"etag": name}
        )

    return httpx.MockTransport(handler)


async def test_feed_runner_produces_keyed_records_once(iso: Any) -> None:
    s = settings_for(iso)
    urls = ["https://a.example/rss", "https://b.example/atom", "https://c.example/json"]
    runner = Runner(
        FeedConnector(urls, s.connectors, transport=feed_transport({})),
        bootstrap=iso.bootstrap,
        settings=s,
    )
    before = CONNECTOR_PRODUCED.labels("feeds", "raw.news")._value.get()
    first = await runner.poll_once()
    assert first.produced == 5 and not first.failed
    assert CONNECTOR_PRODUCED.labels("feeds", "raw.news")._value.get() - before == 5
    second = await runner.poll_once()  # same bodies: all at or below the checkpoints
    assert second.produced == 0
    runner.close()
    rows = read_topic(iso.bootstrap, iso.topic("raw.news"))
    assert len(rows) == 5
    for key, value, headers in rows:
        rec = RawNews.model_validate(value)
        assert key == rec.key().encode() and headers["lk.src"] == b"feeds"
    apple = next(v for _, v, _ in rows if v["title"] == "Apple extends rally after WWDC")
    assert apple["entities"] == ["AAPL"]
    cp = CheckpointStore(checkpoint_dir(s)).load("feeds")
    assert cp is not None and set(cp.streams) == set(urls)
    assert cp.streams[urls[0]].state["etag"] == "rss.xml"


async def test_source_fault_is_reported_counted_and_loses_nothing(iso: Any) -> None:
    s = settings_for(iso)
    urls = ["https://a.example/rss", "https://b.example/atom"]
    faults = {"/atom": [503, 502, 500]}  # every attempt of the first poll fails
    c = FeedConnector(urls, s.connectors, transport=feed_transport(faults))
    runner = Runner(c, bootstrap=iso.bootstrap, settings=s)
    errors_before = CONNECTOR_ERRORS.labels("feeds", "RetryableSourceError")._value.get()
    report = await runner.poll_once()
    assert report.produced == 2  # the healthy feed still delivered
    (failed,) = report.failed
    assert failed.stream == urls[1] and "failed after 3 attempts: HTTP 500" in (failed.error or "")
    assert (
        CONNECTOR_ERRORS.labels("feeds", "RetryableSourceError")._value.get() - errors_before == 3
    )
    cp = CheckpointStore(checkpoint_dir(s)).load("feeds")
    assert cp is not None and cp.stream(urls[1]).cursor is None  # no checkpoint for the failure
    healed = await runner.poll_once()
    assert healed.produced == 1 and not healed.failed
    runner.close()
    titles = sorted(v["title"] for _, v, _ in read_topic(iso.bootstrap, iso.topic("raw.news")))
    assert len(titles) == 3 and len(set(titles)) == 3


class Crash(Exception):
    pass


async def test_crash_after_delivery_before_checkpoint_resumes_exactly_once(
    iso: Any, tmp_path: Path
) -> None:
    path = tmp_path / "news.jsonl"
    titles = write_news(path, 500, bad_every=50)  # 10 invalid rows: never produced
    s = settings_for(iso, checkpoint_every=40, files={str(path): "raw.news"})
    commits = {"n": 0}

    def crash_on_third(_acked: int) -> None:
        commits["n"] += 1
        if commits["n"] == 3:  # 120 records acknowledged, checkpoint says 80
            raise Crash

    first = Runner(
        FileConnector(s.connectors.files, s.connectors),
        bootstrap=iso.bootstrap,
        settings=s,
        before_checkpoint=crash_on_third,
    )
    with pytest.raises(Crash):
        await first.poll_once()
    first.close()
    cp = CheckpointStore(checkpoint_dir(s)).load("file")
    assert cp is not None
    assert len(read_topic(iso.bootstrap, iso.topic("raw.news"))) == 120

    second = Runner(
        FileConnector(s.connectors.files, s.connectors), bootstrap=iso.bootstrap, settings=s
    )
    report = await second.poll_once()
    second.close()
    (stream,) = report.streams
    assert stream.skipped_recovered == 40  # delivered before the crash, found in the log
    assert stream.rejected == 9  # invalid rows after the checkpoint (row 50 was before it)
    rows = read_topic(iso.bootstrap, iso.topic("raw.news"))
    got = collections.Counter(v["title"] for _, v, _ in rows)
    assert sorted(got) == sorted(titles) and set(got.values()) == {1}

    third = Runner(
        FileConnector(s.connectors.files, s.connectors), bootstrap=iso.bootstrap, settings=s
    )
    assert (await third.poll_once()).produced == 0
    third.close()


async def test_fatal_producer_is_replaced_and_the_next_poll_resumes_exactly_once(
    iso: Any, tmp_path: Path
) -> None:
    """A broker restart can leave an idempotent producer fatally failed
    (OUT_OF_ORDER_SEQUENCE_NUMBER): the runner replaces it and resumes from the
    checkpoint, skipping what was delivered after it (the broker_restart drill)."""
    from confluent_kafka import KafkaError

    path = tmp_path / "news.jsonl"
    titles = write_news(path, 300)
    s = settings_for(iso, checkpoint_every=40, files={str(path): "raw.news"})
    commits = {"n": 0}
    holder: dict[str, Runner] = {}

    def fatal_after_second(_acked: int) -> None:
        commits["n"] += 1
        if commits["n"] == 2:  # checkpoint 80 is saved; records 81-120 go out, then fatal
            err = KafkaError(KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER, "sequence lost", fatal=True)
            holder["r"]._on_error(err)

    runner = Runner(FileConnector(s.connectors.files, s.connectors), bootstrap=iso.bootstrap,
                    settings=s, before_checkpoint=fatal_after_second)  # fmt: skip
    holder["r"] = runner
    old = runner.producer
    first = await runner.poll_once()
    (failed,) = first.failed
    assert "fatally" in (failed.error or "") and runner.replaced == 1
    assert runner.producer is not old
    assert len(read_topic(iso.bootstrap, iso.topic("raw.news"))) == 120
    second = await runner.poll_once()
    runner.close()
    (stream,) = second.streams
    assert not second.failed and stream.skipped_recovered == 40
    rows = read_topic(iso.bootstrap, iso.topic("raw.news"))
    got = collections.Counter(v["title"] for _, v, _ in rows)
    assert sorted(got) == sorted(titles) and set(got.values()) == {1}


def test_sigkill_mid_stream_then_restart_holds_every_row_once(iso: Any, tmp_path: Path) -> None:
    path = tmp_path / "news.jsonl"
    titles = write_news(path, 1500)
    env = {
        **os.environ,
        "LIVEKG_DATA_DIR": str(tmp_path / "data"),
        "LIVEKG_KAFKA__BOOTSTRAP_SERVERS": iso.bootstrap,
        "LIVEKG_KAFKA__TOPIC_PREFIX": iso.prefix,
        "LIVEKG_CONNECTORS__FILES": json.dumps({str(path): "raw.news"}),
        "LIVEKG_CONNECTORS__CHECKPOINT_EVERY": "100",
        "LIVEKG_CONNECTORS__RATE_LIMITS": json.dumps({"file": 500}),
        "LIVEKG_CONFIG": str(tmp_path / "none.toml"),
    }
    cmd = [sys.executable, "-m", "cli.main", "connect", "run", "file", "--once"]
    topic = iso.topic("raw.news")
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90
        seen = 0
        while time.monotonic() < deadline and proc.poll() is None:
            seen = sum(_end(iso.bootstrap, topic))
            if seen >= 450:
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(10)
    killed_at = len(read_topic(iso.bootstrap, topic))
    assert 450 <= killed_at < 1500  # really mid-stream

    env["LIVEKG_CONNECTORS__RATE_LIMITS"] = json.dumps({"file": 0})
    done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    summary = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert summary["produced"] + summary["skipped"] >= 1500 - killed_at
    got = collections.Counter(v["title"] for _, v, _ in read_topic(iso.bootstrap, topic))
    assert len(got) == 1500 and set(got.values()) == {1}
    assert sorted(got) == sorted(titles)


def _end(bootstrap: str, topic: str) -> list[int]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "t-end"})
    try:
        parts = c.list_topics(topic, timeout=10).topics[topic].partitions
        return [c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in parts]
    finally:
        c.close()


def test_replay_jsonl_and_csv_skip_invalid_rows(iso: Any, tmp_path: Path) -> None:
    jsonl = tmp_path / "n.jsonl"
    titles = write_news(jsonl, 60, bad_every=20)
    rep = replay_file(jsonl, "raw.news", iso.bootstrap, prefix=iso.prefix, workers=2)
    assert (rep.produced, rep.invalid) == (57, 3) and "n.jsonl:20" in rep.errors[0]
    csv_path = tmp_path / "ticks.csv"
    csv_path.write_text(
        "source,indicator_id,value,unit,event_time,frequency\n"
        "csv,CN10Y,2.28,%,2024-06-03T00:00:00Z,daily\n"
        "csv,CN10Y,not-a-number,%,2024-06-04T00:00:00Z,daily\n"
        "csv,US10Y,4.29,%,2024-06-12T00:00:00Z,daily\n",
        encoding="utf-8",
    )
    rep2 = replay_file(csv_path, "raw.ticks", iso.bootstrap, prefix=iso.prefix, rate=1000)
    assert (rep2.produced, rep2.invalid) == (2, 1)
    news = read_topic(iso.bootstrap, iso.topic("raw.news"))
    assert sorted(v["title"] for _, v, _ in news) == sorted(titles)
    ticks = read_topic(iso.bootstrap, iso.topic("raw.ticks"))
    assert {k for k, _, _ in ticks} == {b"CN10Y", b"US10Y"}


async def test_webhook_posts_reach_raw_social_once_acknowledged(iso: Any) -> None:
    from fastapi import FastAPI

    from connectors import social

    sink = social.SocialSink(iso.bootstrap, iso.prefix)
    app = FastAPI()
    app.include_router(social.router)
    app.dependency_overrides[social.get_sink] = lambda: sink
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        r = await client.post("/ingest/social", json=[{"text": "$AAPL up"}, {"text": "$TLT bid"}])
    assert r.status_code == 202
    rows = read_topic(iso.bootstrap, iso.topic("raw.social"))
    assert sorted(k for k, _, _ in rows) == [b"AAPL", b"TLT"]
    assert {v["id"] for _, v, _ in rows} == set(r.json()["ids"])
