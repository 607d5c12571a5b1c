"""Each source's live mapping code on recorded responses (no network, no broker)."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest
from pydantic import ValidationError

from connectors.akshare_source import DATASETS, AkshareConnector, load_datasets
from connectors.base import SchemaDriftError, SourceError
from connectors.edgar import EdgarConnector, split_parts
from connectors.feeds import FeedConnector
from connectors.social import SocialFeedConnector
from connectors.yfinance_source import YFinanceConnector
from core.records import IndicatorTick, RawFiling, RawNews, RawSocialPost
from core.settings import ConnectorSettings

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "connectors"


def cfg(**kw: Any) -> ConnectorSettings:
    base: dict[str, Any] = {"max_attempts": 3, "backoff_initial_s": 0.001, "backoff_max_s": 0.01}
    base["rate_limits"] = dict.fromkeys(("akshare", "yfinance", "edgar", "feeds", "social-feed"), 0)
    base.update(kw)
    return ConnectorSettings(**base)


def frame(name: str) -> pd.DataFrame:
    spec = json.loads((FIX / "akshare" / f"{name}.json").read_text(encoding="utf-8"))
    df = pd.DataFrame(spec["data"], columns=spec["columns"])
    for col in spec["date_columns"]:
        df[col] = pd.to_datetime(df[col]).dt.date  # as akshare does
    return df


def yf_frame(name: str) -> pd.DataFrame:
    spec = json.loads((FIX / "yfinance" / f"{name}.json").read_text())
    idx = pd.DatetimeIndex(pd.to_datetime(spec["index"])).tz_localize(spec["tz"])
    idx.name = spec["index_name"]
    return pd.DataFrame(spec["data"], columns=spec["columns"], index=idx)


def recorded_akshare() -> dict[str, Any]:
    """Recorded frames; windowed functions return only the rows inside their window."""
    calls: dict[str, Any] = {}
    for f in (FIX / "akshare").glob("*.json"):
        df = frame(f.stem)

        def call(df: pd.DataFrame = df, **kw: str) -> pd.DataFrame:
            if "start_date" in kw:
                col = "日期" if "日期" in df.columns else "date"
                lo, hi = (
                    datetime.strptime(kw[k], "%Y%m%d").date() for k in ("start_date", "end_date")
                )
                return df[(df[col] >= lo) & (df[col] <= hi)].reset_index(drop=True)
            return df.copy()

        calls[f.stem] = call
    return calls


# -- akshare ---------------------------------------------------------------------------


def test_akshare_datasets_file_is_checked_at_load(tmp_path: Path) -> None:
    assert DATASETS["bond_yield_curve"].row_filter == ("曲线名称", "中债国债收益率曲线")
    assert {s.unit for s in DATASETS["shibor"].series} == {"%"}
    bad = tmp_path / "bad.toml"
    entry = 'stream = "x"\nfunc = "f"\ndate_col = "d"\nperiod = "weekly"\n'
    entry += 'series = [{ column = "c", indicator_id = "i", name = "n" }]\n'
    bad.write_text("[[dataset]]\n" + entry, encoding="utf-8")
    with pytest.raises(ValidationError, match="period"):
        load_datasets(bad)


@pytest.mark.parametrize("stream", list(DATASETS))
async def test_akshare_series_map_to_ticks(stream: str) -> None:
    c = AkshareConnector(
        cfg(akshare_lookback_days=60), fetchers=recorded_akshare(), today=lambda: date(2024, 6, 14)
    )
    batch = await c.fetch(stream, None, {})
    assert batch.items and not batch.rejected, batch.errors
    for item in batch.items:
        assert item.topic == "raw.ticks"
        assert isinstance(item.record, IndicatorTick)
        assert item.record.event_time.tzinfo is not None
    cursors = [i.cursor for i in batch.items]
    assert len(set(cursors)) == len(cursors)  # unique cursors: resumable


async def test_akshare_yield_curve_takes_the_government_curve_and_skips_empty_cells() -> None:
    c = AkshareConnector(
        cfg(akshare_lookback_days=60), fetchers=recorded_akshare(), today=lambda: date(2024, 6, 14)
    )
    batch = await c.fetch("bond_yield_curve", None, {})
    ticks = {(i.record.indicator_id, i.record.event_time.date()): i.record for i in batch.items}
    assert ticks[("CN10Y", date(2024, 6, 3))].value == pytest.approx(2.2868)  # govt, not AAA notes
    assert ("CN30Y", date(2024, 6, 5)) not in ticks  # NaN cell: no tick
    assert len(batch.items) == 8 + 8 + 7
    assert all(t.unit == "%" and t.frequency == "daily" for t in ticks.values())


async def test_akshare_monthly_and_text_streams() -> None:
    c = AkshareConnector(
        cfg(akshare_lookback_days=60, akshare_news_symbols=["600519"]),
        fetchers=recorded_akshare(),
        today=lambda: date(2024, 6, 13),
    )
    m = await c.fetch("money_supply", None, {})
    m2 = [i.record for i in m.items if i.record.indicator_id == "CN_M2"]
    assert {t.event_time for t in m2} == {
        datetime(2024, 5, 1, tzinfo=UTC),
        datetime(2024, 4, 1, tzinfo=UTC),
    }
    assert m2[0].frequency == "monthly" and m2[0].unit == "CNY 100m"
    news = await c.fetch("news:600519", None, {})
    assert [type(i.record) for i in news.items] == [RawNews, RawNews]
    first = news.items[0].record
    assert first.entities == ["600519"] and first.lang == "zh"
    assert first.event_time == datetime(2024, 6, 13, 10, 42, 11, tzinfo=UTC)  # 18:42 Beijing
    notices = await c.fetch("announcements", "2024-06-13|x|y", {})
    assert {type(i.record) for i in notices.items} == {RawFiling}
    assert {i.record.company for i in notices.items} == {"600519", "601398"}


async def test_akshare_schema_drift_is_retried_then_reported() -> None:
    calls = {"n": 0}

    def drifted(**_: Any) -> pd.DataFrame:
        calls["n"] += 1
        return frame("macro_china_pmi").rename(columns={"制造业-指数": "制造业指数"})

    c = AkshareConnector(cfg(), fetchers={"macro_china_pmi": drifted})
    with pytest.raises(SourceError, match=r"missing column\(s\) \['制造业-指数'\]") as err:
        await c.fetch("pmi", None, {})
    assert isinstance(err.value.__cause__, SchemaDriftError)
    assert calls["n"] == 3  # max_attempts


async def test_akshare_library_errors_are_retried() -> None:
    calls = {"n": 0}

    def flaky(**_: Any) -> pd.DataFrame:
        calls["n"] += 1
        if calls["n"] < 3:
            raise ConnectionError("Remote end closed connection without response")
        return frame("macro_china_ppi")

    c = AkshareConnector(
        cfg(akshare_lookback_days=60),
        fetchers={"macro_china_ppi": flaky},
        today=lambda: date(2024, 6, 14),
    )
    batch = await c.fetch("ppi", None, {})
    assert calls["n"] == 3 and len(batch.items) == 4


# -- yfinance ---------------------------------------------------------------------------


def yf_connector(**kw: Any) -> YFinanceConnector:
    def history(ticker: str, period: str, interval: str) -> pd.DataFrame:
        return yf_frame(f"history_{ticker}_{interval}")

    def news(ticker: str) -> list[dict[str, Any]]:
        return json.loads((FIX / "yfinance" / f"news_{ticker}.json").read_text())

    return YFinanceConnector(
        cfg(yfinance_tickers=["AAPL", "^TNX"], yfinance_news_tickers=["AAPL"], **kw),
        history=kw.pop("history", history),
        news=news,
        now=lambda: datetime(2024, 6, 12, 18, 0, tzinfo=UTC),  # during the 06-12 session
    )


async def test_yfinance_history_drops_the_incomplete_bar_and_maps_yields() -> None:
    c = yf_connector()
    aapl = await c.fetch("history:AAPL", None, {})
    assert [i.record.event_time.date() for i in aapl.items] == [
        date(2024, 6, 10),
        date(2024, 6, 11),
    ]
    assert aapl.items[1].record.value == pytest.approx(207.15)
    tnx = await c.fetch("history:^TNX", None, {})
    assert {i.record.indicator_id for i in tnx.items} == {"US10Y"}
    assert tnx.items[0].record.unit == "%"


async def test_yfinance_quote_and_news() -> None:
    c = yf_connector()
    q = await c.fetch("quote:AAPL", None, {})
    (tick,) = [i.record for i in q.items]
    assert tick.frequency == "instant" and tick.value == pytest.approx(213.07)
    assert tick.event_time == datetime(2024, 6, 12, 19, 59, tzinfo=UTC)
    news = await c.fetch("news:AAPL", None, {})
    titles = [i.record.title for i in news.items]
    assert "Treasury yields fall after cooler CPI report" in titles
    assert all(i.record.entities == ["AAPL"] for i in news.items)
    assert news.items[0].record.source == "yfinance:Yahoo Finance"


async def test_yfinance_renamed_columns_raise_schema_drift() -> None:
    def drifted(ticker: str, period: str, interval: str) -> pd.DataFrame:
        return yf_frame("history_AAPL_1d").rename(columns={"Close": "Last"})

    c = YFinanceConnector(cfg(), history=drifted)
    with pytest.raises(SourceError, match="Close"):
        await c.fetch("history:AAPL", None, {})


# -- EDGAR (httpx, recorded bodies) ----------------------------------------------------


def edgar_transport(
    log: list[httpx.Request], faults: dict[str, list[int]] | None = None
) -> httpx.MockTransport:
    faults = faults or {}

    def handler(request: httpx.Request) -> httpx.Response:
        log.append(request)
        path = request.url.path
        pending = faults.get(path)
        if pending:
            return httpx.Response(pending.pop(0), headers={"Retry-After": "0"})
        name = path.rsplit("/", 1)[-1]
        f = FIX / "edgar" / name
        if not f.is_file():
            return httpx.Response(404)
        ctype = "application/json" if name.endswith(".json") else "text/html"
        return httpx.Response(200, content=f.read_bytes(), headers={"content-type": ctype})

    return httpx.MockTransport(handler)


async def test_edgar_first_poll_then_incremental() -> None:
    log: list[httpx.Request] = []
    c = EdgarConnector(cfg(edgar_watchlist=["AAPL"]), transport=edgar_transport(log))
    batch = await c.fetch("AAPL", None, {})
    # first poll: the latest INITIAL_FILINGS (3) 10-Qs; the Form 4 is not watched
    forms = [(i.record.form_type, i.record.id) for i in batch.items]
    assert forms == [
        ("10-Q", "0000320193-24-000006"),
        ("10-Q", "0000320193-24-000069"),
        ("10-Q", "0000320193-24-000081"),
    ]
    f = batch.items[-1].record
    assert f.company == "AAPL" and f.source == "sec-edgar" and f.lang == "en"
    assert "Total net sales increased" in f.text and "hidden xbrl" not in f.text
    # a table travels as its grid in plain HTML (connectors/edgar_html.py, issue 43)
    assert f.tables and "<td>iPhone</td><td>$</td><td>39,296</td>" in f.tables[0][0][0]
    assert f.url.endswith("/edgar/data/320193/000032019324000081/aapl-20240629.htm")
    assert all(r.headers["user-agent"].startswith("livekg/") for r in log)
    # next poll after the newest: nothing new, and no document fetched
    log.clear()
    again = await c.fetch("AAPL", batch.items[-1].cursor, {})
    assert again.items == [] and [r.url.path for r in log] == ["/submissions/CIK0000320193.json"]


async def test_edgar_retries_429_and_5xx_then_succeeds() -> None:
    log: list[httpx.Request] = []
    faults = {"/submissions/CIK0000320193.json": [429, 503]}
    c = EdgarConnector(cfg(edgar_watchlist=["320193"]), transport=edgar_transport(log, faults))
    batch = await c.fetch("320193", "2024-05-01T00:00:00.000Z|x", {})
    assert [i.record.id for i in batch.items] == ["0000320193-24-000069", "0000320193-24-000081"]
    assert batch.items[0].record.company == "CIK0000320193"
    assert sum(r.url.path.endswith("CIK0000320193.json") for r in log) == 3


async def test_edgar_persistent_5xx_is_a_clear_error() -> None:
    faults = {"/submissions/CIK0000320193.json": [500, 502, 503, 504]}
    c = EdgarConnector(cfg(edgar_watchlist=["AAPL"]), transport=edgar_transport([], faults))
    with pytest.raises(
        SourceError, match=r"edgar: GET .*CIK0000320193.json failed after 3 attempts: HTTP 503"
    ):
        await c.fetch("AAPL", None, {})


async def test_edgar_truncated_and_drifted_bodies() -> None:
    body = (FIX / "edgar" / "CIK0000320193.json").read_bytes()
    seen = {"n": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        seen["n"] += 1
        if request.url.path.endswith(".json"):
            if seen["n"] == 1:  # cut off mid-body, as a dropped connection leaves it
                return httpx.Response(200, content=body[: len(body) // 2])
            doc = json.loads(body)
            del doc["filings"]["recent"]["acceptanceDateTime"]  # drift
            return httpx.Response(200, json=doc)
        return httpx.Response(404)

    c = EdgarConnector(cfg(), transport=httpx.MockTransport(handler))
    with pytest.raises(SourceError, match=r"missing column.*acceptanceDateTime"):
        await c.fetch("320193", None, {})
    assert seen["n"] == 3


async def test_edgar_filing_with_an_unusable_document_name_is_rejected_not_fatal() -> None:
    """A control character in ``primaryDocument`` (found by the fuzzer) makes no URL: that
    filing is rejected with its reason and the others still arrive; a bad URL reaching the
    HTTP layer is a SourceError, never httpx's own exception."""
    doc = json.loads((FIX / "edgar" / "CIK0000320193.json").read_bytes())
    recent = doc["filings"]["recent"]
    bad = recent["accessionNumber"].index("0000320193-24-000069")
    recent["primaryDocument"][bad] = "aapl\x03.htm"
    fixture = edgar_transport([])

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("CIK0000320193.json"):
            return httpx.Response(200, json=doc)
        return fixture.handler(request)  # type: ignore[no-any-return]

    c = EdgarConnector(cfg(edgar_watchlist=["AAPL"]), transport=httpx.MockTransport(handler))
    batch = await c.fetch("AAPL", None, {})
    assert [i.record.id for i in batch.items] == ["0000320193-24-000006", "0000320193-24-000081"]
    assert batch.rejected == 1 and batch.rows == 3
    assert "0000320193-24-000069" in batch.errors[0] and "no valid document URL" in batch.errors[0]
    with pytest.raises(SourceError, match="invalid URL"):
        await c.http.get("https://www.sec.gov/a\x03b", lambda resp: resp)


def test_split_parts_keeps_every_char() -> None:
    text = ("paragraph " * 50 + "\n\n") * 400
    parts = split_parts(text, limit=5000)
    assert "".join(p for _, p in parts) == text
    assert all(len(p) <= 5000 for _, p in parts)


# -- feeds and social feed (httpx) -------------------------------------------------------


def feed_transport(log: list[httpx.Request]) -> httpx.MockTransport:
    files = {
        "/rss": ("rss.xml", "application/rss+xml"),
        "/atom": ("atom.xml", "application/atom+xml"),
        "/json": ("feed.json", "application/feed+json"),
        "/posts": ("social.json", "application/json"),
    }

    def handler(request: httpx.Request) -> httpx.Response:
        log.append(request)
        name, ctype = files[request.url.path]
        etag = f'"{name}-v1"'
        if request.headers.get("if-none-match") == etag:
            return httpx.Response(304)
        return httpx.Response(
            200,
            content=(FIX / "feeds" / name).read_bytes(),
            headers={
                "content-type": ctype,
                "etag": etag,
                "last-modified": "Wed, 12 Jun 2024 22:00:00 GMT",
            },
        )

    return httpx.MockTransport(handler)


async def test_feeds_parse_rss_atom_json_and_use_conditional_get() -> None:
    log: list[httpx.Request] = []
    urls = [
        "https://news.example.com/rss",
        "https://bonds.example.org/atom",
        "https://macro.example.cn/json",
    ]
    c = FeedConnector(urls, cfg(), transport=feed_transport(log))
    rss = await c.fetch(urls[0], None, {})
    titles = [i.record.title for i in rss.items]
    assert titles == [
        "Fed holds rates steady, signals one cut this year",
        "Apple extends rally after WWDC",
    ]
    apple = rss.items[1].record
    assert isinstance(apple, RawNews) and apple.entities == ["AAPL"]
    assert "Analysts raised targets." in apple.body and "<p>" not in apple.body
    assert rss.items[0].record.entities == ["SPY"]
    assert rss.state == {"etag": '"rss.xml-v1"', "last_modified": "Wed, 12 Jun 2024 22:00:00 GMT"}
    atom = await c.fetch(urls[1], None, {})
    assert atom.items[0].record.event_time == datetime(2024, 6, 12, 13, 30, tzinfo=UTC)
    js = await c.fetch(urls[2], None, {})
    assert [i.record.body for i in js.items][1] == "Broad money supply M2 grew 7.0%."
    # second poll with the saved validators: 304, nothing parsed, state kept
    again = await c.fetch(urls[0], rss.items[-1].cursor, rss.state or {})
    assert again.items == [] and again.state == rss.state
    assert log[-1].headers["if-none-match"] == '"rss.xml-v1"'
    assert log[-1].headers["if-modified-since"] == "Wed, 12 Jun 2024 22:00:00 GMT"
    # ids are stable across polls (same guid -> same id)
    assert (await c.fetch(urls[0], None, {})).items[0].record.id == rss.items[0].record.id


async def test_feed_that_is_not_a_feed_is_reported() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"<html><body>maintenance</body></html>")

    c = FeedConnector(["https://x.example/rss"], cfg(), transport=httpx.MockTransport(handler))
    with pytest.raises(SourceError, match="not an RSS/Atom feed"):
        await c.fetch("https://x.example/rss", None, {})


async def test_feed_timeouts_are_retried() -> None:
    n = {"calls": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        n["calls"] += 1
        if n["calls"] == 1:
            raise httpx.ReadTimeout("timed out", request=request)
        if n["calls"] == 2:
            raise httpx.RemoteProtocolError(
                "peer closed connection without sending complete message body", request=request
            )
        return httpx.Response(200, content=(FIX / "feeds" / "atom.xml").read_bytes())

    c = FeedConnector(["https://x.example/atom"], cfg(), transport=httpx.MockTransport(handler))
    batch = await c.fetch("https://x.example/atom", None, {})
    assert n["calls"] == 3 and len(batch.items) == 1


async def test_social_feed_keeps_cashtags_verbatim() -> None:
    c = SocialFeedConnector(
        ["https://social.example.com/posts"], cfg(), transport=feed_transport([])
    )
    batch = await c.fetch("https://social.example.com/posts", None, {})
    posts = [i.record for i in batch.items]
    assert all(isinstance(p, RawSocialPost) for p in posts)
    assert posts[0].text == "$AAPL breaking out above 213, volume is huge. $MSFT lagging."
    assert posts[0].entities == ["AAPL", "MSFT"] and posts[0].author == "@chartguy"
    assert posts[1].entities == ["TLT"]


async def test_yfinance_backfills_a_year_on_the_first_run_only() -> None:
    asked: list[str] = []

    def history(ticker: str, period: str, interval: str) -> pd.DataFrame:
        asked.append(period)
        return yf_frame(f"history_{ticker}_{interval}")

    c = yf_connector(history=history)
    first = await c.fetch("history:^TNX", None, {})
    later = await c.fetch("history:^TNX", first.items[-1].cursor, {})
    assert asked == ["1y", c.cfg.yfinance_period] and asked[1] != "1y"
    assert later.items  # the recorded frame again; the checkpoint runner dedupes


async def test_edgar_filing_whose_document_has_no_element_is_not_fatal() -> None:
    """lxml raises ParserError ("Document is empty") for markup without one element, such
    as a stray end tag (found by the fuzzer: b'</\\xde'); it escaped the poll."""
    from connectors.text import html_document

    assert html_document(b"</\xde").text == "" and html_document("</p>").text == ""
    fixture = edgar_transport([])

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("aapl-20240629.htm"):
            return httpx.Response(200, content=b"</\xde", headers={"content-type": "text/html"})
        return fixture.handler(request)  # type: ignore[no-any-return]

    c = EdgarConnector(cfg(edgar_watchlist=["AAPL"]), transport=httpx.MockTransport(handler))
    batch = await c.fetch("AAPL", None, {})
    got = {i.record.id: i.record.text for i in batch.items}
    assert batch.rejected == 0 and len(got) == 3  # the filing still arrives, said to be empty
    assert got["0000320193-24-000081"] == "Apple Inc. 10-Q (no text in the primary document)"
