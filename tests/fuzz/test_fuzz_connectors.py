"""Fuzz every connector parser with hostile source data.

Contract (what ``connectors.runner`` relies on): ``fetch`` returns a ``Batch`` whose
rows are each a valid, publishable record or a rejected row with its reason, or it
raises a ``SourceError`` with a reason (reported, the stream retried next poll).
Any other exception would escape the runner's poll and stop the connector process.
"""

from __future__ import annotations

import asyncio
import csv
import io
import tempfile
from collections.abc import Coroutine
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import httpx
import orjson
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from connectors.akshare_source import DATASETS, NEWS_COLUMNS, NOTICE_COLUMNS, AkshareConnector
from connectors.base import Batch, SourceError
from connectors.edgar import EdgarConnector
from connectors.feeds import FeedConnector
from connectors.policy import RateLimiter
from connectors.replay import FileConnector, encode_chunk
from connectors.social import PostIn, to_record
from connectors.yfinance_source import YFinanceConnector
from ops.settings import ConnectorSettings
from tests.fuzz.hostile import FUZZ, dates, dumps, hostile_for, json_values, numbers, raw_bytes
from tests.fuzz.hostile import text as htext
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
    assert len(batch.errors) == batch.rejected or batch.errors  # every rejection has a reason
    for item in batch.items:
        assert item.cursor
        assert_publishable(item.record)
    return batch


def body_transport(body: bytes, ctype: str = "application/xml") -> httpx.MockTransport:
    return httpx.MockTransport(
        lambda req: httpx.Response(200, content=body, headers={"content-type": ctype})
    )


# -- RSS / Atom / JSON Feed ----------------------------------------------------------------


def xml_text(s: str, raw: bool) -> str:
    return s if raw else escape(s)


rss_items = st.lists(
    st.tuples(htext, htext, htext, dates.map(str), st.booleans()), min_size=0, max_size=4
)


def rss(items: list[tuple[str, str, str, str, bool]]) -> bytes:
    parts = [
        f"<item><title>{xml_text(t, r)}</title><description>{xml_text(d, r)}</description>"
        f"<link>{xml_text(link, r)}</link><pubDate>{xml_text(when, r)}</pubDate></item>"
        for t, d, link, when, r in items
    ]
    return f'<?xml version="1.0"?><rss><channel>{"".join(parts)}</channel></rss>'.encode(
        "utf-8", "surrogatepass"
    )


def atom(items: list[tuple[str, str, str, str, bool]]) -> bytes:
    parts = [
        f"<entry><id>{xml_text(link, r)}</id><title>{xml_text(t, r)}</title>"
        f"<content type='html'>{xml_text(d, r)}</content><updated>{xml_text(w, r)}</updated>"
        f"<link href='{escape(link, {chr(39): '&apos;'})}'/></entry>"
        for t, d, link, w, r in items
    ]
    return f'<feed xmlns="http://www.w3.org/2005/Atom">{"".join(parts)}</feed>'.encode(
        "utf-8", "surrogatepass"
    )


json_feed_item = hostile_for(
    {
        "id": "1",
        "title": "t",
        "content_text": "x",
        "url": "http://u",
        "date_published": "2024-06-12T10:00:00Z",
        "authors": [{"name": "a"}],
    }
)
feed_bodies = st.one_of(
    rss_items.map(rss),
    rss_items.map(atom),
    st.lists(json_feed_item, max_size=4).map(lambda items: dumps({"items": items})),
    st.lists(json_values, max_size=3).map(dumps),
    raw_bytes,
    st.just((FIX / "feeds" / "rss.xml").read_bytes()).flatmap(
        lambda b: st.integers(0, len(b)).map(lambda n: b[:n])  # truncated mid-body
    ),
)


@FUZZ
@given(feed_bodies)
def test_feed_parser(body: bytes) -> None:
    c = FeedConnector(["http://feed.test/rss"], CFG, transport=body_transport(body))
    check_fetch(c.fetch("http://feed.test/rss", None, {}))


# -- EDGAR submissions JSON + filing HTML ---------------------------------------------------

SUBS = orjson.loads((FIX / "edgar" / "CIK0000320193.json").read_bytes())
RECENT = SUBS["filings"]["recent"]
ROW = {k: v[0] for k, v in RECENT.items() if isinstance(v, list) and v}


def submissions(rows: list[dict[str, Any]]) -> bytes:
    cols: dict[str, list[Any]] = {k: [] for k in ROW}
    for row in rows:
        for k in ROW:
            cols[k].append(row.get(k))
    return dumps({"name": "Apple Inc.", "filings": {"recent": cols}})


edgar_subs = st.one_of(
    st.lists(hostile_for({**ROW, "form": "10-Q"}), min_size=1, max_size=3).map(submissions),
    hostile_for({"name": "x", "filings": {"recent": RECENT}}).map(dumps),
    raw_bytes,
)
html_docs = st.one_of(
    htext.map(lambda s: f"<html><body><p>{s}</p><table><tr><td>{s}</td></tr></table>"),
    st.binary(max_size=300).map(lambda b: b.decode("latin-1")),
    st.just(""),
)


@FUZZ
@given(edgar_subs, html_docs)
def test_edgar_parser(subs: bytes, html: str) -> None:
    def handler(req: httpx.Request) -> httpx.Response:
        if req.url.path.endswith(".json"):
            return httpx.Response(200, content=subs)
        return httpx.Response(200, content=html.encode("utf-8", "surrogatepass"))

    c = EdgarConnector(CFG.model_copy(update={"edgar_forms": ["10-Q"]}),
                       transport=httpx.MockTransport(handler))  # fmt: skip
    c.http.limiter = RateLimiter(0)  # the fair-access cap is not under test here
    check_fetch(c.fetch("320193", None, {}))


# -- akshare frames --------------------------------------------------------------------------


class Frame:
    """The slice of a pandas DataFrame the akshare connector uses (cheap to build)."""

    def __init__(self, rows: list[dict[str, Any]], columns: list[str]) -> None:
        self.rows, self.columns = rows, columns

    def to_dict(self, orient: str) -> list[dict[str, Any]]:
        assert orient == "records"
        return self.rows


cells = st.one_of(numbers, dates, htext, st.none(), st.just("2024年13月份"), st.just("2024年6月"))


def ak_rows(columns: tuple[str, ...] | list[str]) -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.lists(st.fixed_dictionaries({c: cells for c in columns}), max_size=4)


ak_cases = st.one_of(
    st.sampled_from(sorted(DATASETS)).flatmap(
        lambda name: st.tuples(
            st.just(name),
            ak_rows(
                [
                    DATASETS[name].date_col,
                    *(s.column for s in DATASETS[name].series),
                    *([DATASETS[name].row_filter[0]] if DATASETS[name].row_filter else []),
                ]
            ),
        )
    ),
    st.tuples(st.just("news:600519"), ak_rows(NEWS_COLUMNS)),
    st.tuples(st.just("announcements"), ak_rows(NOTICE_COLUMNS)),
)


@FUZZ
@given(ak_cases)
def test_akshare_frames(case: tuple[str, list[dict[str, Any]]]) -> None:
    stream, rows = case
    columns = list(rows[0]) if rows else []
    if stream.startswith("news"):
        func, columns = "stock_news_em", list(NEWS_COLUMNS)
    elif stream == "announcements":
        func, columns = "stock_notice_report", list(NOTICE_COLUMNS)
    else:
        ds = DATASETS[stream]
        func = ds.func
        columns = [ds.date_col, *(s.column for s in ds.series)]
        columns += [ds.row_filter[0]] if ds.row_filter else []
    c = AkshareConnector(
        CFG.model_copy(update={"akshare_lookback_days": 2}),
        fetchers={func: lambda **_: Frame(rows, columns)},
        today=lambda: date(2024, 6, 14),
    )
    c.limiter = RateLimiter(0)
    check_fetch(c.fetch(stream, "2024-06-13|x", {}))


# -- yfinance frames and news ---------------------------------------------------------------

bar_times = st.datetimes(
    min_value=datetime(1678, 1, 1), max_value=datetime(2261, 12, 31), timezones=st.just(UTC)
)
yf_news_item = hostile_for(
    {
        "id": "n1",
        "content": {
            "title": "t",
            "summary": "s",
            "pubDate": "2024-06-12T10:00:00Z",
            "canonicalUrl": {"url": "http://u"},
            "provider": {"displayName": "Reuters"},
        },
    }
) | hostile_for({"uuid": "u", "title": "t", "providerPublishTime": 1718000000, "link": "l"})


@FUZZ
@given(
    st.sampled_from(["history:AAPL", "quote:^TNX", "news:AAPL"]),
    st.lists(st.tuples(bar_times, numbers), max_size=4),
    st.lists(yf_news_item, max_size=3),
)
def test_yfinance_frames_and_news(
    stream: str, bars: list[tuple[datetime, Any]], news: list[dict[str, Any]]
) -> None:
    def history(ticker: str, period: str, interval: str) -> pd.DataFrame:
        idx = pd.DatetimeIndex([t for t, _ in bars], tz=UTC)
        closes = [float(v) if isinstance(v, float) else v for _, v in bars]
        return pd.DataFrame({"Open": closes, "Close": closes}, index=idx)

    c = YFinanceConnector(CFG, history=history, news=lambda t: news,
                          now=lambda: datetime(2024, 6, 14, tzinfo=UTC))  # fmt: skip
    c.limiter = RateLimiter(0)
    check_fetch(c.fetch(stream, None, {}))


# -- CSV / JSONL replay files -------------------------------------------------------------------

REPLAY_TOPICS = ["raw.news", "raw.social", "raw.filings", "raw.ticks"]
row_dicts = hostile_for(
    {
        "source": "s",
        "title": "t",
        "text": "x",
        "company": "C",
        "form_type": "8-K",
        "indicator_id": "CN10Y",
        "value": 1.5,
        "event_time": "2024-06-12T10:00:00Z",
    }
)


def csv_text(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    keys = sorted({str(k) for r in rows for k in r}) or ["source"]
    w = csv.DictWriter(out, fieldnames=keys, extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({str(k): v if isinstance(v, str) else dumps(v).decode() for k, v in r.items()})
    return out.getvalue()


replay_files = st.one_of(
    st.tuples(
        st.just(".jsonl"),
        st.lists(st.one_of(row_dicts.map(dumps), raw_bytes), max_size=4).map(
            lambda lines: b"\n".join(lines)
        ),
    ),
    st.tuples(
        st.just(".csv"),
        st.lists(row_dicts, max_size=4).map(
            lambda rows: csv_text(rows).encode("utf-8", "surrogatepass")
        ),
    ),
    st.tuples(st.sampled_from([".csv", ".jsonl"]), st.binary(max_size=200)),
)
TMP = Path(tempfile.mkdtemp(prefix="livekg-fuzz-"))


@FUZZ
@given(st.sampled_from(REPLAY_TOPICS), replay_files)
def test_replay_files(topic: str, case: tuple[str, bytes]) -> None:
    """``livekg connect run file`` (FileConnector) and ``livekg replay`` (encode_chunk)."""
    suffix, content = case
    path = TMP / f"rows{suffix}"
    path.write_bytes(content)
    check_fetch(FileConnector({str(path): topic}, CFG).fetch(str(path), None, {}))
    rows: list[tuple[int, Any]] = [(1, line) for line in content.split(b"\n") if line.strip()]
    encoded, errors = encode_chunk((topic, path.name, rows))
    assert len(encoded) + len(errors) == len(rows)
    assert all(e.startswith(f"{path.name}:1: ") for e in errors)


# -- social webhook payloads -------------------------------------------------------------------

post = hostile_for({"id": "p1", "text": "$AAPL up", "author": "a",
                    "created_at": "2024-06-12T10:00:00Z", "entities": ["aapl"]})  # fmt: skip


@FUZZ
@given(st.one_of(post.map(dumps), raw_bytes))
def test_social_webhook_payload(raw: bytes) -> None:
    """What POST /ingest/social does with a body: 422 with a reason, or a publishable post."""
    from pydantic import ValidationError

    try:
        record = to_record(PostIn.model_validate_json(raw))
    except ValidationError as exc:
        assert exc.errors()
        return
    assert_publishable(record)
