"""Retrieval augmentation for sentiment (Zhang et al., section 3.3 and Algorithm 1).

1. Clean the input (tickers, symbols, URLs removed) and build a query with its
   entities, tickers and time.
2. Multi-source query: every ``KnowledgeSource`` (recent news in the graph, filings,
   knowledge-graph facts about the mentioned entities, a corpus file, any external
   search connector) returns candidate documents; only those inside the time window
   around the item's event time are kept.
3. Similarity filter (Algorithm 1): keep a document when its overlap coefficient with
   the query is > 0.8, then keep its syntactic units (paragraphs, bullet points) whose
   overlap is > 0.7. The kept units, concatenated, are the context given with the input.

The overlap coefficient is over sets of "financially relevant" tokens: lower-cased
words without stop words (each CJK character counts as a token).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from core.records import to_epoch_ms
from kg.graph.queries import cypher
from kg.graph.store.base import GraphStore
from kg.sentiment.clean import clean_for_query, tickers_in, tokens

log = logging.getLogger(__name__)

DOC_OVERLAP_MIN = 0.8  # Zhang et al., Algorithm 1 line 4
UNIT_OVERLAP_MIN = 0.7  # Zhang et al., Algorithm 1 line 7
# The overlap coefficient divides by the smaller set, so a one-word unit ("U.S.",
# "Environmental.") or a one-word query passes any threshold: on Twitter dev with the
# market corpus as index, 8 tweets got such context and none of it was about the tweet.
# A document and a unit must share at least this many relevant tokens with the query.
MIN_SHARED_TOKENS = 3

STOP_WORDS = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been
    being it its this that these those he she they we you i his her their our your my me
    us them not no so than then too very can will would should could may might must do does
    did has have had having about into over after before up down out off again just also
    s t via amid says said say new per vs more most other some such only own same what which
    who whom when where why how all any both each few here there while""".split()
) | frozenset("的了在是和与及对为将从于也就而被等这那有之其或并".replace("", " ").split())

UNIT_SPLIT_RE = re.compile(
    r"\n\s*\n|\n\s*(?:[-*•·]|\d+[.)])\s+|(?<=[.!?。！？])\s+(?=[A-Z\u4e00-\u9fff])"
)


def relevant_tokens(text: str) -> set[str]:
    return {t for t in tokens(text) if t not in STOP_WORDS and len(t) > 0}


def overlap(x: set[str], y: set[str]) -> float:
    """Szymkiewicz-Simpson coefficient |X ∩ Y| / min(|X|, |Y|) (Zhang et al., eq. 3)."""
    if not x or not y:
        return 0.0
    return len(x & y) / min(len(x), len(y))


def split_units(text: str) -> list[str]:
    """Paragraphs, bullet points and sentences: the "syntactic units" of Algorithm 1."""
    return [u.strip() for u in UNIT_SPLIT_RE.split(text) if u and u.strip()]


class ContextDoc(BaseModel):
    """A candidate context document from one source."""

    id: str
    source: str
    title: str = ""
    text: str = ""
    published_at: datetime | None = None

    @property
    def full_text(self) -> str:
        return f"{self.title}\n\n{self.text}".strip() if self.title else self.text


class RagQuery(BaseModel):
    text: str  # the original input
    cleaned: str  # tickers/symbols/URLs removed
    entities: list[str] = Field(default_factory=list)
    tickers: list[str] = Field(default_factory=list)
    event_time: datetime | None = None
    since: datetime | None = None
    until: datetime | None = None
    exclude_ids: list[str] = Field(default_factory=list)  # the item itself


class ContextUnit(BaseModel):
    doc_id: str
    source: str
    text: str
    overlap: float


class SentimentContext(BaseModel):
    query: RagQuery
    units: list[ContextUnit] = Field(default_factory=list)
    candidates: int = 0  # documents the sources returned (in the window)
    kept_docs: int = 0  # documents that passed the 0.8 filter

    @property
    def context(self) -> str:
        return " ".join(u.text for u in self.units)

    @property
    def context_ids(self) -> list[str]:
        return list(dict.fromkeys(u.doc_id for u in self.units))


@runtime_checkable
class KnowledgeSource(Protocol):
    """One place to search. External search connectors implement this too.

    A source may also offer ``search_many(queries, limit) -> list[list[ContextDoc]]``
    (one list per query, in order): the retriever then asks it once per micro-batch
    instead of once per item (``GraphNewsSource``, ``GraphFactsSource``).
    """

    name: str

    async def search(self, query: RagQuery, limit: int) -> list[ContextDoc]: ...


def _keys(query: RagQuery) -> list[str]:
    return list(dict.fromkeys([*query.entities, *query.tickers]))


class RagSettingsLike(Protocol):
    """The ``sentiment.*`` settings a retriever takes (``ContextRetriever.from_settings``)."""

    rag_max_docs_per_source: int
    rag_max_context_chars: int
    rag_timeout_s: float


def build_query(
    text: str,
    *,
    entities: Sequence[str] = (),
    event_time: datetime | None = None,
    window: timedelta = timedelta(hours=72),
    future: timedelta = timedelta(hours=1),
    exclude_ids: Sequence[str] = (),
) -> RagQuery:
    return RagQuery(
        text=text,
        cleaned=clean_for_query(text),
        entities=list(entities),
        tickers=tickers_in(text),
        event_time=event_time,
        since=event_time - window if event_time else None,
        until=event_time + future if event_time else None,
        exclude_ids=list(exclude_ids),
    )


def in_window(doc: ContextDoc, query: RagQuery) -> bool:
    """Documents without a time are kept (static facts); dated ones must fall in the window."""
    if doc.published_at is None or query.since is None or query.until is None:
        return True
    t = doc.published_at if doc.published_at.tzinfo else doc.published_at.replace(tzinfo=UTC)
    return query.since <= t <= query.until


def filter_context(
    query: RagQuery,
    docs: Iterable[ContextDoc],
    *,
    doc_min: float = DOC_OVERLAP_MIN,
    unit_min: float = UNIT_OVERLAP_MIN,
    min_shared: int = MIN_SHARED_TOKENS,
    max_chars: int = 2000,
) -> SentimentContext:
    """Algorithm 1 lines 2-12 over already-retrieved documents ``D``, with the
    ``min_shared`` guard against the coefficient's small-set degeneracy."""
    q = relevant_tokens(query.cleaned)
    own = relevant_tokens(query.text)
    result = SentimentContext(query=query)  # a query under ``min_shared`` tokens gets no context
    seen_units: set[str] = set()
    used = 0
    for doc in docs:
        if doc.id in query.exclude_ids or not in_window(doc, query):
            continue
        result.candidates += 1
        body = doc.full_text
        d_tokens = relevant_tokens(body)
        if d_tokens == own:  # the item itself, re-found under another id
            continue
        if overlap(q, d_tokens) <= doc_min or len(q & d_tokens) < min_shared:
            continue
        result.kept_docs += 1
        for unit in split_units(body):
            key = unit.lower()
            if key in seen_units:
                continue
            u_tokens = relevant_tokens(unit)
            score = overlap(q, u_tokens)
            if (
                score > unit_min
                and len(q & u_tokens) >= min_shared
                and used + len(unit) <= max_chars
            ):
                seen_units.add(key)
                used += len(unit) + 1
                result.units.append(
                    ContextUnit(doc_id=doc.id, source=doc.source, text=unit, overlap=score)
                )
    return result


class ContextRetriever:
    """Multi-source query (Algorithm 1 line 1) + similarity filter, bounded in time."""

    def __init__(
        self,
        sources: Sequence[KnowledgeSource],
        *,
        max_docs_per_source: int = 20,
        max_context_chars: int = 2000,
        timeout_s: float = 0.5,
    ) -> None:
        self.sources = list(sources)
        self.max_docs = max_docs_per_source
        self.max_chars = max_context_chars
        self.timeout_s = timeout_s

    @classmethod
    def from_settings(
        cls, sources: Sequence[KnowledgeSource], cfg: RagSettingsLike
    ) -> ContextRetriever:
        """The retriever the stream and ``livekg eval`` build from ``sentiment.*``."""
        return cls(
            sources,
            max_docs_per_source=cfg.rag_max_docs_per_source,
            max_context_chars=cfg.rag_max_context_chars,
            timeout_s=cfg.rag_timeout_s,
        )

    def _timeout(self, source: KnowledgeSource) -> float:
        """A source may carry its own ``timeout_s`` (a remote search engine is slower than
        the graph); the micro-batch waits for its slowest source."""
        own = getattr(source, "timeout_s", None)
        return float(own) if own else self.timeout_s

    async def _one(self, source: KnowledgeSource, query: RagQuery) -> list[ContextDoc]:
        try:
            return await asyncio.wait_for(
                source.search(query, self.max_docs), self._timeout(source)
            )
        except Exception as exc:  # a slow or failing source must not fail the item
            log.warning("rag source %s failed: %r", source.name, exc)
            return []

    async def _many(
        self, source: KnowledgeSource, queries: Sequence[RagQuery]
    ) -> list[list[ContextDoc]]:
        search_many = getattr(source, "search_many", None)
        if search_many is None:
            return list(await asyncio.gather(*(self._one(source, q) for q in queries)))
        try:
            found = await asyncio.wait_for(
                search_many(queries, self.max_docs), self._timeout(source)
            )
        except Exception as exc:  # a slow or failing source must not fail the batch
            log.warning("rag source %s failed: %r", source.name, exc)
            return [[] for _ in queries]
        return list(found)

    async def retrieve(self, query: RagQuery) -> SentimentContext:
        return (await self.retrieve_many([query]))[0]

    async def retrieve_many(self, queries: Sequence[RagQuery]) -> list[SentimentContext]:
        """One round per source for a whole micro-batch.

        Per-item queries (three sources x every document) queued on the graph's
        connections: at 100 docs/s the produce-to-score p99 was 455 ms, against 107-134 ms
        asked per batch (``livekg bench sentiment-stream``).
        """
        active = [i for i, q in enumerate(queries) if self.sources and q.cleaned]
        results = [SentimentContext(query=q) for q in queries]
        if not active:
            return results
        asked = [queries[i] for i in active]
        per_source = await asyncio.gather(*(self._many(s, asked) for s in self.sources))
        for k, i in enumerate(active):
            docs = [d for found in per_source for d in found[k]]
            results[i] = filter_context(queries[i], docs, max_chars=self.max_chars)
        return results


# -- sources ------------------------------------------------------------------------


def _from_ms(value: object) -> datetime | None:
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    return None


class GraphNewsSource:
    """Recent documents in the graph that mention the item's entities (news, posts, filings)."""

    def __init__(
        self,
        store: GraphStore,
        *,
        kinds: Sequence[str] = ("news", "social"),
        name: str = "graph_news",
    ) -> None:
        self.store = store
        self.kinds = list(kinds)
        self.name = name

    async def search(self, query: RagQuery, limit: int) -> list[ContextDoc]:
        return (await self.search_many([query], limit))[0]

    async def search_many(self, queries: Sequence[RagQuery], limit: int) -> list[list[ContextDoc]]:
        asks = [
            {
                "q": i,
                "key": key,
                "since": to_epoch_ms(q.since) if q.since else 0,
                "until": to_epoch_ms(q.until) if q.until else 2**53,
            }
            for i, q in enumerate(queries)
            for key in _keys(q)
        ]
        if not asks:
            return [[] for _ in queries]
        rows = await self.store.query(
            # per item (``q``): its newest ``limit`` documents over all its entities, in its
            # window, exactly what a per-item query returns; the texts come once per id
            cypher("sentiment_news_ids"),
            {"asks": asks, "kinds": self.kinds, "limit": limit},
        )
        picked = {int(r["q"]): [str(x) for x in r["ids"]] for r in rows}
        ids = list(dict.fromkeys(x for found in picked.values() for x in found))
        docs: dict[str, ContextDoc] = {}
        if ids:
            for r in await self.store.query(cypher("documents_by_id"), {"ids": ids}):
                docs[str(r["id"])] = ContextDoc(
                    id=str(r["id"]),
                    source=self.name,
                    title=str(r.get("title") or ""),
                    text=str(r.get("text") or "")[:5000],
                    published_at=_from_ms(r.get("published_at")),
                )
        return [[docs[x] for x in picked.get(i, []) if x in docs] for i in range(len(queries))]


def filings_source(store: GraphStore) -> GraphNewsSource:
    """Filings and exchange announcements about the entities (same index, kind=filing)."""
    return GraphNewsSource(store, kinds=("filing",), name="graph_filings")


class GraphFactsSource:
    """Knowledge-graph facts about the mentioned entities, each rendered as a sentence.

    The ontology grows (issue 4); this reads any outgoing relationship generically and
    names the tail by ``name``, else ``id``. Facts have no time and always pass the window.
    """

    name = "graph_facts"

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    async def search(self, query: RagQuery, limit: int) -> list[ContextDoc]:
        return (await self.search_many([query], limit))[0]

    async def search_many(self, queries: Sequence[RagQuery], limit: int) -> list[list[ContextDoc]]:
        """One query for the batch (up to ``limit`` facts per entity); each item gets
        one document with the facts of its entities, at most ``limit`` of them."""
        keys = list(dict.fromkeys(k for q in queries for k in _keys(q)))
        if not keys:
            return [[] for _ in queries]
        rows = await self.store.query(
            cypher("sentiment_entity_facts"), {"keys": keys, "limit": limit}
        )
        lines: dict[str, list[str]] = {}
        for r in rows:
            if r.get("tail") is not None:
                rel = str(r["rel"]).lower().replace("_", " ")
                lines.setdefault(str(r["key"]), []).append(f"{r['key']} {rel} {r['tail']}.")
        out: list[list[ContextDoc]] = []
        for q in queries:
            own = [line for k in _keys(q) for line in lines.get(k, ())][:limit]
            doc_id = f"facts:{','.join(_keys(q))[:100]}"
            out.append(
                [ContextDoc(id=doc_id, source=self.name, text="\n\n".join(own))] if own else []
            )
        return out


class CorpusSource:
    """An in-memory corpus (JSONL: id, title, text, published_at) searched by shared tokens.

    Stands in for a news search API in evaluations (``--corpus FILE``) and demos.
    """

    name = "corpus"

    def __init__(self, docs: Sequence[ContextDoc]) -> None:
        self.docs = list(docs)
        self._index: dict[str, list[int]] = {}
        self._tokens: list[set[str]] = []
        for i, doc in enumerate(self.docs):
            toks = relevant_tokens(doc.full_text)
            self._tokens.append(toks)
            for t in toks:
                self._index.setdefault(t, []).append(i)

    @classmethod
    def from_jsonl(cls, path: Path | str) -> CorpusSource:
        docs = []
        with Path(path).open(encoding="utf-8") as fh:
            for n, line in enumerate(fh):
                if not line.strip():
                    continue
                row = json.loads(line)
                docs.append(
                    ContextDoc(
                        id=str(row.get("id") or f"corpus:{n}"),
                        source=str(row.get("source") or "corpus"),
                        title=str(row.get("title") or ""),
                        text=str(row.get("text") or row.get("body") or ""),
                        published_at=row.get("published_at"),
                    )
                )
        return cls(docs)

    async def search(self, query: RagQuery, limit: int) -> list[ContextDoc]:
        return self.search_sync(query, limit)

    def search_sync(self, query: RagQuery, limit: int) -> list[ContextDoc]:
        q = relevant_tokens(query.cleaned)
        hits: dict[int, int] = {}
        for t in q:
            for i in self._index.get(t, ()):
                hits[i] = hits.get(i, 0) + 1
        best = sorted(hits, key=lambda i: (-hits[i], i))[:limit]  # ties: corpus order
        return [self.docs[i] for i in best]
