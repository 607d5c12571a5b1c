"""External search connectors for retrieval augmentation (Zhang et al., 3.3.1 and Algorithm 1
line 1: "search Q using a search engine").

The graph's own sources (recent news, filings, facts) cover what livekg has ingested; a
user's news archive or a search engine reaches further. Two real back ends, chosen in
``sentiment.rag_search`` (a list, any number of each):

* ``elasticsearch``: an Elasticsearch or OpenSearch index of articles (``_msearch``: one
  request per micro-batch, a ``multi_match`` on the cleaned query, the item's time window
  as a ``range`` filter on the time field).
* ``searxng``: a SearxNG metasearch instance's JSON API (``/search?format=json``), which
  fronts the public news engines. Asked per item, a few at a time. Its ``time_range`` is
  relative to now, so it is only sent when the item's window reaches the present
  (live items); replayed items are filtered by ``rag.in_window`` on the dated results.

Both implement ``rag.KnowledgeSource``: the retriever's timeout bounds them, and an error
(refused, HTTP 4xx/5xx, malformed body) costs the item its context from that source, never
the item. Tests swap the wire with ``transport=`` (httpx's seam); the code path is the live
one.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from core.settings import SearchConnectorSettings
from kg.sentiment.rag import ContextDoc, RagQuery

log = logging.getLogger(__name__)

USER_AGENT = "livekg-rag/1"


def _parse_time(value: object) -> datetime | None:
    """ISO-8601 strings (``Z`` or offset; naive means UTC) or epoch milliseconds."""
    if value is None or value == "":
        return None
    try:
        if isinstance(value, int | float):
            return datetime.fromtimestamp(float(value) / 1000.0, UTC)
        t = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except (TypeError, ValueError, OverflowError, OSError):
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def _iso(t: datetime) -> str:
    return (t if t.tzinfo else t.replace(tzinfo=UTC)).astimezone(UTC).isoformat()


def _client(
    cfg: SearchConnectorSettings, transport: httpx.AsyncBaseTransport | None
) -> httpx.AsyncClient:
    headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
    if cfg.api_key is not None:
        headers["Authorization"] = f"ApiKey {cfg.api_key.get_secret_value()}"
    auth = None
    if cfg.username:
        secret = cfg.password.get_secret_value() if cfg.password else ""
        auth = httpx.BasicAuth(cfg.username, secret)
    # the retriever's timeout (rag_timeout_s) is the real bound; this one only frees sockets
    return httpx.AsyncClient(
        base_url=cfg.url.rstrip("/"),
        headers=headers,
        auth=auth,
        timeout=httpx.Timeout(max(10.0, cfg.timeout_s or 0.0)),
        transport=transport,
    )


class _HttpSearch:
    """An HTTP client and a limit on searches in flight, both bound to the running event
    loop: a source outlives one ``asyncio.run`` (the eval CLI runs two), and httpx's pooled
    connections and asyncio's semaphores belong to the loop that made them."""

    kind: str  # the default source name

    def __init__(
        self, cfg: SearchConnectorSettings, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.cfg = cfg
        self.name = cfg.name or self.kind
        self.transport = transport
        self.timeout_s = cfg.timeout_s  # None: the retriever's rag_timeout_s
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: httpx.AsyncClient | None = None
        self._slots: asyncio.Semaphore | None = None

    def _bound(self) -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._client is None or self._slots is None or self._loop is not loop:
            self._client = _client(self.cfg, self.transport)
            self._slots = asyncio.Semaphore(max(1, self.cfg.max_concurrency))
            self._loop = loop
        return self._client, self._slots

    async def aclose(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.aclose()
        self._client = None


class ElasticsearchSource(_HttpSearch):
    """An Elasticsearch/OpenSearch article index, asked once per micro-batch (``_msearch``)."""

    kind = "elasticsearch"

    def request_body(self, query: RagQuery, limit: int) -> dict[str, Any]:
        """The search for one item: the cleaned text against ``fields``, inside its window."""
        c = self.cfg
        filters: list[dict[str, Any]] = []
        if query.since is not None and query.until is not None:
            window = {"gte": _iso(query.since), "lte": _iso(query.until)}
            filters.append({"range": {c.time_field: window}})
        if query.exclude_ids:
            filters.append({"bool": {"must_not": {"ids": {"values": query.exclude_ids}}}})
        return {
            "size": limit,
            "query": {
                "bool": {
                    "must": {"multi_match": {"query": query.cleaned, "fields": c.fields}},
                    "filter": filters,
                }
            },
            "_source": [c.title_field, c.text_field, c.time_field],
        }

    def parse_hits(self, response: dict[str, Any]) -> list[ContextDoc]:
        if "error" in response:
            log.warning("rag source %s: search error %s", self.name, response["error"])
            return []
        docs = []
        for hit in response.get("hits", {}).get("hits", []):
            src = hit.get("_source") or {}
            docs.append(
                ContextDoc(
                    id=f"{self.name}:{hit['_id']}",
                    source=self.name,
                    title=str(src.get(self.cfg.title_field) or ""),
                    text=str(src.get(self.cfg.text_field) or ""),
                    published_at=_parse_time(src.get(self.cfg.time_field)),
                )
            )
        return docs

    async def search(self, query: RagQuery, limit: int) -> list[ContextDoc]:
        return (await self.search_many([query], limit))[0]

    async def search_many(self, queries: Sequence[RagQuery], limit: int) -> list[list[ContextDoc]]:
        header = json.dumps({"index": self.cfg.index})
        bodies = [json.dumps(self.request_body(q, limit)) for q in queries]
        lines = [part for body in bodies for part in (header, body)]
        client, _ = self._bound()
        resp = await client.post(
            "/_msearch",
            content="\n".join(lines) + "\n",
            headers={"Content-Type": "application/x-ndjson"},
        )
        resp.raise_for_status()
        responses = resp.json()["responses"]
        if len(responses) != len(queries):
            raise ValueError(f"_msearch answered {len(responses)} of {len(queries)} searches")
        return [self.parse_hits(r) for r in responses]


def searxng_time_range(query: RagQuery, now: datetime | None = None) -> str | None:
    """SearxNG's ``time_range`` (day/week/month/year, counted back from now) covering the
    item's window, or None when the window does not reach the present (a replayed item:
    a relative range would exclude exactly the articles of its time)."""
    if query.since is None or query.until is None:
        return None
    now = now or datetime.now(UTC)
    if query.until < now - timedelta(hours=1):
        return None
    span = now - query.since
    for name, days in (("day", 1), ("week", 7), ("month", 31), ("year", 366)):
        if span <= timedelta(days=days):
            return name
    return None


class SearxngSource(_HttpSearch):
    """A SearxNG instance's JSON API (``search.formats`` must include ``json``)."""

    kind = "searxng"

    def params(self, query: RagQuery, now: datetime | None = None) -> dict[str, str]:
        params = {"q": query.cleaned, "format": "json", "categories": self.cfg.categories}
        if self.cfg.language:
            params["language"] = self.cfg.language
        time_range = searxng_time_range(query, now)
        if time_range:
            params["time_range"] = time_range
        return params

    def parse_results(self, body: dict[str, Any], limit: int) -> list[ContextDoc]:
        docs = []
        for r in body.get("results", [])[:limit]:
            url = str(r.get("url") or "")
            if not url:
                continue
            docs.append(
                ContextDoc(
                    id=f"{self.name}:{url}",
                    source=self.name,
                    title=str(r.get("title") or ""),
                    text=str(r.get("content") or ""),
                    published_at=_parse_time(r.get("publishedDate")),
                )
            )
        return docs

    async def search(self, query: RagQuery, limit: int) -> list[ContextDoc]:
        client, slots = self._bound()
        async with slots:
            resp = await client.get("/search", params=self.params(query))
        if resp.status_code == 403:
            raise PermissionError(
                f"{self.name}: HTTP 403 from {resp.url}; the instance must allow the JSON"
                " format (settings.yml: search.formats: [html, json])"
            )
        resp.raise_for_status()
        return self.parse_results(resp.json(), limit)


ExternalSource = ElasticsearchSource | SearxngSource


def external_sources(
    configs: Sequence[SearchConnectorSettings],
    transport: httpx.AsyncBaseTransport | None = None,
) -> list[ExternalSource]:
    """The configured connectors, in order (each a ``rag.KnowledgeSource``)."""
    kinds: dict[str, type[ExternalSource]] = {
        cls.kind: cls for cls in (ElasticsearchSource, SearxngSource)
    }
    return [kinds[c.kind](c, transport) for c in configs]
