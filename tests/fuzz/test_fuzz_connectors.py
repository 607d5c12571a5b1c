"""Fuzz every connector parser with hostile source data.

Contract (what ``connectors.runner`` relies on): ``fetch`` returns a ``Batch`` whose
rows are each a valid, publishable record or a rejected row with its reason, or it
raises a ``SourceError`` with a reason (reported; the stream is retried next poll).
Any other exception would escape the runner's poll and stop the connector process.
"""

from __future__ import annotations

import asyncio
import atexit
import csv
import io
import shutil
import tempfile
from collections.abc import Coroutine
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest.mock import patch
from xml.sax.saxutils import escape

import httpx
import orjson
import pandas as pd
from pydantic import ValidationError

from connectors import akshare_source, yfinance_source
from connectors.akshare_source import DATASETS, NEWS_COLUMNS, NOTICE_COLUMNS, AkshareConnector
from connectors.base import Batch, SourceError
from connectors.edgar import EdgarConnector
from connectors.feeds import FeedConnector
from connectors.policy import RateLimiter
from connectors.replay import FileConnector, encode_chunk
from connectors.social import PostIn, to_record
from connectors.yfinance_source import YFinanceConnector
from core.settings import ConnectorSettings
from tests.fuzz.hostile import Provider, dumps, fuzz
from tests.fuzz.test_fuzz_codec import assert_publishable

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "connectors"
CFG = ConnectorSettings(max_attempts=1, backoff_initial_s=0.0, backoff_max_s=0.0,
                        rate_limits={}, request_timeout_s=5.0)  # fmt: skip
LOOP = asyncio.new_event_loop()


def check_fetch(coro: Coroutine[Any, Any, Batch]) -> Batch | None:
    """Run one fetch; assert the connector contract on what came back."""
    try:
        batch = LOOP.run_until_complete(coro)
    except SourceError as exc:
        assert str(exc)
        return None
    assert batch.rows == len(batch.items) + batch.rejected
    assert len(batch.errors) >= min(batch.rejected, 1)  # rejections come with reasons
    for item in batch.items:
        assert item.cursor
        assert_publishable(item.record)
    return batch


async def inline_blocking(fn: Any, *, policy: Any, source: str, what: str, timeout_s: float) -> Any:
    """``call_blocking`` minus the worker thread: the thread hop costs milliseconds, and
    the parsing after it is what is under test. Library errors become SourceError, as
    ``call_blocking`` makes them after its retries."""
    try:
        return fn()
    except SourceError:
        raise
    except Exception as exc:
        raise SourceError(f"{source}: {what} failed: {exc!r}") from exc


def maybe_raw(p: Provider, s: str) -> str:
    """Escaped for XML, or (sometimes) not: malformed markup is input too."""
    return s if p.int(5) == 0 else escape(s)


def enc(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


# -- RSS / Atom / JSON Feed ----------------------------------------------------------------

RSS = (FIX / "feeds" / "rss.xml").read_bytes()
JSON_ITEM = {"id": "1", "title": "t", "content_text": "x", "url": "http://u",
             "date_published": "2024-06-12T10:00:00Z", "authors": [{"name": "a"}]}  # fmt: skip


def feed_body(p: Provider) -> bytes:
    kind = p.int(6)
    n = p.int(4)
    if kind == 0:
        items = "".join(
            f"<item><title>{maybe_raw(p, p.text())}</title>"
            f"<description>{maybe_raw(p, p.text())}</description>"
            f"<link>{maybe_raw(p, p.text())}</link>"
            f"<pubDate>{maybe_raw(p, str(p.date()))}</pubDate></item>"
            for _ in range(n)
        )
        return enc(f'<?xml version="1.0"?><rss><channel>{items}</channel></rss>')
    if kind == 1:
        entries = "".join(
            f"<entry><id>{maybe_raw(p, p.text())}</id><title>{maybe_raw(p, p.text())}</title>"
            f"<content type='html'>{maybe_raw(p, p.text())}</content>"
            f"<updated>{maybe_raw(p, str(p.date()))}</updated>"
            f"<link href='{escape(p.text(), {chr(39): '&apos;'})}'/></entry>"
            for _ in range(n)
        )
        return enc(f'<feed xmlns="http://www.w3.org/2005/Atom">{entries}</feed>')
    if kind == 2:
        return dumps({"items": [p.mutate(JSON_ITEM) for _ in range(n)]})
    if kind == 3:
        return dumps([p.value() for _ in range(n)])
    if kind == 4:
        return RSS[: p.int(len(RSS))]  # cut off mid-body
    return p.rest()


BODY: dict[str, bytes] = {}  # what the mock server answers now (one client for all inputs)
FEEDS = FeedConnector(["http://feed.test/rss"], CFG, transport=httpx.MockTransport(
    lambda req: httpx.Response(200, content=BODY["feed"])))  # fmt: skip
FEEDS.http.limiter = RateLimiter(0)  # one client for 10,000 inputs: no 5/s politeness here


@fuzz("connectors.feeds (RSS/Atom/JSON Feed)")
def test_feed_parser(p: Provider) -> None:
    BODY["feed"] = feed_body(p)
    check_fetch(FEEDS.fetch("http://feed.test/rss", None, {}))


# -- EDGAR submissions JSON + filing HTML ---------------------------------------------------

SUBS = orjson.loads((FIX / "edgar" / "CIK0000320193.json").read_bytes())
RECENT = SUBS["filings"]["recent"]
ROW = {k: v[0] for k, v in RECENT.items() if isinstance(v, list) and v}


def submissions(p: Provider) -> bytes:
    kind = p.int(4)
    if kind == 0:
        return dumps(p.mutate({"name": "Apple Inc.", "filings": {"recent": RECENT}}))
    if kind == 1:
        return p.rest()
    rows = [p.mutate({**ROW, "form": "10-Q"}) for _ in range(1 + p.int(3))]
    cols: dict[str, list[Any]] = {k: [r.get(k) for r in rows] for k in ROW}
    if p.int(4) == 0:
        cols[p.pick(sorted(cols))] = p.value()  # a column that is no list
    return dumps({"name": p.text(), "filings": {"recent": cols}})


def filing_html(p: Provider) -> bytes:
    if p.int(3) == 0:
        return p.chunk(64)
    cell = p.text()
    return enc(f"<html><body><p>{p.text()}</p><table><tr><td>{cell}</td></tr></table>")


def edgar_handler(req: httpx.Request) -> httpx.Response:
    return httpx.Response(200, content=BODY["subs" if req.url.path.endswith(".json") else "html"])


EDGAR = EdgarConnector(CFG.model_copy(update={"edgar_forms": ["10-Q"]}),
                       transport=httpx.MockTransport(edgar_handler))  # fmt: skip
EDGAR.http.limiter = RateLimiter(0)  # the fair-access cap is not under test here


@fuzz("connectors.edgar (submissions JSON + filing HTML)")
def test_edgar_parser(p: Provider) -> None:
    BODY["subs"], BODY["html"] = submissions(p), filing_html(p)
    check_fetch(EDGAR.fetch("320193", None, {}))


# -- akshare frames --------------------------------------------------------------------------


class Frame:
    """The slice of a pandas DataFrame the akshare connector uses (cheap to build)."""

    def __init__(self, rows: list[dict[str, Any]], columns: list[str]) -> None:
        self.rows, self.columns = rows, columns

    def to_dict(self, orient: str) -> list[dict[str, Any]]:
        assert orient == "records"
        return self.rows


AK_STREAMS = [*sorted(DATASETS), "news:600519", "announcements"]


def cell(p: Provider) -> Any:
    return p.pick([p.number, p.date, p.text, p.value])()


@fuzz("connectors.akshare (frames)")
def test_akshare_frames(p: Provider) -> None:
    stream = p.pick(AK_STREAMS)
    if stream.startswith("news"):
        func, columns = "stock_news_em", list(NEWS_COLUMNS)
    elif stream == "announcements":
        func, columns = "stock_notice_report", list(NOTICE_COLUMNS)
    else:
        ds = DATASETS[stream]
        func = ds.func
        columns = [ds.date_col, *(s.column for s in ds.series)]
        columns += [ds.row_filter[0]] if ds.row_filter else []
    rows = [{c: cell(p) for c in columns} for _ in range(p.int(4))]
    c = AkshareConnector(
        CFG.model_copy(update={"akshare_lookback_days": 2}),
        fetchers={func: lambda **_: Frame(rows, columns)},
        today=lambda: date(2024, 6, 14),
    )
    c.limiter = RateLimiter(0)
    with patch.object(akshare_source, "call_blocking", inline_blocking):
        check_fetch(c.fetch(stream, "2024-06-13|x", {}))


# -- yfinance frames and news ---------------------------------------------------------------

NEWS_ITEM = {"id": "n1", "content": {"title": "t", "summary": "s", "pubDate": "2024-06-12T10:00:00Z",
             "canonicalUrl": {"url": "http://u"}, "provider": {"displayName": "Reuters"}}}  # fmt: skip
OLD_ITEM = {"uuid": "u", "title": "t", "providerPublishTime": 1718000000, "link": "l"}
YF_STREAMS = ["history:AAPL", "quote:^TNX", "news:AAPL"]


class BarFrame:
    """The slice of yfinance's history frame the connector reads: columns and
    ``frame["Close"].items()`` over a pandas Timestamp index (a DataFrame costs ms)."""

    columns = ("Open", "High", "Low", "Close", "Volume")

    def __init__(self, bars: list[tuple[pd.Timestamp, Any]]) -> None:
        self.bars = bars

    def __getitem__(self, column: str) -> BarFrame:
        return self

    def items(self) -> list[tuple[pd.Timestamp, Any]]:
        return self.bars


def bar_time(p: Provider) -> datetime:
    """Any time pandas can hold (1677-2262), as yfinance's index does."""
    return datetime(1700, 1, 1, tzinfo=UTC) + timedelta(minutes=p.int(65536) * p.int(65536))


@fuzz("connectors.yfinance (history frames + news items)")
def test_yfinance_frames_and_news(p: Provider) -> None:
    stream = p.pick(YF_STREAMS)
    bars = [(bar_time(p), p.number()) for _ in range(p.int(4))]
    items = [p.mutate(p.pick([NEWS_ITEM, OLD_ITEM])) for _ in range(p.int(3))]
    if p.int(4) == 0 and items:
        items[0]["content"] = p.mutate(NEWS_ITEM["content"])

    def history(ticker: str, period: str, interval: str) -> BarFrame:
        return BarFrame([(pd.Timestamp(t), v) for t, v in bars])

    c = YFinanceConnector(CFG, history=history, news=lambda t: items,
                          now=lambda: datetime(2024, 6, 14, tzinfo=UTC))  # fmt: skip
    c.limiter = RateLimiter(0)
    with patch.object(yfinance_source, "call_blocking", inline_blocking):
        check_fetch(c.fetch(stream, None, {}))


# -- CSV / JSONL replay files -------------------------------------------------------------------

REPLAY_TOPICS = ["raw.news", "raw.social", "raw.filings", "raw.ticks"]
ROW_BASE = {"source": "s", "title": "t", "text": "x", "company": "C", "form_type": "8-K",
            "indicator_id": "CN10Y", "value": 1.5, "event_time": "2024-06-12T10:00:00Z"}  # fmt: skip
SHM = Path("/dev/shm")
TMP = Path(tempfile.mkdtemp(prefix="livekg-fuzz-", dir=SHM if SHM.is_dir() else None))
atexit.register(shutil.rmtree, TMP, True)


def csv_bytes(rows: list[dict[str, Any]]) -> bytes:
    out = io.StringIO()
    keys = sorted({str(k) for r in rows for k in r}) or ["source"]
    w = csv.DictWriter(out, fieldnames=keys, extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({str(k): v if isinstance(v, str) else dumps(v).decode() for k, v in r.items()})
    return enc(out.getvalue())


def replay_file(p: Provider) -> tuple[str, bytes]:
    kind = p.int(4)
    rows = [p.mutate(ROW_BASE) for _ in range(p.int(4))]
    if kind == 0:
        return ".jsonl", b"\n".join(dumps(r) if p.int(4) else p.chunk() for r in rows)
    if kind == 1:
        return ".csv", csv_bytes(rows)
    return p.pick([".csv", ".jsonl"]), p.rest()


@fuzz("connectors.replay (CSV/JSONL files)")
def test_replay_files(p: Provider) -> None:
    """``livekg connect run file`` (FileConnector) and ``livekg replay`` (encode_chunk)."""
    topic = p.pick(REPLAY_TOPICS)
    suffix, content = replay_file(p)
    path = TMP / f"rows{suffix}"
    path.write_bytes(content)
    check_fetch(FileConnector({str(path): topic}, CFG).fetch(str(path), None, {}))
    rows: list[tuple[int, Any]] = [(1, line) for line in content.split(b"\n") if line.strip()]
    encoded, errors = encode_chunk((topic, path.name, rows))
    assert len(encoded) + len(errors) == len(rows)
    assert all(e.startswith(f"{path.name}:1: ") for e in errors)


# -- social webhook payloads -------------------------------------------------------------------

POST = {"id": "p1", "text": "$AAPL up", "author": "a", "created_at": "2024-06-12T10:00:00Z",
        "entities": ["aapl"]}  # fmt: skip


@fuzz("connectors.social (webhook payloads)")
def test_social_webhook_payload(p: Provider) -> None:
    """What POST /ingest/social does with a body: 422 with a reason, or a publishable post."""
    raw = p.payload(POST)
    try:
        record = to_record(PostIn.model_validate_json(raw))
    except ValidationError as exc:
        assert exc.errors()
        return
    assert_publishable(record)
