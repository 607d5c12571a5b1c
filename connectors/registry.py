"""The sources ``livekg connect`` knows: name -> how to build it from settings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from connectors.akshare_source import AkshareConnector
from connectors.base import Connector
from connectors.edgar import EdgarConnector
from connectors.feeds import FeedConnector
from connectors.replay import FileConnector
from connectors.social import SocialFeedConnector
from connectors.xbrl import XbrlConnector
from connectors.yfinance_source import YFinanceConnector
from core.settings import Settings


@dataclass(frozen=True, slots=True)
class SourceInfo:
    name: str
    description: str
    needs_internet: bool
    build: Callable[[Settings], Connector]


def _akshare(s: Settings) -> Connector:
    return AkshareConnector(s.connectors)


def _yfinance(s: Settings) -> Connector:
    return YFinanceConnector(s.connectors)


def _edgar(s: Settings) -> Connector:
    return EdgarConnector(s.connectors)


def _xbrl(s: Settings) -> Connector:
    return XbrlConnector(s.connectors)


def _feeds(s: Settings) -> Connector:
    return FeedConnector(s.connectors.feeds, s.connectors)


def _social(s: Settings) -> Connector:
    return SocialFeedConnector(s.connectors.social_feeds, s.connectors)


def _file(s: Settings) -> Connector:
    return FileConnector(s.connectors.files, s.connectors)


SOURCES: dict[str, SourceInfo] = {
    i.name: i
    for i in (
        SourceInfo(
            "akshare",
            "China bond yields, SHIBOR/repo, M0-M2, CPI/PPI/PMI, LPR, A-share news and notices",
            True,
            _akshare,
        ),
        SourceInfo(
            "yfinance",
            "quotes and daily history (tickers, indices, ^IRX ^FVX ^TNX ^TYX), company news",
            True,
            _yfinance,
        ),
        SourceInfo(
            "edgar",
            "SEC EDGAR 10-K/10-Q/8-K of connectors.edgar_watchlist (full text + tables)",
            True,
            _edgar,
        ),
        SourceInfo(
            "xbrl",
            "SEC XBRL company facts of connectors.edgar_watchlist -> metric facts (kg.triples)",
            True,
            _xbrl,
        ),
        SourceInfo(
            "feeds",
            "RSS/Atom/JSON Feed news (connectors.feeds) with ETag/If-Modified-Since",
            True,
            _feeds,
        ),
        SourceInfo(
            "social-feed",
            "JSON post feeds (connectors.social_feeds); webhook: POST /ingest/social",
            True,
            _social,
        ),
        SourceInfo(
            "file",
            "JSONL/CSV files (connectors.files: path -> topic), checkpointed by row",
            False,
            _file,
        ),
    )
}


def build(name: str, settings: Settings) -> Connector:
    try:
        info = SOURCES[name]
    except KeyError:
        raise KeyError(f"unknown source {name!r}; known: {', '.join(SOURCES)}") from None
    return info.build(settings)
