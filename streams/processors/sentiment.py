"""docs.clean -> sentiment.scored -> (per-entity state) -> alerts.sentiment.

Two thin agents over ``kg.sentiment``:

* ``sentiment``: a micro-batch of clean documents is scored in one classifier call
  (in a worker thread; optional retrieval augmentation over the graph), and one
  ``SentimentScore`` per mentioned entity is produced, keyed by that entity so the
  state agent's table is co-partitioned with its input. A document without entities
  gets one score keyed by its id. If a batch fails, its documents are scored one by
  one so only the culprit is dead-lettered.
* ``sentiment_state``: folds each score into its entity's rolling state (a faust
  table) and sends the alerts ``kg.sentiment.state.update`` decides, with evidence.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import faust

from core.batch import Decoded, Inbound, dead_for
from core.records import Alert, CleanDocument, DeadLetter, SentimentScore, stable_id
from core.topics import ALERTS_SENTIMENT, DOCS_CLEAN, SENTIMENT_SCORED
from kg.models.llm import make_llm_client
from kg.sentiment.external_search import external_sources
from kg.sentiment.labels import LABELS, label_of, polarity
from kg.sentiment.model import load_from_settings, load_parts
from kg.sentiment.rag import ContextRetriever, GraphFactsSource, GraphNewsSource, filings_source
from kg.sentiment.service import LLMSentiment, ScoreInput, ScoreOutput, SentimentEngine
from kg.sentiment.state import AlertRules, EntityState, update
from streams import tables
from streams.context import WorkerContext
from streams.processors.base import Outcome, typed_agent

log = logging.getLogger(__name__)

AGENT = "sentiment"
STATE_AGENT = "sentiment_state"
TABLE = "sentiment_entity_state"
DOC_CHARS = 1000  # title + the head of the body: what the classifier reads


def doc_text(doc: CleanDocument) -> str:
    """Title, then the start of the body (headline-trained models read the head)."""
    title, body = doc.title.strip(), doc.text.strip()
    if title and not body.startswith(title):
        return f"{title}. {body}"[:DOC_CHARS] if body else title[:DOC_CHARS]
    return body[:DOC_CHARS]


def scores_for(doc: CleanDocument, out: ScoreOutput, max_entities: int) -> list[SentimentScore]:
    probs = dict(zip(LABELS, out.probabilities, strict=True))
    common: dict[str, Any] = {
        "source": AGENT,
        "event_time": doc.event_time,
        "doc_id": doc.id,
        "label": label_of(out.probabilities),
        "probabilities": probs,
        "score": polarity(out.probabilities),
        "model_id": out.model_id,
        "context_ids": out.context_ids,
    }
    entities = list(dict.fromkeys(doc.entities))[:max_entities]
    if not entities:
        return [SentimentScore(id=stable_id("sent", doc.id, out.model_id), entities=[], **common)]
    return [
        SentimentScore(id=stable_id("sent", doc.id, e, out.model_id), entities=[e], **common)
        for e in entities
    ]


def make_engine(ctx: WorkerContext, store: Any | None) -> SentimentEngine:
    """Build the configured engine (its lazily built models are loaded by ``register``'s
    ``get_engine`` before the first score, in a thread)."""
    cfg = ctx.settings.sentiment
    retriever = None
    if cfg.rag and store is not None:
        external = external_sources(cfg.rag_search)
        ctx.closers += [source.aclose for source in external]
        retriever = ContextRetriever.from_settings(
            [GraphNewsSource(store), filings_source(store), GraphFactsSource(store), *external],
            cfg,
        )
    common: dict[str, Any] = {
        "retriever": retriever,
        "context_weight": cfg.rag_context_weight,
        "window": timedelta(hours=cfg.rag_window_hours),
        "future": timedelta(hours=cfg.rag_future_hours),
    }
    if cfg.classifier == "llm":
        client = make_llm_client(ctx.settings, ctx.endpoints.llm_base_url)
        return SentimentEngine(llm=LLMSentiment(client), **common)
    return SentimentEngine(load_from_settings(cfg), **common)


class SentimentTable(tables.TableState):
    """Entity sentiment states in a faust table (see streams/tables.py)."""

    def get(self, entity: str) -> EntityState | None:  # type: ignore[override]
        raw = super().get(entity)
        return EntityState.model_validate(raw) if raw else None

    def dump(self, value: EntityState) -> dict[str, Any]:  # type: ignore[override]
        return value.model_dump(mode="json")


def fold_scores(
    staged: tables.StagedWrites,
    scores: Sequence[SentimentScore],
    origins: Sequence[Inbound],
    rules: AlertRules,
) -> list[Alert]:
    """Fold a batch of scores into their entities' states (staged, not yet written);
    return the alerts to send before the states are written."""
    alerts: list[Alert] = []
    for score, origin in zip(scores, origins, strict=True):
        for entity in score.entities[:1]:  # one entity per score (see scores_for)
            current = staged.get(entity) or EntityState(entity_id=entity)
            new, fired = update(current, score, rules)  # a copy folded before: no change
            if new is not current:
                staged.set(entity, new, origin.partition)
            alerts += fired
    return alerts


def state_outcome(state: SentimentTable, decoded: Decoded, rules: AlertRules) -> Outcome:
    """One batch of the state agent: the alerts to send, and the states to write once
    they are acknowledged (``after_ack``), acknowledged in turn by the broker before the
    batch's offsets can be committed (``tables.StagedWrites.write_acked``)."""
    staged = tables.StagedWrites(state)
    alerts = fold_scores(staged, decoded.records, decoded.origins, rules)  # type: ignore[arg-type]
    return Outcome(outputs={ALERTS_SENTIMENT.name: alerts}, after_ack=staged.write_acked)


async def score_docs(
    engine: SentimentEngine,
    docs: Sequence[CleanDocument],
    origins: Sequence[Inbound],
    max_entities: int,
) -> tuple[list[SentimentScore], list[DeadLetter]]:
    inputs = [
        ScoreInput(
            text=doc_text(d),
            entities=d.entities[:max_entities],
            event_time=d.event_time,
            doc_id=d.id,
        )
        for d in docs
    ]
    try:
        outs = await engine.score(inputs)
        pairs = list(zip(docs, outs, strict=True))
        dead: list[DeadLetter] = []
    except Exception as exc:  # isolate: score one by one, dead-letter only the failures
        log.warning("%s: batch scoring failed (%r); scoring one by one", AGENT, exc)
        pairs, dead = [], []
        for doc, item, origin in zip(docs, inputs, origins, strict=True):
            try:
                pairs.append((doc, (await engine.score([item]))[0]))
            except Exception as one_exc:
                dead.append(dead_for(origin, one_exc, AGENT))
    scores: list[SentimentScore] = []
    for doc, out in pairs:
        scores += scores_for(doc, out, max_entities)
    return scores, dead


def register(app: faust.App, ctx: WorkerContext) -> None:
    cfg = ctx.settings.sentiment
    rules = AlertRules.from_settings(cfg)
    engine: SentimentEngine | None = None
    lock = asyncio.Lock()

    async def get_engine() -> SentimentEngine:
        nonlocal engine
        async with lock:
            if engine is None:
                store = await ctx.graph() if cfg.rag else None
                built = make_engine(ctx, store)
                if built.classifier is not None:  # load every model before the first score
                    await asyncio.to_thread(load_parts, built.classifier)
                engine = built
            return engine

    async def handle(decoded: Decoded) -> Outcome:
        if not decoded.records:
            return Outcome()
        docs: list[CleanDocument] = decoded.records  # type: ignore[assignment]
        scores, failed = await score_docs(
            await get_engine(), docs, decoded.origins, cfg.max_entities_per_doc
        )
        return Outcome(outputs={SENTIMENT_SCORED.name: scores}, dead=failed)

    table = app.Table(TABLE, default=None, partitions=ctx.settings.kafka.topic_partitions)
    state = SentimentTable(table)

    async def handle_state(decoded: Decoded) -> Outcome:
        return state_outcome(state, decoded, rules)

    typed_agent(
        app, ctx, name=AGENT, sources=[DOCS_CLEAN.name], handler=handle, observe_latency=True
    )
    typed_agent(app, ctx, name=STATE_AGENT, sources=[SENTIMENT_SCORED.name], handler=handle_state)
