"""News feeds over httpx: RSS 2.0, Atom and JSON Feed, with conditional GET.

One stream per feed URL. The ETag and Last-Modified of the last good response are
kept in the stream's checkpoint state and sent back (If-None-Match /
If-Modified-Since), so an unchanged feed costs a 304 and no parsing. Needs internet
when run live; tests replay recorded bodies through the same client.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson

from connectors.base import Batch, SchemaDriftError
from connectors.http import HttpSource
from connectors.text import cashtags, html_to_text, parse_time
from core.records import RawNews, stable_id, utcnow
from core.settings import ConnectorSettings

ATOM = "{http://www.w3.org/2005/Atom}"
CONTENT = "{http://purl.org/rss/1.0/modules/content/}encoded"
DC_DATE = "{http://purl.org/dc/elements/1.1/}date"
ACCEPT = (
    "application/rss+xml, application/atom+xml, application/feed+json,"
    " application/json;q=0.9, */*;q=0.5"
)


@dataclass(frozen=True, slots=True)
class Entry:
    guid: str
    title: str
    body: str
    url: str
    published: datetime | None
    author: str = ""


def _text(el: ET.Element | None) -> str:
    return "".join(el.itertext()).strip() if el is not None else ""


def parse_feed(resp: httpx.Response) -> list[Entry]:
    """Detect the format from the body; raise on something that is no feed at all."""
    body = resp.content.lstrip()
    if body[:1] in (b"{", b"["):
        return parse_json_feed(orjson.loads(body))
    root = ET.fromstring(body)
    if root.tag == f"{ATOM}feed":
        return _atom(root)
    channel = root.find("channel")
    if (
        root.tag in ("rss", "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}RDF")
        and channel is not None
    ):
        return _rss(root)
    raise SchemaDriftError(f"not an RSS/Atom feed: root element {root.tag!r}")


def _rss(root: ET.Element) -> list[Entry]:
    out = []
    for item in root.iter("item"):
        link = _text(item.find("link"))
        guid = _text(item.find("guid")) or link or _text(item.find("title"))
        raw_body = _text(item.find(CONTENT)) or _text(item.find("description"))
        out.append(
            Entry(
                guid=guid,
                title=html_to_text(_text(item.find("title")))
                if "<" in _text(item.find("title"))
                else _text(item.find("title")),
                body=html_to_text(raw_body) if "<" in raw_body else raw_body,
                url=link,
                published=parse_time(_text(item.find("pubDate")) or _text(item.find(DC_DATE))),
                author=_text(item.find("author"))
                or _text(item.find("{http://purl.org/dc/elements/1.1/}creator")),
            )
        )
    return out


def _atom(root: ET.Element) -> list[Entry]:
    out = []
    for entry in root.iter(f"{ATOM}entry"):
        link = ""
        for ln in entry.findall(f"{ATOM}link"):
            if ln.get("rel", "alternate") == "alternate":
                link = ln.get("href", "")
                break
        raw_body = _text(entry.find(f"{ATOM}content")) or _text(entry.find(f"{ATOM}summary"))
        out.append(
            Entry(
                guid=_text(entry.find(f"{ATOM}id")) or link,
                title=_text(entry.find(f"{ATOM}title")),
                body=html_to_text(raw_body) if "<" in raw_body else raw_body,
                url=link,
                published=parse_time(
                    _text(entry.find(f"{ATOM}published")) or _text(entry.find(f"{ATOM}updated"))
                ),
                author=_text(entry.find(f"{ATOM}author/{ATOM}name")),
            )
        )
    return out


def parse_json_feed(doc: Any) -> list[Entry]:
    """JSON Feed 1.x (``items``), or a bare list of objects with the same fields."""
    items = doc.get("items") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        raise SchemaDriftError("JSON feed has no 'items' list")
    out = []
    for it in items:
        if not isinstance(it, dict):
            continue
        html = it.get("content_html") or ""
        text = it.get("content_text") or it.get("text") or (html_to_text(html) if html else "")
        authors = it.get("authors") or ([it["author"]] if it.get("author") else [])
        author = (
            authors[0].get("name", "")
            if authors and isinstance(authors[0], dict)
            else str(authors[0])
            if authors
            else ""
        )
        out.append(
            Entry(
                guid=str(it.get("id") or it.get("url") or ""),
                title=str(it.get("title") or ""),
                body=str(it.get("summary") or "")
                + ("\n\n" if it.get("summary") and text else "")
                + text,
                url=str(it.get("url") or it.get("external_url") or ""),
                published=parse_time(
                    it.get("date_published") or it.get("created_at") or it.get("date_modified")
                ),
                author=author,
            )
        )
    return out


def conditional_headers(state: dict[str, Any]) -> dict[str, str]:
    headers = {}
    if state.get("etag"):
        headers["If-None-Match"] = state["etag"]
    if state.get("last_modified"):
        headers["If-Modified-Since"] = state["last_modified"]
    return headers


def validators(resp: httpx.Response) -> dict[str, str]:
    out = {}
    if resp.headers.get("etag"):
        out["etag"] = resp.headers["etag"]
    if resp.headers.get("last-modified"):
        out["last_modified"] = resp.headers["last-modified"]
    return out


def entry_cursor(e: Entry, fetched: datetime) -> tuple[datetime, str]:
    """Entries without a date take the fetch time (their cursor is then not stable;
    the content-hash window still drops repeats)."""
    when = e.published or fetched
    return when, f"{when.isoformat()}|{e.guid}"


class FeedPoller:
    """Polls feed URLs, one stream each, with conditional GETs; a subclass names its
    source, default interval and accepted types, and maps the entries to records."""

    topics: tuple[str, ...]
    default_name: str
    default_interval_s: float
    accept: str

    def __init__(
        self,
        urls: list[str],
        cfg: ConnectorSettings,
        *,
        name: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.name = name or self.default_name
        self.urls = list(urls)
        self.rate_per_s = cfg.rate_limits.get(self.name, 5.0)
        self.interval_s = cfg.intervals.get(self.name, self.default_interval_s)
        self.http = HttpSource(
            self.name,
            cfg,
            rate_per_s=self.rate_per_s,
            transport=transport,
            headers={"Accept": self.accept},
        )

    def streams(self) -> list[str]:
        return self.urls

    async def poll(
        self, stream: str, state: dict[str, Any], parse: Callable[[httpx.Response], list[Entry]]
    ) -> tuple[Batch, list[Entry]]:
        """A batch carrying the feed's new validators, and its entries (none on a 304,
        when the batch keeps the old validators)."""
        resp, entries = await self.http.get(
            stream, parse, headers=conditional_headers(state), allow_not_modified=True
        )
        if entries is None:  # 304: nothing new, keep the validators
            return Batch(state=state), []
        return Batch(state=validators(resp) or state), entries


class FeedConnector(FeedPoller):
    """RSS/Atom/JSON news feeds -> ``raw.news``."""

    topics = ("raw.news",)
    default_name = "feeds"
    default_interval_s = 300.0
    accept = ACCEPT

    async def fetch(self, stream: str, cursor: str | None, state: dict[str, Any]) -> Batch:
        batch, entries = await self.poll(stream, state, parse_feed)
        fetched = utcnow()
        host = urlsplit(stream).hostname or stream
        for e in entries:
            when, cur = entry_cursor(e, fetched)
            text = f"{e.title}\n{e.body}"
            batch.add(
                "raw.news",
                cur,
                RawNews,
                {
                    "id": stable_id("feed", stream, e.guid) if e.guid else None,
                    "source": f"feed:{host}",
                    "title": e.title[:2000],
                    "body": e.body,
                    "url": e.url,
                    "event_time": when,
                    "entities": cashtags(text),
                },
            )
        return batch
