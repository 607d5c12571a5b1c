"""The API's clients, built once and lazily (the API may start before the graph or the
broker is reachable; health and metrics must work regardless)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from core.runtime_state import endpoints, read_state, running_service
from core.settings import Settings
from kg.cypher import CypherQA, LLMReviser
from kg.cypher.hybrid import RetrievalAnswerer
from kg.cypher.reword import ServedReworder
from kg.graph.store import open_store
from kg.graph.store.base import GraphStore
from kg.models.embed import make_embedder
from kg.models.llm import make_llm_client
from serving.feeds import LiveFeeds

log = logging.getLogger(__name__)

# Questions asked once at start through the API's own route, answers discarded
# (serving.warmup): a lookup, a Chinese question (the tokenizer's dictionary) and one
# that falls back to retrieval.
WARM_QUESTIONS = (
    "What is the latest 10-year US Treasury yield?",
    "招商银行属于哪个行业？",
    "Which companies did the rating agency downgrade after the storm?",
)


class Services:
    def __init__(
        self,
        settings: Settings,
        *,
        store: GraphStore | None = None,
        feeds: LiveFeeds | None = None,
        embedder: Any = None,
        hybrid: Any = None,
    ) -> None:
        self.settings = settings
        self._store = store
        self._feeds = feeds
        self._embedder = embedder
        self._hybrid = hybrid
        self._qa: CypherQA | None = None
        self._qa_built = 0.0
        self._lock = asyncio.Lock()
        self._llm: Any = None
        self._rewords: ServedReworder | None = None
        self._warming: asyncio.Task[None] | None = None
        self._warm_finished = False
        self._refreshing: asyncio.Task[None] | None = None

    def _endpoints(self) -> Any:
        return endpoints(self.settings)  # raises ServiceUnavailable with the reason

    async def store(self) -> GraphStore:
        if self._store is None:
            async with self._lock:
                if self._store is None:
                    ep = self._endpoints()
                    self._store = open_store(self.settings, ep.falkordb_url)
        return self._store

    async def qa(self) -> CypherQA:
        q = self.settings.query
        stale = time.monotonic() - self._qa_built > q.lexicon_refresh_s
        if self._qa is None or stale:
            store = await self.store()
            async with self._lock:
                if self._qa is None:
                    lexicon = await CypherQA.load_lexicon(store)
                    embedder = await self._get_embedder()
                    if self._hybrid is None and embedder is not None:
                        self._hybrid = RetrievalAnswerer(store, embedder)
                        self._warming = asyncio.create_task(self._warm(self._hybrid))
                    self._qa = CypherQA(
                        store,
                        lexicon,
                        embedder=embedder,
                        reviser=self._reviser(),
                        hybrid=self._hybrid,
                        timeout_s=q.timeout_s,
                        row_limit=q.row_limit,
                        reworder=self._reworder(),
                        reword_policy=q.reword_policy,
                        reword_budget_s=q.reword_budget_s,
                    )
                    self._qa_built = time.monotonic()
                elif stale:
                    # rebuild the dictionary beside the questions, not inside one
                    self._qa_built = time.monotonic()
                    self._refreshing = asyncio.create_task(self._refresh(self._qa))
        return self._qa

    @staticmethod
    async def _refresh(qa: CypherQA) -> None:
        try:
            await qa.refresh()
        except Exception as exc:  # the old dictionary keeps answering
            log.warning("dictionary refresh failed: %s", exc)

    def ask_ready(self) -> bool:
        """Whether the start-up warm-up has finished: the question path built, the
        retrieval index warm and the warm-up questions asked through the API's own route
        (``serving.warmup``), or it failed and the path stays lazy."""
        return self._warm_finished

    def mark_ask_ready(self) -> None:
        self._warm_finished = True

    async def warm_ask(self) -> bool:
        """Build the question path at API start (dictionary, embedding model, retrieval
        index) so the first question does not pay for it; the warm-up questions are then
        asked through the HTTP route (``serving.warmup``). False (and lazy) when the graph
        is not reachable yet."""
        try:
            await self.qa()
            if self._warming is not None:
                await self._warming
            return True
        except Exception as exc:  # graph not reachable yet: built on first question
            log.warning("ask warm-up at start failed (built on first question): %s", exc)
            return False

    @staticmethod
    async def _warm(hybrid: Any) -> None:
        try:
            await hybrid.warm()
        except Exception as exc:  # the fallback builds it on first use then
            log.warning("retrieval warm-up failed: %s", exc)

    async def _get_embedder(self) -> Any:
        if self._embedder is None and self.settings.query.rank_with_embeddings:
            self._embedder = await asyncio.to_thread(make_embedder, self.settings.embed)
        return self._embedder

    def _reviser(self) -> LLMReviser | None:
        if not self.settings.query.revise:
            return None
        self._reviser_llm()
        return LLMReviser(self._llm)

    def _reviser_llm(self) -> None:
        try:
            url = self._endpoints().llm_base_url
        except Exception:
            url = None
        self._llm = make_llm_client(self.settings, url, priority="interactive")

    def _reworder(self) -> ServedReworder | None:
        """The model's rewordings of abstained questions (``query.reword``; default: where
        a model is served, looked up per question; never a model loaded in-process here)."""
        if self.settings.query.reword is False:
            return None
        # the budget bounds the call: no retry, no wait past it
        s = self.settings.with_overrides(
            llm={"max_retries": 0, "timeout_s": self.settings.query.reword_budget_s}
        )
        self._rewords = ServedReworder(
            self._model_url,
            lambda url: make_llm_client(s, url, priority="interactive"),
        )
        return self._rewords

    def _model_url(self) -> str | None:
        """The served model's base URL: configured, or the stack's running model server."""
        if self.settings.llm.base_url:
            return self.settings.llm.base_url
        state = read_state(self.settings.state_file)
        return state.llm_base_url if state and running_service(state, "llm") else None

    async def feeds(self) -> LiveFeeds:
        if self._feeds is None:
            async with self._lock:
                if self._feeds is None:
                    ep = self._endpoints()
                    feeds = LiveFeeds(
                        ep.kafka_bootstrap,
                        self.settings.kafka.topic_prefix,
                        buffer=self.settings.query.sse_buffer,
                    )
                    await feeds.start()
                    self._feeds = feeds
        if not self._feeds.started:
            await self._feeds.start()
        return self._feeds

    async def close(self) -> None:
        for task in (self._warming, self._refreshing):
            if task is not None and not task.done():
                task.cancel()
        if self._feeds is not None:
            await self._feeds.stop()
        if self._store is not None:
            with contextlib.suppress(Exception):
                await self._store.close()
        if self._llm is not None:
            with contextlib.suppress(Exception):
                await self._llm.aclose()
        if self._rewords is not None:
            await self._rewords.aclose()
