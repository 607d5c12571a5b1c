"""akshare: China bond yields, money-market rates, macro series, A-share news and notices.

Live it needs internet (akshare scrapes ChinaBond, jin10, chinamoney and eastmoney).
Each akshare function is called through a ``fetchers`` seam (function name -> callable,
defaulting to the real ``akshare.<name>``) so tests feed recorded DataFrames with the
real column names through the same mapping code. A frame missing a mapped column is
schema drift: retried like a network fault, then reported.

Streams and what they produce:

==================  =====================================  ==============================
stream              akshare function                       records
==================  =====================================  ==============================
bond_yield_curve    bond_china_yield (govt curve)          raw.ticks CN3M..CN30Y (%)
shibor              macro_china_shibor_all                 raw.ticks SHIBOR_ON..SHIBOR_1Y
repo_rates          repo_rate_hist                         raw.ticks FR001.., FDR001..
money_supply        macro_china_money_supply               raw.ticks CN_M0/M1/M2 (+ _YOY)
cpi / ppi / pmi     macro_china_cpi / _ppi / _pmi          raw.ticks CN_CPI, CN_PPI, ...
lpr                 macro_china_lpr                        raw.ticks CN_LPR_1Y, CN_LPR_5Y
news:<symbol>       stock_news_em                          raw.news (entities: symbol)
announcements       stock_notice_report (one call per day) raw.filings (company: code)
==================  =====================================  ==============================

Daily observations carry 00:00 UTC of their date, monthly ones the first day of their
month; news times are Beijing time converted to UTC.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from connectors.base import Batch, require_columns
from connectors.policy import RateLimiter, RetryPolicy, call_blocking
from core.records import IndicatorTick, RawFiling, RawNews
from core.settings import ConnectorSettings

SHANGHAI = ZoneInfo("Asia/Shanghai")
DATASETS_FILE = Path(__file__).with_name("akshare_datasets.toml")
_MONTH = re.compile(r"(\d{4})\D+(\d{1,2})")

Fetcher = Callable[..., Any]  # returns a pandas DataFrame


class MappedColumn(BaseModel):
    """One mapped column: its indicator id, name and unit."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    column: str
    indicator_id: str
    name: str
    unit: str = "%"


class Dataset(BaseModel):
    """One stream: the akshare function, its date column and the series it maps."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    stream: str
    func: str
    date_col: str
    period: Literal["daily", "monthly"]
    series: tuple[MappedColumn, ...] = Field(min_length=1)
    windowed: Literal["none", "range_year", "range_month"] = "none"
    row_filter: tuple[str, str] | None = None  # (column, required value)


def load_datasets(path: Path = DATASETS_FILE) -> dict[str, Dataset]:
    """The streams of ``akshare_datasets.toml``, checked (a bad file fails at import)."""
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    datasets = TypeAdapter(list[Dataset]).validate_python(raw.get("dataset", []))
    return {d.stream: d for d in datasets}


DATASETS = load_datasets()

NEWS_COLUMNS = ("关键词", "新闻标题", "新闻内容", "发布时间", "文章来源", "新闻链接")
NOTICE_COLUMNS = ("代码", "名称", "公告标题", "公告类型", "公告日期", "网址")


def to_date(value: Any) -> date | None:
    """akshare dates come as date, Timestamp, 'YYYY-MM-DD' or 'YYYY年MM月份'."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    s = str(value).strip()
    try:
        if "年" in s:
            m = _MONTH.match(s)
            return date(int(m.group(1)), int(m.group(2)), 1) if m else None  # 2024年13月: None
        return date.fromisoformat(s[:10])
    except ValueError:
        return None


def _number(value: Any) -> float | None:
    try:
        f = float(value)
    except (TypeError, ValueError, OverflowError):  # 10**400 is no number we can store
        return None
    return None if math.isnan(f) or math.isinf(f) else f


def _midnight(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, tzinfo=UTC)


def _default_fetcher(name: str) -> Fetcher:
    def call(**kwargs: Any) -> Any:
        import akshare  # optional: heavy (pandas, requests), loaded only when fetching

        return getattr(akshare, name)(**kwargs)

    return call


class AkshareConnector:
    name = "akshare"
    topics = ("raw.ticks", "raw.news", "raw.filings")

    def __init__(
        self,
        cfg: ConnectorSettings,
        *,
        fetchers: dict[str, Fetcher] | None = None,
        today: Callable[[], date] | None = None,
    ) -> None:
        self.cfg = cfg
        self.fetchers = fetchers or {}
        self.today = today or (lambda: datetime.now(SHANGHAI).date())
        self.rate_per_s = cfg.rate_limits.get(self.name, 2.0)
        self.interval_s = cfg.intervals.get(self.name, 3600.0)
        self.limiter = RateLimiter(self.rate_per_s)
        self.policy = RetryPolicy.from_settings(cfg)

    def streams(self) -> list[str]:
        wanted = self.cfg.akshare_datasets or [*DATASETS, "news", "announcements"]
        out: list[str] = []
        for w in wanted:
            if w == "news":
                out += [f"news:{s}" for s in self.cfg.akshare_news_symbols]
            else:
                out.append(w)
        return out

    def _fetcher(self, func: str) -> Fetcher:
        return self.fetchers.get(func) or _default_fetcher(func)

    async def _call(self, func: str, check: Callable[[Any], None], **kwargs: Any) -> Any:
        """One akshare call in a thread, its frame checked for drift inside the retry."""
        fetch = self._fetcher(func)

        def run() -> Any:
            frame = fetch(**kwargs)
            check(frame)
            return frame

        await self.limiter.acquire()
        return await call_blocking(
            run,
            policy=self.policy,
            source=self.name,
            what=f"akshare.{func}({', '.join(f'{k}={v}' for k, v in kwargs.items())})",
            timeout_s=self.cfg.request_timeout_s * 3,
        )

    def _start(self, cursor: str | None, period: str) -> date:
        if cursor:
            d = to_date(cursor.split("|", 1)[0])
            if d:
                return d
        days = (
            self.cfg.akshare_lookback_days
            if period == "daily"
            else max(self.cfg.akshare_lookback_days, 366)
        )
        return self.today() - timedelta(days=days)

    async def fetch(self, stream: str, cursor: str | None, state: dict[str, Any]) -> Batch:
        if stream.startswith("news:"):
            return await self._news(stream.split(":", 1)[1])
        if stream == "announcements":
            return await self._announcements(cursor)
        ds = DATASETS.get(stream)
        if ds is None:
            raise ValueError(
                f"unknown akshare stream {stream!r}; known: {', '.join(self.streams())}"
            )
        return await self._ticks(ds, cursor)

    # -- indicator series ---------------------------------------------------------------
    async def _ticks(self, ds: Dataset, cursor: str | None) -> Batch:
        start, end = self._start(cursor, ds.period), self.today()
        wanted = [ds.date_col, *(s.column for s in ds.series)]
        if ds.row_filter:
            wanted.append(ds.row_filter[0])

        def check(frame: Any) -> None:
            require_columns(frame.columns, wanted, f"akshare.{ds.func}")

        calls: list[dict[str, str]] = [{}]
        if ds.windowed != "none":
            step = 360 if ds.windowed == "range_year" else 28
            calls, lo = [], start
            while lo <= end:
                hi = min(end, lo + timedelta(days=step))
                calls.append({"start_date": f"{lo:%Y%m%d}", "end_date": f"{hi:%Y%m%d}"})
                lo = hi + timedelta(days=1)
        batch = Batch()
        for kwargs in calls:
            frame = await self._call(ds.func, check, **kwargs)
            for row in frame.to_dict("records"):
                if ds.row_filter and row.get(ds.row_filter[0]) != ds.row_filter[1]:
                    continue
                d = to_date(row.get(ds.date_col))
                if d is None:
                    batch.rows += 1
                    batch.rejected += 1
                    batch.errors.append(f"{ds.func}: unparsable date {row.get(ds.date_col)!r}")
                    continue
                if cursor is None and d < start:
                    continue
                for s in ds.series:
                    value = _number(row.get(s.column))
                    if value is None:  # an empty cell (holiday, series not yet published)
                        continue
                    batch.add(
                        "raw.ticks",
                        f"{d.isoformat()}|{s.indicator_id}",
                        IndicatorTick,
                        {
                            "source": f"akshare:{ds.func}",
                            "indicator_id": s.indicator_id,
                            "value": value,
                            "unit": s.unit,
                            "name": s.name,
                            "frequency": ds.period,
                            "event_time": _midnight(d),
                        },
                    )
        return batch

    # -- text ---------------------------------------------------------------------------
    async def _news(self, symbol: str) -> Batch:
        frame = await self._call(
            "stock_news_em",
            lambda f: require_columns(f.columns, NEWS_COLUMNS, "akshare.stock_news_em"),
            symbol=symbol,
        )
        batch = Batch()
        for row in frame.to_dict("records"):
            when = _beijing(row.get("发布时间"))
            url = str(row.get("新闻链接") or "")
            batch.add(
                "raw.news",
                f"{when.isoformat() if when else ''}|{url}",
                RawNews,
                {
                    "source": f"eastmoney:{row.get('文章来源') or 'news'}",
                    "title": str(row.get("新闻标题") or ""),
                    "body": str(row.get("新闻内容") or ""),
                    "url": url,
                    "lang": "zh",
                    "event_time": when,
                    "entities": [symbol],
                },
            )
        return batch

    async def _announcements(self, cursor: str | None) -> Batch:
        start, end = self._start(cursor, "daily"), self.today()
        batch = Batch()
        d = start
        while d <= end:
            frame = await self._call(
                "stock_notice_report",
                lambda f: require_columns(f.columns, NOTICE_COLUMNS, "akshare.stock_notice_report"),
                symbol="全部",
                date=f"{d:%Y%m%d}",
            )
            for row in frame.to_dict("records"):
                day = to_date(row.get("公告日期")) or d
                url = str(row.get("网址") or "")
                title = str(row.get("公告标题") or "")
                batch.add(
                    "raw.filings",
                    f"{day.isoformat()}|{row.get('代码')}|{url}",
                    RawFiling,
                    {
                        "source": "eastmoney:notice",
                        "company": str(row.get("代码") or ""),
                        "form_type": str(row.get("公告类型") or "announcement"),
                        "title": title,
                        # the body is a PDF behind the URL; the notice title is the text here
                        "text": f"{row.get('名称') or ''} {title}".strip(),
                        "url": url,
                        "lang": "zh",
                        "event_time": _midnight(day),
                    },
                )
            d += timedelta(days=1)
        return batch


def _beijing(value: Any) -> datetime | None:
    if value is None or value == "":
        return None
    try:
        dt = datetime.fromisoformat(str(value).strip())
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=SHANGHAI)
    try:
        return dt.astimezone(UTC)
    except OverflowError:  # 0001-01-01 00:00 in Beijing is before year 1 in UTC
        return None
