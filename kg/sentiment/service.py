"""Scoring: classifier (CPU default or LLM) + optional retrieval augmentation.

``SentimentEngine.score`` takes items (text, entities, time) and returns probabilities,
the model id and the context ids used. Model work runs in a worker thread, never on
the event loop. With RAG on, the retrieved context is concatenated to the input
(Zhang et al., 3.3): the LLM path gets it in the prompt; the CPU classifier can score the
input+context too and mix it in with ``context_weight``, which is 0 by default: on the
dev split with real contexts the mix never helped and lowered Chinese accuracy
(docs/sentiment.md, "Retrieval"). The context ids ride on every score either way.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from kg.models.prompts.lib import get
from kg.sentiment.instructions import format_input
from kg.sentiment.labels import map_generated_output, one_hot
from kg.sentiment.model import SentimentClassifier
from kg.sentiment.rag import ContextRetriever, SentimentContext, build_query

log = logging.getLogger(__name__)

LLM_CONFIDENCE = 0.9  # an LLM answer is a hard label; this is the probability it gets


class ScoreInput(BaseModel):
    text: str
    entities: list[str] = Field(default_factory=list)
    event_time: datetime | None = None
    doc_id: str = ""


class ScoreOutput(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    probabilities: list[float]
    model_id: str
    context_ids: list[str] = Field(default_factory=list)
    context: str = ""


class LLMSentiment:
    """The production path: an instruction-tuned LLM through ``kg.models.llm`` (vLLM)."""

    def __init__(
        self,
        client: Any,
        *,
        prompt_name: str = "sentiment.classify.v1",
        max_tokens: int = 8,
        factory: Callable[[], Any] | None = None,
    ) -> None:
        self.client = client
        self.prompt_name = prompt_name
        self.max_tokens = max_tokens
        self.model_id = f"llm:{getattr(client, 'model', 'unknown')}"
        # An HTTP client's pool belongs to the event loop it first ran on; a caller that
        # runs several loops in turn (``livekg eval sentiment``) gives a factory for a
        # fresh client per loop.
        self._factory = factory
        self._loop: asyncio.AbstractEventLoop | None = None

    async def classify(self, text: str, context: str = "") -> np.ndarray:
        loop = asyncio.get_running_loop()
        if self._factory is not None and self._loop is not None and loop is not self._loop:
            self.client = self._factory()
        self._loop = loop
        messages = get(self.prompt_name)(text=text, rag_context=context)
        out = await self.client.chat(
            messages, prompt_name=self.prompt_name, max_tokens=self.max_tokens
        )
        return one_hot(map_generated_output(out), LLM_CONFIDENCE)


@dataclass(eq=False)
class SentimentEngine:
    """A classifier or an LLM (or both: the LLM scores), with the context retriever."""

    classifier: SentimentClassifier | None = None
    _: KW_ONLY
    retriever: ContextRetriever | None = None
    llm: LLMSentiment | None = None
    context_weight: float = 0.0
    window: timedelta = timedelta(hours=72)
    future: timedelta = timedelta(hours=1)

    def __post_init__(self) -> None:
        if self.classifier is None and self.llm is None:
            raise ValueError("SentimentEngine needs a classifier or an LLM")

    def without_retrieval(self) -> SentimentEngine:
        """The same models scoring the bare input: the "without context" side of an
        evaluation (``livekg eval sentiment --corpus``)."""
        return replace(self, retriever=None)

    @property
    def model_id(self) -> str:
        return self.llm.model_id if self.llm else self.classifier.model_id  # type: ignore[union-attr]

    async def _retrieve(self, items: Sequence[ScoreInput]) -> list[SentimentContext | None]:
        """Context for a whole micro-batch: one round per knowledge source."""
        if self.retriever is None:
            return [None] * len(items)
        queries = [
            build_query(
                item.text,
                entities=item.entities,
                event_time=item.event_time,
                window=self.window,
                future=self.future,
                exclude_ids=[item.doc_id] if item.doc_id else [],
            )
            for item in items
        ]
        return list(await self.retriever.retrieve_many(queries))

    async def score(self, items: Sequence[ScoreInput]) -> list[ScoreOutput]:
        if not items:
            return []
        rag = await self._retrieve(items)
        contexts = [r.context if r else "" for r in rag]
        ids = [r.context_ids if r else [] for r in rag]
        if self.llm is not None:
            probs = await asyncio.gather(
                *(self.llm.classify(i.text, c) for i, c in zip(items, contexts, strict=True))
            )
            p = np.stack(probs)
        else:
            p = await asyncio.to_thread(self.classify_sync, [i.text for i in items], contexts)
        return [
            ScoreOutput(
                probabilities=[float(x) for x in p[k]],
                model_id=self.model_id,
                context_ids=ids[k],
                context=contexts[k],
            )
            for k in range(len(items))
        ]

    def classify_sync(self, texts: Sequence[str], contexts: Sequence[str]) -> np.ndarray:
        """Bare pass for every text; a second pass with context where there is some."""
        assert self.classifier is not None
        p = self.classifier.predict_proba(list(texts))
        with_ctx = [k for k, c in enumerate(contexts) if c]
        if with_ctx and self.context_weight > 0:
            aug = self.classifier.predict_proba(
                [format_input(texts[k], contexts[k]) for k in with_ctx]
            )
            w = self.context_weight
            p[with_ctx] = (1 - w) * p[with_ctx] + w * aug
        return p
