"""yfinance: quotes and daily history for tickers, indices and US Treasury yields, and news.

Live it needs internet (Yahoo Finance). Two seams keep tests on the real mapping code:
``history(ticker, period, interval) -> DataFrame`` (default ``yf.Ticker(t).history``)
and ``news(ticker) -> list[dict]`` (default ``yf.Ticker(t).news``); tests pass recorded
frames/JSON in yfinance 1.x shapes.

Streams: ``history:<T>`` (completed daily bars, Close -> raw.ticks, frequency daily),
``quote:<T>`` (1-minute bars of the current session, the last price -> raw.ticks,
frequency instant) and ``news:<T>`` (raw.news). The Treasury yield indices are mapped
to indicator ids: ^IRX -> US13W, ^FVX -> US5Y, ^TNX -> US10Y, ^TYX -> US30Y (percent).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from connectors.base import Batch, SchemaDriftError, require_columns
from connectors.policy import RateLimiter, RetryPolicy, call_blocking
from connectors.text import parse_time
from core.records import IndicatorTick, RawNews
from core.settings import ConnectorSettings

YIELDS = {
    "^IRX": ("US13W", "US 13-week Treasury bill yield"),
    "^FVX": ("US5Y", "US 5-year Treasury yield"),
    "^TNX": ("US10Y", "US 10-year Treasury yield"),
    "^TYX": ("US30Y", "US 30-year Treasury yield"),
}
HISTORY_COLUMNS = ("Open", "High", "Low", "Close", "Volume")

History = Callable[[str, str, str], Any]
News = Callable[[str], list[dict[str, Any]]]


def _history(ticker: str, period: str, interval: str) -> Any:
    import yfinance as yf  # optional: heavy (pandas, requests), loaded only when fetching

    return yf.Ticker(ticker).history(
        period=period, interval=interval, auto_adjust=False, raise_errors=True
    )


def _news(ticker: str) -> list[dict[str, Any]]:
    import yfinance as yf  # optional: heavy (pandas, requests), loaded only when fetching

    return list(yf.Ticker(ticker).news or [])


# A first run (no cursor) of a daily history stream backfills this much, so the report's
# 1-, 3- and 6-month changes have data from the start; later runs fetch yfinance_period.
BACKFILL_PERIOD = "1y"


def indicator(ticker: str) -> tuple[str, str, str]:
    """(indicator id, name, unit) for a ticker."""
    if ticker in YIELDS:
        iid, name = YIELDS[ticker]
        return iid, name, "%"
    unit = "points" if ticker.startswith("^") else "price"
    return ticker, f"{ticker} close", unit


def news_fields(item: dict[str, Any]) -> dict[str, Any]:
    """yfinance 1.x news item ({id, content: {...}}) -> our fields; drift raises."""
    content = item.get("content")
    if isinstance(content, dict):
        url = (
            (content.get("canonicalUrl") or {}).get("url")
            or (content.get("clickThroughUrl") or {}).get("url")
            or ""
        )
        return {
            "id": str(item.get("id") or content.get("id") or ""),
            "title": content.get("title") or "",
            "body": content.get("summary") or content.get("description") or "",
            "url": url,
            "published": parse_time(content.get("pubDate") or content.get("displayTime")),
            "provider": (content.get("provider") or {}).get("displayName") or "yahoo",
        }
    if "title" in item and ("providerPublishTime" in item or "link" in item):  # pre-0.2.50 shape
        return {
            "id": str(item.get("uuid") or ""),
            "title": item.get("title") or "",
            "body": "",
            "url": item.get("link") or "",
            "published": parse_time(item.get("providerPublishTime")),
            "provider": item.get("publisher") or "yahoo",
        }
    raise SchemaDriftError(
        f"yfinance news item has neither 'content' nor 'title': keys {sorted(item)[:10]}"
    )


class YFinanceConnector:
    name = "yfinance"
    topics = ("raw.ticks", "raw.news")

    def __init__(
        self,
        cfg: ConnectorSettings,
        *,
        history: History | None = None,
        news: News | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self.cfg = cfg
        self.history = history or _history
        self.news = news or _news
        self.now = now or (lambda: datetime.now(UTC))
        self.rate_per_s = cfg.rate_limits.get(self.name, 2.0)
        self.interval_s = cfg.intervals.get(self.name, 60.0)
        self.limiter = RateLimiter(self.rate_per_s)
        self.policy = RetryPolicy.from_settings(cfg)

    def streams(self) -> list[str]:
        out = [f"history:{t}" for t in self.cfg.yfinance_tickers]
        out += [f"quote:{t}" for t in self.cfg.yfinance_tickers]
        out += [f"news:{t}" for t in self.cfg.yfinance_news_tickers]
        return out

    async def _call(self, fn: Callable[[], Any], what: str) -> Any:
        await self.limiter.acquire()
        return await call_blocking(
            fn,
            policy=self.policy,
            source=self.name,
            what=what,
            timeout_s=self.cfg.request_timeout_s * 3,
        )

    async def fetch(self, stream: str, cursor: str | None, state: dict[str, Any]) -> Batch:
        kind, ticker = stream.split(":", 1)
        if kind == "news":
            return await self._news_batch(ticker)
        daily = kind == "history"
        period, interval = (self.cfg.yfinance_period, "1d") if daily else ("1d", "1m")
        if daily and cursor is None:
            period = BACKFILL_PERIOD  # first run: history for the bond report's facts

        def get() -> Any:
            frame = self.history(ticker, period, interval)
            require_columns(frame.columns, HISTORY_COLUMNS, f"yfinance history {ticker}")
            return frame

        frame = await self._call(get, f"history({ticker}, {period}, {interval})")
        iid, name, unit = indicator(ticker)
        batch = Batch()
        rows = list(frame["Close"].items())
        if daily and rows:
            last_ts = rows[-1][0]
            tz = getattr(last_ts, "tzinfo", None)
            if last_ts.date() >= self.now().astimezone(tz).date():
                rows = rows[:-1]  # today's bar is still moving; publish it once complete
        elif not daily:
            rows = rows[-1:]  # the quote: the latest minute's close
        for ts, close in rows:
            when = ts.to_pydatetime() if hasattr(ts, "to_pydatetime") else ts
            when = when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
            if daily:  # a daily bar is the date's observation: 00:00 UTC of that date
                d = ts.date() if hasattr(ts, "date") else when.date()
                when = datetime(d.year, d.month, d.day, tzinfo=UTC)
            batch.add(
                "raw.ticks",
                f"{when.isoformat()}|{iid}",
                IndicatorTick,
                {
                    "source": "yfinance",
                    "indicator_id": iid,
                    "value": close,
                    "unit": unit,
                    "name": name,
                    "frequency": "daily" if daily else "instant",
                    "event_time": when,
                },
            )
        return batch

    async def _news_batch(self, ticker: str) -> Batch:
        def get() -> list[dict[str, Any]]:
            items = self.news(ticker)
            return [news_fields(i) for i in items]  # drift raises inside the retry

        items = await self._call(get, f"news({ticker})")
        batch = Batch()
        for f in items:
            when = f["published"]
            batch.add(
                "raw.news",
                f"{when.isoformat() if when else ''}|{f['id']}",
                RawNews,
                {
                    "id": f"yf-{f['id']}" if f["id"] else None,
                    "source": f"yfinance:{f['provider']}",
                    "title": f["title"],
                    "body": f["body"],
                    "url": f["url"],
                    "lang": "en",
                    "event_time": when,
                    "entities": [ticker],
                },
            )
        return batch
